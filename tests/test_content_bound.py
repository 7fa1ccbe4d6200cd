"""Stored rows bound to what they answer (issue 53). `evaluate` resumes a stored row only while its question and golds
match the example now under its qid (qids are line numbers, so a dataset whose lines moved must not serve an old
answer to a new question), and the LM cache refuses a stored completion or score with NaN, infinite or negative
values. Every file is written under tmp_path; nothing needs the real data or a model."""
import json, math, sqlite3, warnings
from pathlib import Path
import pytest
from ragkit.core import Example, Prediction
from ragkit.eval.evaluate import content_hash, evaluate, read_rows, row_matches
from ragkit.lm.base import FakeLM
from ragkit.lm.cache import CachedLM


# --- evaluate: rows bound to their question and golds -------------------------------------------------------------

def dataset(n: int = 9) -> list[Example]:
    "A small dataset as loaded from a file: qids q0..q{n-1} are its line numbers, each question its own golds."
    return [Example(f"q{i}", f"what is the number {i}?", [f"number {i}", f"#{i}"]) for i in range(n)]


class Oracle:
    "Answers each question with its first gold, looked up by question text; records the questions it is asked."
    name = "oracle"
    def __init__(self, examples): self.gold, self.asked = {e.question: e.answers[0] for e in examples}, []
    @property
    def config(self): return {"answers": "its question's first gold"}  # the golds: bound to each row by its hash
    def answer(self, question):
        self.asked.append(question)
        return Prediction(self.gold[question])


def reversed_lines(exs: list[Example]) -> list[Example]:
    "The same file with its lines reversed: each qid (a line number) now names the question of the mirrored line."
    return [Example(e.qid, f.question, list(f.answers)) for e, f in zip(exs, exs[::-1])]


def run(exs, out: Path, **kw):
    "Evaluate an oracle for `exs` into `out`; (evaluation, oracle, the warnings' texts)."
    m = Oracle(exs)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ev = evaluate(m, exs, out_dir=out, progress=False, batch_size=4, **kw)
    return ev, m, [str(x.message) for x in w]


def stale_warnings(said: list[str]) -> list[str]:
    "The warnings about stored rows that no longer match their question."
    return [s for s in said if "stored row(s) answer another question" in s]


def test_every_row_carries_its_content_hash(tmp_path):
    "A written row stores a hash of its question and golds, and matches the example it was written for."
    exs = dataset(3)
    ev, _, _ = run(exs, tmp_path)
    rows = read_rows(ev.path / "examples.jsonl")
    assert [r["content"] for r in rows] == [content_hash(e.question, e.answers) for e in exs]
    assert all(row_matches(r, e) for r, e in zip(rows, exs))
    assert "content" not in ev.table.columns  # the table keeps its columns


def test_reversed_dataset_resumes_no_row_of_another_question(tmp_path):
    "The file's lines reversed under the same qids: every resumed row answers its own question, with one warning."
    exs = dataset(9)
    first, _, _ = run(exs, tmp_path)
    rows_file = first.path / "examples.jsonl"
    flipped = reversed_lines(exs)
    ev, m, said = run(flipped, tmp_path)
    assert ev.path == first.path  # the same run folder: the method's key did not change, only the data
    # the middle line (q4) is the same question: it resumes; the 8 others are asked again
    assert (ev.summary["resumed"], sorted(m.asked)) == (1, sorted(e.question for e in flipped if e.qid != "q4"))
    assert ev.table["question"].tolist() == [e.question for e in flipped]
    assert ev.table["golds"].tolist() == [list(e.answers) for e in flipped]
    assert ev.summary["metrics"]["exact_match"]["mean"] == 1.0  # an old answer scored against the new golds is a 0
    assert all(p == g[0] for p, g in zip(ev.table["prediction"], ev.table["golds"]))
    stored = {r["qid"]: r for r in read_rows(rows_file)}
    assert len(stored) == len(flipped) and all(row_matches(stored[e.qid], e) for e in flipped)
    assert all(stored[e.qid]["question"] == e.question for e in flipped)
    warned = stale_warnings(said)
    assert len(warned) == 1, said
    assert warned[0].startswith(f"{rows_file}: 8 stored row(s)")
    assert "e.g. q0: stored for 'what is the number 0?', now 'what is the number 8?'" in warned[0]
    assert "the data changed since they were written" in warned[0]
    again, m2, said2 = run(flipped, tmp_path)  # now the rows match the data: all resume, nothing is said
    assert (again.summary["resumed"], m2.asked, stale_warnings(said2)) == (9, [], [])


def test_rows_without_a_hash_resume_while_the_data_is_unchanged(tmp_path):
    "Rows written before `content` existed (the committed runs) are checked by their stored question and golds."
    exs = dataset(6)
    first, _, _ = run(exs, tmp_path)
    rows_file = first.path / "examples.jsonl"
    rows_file.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "content"}) + "\n"
                                 for r in read_rows(rows_file)), encoding="utf-8")
    ev, m, said = run(exs, tmp_path)
    assert (ev.summary["resumed"], m.asked, stale_warnings(said)) == (6, [], [])
    assert ev.table.equals(first.table.assign(seconds=ev.table["seconds"]))  # the same table, read back
    flipped = reversed_lines(exs)
    ev, m, said = run(flipped, tmp_path)
    assert (ev.summary["resumed"], len(m.asked)) == (0, 6)
    assert ev.table["question"].tolist() == [e.question for e in flipped]
    assert len(stale_warnings(said)) == 1 and f"{rows_file}: 6 stored row(s)" in stale_warnings(said)[0]


def test_a_changed_gold_is_answered_again(tmp_path):
    "The same question with golds edited since: its stored row was not scored against these golds, so it is redone."
    exs = dataset(4)
    run(exs, tmp_path)
    fixed = [Example(e.qid, e.question, ["the number 2"] if e.qid == "q2" else list(e.answers)) for e in exs]
    ev, m, said = run(fixed, tmp_path)
    assert (ev.summary["resumed"], m.asked) == (3, ["what is the number 2?"])
    warned = stale_warnings(said)
    assert len(warned) == 1 and "(e.g. q2: golds stored ['number 2', '#2'], now ['the number 2'])" in warned[0]


def test_rows_only_counts_a_row_of_another_question_as_missing(tmp_path, monkeypatch):
    "A re-render (RAGKIT_ROWS_ONLY) over data that changed stops, naming the run folder and saying the data changed."
    exs = dataset(5)
    first, _, _ = run(exs, tmp_path)
    monkeypatch.setenv("RAGKIT_ROWS_ONLY", "1")
    assert run(exs, tmp_path)[0].summary["resumed"] == 5  # unchanged data: every row is there
    with pytest.raises(RuntimeError) as e:
        evaluate(Oracle(exs), reversed_lines(exs), out_dir=tmp_path, progress=False)
    msg = str(e.value)
    assert f"oracle: 4 of 5 questions have no row under {first.path}" in msg
    assert "4 stored row(s) answer another question" in msg and "the data changed since the rows were written" in msg
    assert "settings moved its key" not in msg  # every missing row is explained by the data
    with pytest.raises(RuntimeError, match="the data changed.*; and the run's settings moved its key"):
        evaluate(Oracle(exs), reversed_lines(exs) + [Example("q9", "a new line?", ["new"])], out_dir=tmp_path,
                 progress=False)
    assert len(read_rows(first.path / "examples.jsonl")) == 5  # nothing was answered or written


# --- the LM cache: stored values that cannot be right are refused -------------------------------------------------

def cached_once(path: Path) -> None:
    "An LM cache at `path` holding one completion of 'Q' and one score of ' Paris' after 'Q'."
    c = CachedLM(FakeLM(default="Paris"), path)
    c.generate(["Q"])
    c.score("Q", " Paris")


def overwrite(path: Path, kind: str, change) -> None:
    "Replace each stored completion (`generate`) or score (`score`) by `change(value)`."
    with sqlite3.connect(path) as db:
        for key, value in db.execute("SELECT key, value FROM cache").fetchall():
            v = json.loads(value)
            if isinstance(v, dict) == (kind == "generate"):
                db.execute("UPDATE cache SET value = ? WHERE key = ?", (change(v), key))


def served_again(path: Path, kind: str):
    "What a new CachedLM on `path` answers for the stored request, its misses, and the warnings it gave."
    again = CachedLM(FakeLM(default="Paris"), path)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = again.generate(["Q"])[0] if kind == "generate" else again.score("Q", " Paris")
    return out, again.misses, [str(x.message) for x in w]


@pytest.mark.parametrize("logprob", ["NaN", "Infinity", "-Infinity", "-1" + "0" * 400])
def test_cached_nan_or_infinite_logprobs_are_recomputed(tmp_path, logprob):
    "A cached completion whose log-probs hold NaN or an infinity is never served: recomputed, with the file named."
    path = tmp_path / "lm.sqlite"; cached_once(path)
    overwrite(path, "generate", lambda v: json.dumps(v | {"logprobs": ["@"]}).replace('"@"', logprob))
    assert logprob in sqlite3.connect(path).execute("SELECT group_concat(value) FROM cache").fetchone()[0]
    out, misses, said = served_again(path, "generate")
    assert (out.text, out.cached, misses) == ("Paris", False, 1)
    assert all(math.isfinite(x) for x in out.logprobs)
    assert any(s.startswith(f"{path}: 1 damaged LM cache row(s) ignored") for s in said), said
    assert any("'logprobs' holds NaN or an infinity" in s or "too large" in s for s in said), said


@pytest.mark.parametrize("field", ["prompt_tokens", "usage_tokens"])
def test_cached_negative_token_counts_are_recomputed(tmp_path, field):
    "A cached completion with a negative prompt or usage token count is recomputed, with the file and field named."
    path = tmp_path / "lm.sqlite"; cached_once(path)
    overwrite(path, "generate", lambda v: json.dumps(v | {field: -5}))
    out, misses, said = served_again(path, "generate")
    assert (out.text, out.cached, misses, out.prompt_tokens >= 0) == ("Paris", False, 1, True)
    assert any(s.startswith(f"{path}: 1 damaged LM cache row(s) ignored") and field in s for s in said), said


@pytest.mark.parametrize("score", ["NaN", "Infinity", "-Infinity"])
def test_cached_nan_or_infinite_score_is_recomputed(tmp_path, score):
    "A cached score that is NaN or infinite is never served: the model scores again, with the file named."
    path = tmp_path / "lm.sqlite"; cached_once(path)
    overwrite(path, "score", lambda v: score)
    out, misses, said = served_again(path, "score")
    assert (out, misses) == (FakeLM(default="Paris").score("Q", " Paris"), 1)
    assert any(s.startswith(f"{path}: 1 damaged LM cache row(s) ignored") for s in said), said


def test_sound_cached_rows_are_still_served(tmp_path):
    "The refusals above leave sound rows alone: zero tokens, a usage of None and finite log-probs are served."
    path = tmp_path / "lm.sqlite"; cached_once(path)
    sound = {"prompt_tokens": 0, "usage_tokens": None, "logprobs": [-30.5]}
    overwrite(path, "generate", lambda v: json.dumps(v | sound))
    out, misses, said = served_again(path, "generate")
    assert (out.cached, misses, out.logprobs, out.prompt_tokens) == (True, 0, [-30.5], 0)
    assert not [s for s in said if "damaged LM cache" in s]


def test_a_method_without_settings_still_writes_rows(tmp_path):
    "A ragkit Method with no setting has no config (None) but is its class's code alone by construction: it may write rows."
    from ragkit.core import Method
    from ragkit.eval.evaluate import evaluate
    class Echo(Method):
        name = "echo"
        def answer_batch(self, questions): return [Prediction("number 1") for _ in questions]
    ev = evaluate(Echo(), dataset(3), out_dir=tmp_path, progress=False)
    assert ev.summary["n"] == 3 and (ev.path / "examples.jsonl").is_file()
