"""Fingerprint cases of LoRE (`ragkit.papers.lore`), EoR's retriever-reader (`ragkit.papers.eor.runs`) and the
benchmark's systems over finished runs (`ragkit.benchmark`): those are built over tiny real evaluations."""
from ragkit.core import Corpus, Example, Passage
from ragkit.eval.evaluate import ClosedBook, evaluate
from ragkit.lm.base import FakeLM
from ragkit.retrieve.fusion import FakeRetriever
from ragkit.papers.lore import LLMRerank, LoRE, NaiveRAG, Rechoose
from ragkit.papers.eor.algebra import Chunk, Pipeline
from ragkit.papers.eor.runs import RetrieverReader
from ragkit.benchmark import EoRVote, PopularityRoute, TopR

QUESTIONS = [f"question {i}?" for i in range(6)]
EXAMPLES = [Example(f"q{i}", q, (f"a{i}",)) for i, q in enumerate(QUESTIONS)]
CORPUS = Corpus([Passage("p0", "Paris", "Paris is the capital of France."), Passage("p1", "Lyon", "Lyon is a city.")], "toy")
RETRIEVER = FakeRetriever(CORPUS, {q: ["p0", "p1"] for q in QUESTIONS}, "toy")


def _run(name: str, right) -> object:
    "A finished closed-book run over EXAMPLES whose answer is the gold where `right(i)`, else a wrong word."
    gold = lambda p: next((f"a{i}" for i, q in enumerate(QUESTIONS) if q in p and right(i)), "wrong")
    return evaluate(ClosedBook(FakeLM(gold, name=name)), EXAMPLES, ["exact_match", "f1", "contains_match"], name=name, n_boot=10, progress=False)


def _pool() -> dict:
    "Three finished runs, right on different questions: a pool for EoR's vote."
    return {"A": _run("A", lambda i: i < 4), "B": _run("B", lambda i: i >= 3), "C": _run("C", lambda i: False)}


def _lore_run():
    "A finished LoRE run over EXAMPLES (its trace holds the candidates Rechoose re-chooses from)."
    return evaluate(LoRE(RETRIEVER, FakeLM(default="Paris"), n_contexts=2), EXAMPLES, ["exact_match", "f1"], n_boot=10, progress=False)


_wiki = {"Wiki": lambda qs, k: [[Chunk("Paris is the capital of France.", "Paris", "Wiki", "p0")] for _ in qs]}

CASES = {
    LoRE: lambda cls: cls(RETRIEVER, FakeLM(default="Paris"), n_contexts=2),
    NaiveRAG: lambda cls: cls(RETRIEVER, FakeLM(default="Paris"), n_contexts=2, max_input_tokens=512),
    Rechoose: lambda cls: cls(_lore_run(), "mean_prob"),
    LLMRerank: lambda cls: cls(RETRIEVER, FakeLM(default="Paris"), n_contexts=2),
    RetrieverReader: lambda cls: cls(Pipeline("Wiki@5", _wiki), FakeLM(default="Paris")),
    EoRVote: lambda cls: cls(_pool(), folds=2, metrics=("em", "f1"), restarts=1),
    TopR: lambda cls: cls(EoRVote(_pool(), folds=2, metrics=("em", "f1"), restarts=0)),
    PopularityRoute: lambda cls: cls(_run("closed", lambda i: i < 3), _run("rag", lambda i: i >= 3),
                                     {f"q{i}": float(9 - i) for i in range(6)}, folds=2),
}

ALTERNATIVES = {LLMRerank: {"by": "bm25"}}  # `by` names a reranker (RERANKERS): another one reads other settings
