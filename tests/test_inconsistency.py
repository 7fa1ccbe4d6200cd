"""ragkit.papers.eor.inconsistency against plain-loop transcriptions of EoR's formulas (eqs. 1-5, Appendix B), brute-force pool
oracles, the decomposition identity on random and on real SQuAD text, and the report's contract and error paths."""
import itertools, math

import numpy as np
import pandas as pd
import pytest

from ragkit.data.corpora import gold_pids, load_corpus
from ragkit.data.registry import available, load_dataset
from ragkit.eval.metrics import contains_match
from ragkit.papers.eor.inconsistency import (ERRORS, decomposition_table, doc_indicators, error_indicators, error_rwr,
                                  inconsistency_report, long_answer_mask, mrlr, mrwr, pool_oracle, rwr, summary_frame,
                                  upper_bound_table)


# --- reference: the paper's formulas written as loops over examples ---
def ref_ratio(win, lose, cond=None, undefined=math.nan):
    "R[i][j] = sum_n win[i][n] lose[j][n] C(i,j,n) / sum_n lose[j][n] C(i,j,n); diagonal NaN."
    m, n = len(win), len(win[0])
    out = [[math.nan] * m for _ in range(m)]
    for i in range(m):
        for j in range(m):
            if i == j: continue
            c = [1 if cond is None else cond(i, j, k) for k in range(n)]
            den = sum(lose[j][k] * c[k] for k in range(n))
            num = sum(win[i][k] * lose[j][k] * c[k] for k in range(n))
            out[i][j] = num / den if den else undefined
    return np.array(out)


def ref_rwr(correct):
    "Eq. 1."
    c = np.asarray(correct, dtype=int).tolist()
    return ref_ratio(c, [[1 - x for x in row] for row in c])


def ref_error_rwr(I, error, conditioned=True):
    "Eq. 5 and the Appendix B conditioned forms, -1 where the denominator is 0."
    e = I[error].astype(int).tolist()
    er, eh = I["Er"].astype(int), I["Eh"].astype(int)
    cond = None
    if conditioned and error == "Ee": cond = lambda i, j, n: (1 - er[i, n]) * (1 - er[j, n])
    if conditioned and error == "Eluck": cond = lambda i, j, n: er[i, n] * eh[i, n] * er[j, n] * eh[j, n]
    return ref_ratio([[1 - x for x in row] for row in e], e, cond, undefined=-1.0)


def rand01(rng, shape, p):
    return (rng.random(shape) < p).astype(int)


@pytest.mark.parametrize("seed", range(5))
def test_rwr_matches_loops(seed):
    rng = np.random.default_rng(seed)
    c = rand01(rng, (6, 40), rng.uniform(0.2, 0.9))
    c[seed % 6] = 1  # one retriever never wrong: a NaN column
    want = ref_rwr(c)
    np.testing.assert_allclose(rwr(c), want, rtol=0, atol=1e-15)
    off = ~np.eye(6, dtype=bool)
    np.testing.assert_allclose(mrwr(c), [np.nanmean(want[i][off[i]]) if np.isfinite(want[i][off[i]]).any() else np.nan for i in range(6)])
    col = want.T
    np.testing.assert_allclose(mrlr(c), [np.nanmean(col[i][off[i]]) if np.isfinite(col[i][off[i]]).any() else np.nan for i in range(6)])
    assert np.isnan(mrlr(c)[seed % 6])


def test_rwr_accepts_bool_lists_and_dataframes():
    c = [[True, False, True], [False, False, True]]
    np.testing.assert_array_equal(rwr(c), rwr(pd.DataFrame(c)))
    np.testing.assert_array_equal(rwr(c), [[np.nan, 0.5], [0.0, np.nan]])  # r1 fails q0, q1; r0 gets q0


@pytest.mark.parametrize("bad, msg", [([1, 0], "2-D"), ([[1, 0]], "at least 2"), ([[1, 2], [0, 1]], "only 0/1"),
                                      (np.zeros((2, 0)), "no examples")])
def test_rwr_bad_input(bad, msg):
    with pytest.raises(ValueError, match=msg): rwr(bad)


@pytest.mark.parametrize("seed", range(5))
def test_error_rwr_matches_loops(seed):
    rng = np.random.default_rng(100 + seed)
    m, n = 5, 60
    I = error_indicators(rand01(rng, (m, n), .5), rand01(rng, (m, n), .6), rand01(rng, (m, n), .6))
    I["Eluck"][0] = 0  # retriever 0 never lucky: a -1 column
    for e in ERRORS:
        for cond in (True, False):
            np.testing.assert_allclose(error_rwr(I, e, cond), ref_error_rwr(I, e, cond), rtol=0, atol=1e-15)
    assert (error_rwr(I, "Eluck")[1:, 0] == -1).all()


def test_indicator_identities():
    rng = np.random.default_rng(7)
    I = error_indicators(*(rand01(rng, (4, 500), p) for p in (.5, .5, .5)))
    # extraction errors are wrong answers with the gold in the document; lucky guesses right ones without it
    assert ((I["Ee"] == 1) <= (I["A"] == 0)).all() and ((I["Eluck"] == 1) <= (I["A"] == 1)).all()
    assert (I["Ee"] * I["Er"] == 0).all() and (I["Eluck"] * (1 - I["Er"]) == 0).all()


@pytest.mark.parametrize("seed", range(5))
def test_decomposition_identity(seed):
    rng = np.random.default_rng(200 + seed)
    I = error_indicators(rand01(rng, (6, 300), .5), rand01(rng, (6, 300), .5), rand01(rng, (6, 300), .5))
    t = decomposition_table(I)
    np.testing.assert_allclose(t.failure + t.irregular, t.decomposed, atol=1e-12)
    # the same right-hand side written in joint counts
    r, h, a = I["Er"], I["Eh"], I["A"]
    np.testing.assert_allclose(t.decomposed, ((1 - r) * h + I["Ee"] + r - I["Eluck"]).mean(1), atol=1e-12)


def test_decomposition_empty_conditioning_sets():
    "A retriever that always (or never) has the gold in its document: the empty branch enters with weight 0."
    I = error_indicators([[1, 0, 1], [0, 1, 1]], [[1, 1, 1], [0, 0, 0]], [[1, 1, 0], [0, 1, 0]])
    t = decomposition_table(I, ["always", "never"])
    assert np.isnan(t.loc["always", "Eh|miss"]) and np.isnan(t.loc["never", "Eh|hit"])
    np.testing.assert_allclose(t.failure + t.irregular, t.decomposed, atol=1e-12)


def test_long_answer_mask():
    a = [["one two three four five", "x"], ["a", "one two three four five six"]]
    assert long_answer_mask(a).tolist() == [False, True]
    assert long_answer_mask(a, max_words=6).tolist() == [False, False]


# --- the ensemble upper bound ---
def brute_oracle(c, pool):
    return np.asarray(c)[list(pool)].max(axis=0).mean()


@pytest.mark.parametrize("seed", range(3))
def test_pool_oracle_exact_matches_brute_force(seed):
    rng = np.random.default_rng(300 + seed)
    c = rand01(rng, (7, 80), .4)
    for size in range(1, 8):
        o = pool_oracle(c, size)
        assert o["exact"] and o["pools"] == list(itertools.combinations(range(7), size))
        np.testing.assert_allclose(o["accuracy"], [brute_oracle(c, p) for p in o["pools"]], atol=1e-15)


def test_pool_oracle_sampled_and_chunked():
    rng = np.random.default_rng(11)
    c = rand01(rng, (16, 120), .3)
    o = pool_oracle(c, 8, max_pools=3000, seed=5)  # 12,870 pools: sampled, more than one 2,048-pool chunk
    assert not o["exact"] and len(set(o["pools"])) == 3000 and o["pools"] == sorted(o["pools"])
    assert all(len(p) == 8 and list(p) == sorted(p) for p in o["pools"])
    np.testing.assert_allclose(o["accuracy"], [brute_oracle(c, p) for p in o["pools"]], atol=1e-15)
    assert o["pools"] == pool_oracle(c, 8, max_pools=3000, seed=5)["pools"]
    assert o["pools"] != pool_oracle(c, 8, max_pools=3000, seed=6)["pools"]


def test_upper_bound_is_monotone_in_size():
    rng = np.random.default_rng(12)
    t = upper_bound_table(rand01(rng, (6, 50), .3))
    assert (t.groupby("size").accuracy.max().diff().dropna() >= 0).all()
    assert t.groupby("size").size().tolist() == [math.comb(6, k) for k in range(1, 7)]


# --- the report ---
def make_frame(rng, datasets=("nq", "webq"), names=("Wiki@10", "SE@1", "PK", "ReFree"), n=30):
    rows = []
    for d in datasets:
        for q in range(n):
            gold = f"answer{q}"
            for r in names:
                doc = "" if r == "ReFree" else (f"text with {gold} inside" if rng.random() < .6 else "unrelated text")
                ans = gold if rng.random() < .5 else ("unrelated" if rng.random() < .5 else "some other thing")
                if rng.random() < .05: ans = "a long rambling answer of many words"
                rows.append(dict(dataset=d, qid=f"{d}-{q}", retriever=r, answer=ans, golds=[gold, "alias"],
                                 document=doc, correct=bool(contains_match(ans, [gold, "alias"]))))
    return pd.DataFrame(rows)


def test_report_matches_the_pieces():
    rng = np.random.default_rng(21)
    frame = make_frame(rng)
    rep = inconsistency_report(frame, max_pools=3)
    assert list(rep) == ["nq", "webq"]
    for d, r in rep.items():
        f = frame[frame.dataset == d]
        names = list(dict.fromkeys(f.retriever))
        assert r["retrievers"] == names
        c = np.array([[f[(f.retriever == nm) & (f.qid == q)].correct.item() for q in dict.fromkeys(f.qid)] for nm in names], dtype=int)
        np.testing.assert_array_equal(r["rwr"].to_numpy(), ref_rwr(c))
        np.testing.assert_allclose(r["accuracy"].to_numpy(), c.mean(1))
        ans = np.array([[f[(f.retriever == nm) & (f.qid == q)].answer.item() for q in dict.fromkeys(f.qid)] for nm in names], dtype=object)
        keep = ~long_answer_mask(ans)
        assert r["n_error_analysis"] == keep.sum() and r["n_dropped_long"] == (~keep).sum()
        docs = np.array([[f[(f.retriever == nm) & (f.qid == q)].document.item() for q in dict.fromkeys(f.qid)] for nm in names], dtype=object)
        golds = [f[f.qid == q].golds.iloc[0] for q in dict.fromkeys(f.qid)]
        I = error_indicators(c[:, keep], **doc_indicators(ans[:, keep], [g for g, k in zip(golds, keep) if k], docs[:, keep]))
        for e in ERRORS: np.testing.assert_array_equal(r["error_rwr"][e].to_numpy(), ref_error_rwr(I, e))
        refree = r["decomposition"].loc["ReFree"]
        assert refree.Er == 1.0 and refree.Eh == 1.0
        assert r["upper_bound"].groupby("size").size().max() <= 4
    s = summary_frame(rep)
    assert list(s.columns) == ["dataset", "retriever", "accuracy", "mrwr", "mrlr"] and len(s) == 8


def test_report_with_every_question_filtered():
    rng = np.random.default_rng(3)
    frame = make_frame(rng, datasets=("nq",), n=5).assign(answer="one two three four five six seven", correct=False)
    r = inconsistency_report(frame)["nq"]
    assert r["n_error_analysis"] == 0 and r["error_rwr"] is None and r["decomposition"] is None
    off = ~np.eye(4, dtype=bool)
    assert (r["rwr"].to_numpy()[off] == 0).all()  # nobody is ever right, so nobody wins: 0 of N failures
    assert r["best_single"] == 0.0


def test_report_errors():
    frame = make_frame(np.random.default_rng(4), datasets=("nq",), n=4)
    with pytest.raises(ValueError, match="missing"): inconsistency_report(frame.drop(columns="correct"))
    with pytest.raises(ValueError, match="duplicate rows"): inconsistency_report(pd.concat([frame, frame.tail(1)]))
    with pytest.raises(ValueError, match="no row for qid"): inconsistency_report(frame.head(-1))
    with pytest.raises(ValueError, match="no rows"): inconsistency_report(frame.head(0))


# --- real text: with containment for both correctness and occurrence, only one kind of irregular example exists ---
def _squad_dev(n: int = 300):
    "(gold paragraph, first gold, all golds) of the first `n` SQuAD dev questions, through ragkit's own loaders."
    if ("squad", "dev") not in available(): pytest.skip("squad/dev is not in the data dir (set RAGKIT_DATA_DIR)")
    corpus, gold = load_corpus("squad"), gold_pids("squad")
    return [(corpus[gold[e.qid][0]].text, e.answers[0], list(e.answers)) for e in load_dataset("squad", "dev", limit=n)]


def test_irregular_kinds_on_real_squad_text():
    """Answers: the gold, the gold with words around it, another question's gold, and a 3-word span of the paragraph;
    documents: the question's paragraph, another paragraph, and none. A correct answer that occurs in a document
    always implies the gold is in that document (containment is transitive), so (Er, Eh, A) = (1, 0, 1) never occurs."""
    qs = _squad_dev()
    rng = np.random.default_rng(0)
    answers, docs, golds = [[], [], [], []], [[], [], [], []], []
    for k, (ctx, first, gs) in enumerate(qs):
        other_ctx, other_gold = qs[(k + 37) % len(qs)][0], qs[(k + 37) % len(qs)][1]
        words = ctx.split(); s = int(rng.integers(0, max(1, len(words) - 3)))
        cand = [first, f"{first} in {words[0]}", other_gold, " ".join(words[s:s + 3])]
        dd = [ctx, other_ctx, "", ctx]
        for m in range(4): answers[m].append(cand[m]); docs[m].append(dd[(m + k) % 4])
        golds.append(gs)
    correct = [[contains_match(a, g) for a, g in zip(row, golds)] for row in answers]
    I = error_indicators(correct, **doc_indicators(answers, golds, docs))
    r, h, a = I["Er"], I["Eh"], I["A"]
    assert (r * (1 - h) * a).sum() == 0
    assert ((1 - r) * h * a).sum() > 0  # "gold in <first word>" is right but not in the paragraph
    t = decomposition_table(I)
    np.testing.assert_allclose(t.failure + t.irregular, t.decomposed, atol=1e-12)
