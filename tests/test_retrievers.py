"BM25 and dense retrieval against real SQuAD v1.1 dev paragraphs (skipped when no data dir is configured)."
import json, os
from pathlib import Path
import numpy as np
import pytest
from ragkit.config import load_settings
from ragkit.core import Corpus, Passage, passage_id, read_json
from ragkit.retrieve.bm25 import BM25Retriever, backend_agreement
from ragkit.retrieve.dense import DenseRetriever, Embedder, HashingEmbedder, embed_corpus, embedding_path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
DATA_DIR = load_settings().data_dir
SQUAD = Path(DATA_DIR or ".") / "squad_v1.1" / "dev-v1.1.json"
needs_squad = pytest.mark.skipif(DATA_DIR is None or not SQUAD.is_file(),
                                 reason="no data dir with squad_v1.1/dev-v1.1.json: set RAGKIT_DATA_DIR (e.g. ../shared/data)")


@pytest.fixture(scope="module")
def squad():
    "SQuAD dev: (paragraph corpus, [(question, gold pid)], article-level page corpus)."
    raw = read_json(SQUAD)["data"]
    paras = {passage_id("squad", a["title"], p["context"]): (a["title"], p["context"]) for a in raw for p in a["paragraphs"]}
    corpus = Corpus([Passage(pid, t.replace("_", " "), c) for pid, (t, c) in paras.items()], "squad-dev-paragraphs")
    qa = [(q["question"], passage_id("squad", a["title"], p["context"])) for a in raw for p in a["paragraphs"] for q in p["qas"]]
    pages = Corpus([Passage(f"page-{i}", a["title"].replace("_", " "), "\n\n".join(p["context"] for p in a["paragraphs"]))
                    for i, a in enumerate(raw)], "squad-dev-articles")
    return corpus, qa, pages


@needs_squad
def test_squad_shape(squad):
    "The corpus is the 2,067 distinct paragraphs of SQuAD v1.1 dev (48 articles)."
    corpus, qa, pages = squad
    assert (len(corpus), len(qa), len(pages)) == (2067, 10570, 48)


@needs_squad
def test_bm25_backends_agree_on_squad(squad, tmp_path):
    "bm25s and rank_bm25 rank 300 SQuAD questions identically; float64 scores agree to rounding."
    corpus, qa, _ = squad
    qs = [q for q, _ in qa[:300]]
    ref = BM25Retriever(corpus, "rank_bm25", cache_dir=tmp_path, progress=False)
    f32 = BM25Retriever(corpus, "bm25s", cache_dir=tmp_path, progress=False)
    f64 = BM25Retriever(corpus, "bm25s", cache_dir=tmp_path, progress=False, dtype="float64")
    a32, a64 = backend_agreement(f32, ref, qs), backend_agreement(f64, ref, qs)
    assert a32["overlap"] == 1.0 and a32["identical"] >= 0.99 and a32["max_rel_diff"] < 1e-5, a32
    assert a64["identical"] == 1.0 and a64["max_abs_diff"] < 1e-9, a64


@needs_squad
def test_bm25_finds_gold_paragraphs_and_reloads(squad, tmp_path):
    "BM25 puts the question's own paragraph in the top 10 for >= 90% of 300 questions; a reload gives the same runs."
    corpus, qa, _ = squad
    qs, golds = [q for q, _ in qa[:300]], [g for _, g in qa[:300]]
    bm = BM25Retriever(corpus, cache_dir=tmp_path, progress=False)
    runs = bm.batch_search(qs, 10, progress=False)
    assert np.mean([g in {h.pid for h in r} for r, g in zip(runs, golds)]) >= 0.9
    again = BM25Retriever(corpus, cache_dir=tmp_path, progress=False)
    assert again.loaded and again.batch_search(qs, 10, progress=False) == runs


@needs_squad
def test_bm25_over_whole_pages(squad, tmp_path):
    "EoR's search-engine source ranks whole articles: a question's own article is the top page for most questions."
    _, qa, pages = squad
    raw = read_json(SQUAD)["data"]
    page_of = {passage_id("squad", a["title"], p["context"]): f"page-{i}" for i, a in enumerate(raw) for p in a["paragraphs"]}
    qs = qa[::50]
    for backend in ("bm25s", "rank_bm25"):
        bm = BM25Retriever(pages, backend, cache_dir=tmp_path, progress=False)
        runs = bm.batch_search([q for q, _ in qs], 1, progress=False)
        assert np.mean([r[0].pid == page_of[g] for r, (_, g) in zip(runs, qs) if r]) >= 0.8


@needs_squad
def test_dense_minilm_on_squad_slice(squad, tmp_path):
    "MiniLM over 40 real paragraphs: each of their first questions finds its paragraph in the top 3 mostly."
    corpus, qa, _ = squad
    sub = Corpus(corpus.passages[:40], "squad-40")
    first = {}
    for q, g in qa:
        if g in sub and g not in first: first[g] = q
    dense = DenseRetriever(sub, Embedder(cache_dir=tmp_path), cache_dir=tmp_path, progress=False)
    runs = dense.batch_search(list(first.values()), 3, progress=False)
    assert np.mean([g in {h.pid for h in r} for r, g in zip(runs, first)]) >= 0.7
    meta = json.loads(embedding_path(sub, dense.embedder, tmp_path).with_suffix(".json").read_text())
    assert meta["pids"] == sub.pids and meta["dims"] == 384


class Crash(HashingEmbedder):
    "Hashing double that dies on a given encode call, like an interrupted run."
    def __init__(self, die_at: int):
        super().__init__(32); self.die_at = die_at
    def encode(self, texts, progress=False):
        if self.calls + 1 == self.die_at: raise KeyboardInterrupt("simulated interruption")
        return super().encode(texts, progress)


@needs_squad
def test_embedding_resumes_after_interruption(squad, tmp_path):
    "An embedding run killed after 3 of 6 shards keeps them; the rerun encodes only the other 3 and matches a clean run."
    corpus, _, _ = squad
    sub = Corpus(corpus.passages[:300], "squad-300")
    with pytest.raises(KeyboardInterrupt): embed_corpus(sub, Crash(die_at=4), tmp_path / "a", shard_size=50, progress=False)
    resumed = HashingEmbedder(32)
    e = embed_corpus(sub, resumed, tmp_path / "a", shard_size=50, progress=False)
    assert resumed.calls == 3
    clean = embed_corpus(sub, HashingEmbedder(32), tmp_path / "b", shard_size=50, progress=False)
    assert np.array_equal(e, clean)
