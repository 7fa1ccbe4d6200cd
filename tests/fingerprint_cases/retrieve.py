"Fingerprint cases of the retrievers (ragkit.retrieve): each one's settings move the key of every run that reads through it."
import tempfile
from ragkit.core import Corpus, Passage
from ragkit.retrieve.bm25 import BM25Retriever, GivenContexts
from ragkit.retrieve.dense import DenseRetriever, HashingEmbedder
from ragkit.retrieve.fusion import FakeRetriever, FusedRetriever

CORPUS = Corpus([Passage(f"p{i}", f"Title {i}", f"text about thing {i} and other {i * 7}") for i in range(12)], name="toy")
CACHE = tempfile.mkdtemp(prefix="ragkit-fp-")

def _bm25(): return BM25Retriever(CORPUS, cache_dir=CACHE, progress=False)

CASES = {
    BM25Retriever: lambda cls: cls(CORPUS, cache_dir=CACHE, progress=False),
    GivenContexts: lambda cls: cls(CORPUS, {"q": ["p1", "p2"]}),
    DenseRetriever: lambda cls: cls(CORPUS, HashingEmbedder(16), cache_dir=CACHE, progress=False),
    FusedRetriever: lambda cls: cls([_bm25(), FakeRetriever(CORPUS, {"q": ["p3"]})]),
    FakeRetriever: lambda cls: cls(CORPUS, {"q": ["p1"]}),
}
