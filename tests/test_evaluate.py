"""ragkit.eval.evaluate on the real NQ-open dev questions: an oracle scores 100 with no errors, the method never sees the
golds, an interrupted run resumes to the same table, a failing example is recorded, and the summary's intervals are
bootstrap_ci's."""
import json
import os
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never hang on hub look-ups

import pytest

from ragkit.core import Example, stable_hash
from ragkit.data.registry import load_dataset
from ragkit.core import Prediction
from ragkit.eval.evaluate import compare, evaluate, read_rows, run_folder, summary_table, write_results
from ragkit.eval.metrics import bootstrap_ci, normalize_answer

SCORED = ["qid", "question", "golds", "prediction", "raw", "pids", "exact_match", "contains_match", "f1", "error"]


@pytest.fixture(scope="module")
def nq(data_dir):
    "The NQ-open dev examples (3,610), or skip without a data dir."
    return load_dataset("nq-open", split="dev")


class Oracle:
    "Answers with the first gold of each question, looked up by question text; records every argument it receives."
    name = "oracle"
    def __init__(self, examples, fail_on=None, interrupt_on=None):
        self.gold = {e.question: e.answers[0] for e in examples}
        self.fail_on, self.interrupt_on, self.asked = fail_on, interrupt_on, []

    @property
    def config(self):
        "What its answers depend on: its golds (a hash: NQ has 3,610); failing and interrupting only stop it."
        return {"gold": stable_hash(json.dumps(sorted(self.gold.items())))}

    def answer(self, question):
        if question == self.interrupt_on: raise KeyboardInterrupt
        self.asked.append(question)
        if question == self.fail_on: raise RuntimeError("backend down")
        return Prediction(self.gold[question], raw=f"The answer is {self.gold[question]}.", lm_calls=1, tokens=3)


def test_oracle_scores_everything(nq, tmp_path):
    "The oracle gets EM, containment and F1 of 1 on all 3,610 questions; it was handed each question text only."
    m = Oracle(nq)
    ev = evaluate(m, nq, out_dir=tmp_path, progress=False)
    s = ev.summary
    assert (s["n"], s["n_errors"], s["lm_calls"], s["tokens"]) == (3610, 0, 3610, 3 * 3610)
    # three first golds normalise to nothing ('---', ')', 'A+'), and an empty answer matches nothing
    empty = [e.qid for e in nq if not normalize_answer(e.answers[0])]
    assert len(empty) == 3
    assert ev.table.loc[ev.table["exact_match"] < 1, "qid"].tolist() == empty
    assert all(s["metrics"][k]["mean"] == pytest.approx(3607 / 3610) for k in ("exact_match", "contains_match", "f1"))
    assert m.asked == [e.question for e in nq]
    assert ev.table["qid"].tolist() == [e.qid for e in nq]
    assert json.loads((ev.path / "summary.json").read_text()) == json.loads(json.dumps(s))


def test_interrupted_run_resumes_to_the_same_table(nq, tmp_path):
    "Interrupted at example 1,000 and resumed, the run asks each question once and ends with the uninterrupted table."
    exs = nq[:1500]
    full = evaluate(Oracle(exs), exs, out_dir=tmp_path / "a", progress=False)
    with pytest.raises(KeyboardInterrupt):
        evaluate(Oracle(exs, interrupt_on=exs[1000].question), exs, out_dir=tmp_path / "b", batch_size=64, progress=False)
    assert len(read_rows(run_folder(tmp_path / "b", Oracle(exs)) / "examples.jsonl")) == 1000
    m = Oracle(exs)
    ev = evaluate(m, exs, out_dir=tmp_path / "b", batch_size=64, progress=False)
    assert m.asked == [e.question for e in exs[1000:]]
    assert ev.summary["resumed"] == 1000
    assert ev.table[SCORED].equals(full.table[SCORED])


def test_torn_last_line_is_recovered(nq, tmp_path):
    "A half-written last line (a killed run) is dropped with a warning and its example answered again."
    exs = nq[:50]
    p = evaluate(Oracle(exs), exs, out_dir=tmp_path, progress=False).path / "examples.jsonl"
    lines = p.read_text().split("\n")
    p.write_text("\n".join(lines[:40]) + "\n" + lines[40][:25])
    m = Oracle(exs)
    with pytest.warns(UserWarning, match="half-written"):
        ev = evaluate(m, exs, out_dir=tmp_path, progress=False)
    assert m.asked == [e.question for e in exs[40:]]
    assert ev.summary["metrics"]["exact_match"]["mean"] == 1.0
    assert len(read_rows(p)) == 50


def test_failure_is_recorded_and_never_scored(nq, tmp_path):
    "One failing question out of 200: the run goes on, the error is kept, the row has no score (never a 0), the summary names it."
    exs = nq[:200]
    ev = evaluate(Oracle(exs, fail_on=exs[17].question), exs, progress=False)
    bad = ev.table[ev.table["error"].notna()]
    assert bad["qid"].tolist() == [exs[17].qid]
    assert bad["error"].iloc[0] == "RuntimeError: backend down"
    assert bad["f1"].isna().all()  # not 0.0
    assert ev.summary["n_errors"] == 1
    assert ev.summary["failed"] == dict(rows=1, of=200, qid=exs[17].qid, first_error="RuntimeError: backend down")
    assert ev.summary["metrics"]["f1"]["mean"] == pytest.approx(1.0)  # over the 199 answered rows


def test_summary_is_bootstrap_ci_of_the_table(nq):
    "The interval in the summary is bootstrap_ci of the per-example column, with the same seed and resamples."
    exs = nq[:300]
    gold = {e.question: e.answers[0] for e in exs}
    ev = evaluate(lambda q: gold[q] if len(q) % 3 else "no idea", exs, name="sometimes", n_boot=500, seed=3, progress=False)
    for k in ("exact_match", "contains_match", "f1"):
        mean, lo, hi = bootstrap_ci(ev.table[k].tolist(), n=500, seed=3)
        assert ev.summary["metrics"][k] == dict(mean=mean, lo=lo, hi=hi)
    assert 0.5 < ev.summary["metrics"]["contains_match"]["mean"] < 0.8


def test_compare_and_results(nq, tmp_path):
    "Oracle vs a constant answer: delta about 1 with p 0; results.json holds both summaries and the comparison."
    exs = nq[400:700]  # clear of the three empty golds (dev/290, 363, 1150)
    a = evaluate(Oracle(exs), exs, progress=False)
    b = evaluate(lambda q: "the united states", exs[::-1], name="constant", progress=False)
    c = compare(a, b, "exact_match")
    assert c["p_value"] == 0.0 and c["delta"] > 0.9
    with pytest.raises(ValueError, match="scored different questions"):
        compare(a, evaluate(Oracle(exs), exs[:10], progress=False))
    p = write_results(tmp_path, [a, b], dict(dataset="nq-open/dev", comparison=c))
    doc = json.loads(p.read_text())
    assert [s["method"] for s in doc["summaries"]] == ["oracle", "constant"]
    assert summary_table([a, b]).loc["oracle", "EM"] == "100.0 [100.0, 100.0]"


def test_bad_inputs_are_named():
    "Duplicate qids and examples without golds are rejected before any question is asked."
    e = Example("x", "q?", ["a"])
    with pytest.raises(ValueError, match="duplicate qid 'x'"): evaluate(lambda q: "a", [e, e], progress=False)
    with pytest.raises(ValueError, match="no gold answers"): evaluate(lambda q: "a", [Example("y", "q?", [])], progress=False)
    with pytest.raises(TypeError, match="not a method"): evaluate(42, [e], progress=False)
