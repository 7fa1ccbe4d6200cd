"Fingerprint cases of SuRe (`ragkit.papers.sure.method`): SuRe, its Table 3 and Table 6 variants, Base and the Table 4 reranker."
from ragkit.core import Corpus, Passage
from ragkit.lm.base import FakeLM
from ragkit.retrieve.fusion import FakeRetriever
from ragkit.retrieve.dense import HashingEmbedder
from ragkit.papers.sure.method import Base, Rerank1, SuRe, SuReCandidates, SuReMCQ, SuReSummaries, SumAndPred

_toy = Corpus([Passage("p1", "Lyon", "Lyon is a city in France."), Passage("p2", "Paris", "Paris is the capital of France.")], "toy")
_ret = FakeRetriever(_toy, {"What is the capital of France?": ["p1", "p2"]}, "toy")
_lm = FakeLM(default="Paris")


def _sure(cls):
    "Every setting off its default where a default would hide it (summary_end is counted only when set)."
    return cls(_ret, _lm, n_passages=2, candidate_stop=("\n\n",), summary_end=" ")


CASES = {SuRe: _sure, SuReSummaries: _sure, SuReMCQ: _sure, SumAndPred: _sure, SuReCandidates: _sure,
         Base: lambda cls: cls(_ret, _lm, n_passages=2, prompts="original"),  # prompts is counted only off 'paper'
         Rerank1: lambda cls: cls(_ret, _lm, by="sure", embedder=HashingEmbedder(), sure=_sure(SuRe), n_passages=2)}  # reads embedder and sure

ALTERNATIVES = {Rerank1: {"by": "llm"}}  # a probe reranker name reads no settings: RERANK_READS has no entry for it
