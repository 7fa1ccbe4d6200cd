"Fingerprint cases of the shared floors: `ragkit.eval.evaluate`."
from ragkit.lm.base import FakeLM
from ragkit.eval.evaluate import ClosedBook

CASES = {ClosedBook: lambda cls: cls(FakeLM(default="Paris"), max_new_tokens=16)}
