"""Issue 40, items 3, 4 (records) and 7: a system that fails is a failure, records never overwrite, rows and files stay
consistent. Every case is one a new user met: a reader that fails on every row, a server that dies after its health
check, `report compare --out README.md`, `--out /dev/null`, a retried row beside its error row, NQ-open with duplicated
lines, golds given as one string, a stored embedding file overwritten with zeros, cached LM rows of the wrong type, run
folders outside outputs/, a non-UTF-8 settings.ini, `parse_retriever(None)`. Nothing needs real data or a model."""
import os
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import json, sqlite3
from pathlib import Path
import numpy as np
import pytest
from ragkit.cli import main
from ragkit.core import Corpus, DamagedFile, Example, Passage
from ragkit.data.registry import load_dataset
from ragkit.data.tasks import Prepared, Task
from ragkit.eval.evaluate import ClosedBook, evaluate, read_latest, read_rows, summary_table
from ragkit.eval.experiment import SystemFailed, run_systems
from ragkit.lm.base import FakeLM
from ragkit.lm.cache import CachedLM
from ragkit.lm.openai import FakeOpenAIServer, FakeReply, OpenAILM
from ragkit.papers.eor.algebra import parse_retriever
from ragkit.retrieve.dense import HashingEmbedder, embed_corpus, embedding_path

EXS = [Example(f"q{i}", f"capital number {i}?", (f"city {i}",)) for i in range(6)]
TASK = Prepared(Task("toy", "toy", None), EXS, None)


def dead(prompt):
    "A reader that fails on every prompt, as a server gone after its health check does."
    raise RuntimeError("POST /completions failed with HTTP 503: model is loading")


def test_a_system_whose_every_row_fails_fails_the_run(tmp_path):
    "Every row fails: no row is scored (never 0), the run fails naming the system, the count and the first error."
    with pytest.raises(SystemFailed) as e:
        run_systems({"works": ClosedBook(FakeLM(default="city 1"), name="works"), "SuRe - BM25": ClosedBook(FakeLM(dead), name="SuRe - BM25")},
                    TASK, out=tmp_path, progress=False)
    msg = str(e.value)
    assert "toy: SuRe - BM25 failed on 6 of 6 questions after retries; the first (q0): RuntimeError: POST /completions failed with HTTP 503" in msg
    assert "Its rows are kept in" in msg and "on_error='exclude'" in msg
    rows = read_rows(next((tmp_path / "toy" / "SuRe_-_BM25").glob("*/examples.jsonl")))
    assert len(rows) == 6 and all(r["error"] and r["exact_match"] is None and r["f1"] is None for r in rows)  # one row per question, none a 0


def test_a_partial_run_leaves_the_failed_system_out_with_a_line(capsys):
    "on_error='exclude': the failed system is in no run (so in no table, front or verdict), and a visible line says why."
    gone = []
    runs = run_systems({"works": ClosedBook(FakeLM(default="city 1"), name="works"), "dead": ClosedBook(FakeLM(dead), name="dead")},
                       TASK, progress=False, on_error="exclude", excluded=gone)
    assert list(runs) == [("toy", "works")]
    assert "EXCLUDED toy: dead failed on 6 of 6 questions" in capsys.readouterr().out and "HTTP 503" in gone[0]
    assert list(summary_table(list(runs.values())).index) == ["works"]


def test_a_server_that_dies_after_its_health_check_names_its_error():
    "The fake server answers /models, then 503 to every completion: the run fails with the server's status and body, not a KeyError."
    with FakeOpenAIServer(default="Paris") as s:
        s.push(*[FakeReply.error(503, "the model worker died") for _ in range(40)])
        lm = OpenAILM("fake", s.base_url, api_key_env=None, backoff=0.01, max_retries=0)
        with pytest.raises(SystemFailed, match=r"failed on 6 of 6 questions.*503.*the model worker died"):
            run_systems({"LoRE": ClosedBook(lm, name="LoRE")}, TASK, progress=False)


def test_a_retried_row_replaces_its_error_row(tmp_path):
    "A question that fails once and succeeds on its retry leaves one row, the good one; the file stays one row per question."
    calls = {}
    def flaky(prompt):
        calls[prompt] = calls.get(prompt, 0) + 1
        if "number 2" in prompt and calls[prompt] == 1: raise RuntimeError("timed out")
        return "city 2"
    ev = evaluate(ClosedBook(FakeLM(flaky), name="flaky"), EXS, out_dir=tmp_path, progress=False, batch_size=1)
    rows = read_rows(ev.path / "examples.jsonl")
    assert [r["qid"] for r in rows] == [e.qid for e in EXS] and not any(r["error"] for r in rows)
    assert ev.summary["n_errors"] == 0 and "failed" not in ev.summary


def test_readers_keep_the_last_row_and_warn_on_duplicates(tmp_path):
    "An examples.jsonl written before the fix, with an error row then its retried row: readers keep the last and say so."
    p = tmp_path / "examples.jsonl"
    p.write_text(json.dumps({"qid": "q1", "prediction": "", "error": "HTTP 503", "f1": 0.0}) + "\n"
                 + json.dumps({"qid": "q1", "prediction": "city 1", "error": None, "f1": 1.0}) + "\n")
    with pytest.warns(UserWarning, match="1 duplicated row"):
        assert [r["f1"] for r in read_latest(p)] == [1.0]


def test_stored_rows_without_error_resume(tmp_path):
    "Rows written by hand or by an older version without `error` are clean rows, not a KeyError."
    ev = evaluate(ClosedBook(FakeLM(default="city 0"), name="cb"), EXS[:1], out_dir=tmp_path, progress=False)
    f = ev.path / "examples.jsonl"
    f.write_text(json.dumps({k: v for k, v in read_rows(f)[0].items() if k != "error"}) + "\n")
    again = evaluate(ClosedBook(FakeLM(default="city 0"), name="cb"), EXS[:1], out_dir=tmp_path, progress=False)
    assert (again.summary["resumed"], again.summary["metrics"]["exact_match"]["mean"]) == (1, 1.0)


def run_folder(d: Path, notebook: str, prediction: str) -> Path:
    "A run folder as `ragkit run --out` writes it, with one system's rows."
    (d / "demo" / "LoRE" / "abc").mkdir(parents=True)
    (d / "run.json").write_text(json.dumps({"notebook": notebook, "git": {"commit": "c" * 40}, "status": "ok"}))
    (d / "results.json").write_text(json.dumps({"reader": "fake"}))
    (d / "demo" / "LoRE" / "abc" / "examples.jsonl").write_text(json.dumps({"qid": "q1", "prediction": prediction, "exact_match": 1.0}) + "\n")
    return d


def cli(capsys, *argv) -> tuple[int, str]:
    "Exit code and stderr of `ragkit argv`, run in this process."
    rc = main(list(map(str, argv)))
    return rc, capsys.readouterr().err


def test_report_compare_refuses_what_is_not_its_record(tmp_path, capsys):
    "README.md as --out, two notebooks, a folder against itself, a device, a directory: one line each, exit 2, nothing written."
    a, b, c = run_folder(tmp_path / "a", "40_papers.lore", "x"), run_folder(tmp_path / "b", "40_papers.lore", "y"), run_folder(tmp_path / "c", "90_benchmark", "x")
    readme = tmp_path / "README.md"; readme.write_text("# ragkit\n")
    for argv, says in [((a, b, "--out", readme), "README.md exists and is not a ragkit compare record"),
                       ((a, c, "--out", tmp_path / "x.json"), "different notebooks (40_papers.lore and 90_benchmark)"),
                       ((a, a, "--out", tmp_path / "x.json"), "is compared with itself"),
                       ((a, b, "--out", "/dev/null"), "/dev/null is not a regular file"),
                       ((a, b, "--out", tmp_path), "is a directory")]:
        rc, err = cli(capsys, "report", "compare", *argv, "--root", tmp_path)
        assert rc == 2 and says in err and "Traceback" not in err and err.count("\n") == 1, err
    assert readme.read_text() == "# ragkit\n" and not (tmp_path / "x.json").exists()
    assert cli(capsys, "report", "compare", a, b, "--out", tmp_path / "bench" / "c.json", "--root", tmp_path)[0] == 0
    assert cli(capsys, "report", "compare", a, b, "--out", tmp_path / "bench" / "c.json", "--root", tmp_path)[0] == 0  # its own record


def test_report_times_paths(tmp_path, capsys, monkeypatch):
    "`report times`: README.md, a directory or a device as --out are named in one line; --profile reads $RAGKIT_OUTPUTS_DIR."
    run = run_folder(tmp_path / "run", "40_papers.lore", "x")
    readme = tmp_path / "README.md"; readme.write_text("# ragkit\n")
    for out, says in [(readme, "README.md exists and is not a ragkit times record"), (tmp_path, "is a directory"), ("/dev/null", "not a regular file")]:
        rc, err = cli(capsys, "report", "times", "--run", run, "--out", out, "--root", tmp_path)
        assert rc == 2 and says in err and "Traceback" not in err, err
    outs = tmp_path / "elsewhere"; (outs / "smoke" / "06_data.cards").mkdir(parents=True)
    (outs / "smoke" / "06_data.cards" / "run.json").write_text(json.dumps(dict(notebook="06_data.cards", profile="smoke", status="ok", seconds=3.0,
                                                                                  git={"commit": "c"}, started="2026-01-01T00:00:00")))
    monkeypatch.setenv("RAGKIT_OUTPUTS_DIR", str(outs))
    rc, err = cli(capsys, "report", "times", "--profile", "smoke", "--out", tmp_path / "t.json", "--root", tmp_path)
    assert rc == 0, err
    assert [r["notebook"] for r in json.loads((tmp_path / "t.json").read_text())["cold"]["runs"]] == ["06_data.cards"]


def test_run_out_that_is_not_a_folder(tmp_path, capsys):
    "`ragkit run --out README.md` and `--out /dev/null`: one line, exit 2, the file untouched."
    readme = tmp_path / "README.md"; readme.write_text("# ragkit\n")
    for out, says in [(readme, "README.md is a file; --out names a run folder"), ("/dev/null", "/dev/null is not a folder")]:
        rc, err = cli(capsys, "run", "06_data.cards", "--out", out)
        assert rc == 2 and says in err and "Traceback" not in err, err
    assert readme.read_text() == "# ragkit\n"


def test_status_lists_run_folders_sent_elsewhere(tmp_path, capsys, monkeypatch):
    "`ragkit status` lists a run folder named with --out outside outputs/, and says where it looked when it finds none."
    from ragkit.config import load_settings
    from ragkit.runner import remember_run
    monkeypatch.setenv("RAGKIT_OUTPUTS_DIR", str(tmp_path / "outputs")); monkeypatch.setenv("RAGKIT_CACHE_DIR", str(tmp_path / "cache"))
    main(["status"])
    assert "no run folders: looked in" in capsys.readouterr().out
    run = run_folder(tmp_path / "mine", "40_papers.lore", "x")
    remember_run(run, load_settings())
    main(["status"])
    assert str(run) in capsys.readouterr().out


def test_duplicated_lines_and_golds_as_one_string(tmp_path, monkeypatch):
    "NQ-open with its lines duplicated loads each question once, with a warning; golds given as one string are refused."
    nq = tmp_path / "nq_open"; nq.mkdir()
    lines = [json.dumps({"question": f"who wrote book {i}", "answer": [f"author {i}"]}) for i in range(3)]
    (nq / "NQ-open.dev.jsonl").write_text("\n".join(lines + lines) + "\n")
    with pytest.warns(UserWarning, match="3 row\\(s\\) repeat an earlier row"):
        exs = load_dataset("nq-open", "dev", data_dir=tmp_path)
    assert [e.qid for e in exs] == ["nq-open/dev/0", "nq-open/dev/1", "nq-open/dev/2"]
    (nq / "NQ-open.dev.jsonl").write_text(json.dumps({"question": "who wrote it", "answer": "['a', 'b']"}) + "\n")
    with pytest.raises(Exception, match="looks like a list"): load_dataset("nq-open", "dev", data_dir=tmp_path)
    with pytest.raises(TypeError, match="golds must be a list of strings, got 'Paris'"):
        evaluate(lambda q: "Paris", [Example("q", "capital of France?", "Paris")], progress=False)


def test_zero_or_non_finite_embeddings_are_refused(tmp_path):
    "A stored embedding file overwritten with zeros, or holding a NaN, is refused, not searched with every score 0."
    toy = Corpus([Passage("p0", "Cats", "Cats sleep."), Passage("p1", "Paris", "Paris is the capital of France.")], "toy")
    he = HashingEmbedder(16)
    good = np.array(embed_corpus(toy, he, tmp_path, progress=False))  # a copy: the store is memory-mapped
    p = embedding_path(toy, he, tmp_path)
    np.save(p, np.zeros_like(good))
    with pytest.raises(DamagedFile, match="2 of its 2 vectors are zero or non-finite"): embed_corpus(toy, he, tmp_path, progress=False)
    bad = good.copy(); bad[1, 3] = np.inf; np.save(p, bad)
    with pytest.raises(DamagedFile, match="1 of its 2 vectors"): embed_corpus(toy, he, tmp_path, progress=False)


@pytest.mark.parametrize("value", ["null", "[1, 2]", '{"text": 5, "tokens": "abc"}', '"a string"'])
def test_cached_rows_of_the_wrong_type_are_recomputed(tmp_path, value):
    "A cached row that is JSON null, a list, or has fields of the wrong type is recomputed with a warning, never served."
    c = CachedLM(FakeLM(default="Paris"), tmp_path / "c.sqlite"); c.generate(["Q"])
    with sqlite3.connect(tmp_path / "c.sqlite") as db: db.execute("UPDATE cache SET value = ?", (value,))
    again = CachedLM(FakeLM(default="Paris"), tmp_path / "c.sqlite")
    with pytest.warns(UserWarning, match="damaged LM cache row"):
        out = again.generate(["Q"])[0]
    assert (out.text, out.cached, again.misses) == ("Paris", False, 1)


def test_non_utf8_settings_and_parse_retriever_none(tmp_path, capsys, monkeypatch):
    "A Latin-1 settings.ini names its file and line; parse_retriever(None) says what a retriever name is."
    ini = tmp_path / "settings.ini"; ini.write_bytes("[ragkit]\ndata_dir = /data/caf\u00e9\n".encode("latin-1"))
    monkeypatch.setenv("RAGKIT_SETTINGS", str(ini))
    rc, err = cli(capsys, "status")
    assert rc == 2 and f"{ini}, line 2: not UTF-8 text" in err and "Traceback" not in err
    with pytest.raises(TypeError, match="a retriever name is a string"): parse_retriever(None)
