"""Measure ragkit's retrievers on SQuAD v1.1 dev (2,067 paragraphs): BM25 backend agreement and speed, dense
embedding time, warm load time and query speed, and the share of questions whose own paragraph is in the top k.

Usage: RAGKIT_DATA_DIR=../shared/data HF_HUB_OFFLINE=1 python scripts/bench_retrievers.py [--questions 500]
       [--k 10] [--skip-dense] [--cache-dir DIR] [--out results.json]
BM25 indexes go to a temporary folder (always built cold); embeddings go to the cache dir (default: the configured
one), so the first run pays for embedding and later runs measure the warm path.
"""
from __future__ import annotations
import argparse, json, sys, tempfile, time
from pathlib import Path
import numpy as np
from ragkit.config import load_settings, require_data_dir
from ragkit.core import Corpus, Passage, passage_id, read_json
from ragkit.retrieve.bm25 import BM25Retriever, backend_agreement


def squad(data_dir: Path, n: int):
    "SQuAD dev's distinct paragraphs as a Corpus, and the first `n` (question, gold pid) pairs."
    raw = read_json(data_dir / "squad_v1.1" / "dev-v1.1.json", "see the data dir's PROVENANCE.md")["data"]
    paras = {passage_id("squad", a["title"], p["context"]): (a["title"], p["context"]) for a in raw for p in a["paragraphs"]}
    corpus = Corpus([Passage(pid, t.replace("_", " "), c) for pid, (t, c) in paras.items()], "squad-dev-paragraphs")
    qa = [(q["question"], passage_id("squad", a["title"], p["context"])) for a in raw for p in a["paragraphs"] for q in p["qas"]]
    return corpus, qa[:n]


def timed(f, *a, **kw):
    "(result, seconds) of f(*a, **kw)."
    t0 = time.perf_counter(); r = f(*a, **kw)
    return r, time.perf_counter() - t0


def hit_rate(runs, golds) -> float:
    "Share of questions whose gold pid is among the hits."
    return float(np.mean([g in {h.pid for h in r} for r, g in zip(runs, golds)]))


def bench_bm25(corpus, questions, golds, k):
    "Build, load and query each BM25 configuration; agreement with rank_bm25 (epsilon=0), the reference."
    cache, rets, rows = Path(tempfile.mkdtemp()), {}, []
    configs = [("bm25s float32", "bm25s", {}), ("bm25s float64", "bm25s", dict(dtype="float64")),
               ("rank_bm25 eps=0", "rank_bm25", {}), ("rank_bm25 eps=0.25", "rank_bm25", dict(epsilon=0.25))]
    for label, backend, opts in configs:
        built = BM25Retriever(corpus, backend, cache_dir=cache, progress=False, **opts)
        r = BM25Retriever(corpus, backend, cache_dir=cache, progress=False, **opts)
        runs, dt = timed(r.batch_search, questions, k, progress=False)
        rets[label] = r
        rows.append(dict(retriever=label, build_s=round(built.seconds, 3), load_s=round(r.seconds, 4),
                         queries_per_s=round(len(questions) / dt, 1), **{f"gold@{k}": round(hit_rate(runs, golds), 4)}))
    agree = {label: backend_agreement(rets[label], rets["rank_bm25 eps=0"], questions, k)
             for label in ["bm25s float32", "bm25s float64", "rank_bm25 eps=0.25"]}
    return rows, agree


def bench_dense(corpus, questions, golds, k, cache_dir):
    "Embed (or load) the corpus with MiniLM, open a flat index warm, and query."
    from ragkit.retrieve.dense import DenseRetriever, Embedder, embedding_path
    cold, dt_cold = timed(DenseRetriever, corpus, Embedder(cache_dir=cache_dir), cache_dir=cache_dir)
    meta = json.loads(embedding_path(corpus, cold.embedder, cache_dir).with_suffix(".json").read_text())
    warm, dt_warm = timed(DenseRetriever, corpus, Embedder(cache_dir=cache_dir), cache_dir=cache_dir, progress=False)
    _, dt_model = timed(lambda: warm.embedder.model)
    runs, dt_q = timed(warm.batch_search, questions, k, progress=False)
    return dict(model=cold.embedder.id, passages=len(corpus), embed_s=meta["seconds"],
                passages_per_s=round(len(corpus) / meta["seconds"], 1), first_open_s=round(dt_cold, 2),
                warm_open_s=round(dt_warm, 3), model_load_s=round(dt_model, 2),
                queries_per_s=round(len(questions) / dt_q, 1), **{f"gold@{k}": round(hit_rate(runs, golds), 4)})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--skip-dense", action="store_true")
    ap.add_argument("--cache-dir", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    corpus, qa = squad(require_data_dir(), a.questions)
    questions, golds = [q for q, _ in qa], [g for _, g in qa]
    print(f"SQuAD v1.1 dev: {len(corpus)} paragraphs, {len(questions)} questions, k={a.k}")
    rows, agree = bench_bm25(corpus, questions, golds, a.k)
    for r in rows: print(r)
    speed = {r["retriever"]: r["queries_per_s"] for r in rows}
    print(f"bm25s/rank_bm25 query throughput ratio: {speed['bm25s float32'] / speed['rank_bm25 eps=0']:.1f}x")
    for label, ag in agree.items(): print(f"{label} vs rank_bm25 eps=0: {ag}")
    out = dict(bm25=rows, agreement=agree, ratio=speed["bm25s float32"] / speed["rank_bm25 eps=0"])
    if not a.skip_dense:
        out["dense"] = bench_dense(corpus, questions, golds, a.k, a.cache_dir or load_settings().cache_dir)
        print("dense:", out["dense"])
    from ragkit.runner import machine  # the CPU's model name and the cores this process may use
    if a.out: a.out.write_text(json.dumps(dict(out, machine=machine()), indent=1))


if __name__ == "__main__":
    sys.exit(main())
