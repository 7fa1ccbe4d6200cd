"""EoR in the cross-paper benchmark (`nbs/90_benchmark`, issue 37 item 6): it votes as 64_papers.eor.method does, its
rows name their slices and restarts, and it is compared with Top-R, the pool member best on the training folds."""
import json
from pathlib import Path

import pandas as pd
import pytest

from ragkit.benchmark import EOR_POOL, TOP_R, EoRVote, TopR, eor_claims, eor_name
from ragkit.eval.evaluate import Evaluation
from ragkit.notebooks import project_root

ROOT = project_root(Path(__file__).parent)
RUN = ROOT / "outputs" / "paper" / "90_benchmark"


def _eval(name: str, right: list[bool]) -> Evaluation:
    "A finished evaluation: the gold where `right`, else a wrong word; one LM call per question."
    n = len(right)
    t = pd.DataFrame(dict(qid=[f"q{i}" for i in range(n)], question=[f"question {i}?" for i in range(n)], golds=[(f"a{i}",) for i in range(n)],
                          prediction=[f"a{i}" if r else "wrong" for i, r in enumerate(right)], raw="", lm_calls=1, prompt_tokens=10,
                          tokens=1, cached_calls=0, seconds=0.5))
    return Evaluation(name, t, dict(fingerprint=name))


def _pool(n: int = 30) -> dict[str, Evaluation]:
    "Four members: closed-book never right, the others right on different stretches of the questions."
    rights = ([False] * n, [i < n // 3 for i in range(n)], [i >= n // 3 for i in range(n)], [i % 2 == 0 for i in range(n)])
    return {m: _eval(m, r) for m, r in zip(EOR_POOL, rights)}


def test_the_vote_is_searched_as_in_64_and_says_so():
    "The defaults are 64's paper run: em, f1, bertscore and nli slices (nli at weight 0 without a model), 4 restarts, weights at most 0.6."
    v = EoRVote(_pool(), folds=3)
    assert v.config["slices"] == ["em", "f1", "bertscore:minilm-l6@L6", "nli:none"] and v.config["restarts"] == 4 and v.config["sim_upper"] == 0.6
    assert eor_name(v) == "EoR (vote over closed-book and the naive RAGs; slices em, f1, bertscore:minilm-l6@L6, nli:none at weight 0; 4 restarts)"
    assert all(r["sim_weights"]["nli:none"] == 0 and max(r["sim_weights"].values()) <= 1 for r in v.fit_rows())
    assert EoRVote(_pool(), folds=3, metrics=("em", "f1"), restarts=0).config["slices"] == ["em", "f1"]


def test_top_r_is_chosen_on_the_training_folds_not_the_test_questions():
    "Each question's Top-R member is the one most often right on the folds that did not test it; it is charged one member's cost."
    pool = _pool()
    v = EoRVote(pool, folds=3)
    right = pd.DataFrame({m: pool[m].table.prediction != "wrong" for m in EOR_POOL})
    fold = pd.Series([v.fold[f"question {i}?"] for i in range(30)])
    for f in sorted(set(fold)):
        want = right[fold != f].mean().idxmax()  # best on the other folds (ties: the earlier member)
        assert {v.top_r[f"question {i}?"] for i in fold.index[fold == f]} == {want}
    p = TopR(v, TOP_R).answer("question 5?")
    assert p.lm_calls == 1 and p.trace["chosen"] == v.top_r["question 5?"]
    assert v.answer("question 5?").lm_calls == 4 and v.answer("question 5?").trace["top_r"] == p.trace["chosen"]


def test_eor_is_claimed_against_top_r():
    "eor_claims compares every EoR row with Top-R on its task, under EoR's vote mechanism."
    runs = {("t", "EoR (x)"): None, ("t", TOP_R): None, ("u", "EoR (x)"): None}
    cs = eor_claims(runs)
    assert [(c.dataset, c.a, c.b, c.mechanism) for c in cs] == [("t", "EoR (x)", TOP_R, "EoR's vote")]


@pytest.mark.skipif(not (RUN / "results.json").is_file(), reason="no committed paper run of 90_benchmark")
def test_the_committed_eor_rows_name_their_slices_and_restarts_and_meet_top_r():
    "In the committed paper run every EoR row names its slices and restarts, and each task has EoR-vs-Top-R verdicts and the fold fits."
    res = json.loads((RUN / "results.json").read_text(encoding="utf-8"))
    eor = [r for r in res["table"] if r["system"].startswith("EoR")]
    assert eor and all("slices em, f1, bertscore" in r["system"] and "4 restarts" in r["system"] for r in eor)
    tasks = {r["task"] for r in eor}
    assert {r["task"] for r in res["table"] if r["system"] == TOP_R} == tasks
    vs_top = [v for v in res["verdict"] if v["a"].startswith("EoR") and v["b"] == TOP_R]
    assert {(v["dataset"], v["metric"]) for v in vs_top} == {(d, m) for d in tasks for m in ("f1", "contains_match")}
    assert {r["task"] for r in res["eor_fits"]} == tasks and all(r["restarts"] == 4 for r in res["eor_fits"])
    assert all(r["best_in_hindsight"] in EOR_POOL for r in res["eor_versus"])
