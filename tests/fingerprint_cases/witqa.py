"Fingerprint cases of WITQA's QA systems: `ragkit.papers.witqa.method` (Vanilla, RALM, GenRead)."
from ragkit.core import Corpus, Passage
from ragkit.lm.base import FakeLM
from ragkit.retrieve.fusion import FakeRetriever
from ragkit.papers.witqa.method import Vanilla, RALM, GenRead

_CORPUS = Corpus([Passage("p1", "France", "France is a country. Its capital is Paris.")], "toy")

CASES = {Vanilla: lambda cls: cls(FakeLM(default="Paris"), max_new_tokens=16),
         RALM: lambda cls: cls(FakeRetriever(_CORPUS, {"What is the capital of France?": ["p1"]}), FakeLM(default="Paris"), n_passages=1),
         GenRead: lambda cls: cls(FakeLM(default="Paris"), doc_tokens=150)}
