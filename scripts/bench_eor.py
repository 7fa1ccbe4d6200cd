"""Benchmark EoR's training objective and search (ragkit.papers.eor.method) at the size of the paper's NQ test set, against a named
reference measured in the same run, and print ratios.

1. One objective evaluation (mean pooling, the paper's; the kept-retriever set cached as during a search) against the
   reference: a plain loop of `vote` over the questions, the per-question implementation of eq. 6-7. The loop's
   choices must equal the objective's for every question (a correctness check); `vote_batch` (the general
   vectorised path) is timed beside them. The other poolings are timed and checked the same way.
2. The whole Nelder-Mead search (`train_eor`): seconds, evaluations, accuracy before and after, and Top-R.

Targets (issue): one evaluation within 5 ms and a whole search within 30 s for N = 3,610, M = 16, K = 4.
The data are random but structured: each response is a label (0 = right) drawn with a per-retriever accuracy,
and the K similarities are noisy functions of "same label" (an EM-like 0/1, F1-, BERTScore- and NLI-like scores).

Usage: python scripts/bench_eor.py [--n 3610] [--m 16] [--k 4] [--seed 0] [--out outputs/bench/eor.json]
Absolute times vary by machine; read the ratios.
"""
from __future__ import annotations
import argparse, json, time
from pathlib import Path
import numpy as np
from ragkit.papers.eor.method import EoRObjective, POOLINGS, chosen, top_r, train_eor, vote, vote_batch


def timed(f, *a, **kw):
    "(result, seconds) of f(*a, **kw)."
    t0 = time.perf_counter(); r = f(*a, **kw)
    return r, time.perf_counter() - t0


def structured_random(n: int, m: int, k: int, seed: int):
    "(S [n, m, m, k], correct [n, m], metric names): random labels per response, similarities that follow them."
    rng = np.random.default_rng(seed)
    acc = rng.uniform(0.2, 0.6, m)
    lab = np.where(rng.random((n, m)) < acc, 0, rng.integers(1, 5, (n, m)))
    same = lab[:, :, None] == lab[:, None, :]
    u = rng.random((n, m, m, k))
    u = (u + u.transpose(0, 2, 1, 3)) / 2  # symmetric noise
    lo_hi = [(0.0, 0.0, 1.0, 1.0), (0.0, 0.4, 0.6, 1.0), (0.3, 0.7, 0.8, 1.0), (0.0, 0.5, 0.5, 1.0)]  # em, f1, bertscore, nli
    S = np.empty((n, m, m, k))
    for j in range(k):
        a, b, c, d = lo_hi[j % len(lo_hi)]
        S[..., j] = np.where(same, c + (d - c) * u[..., j], a + (b - a) * u[..., j])
    idx = np.arange(m)
    S[:, idx, idx, :] = np.nan
    names = ["em", "f1", "bertscore", "nli"][:k] + [f"sim{j}" for j in range(4, k)]
    return S, lab == 0, names


def bench_objective(S, C, pooling: str, reps: int, rng) -> dict:
    "ms per objective evaluation (warm kept-set cache), per vote_batch and per loop of vote; choices must agree."
    N, M, _, K = S.shape
    wr = rng.uniform(0.15, 0.6, M); ws0 = rng.random(K)
    ob = EoRObjective(S, C, pooling=pooling, t=0.1)
    _, cold = timed(ob.accuracy, ws0, wr)  # first evaluation of this kept set: fills the cache (mean pooling)
    wss = rng.random((reps, K))
    t0 = time.perf_counter()
    for ws in wss: ob.accuracy(ws, wr)
    per_eval = (time.perf_counter() - t0) / reps
    fast = ob.choose(ws0, wr)
    batch, t_batch = timed(vote_batch, S, ws0, wr, pooling, t=0.1)
    loop, t_loop = timed(lambda: np.array([vote(S[n], ws0, wr, pooling, t=0.1) for n in range(N)]))
    agree = int((loop == fast).sum()), int((loop == batch).sum())
    if agree != (N, N): raise SystemExit(f"{pooling}: the objective or vote_batch disagrees with the loop of vote "
                                         f"on {N - agree[0]} / {N - agree[1]} of {N} questions")
    return dict(pooling=pooling, objective_ms=round(per_eval * 1e3, 3), objective_first_eval_ms=round(cold * 1e3, 2),
                vote_batch_ms=round(t_batch * 1e3, 2), loop_of_vote_ms=round(t_loop * 1e3, 1),
                ratio_loop_over_objective=round(t_loop / per_eval, 1), ratio_vote_batch_over_objective=round(t_batch / per_eval, 1),
                choices_equal_to_loop=N)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=3610); ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--k", type=int, default=4); ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reps", type=int, default=200, help="objective evaluations averaged per pooling")
    ap.add_argument("--out", default="outputs/bench/eor.json")
    a = ap.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    S, C, names = structured_random(a.n, a.m, a.k, a.seed)
    rows = [bench_objective(S, C, p, a.reps, rng) for p in POOLINGS]
    for r in rows: print("  ".join(f"{k}={v}" for k, v in r.items()))
    fit = train_eor(S, C, metrics=names)
    tr = top_r(C)
    res = dict(n=a.n, m=a.m, k=a.k, seed=a.seed, reference="a Python loop of ragkit.papers.eor.method.vote over the questions",
               objective=rows,
               search=dict(seconds=round(fit.seconds, 2), n_evals=fit.n_evals, ms_per_eval=round(fit.seconds / max(fit.n_evals, 1) * 1e3, 3),
                           converged=fit.converged, start_accuracy=round(fit.start_accuracy, 4),
                           train_accuracy=round(fit.train_accuracy, 4), top_r_accuracy=round(float(chosen(C, np.full(a.n, tr)).mean()), 4),
                           kept=len(fit.kept)),
               targets=dict(objective_ms=5.0, search_s=30.0,
                            objective_met=rows[0]["objective_ms"] <= 5.0, search_met=fit.seconds <= 30.0))
    print("search:", res["search"]); print("targets:", res["targets"])
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        from ragkit.runner import machine  # the CPU's model name and the cores this process may use
        Path(a.out).write_text(json.dumps(dict(res, machine=machine()), indent=1))
    return res


if __name__ == "__main__": main()
