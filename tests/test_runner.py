"""`ragkit run` / `ragkit reproduce` on throwaway projects: tiny notebooks executed by the real papermill and the
`python3` kernel (no model is loaded), plus the check that keeps nbs/profiles.toml in step with the notebooks."""
import json, os, re, signal, time
from pathlib import Path

import nbformat, pytest

from ragkit import notebooks, portable, runner
from ragkit.cli import main
from ragkit.config import load_settings
from ragkit.notebooks import check_value, find_notebook, load_profiles, notebook_defaults, project_root, resolve_parameters
from ragkit.runner import RunFailed, overrides_hash, read_run, reproduce, run_dir, run_notebook, status_lines
from toy import toy_project

PARAMS = 'n = 1\nword = "smoke"\nrate = 0.5\nout_dir = ""'
WRITE = 'import json, pathlib\npathlib.Path(out_dir, "results.json").write_text(json.dumps({"n": n, "word": word}))'
PROFILES = '[reproduce]\nnotebooks = ["t", "u"]\n[t.demo]\nn = 2\nword = "demo"\n[t.full]\nn = "many"\n'


def project(d: Path, *cells: str, params: str = PARAMS, profiles: str = PROFILES) -> Path:
    "A project root under `d`: nbs/profiles.toml and nbs/t.ipynb (a parameters cell, then `cells`)."
    return toy_project(d, params, *cells, profiles=profiles)


@pytest.fixture
def root(tmp_path):
    return project(tmp_path / "proj", WRITE)


@pytest.fixture
def settings(tmp_path):
    return load_settings(env={"RAGKIT_OUTPUTS_DIR": str(tmp_path / "outputs"), "RAGKIT_CACHE_DIR": str(tmp_path / "cache")})  # --out folders are remembered there, not in this machine's cache


@pytest.fixture
def no_kernel(monkeypatch):
    "Record any call to papermill.execute_notebook instead of running it."
    import papermill
    calls = []
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **k: calls.append(a))
    return calls


def test_wrong_type_refused_before_execution(root, settings, no_kernel):
    with pytest.raises(ValueError, match=r"t: parameter 'n' \(default 1, type int\) cannot take str 'abc' from -p on the command line"):
        run_notebook("t", "demo", {"n": "abc"}, settings=settings, root=root, progress=False)
    for bad in [{"n": True}, {"n": 2.5}, {"rate": "0.5"}, {"word": 5}]:
        with pytest.raises(ValueError, match="cannot take"): run_notebook("t", "smoke", bad, settings=settings, root=root, progress=False)
    assert no_kernel == [] and not settings.outputs_dir.exists()


def test_profile_value_of_wrong_type_names_the_profile_file(root, settings, no_kernel):
    with pytest.raises(ValueError, match=r"cannot take str 'many' from nbs/profiles.toml \[t.full\]"):
        run_notebook("t", "full", settings=settings, root=root, progress=False)
    assert no_kernel == []


def test_unknown_parameter_refused(root, settings, no_kernel):
    with pytest.raises(ValueError, match=r"no parameter\(s\) \['nn'\] \(from -p on the command line\) \(did you mean n\?\); its parameters are: n, word, rate, out_dir"):
        run_notebook("t", "demo", {"nn": 3}, settings=settings, root=root, progress=False)
    assert no_kernel == []


def test_non_literal_default_is_an_error(tmp_path):
    d = project(tmp_path, params="n = 2 ** 10")
    with pytest.raises(ValueError, match=r"t: the default of parameter 'n' is `2 \*\* 10`, which is not a literal"):
        notebook_defaults(d / "nbs" / "t.ipynb")


def test_values_take_the_defaults_type(root):
    nb = root / "nbs" / "t.ipynb"
    assert resolve_parameters(nb, "demo", {"n": 1e3, "rate": 1}, root) == {"n": 1000, "word": "demo", "rate": 1.0, "out_dir": ""}
    assert check_value("t", "xs", ["a"], ["b", "c"], "-p") == ["a"]
    assert check_value("t", "flag", False, True, "-p") is False
    with pytest.raises(ValueError): check_value("t", "flag", 1, True, "-p")
    with pytest.raises(ValueError): check_value("t", "xs", {"a": 1}, ["b"], "-p")


def test_datasets_checked_before_execution(tmp_path, settings, no_kernel):
    d = project(tmp_path / "p", params='datasets = "demo"\nout_dir = ""')
    with pytest.raises(ValueError, match=r"parameter 'datasets' = 'demo,zzz' from -p on the command line: .*unknown \['zzz'\]"):
        run_notebook("t", "smoke", {"datasets": "demo,zzz"}, settings=settings, root=d, progress=False)
    assert no_kernel == []


def test_smoke_run_params_json_is_fully_resolved_and_run_json_goes_running_to_ok(tmp_path, settings):
    seen = ('import json, os, pathlib\nr = json.loads(pathlib.Path(out_dir, "run.json").read_text())\n'
            'pathlib.Path(out_dir, "seen.json").write_text(json.dumps({"status": r["status"], "pid": r["pid"]}))')
    d = project(tmp_path / "p", seen)
    out = run_notebook("t", "smoke", settings=settings, root=d, progress=False)
    assert out == settings.outputs_dir / "smoke" / "t"
    # a run folder outside the project: named from the notebook's cwd (nbs/), never as this machine's absolute path
    assert json.loads((out / "params.json").read_text()) == {"n": 1, "word": "smoke", "rate": 0.5,
                                                             "out_dir": os.path.relpath(out, d / "nbs")}
    assert json.loads((out / "seen.json").read_text()) == {"status": "running", "pid": os.getpid()}  # while the kernel ran
    rec = read_run(out)
    assert rec["status"] == "ok" and rec["params"]["word"] == "smoke" and rec["overrides"] == {} and rec["profile"] == "smoke"
    assert {"finished", "seconds", "git", "settings", "packages", "started"} <= set(rec)
    assert not list(out.glob(".*.tmp"))


def test_the_kernel_sees_the_runners_settings(tmp_path, monkeypatch):
    "A relative RAGKIT_DATA_DIR means the same folder in the kernel (cwd nbs/) as in the runner."
    (tmp_path / "data").mkdir(); monkeypatch.chdir(tmp_path)
    s = load_settings(env={"RAGKIT_DATA_DIR": "data", "RAGKIT_OUTPUTS_DIR": "outputs"})
    d = project(tmp_path / "p", 'import json, pathlib\nfrom ragkit.config import load_settings\n'
                'pathlib.Path(out_dir, "seen.json").write_text(json.dumps({k: str(v) for k, v in load_settings().to_dict().items()}))')
    out = run_notebook("t", "smoke", settings=s, root=d, progress=False)
    seen = json.loads((out / "seen.json").read_text())
    assert (seen["data_dir"], seen["outputs_dir"]) == (str(tmp_path / "data"), str(tmp_path / "outputs"))
    assert read_run(out)["settings"]["data_dir"] == "../data"  # recorded relative to the project root (tmp_path / "p"), not as this machine's path


def test_a_run_inside_the_project_records_no_absolute_path(tmp_path):
    "The run folder under the project's outputs/: the notebook gets out_dir relative to nbs/, the records relative to the root."
    d = project(tmp_path / "p", 'import json, pathlib\npathlib.Path(out_dir, "results.json").write_text(json.dumps({"out_dir": out_dir}))')
    s = load_settings(env={"RAGKIT_OUTPUTS_DIR": str(d / "outputs")})
    out = run_notebook("t", "smoke", settings=s, root=d, progress=False)
    assert out == d / "outputs" / "smoke" / "t" and (out / "results.json").is_file()  # written where the runner said, from cwd nbs/
    assert json.loads((out / "params.json").read_text())["out_dir"] == "../outputs/smoke/t"
    rec = read_run(out)
    assert rec["out"] == "outputs/smoke/t" and rec["settings"]["outputs_dir"] == "outputs"
    texts = [(out / f).read_text() for f in ("params.json", "run.json", "results.json", "t.ipynb")]
    assert not any(str(tmp_path) in t for t in texts), "a record holds this machine's path"


def test_failing_cell_recorded(tmp_path, settings):
    d = project(tmp_path / "p", "x = 1", 'raise ValueError(f"bad word: {word}")')
    with pytest.raises(RunFailed, match=r"t failed in cell 2 \(In \[4\]: raise ValueError.*ValueError: bad word: smoke"):
        run_notebook("t", "smoke", settings=settings, root=d, progress=False)
    rec = read_run(settings.outputs_dir / "smoke" / "t")
    assert rec["status"] == "failed"
    assert rec["cell"] == {"index": 2, "exec_count": 4, "source": 'raise ValueError(f"bad word: {word}")'}
    assert (rec["error"], rec["message"]) == ("ValueError", "bad word: smoke")


def test_stale_files_removed_and_subfolders_kept(root, settings):
    out = settings.outputs_dir / "demo" / "t"
    (out / "demo" / "naive").mkdir(parents=True)
    (out / "demo" / "naive" / "examples.jsonl").write_text("{}\n")
    for f in ["old_figure.png", "results.json", "table.csv", "t.ipynb", "run.json", "notes.md"]: (out / f).write_text("old")
    run_notebook("t", "demo", settings=settings, root=root, progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["demo", "params.json", "results.json", "run.json", "t.ipynb"]
    assert (out / "demo" / "naive" / "examples.jsonl").read_text() == "{}\n"
    assert json.loads((out / "results.json").read_text()) == {"n": 2, "word": "demo"}


def test_overrides_go_to_a_hashed_folder_and_leave_the_profile_folder_untouched(root, settings):
    base = run_notebook("t", "demo", settings=settings, root=root, progress=False)
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in base.iterdir()}
    out = run_notebook("t", "demo", {"word": "other", "n": 3.0}, settings=settings, root=root, progress=False)
    assert out == base.parent / f"t.{overrides_hash({'n': 3, 'word': 'other'})}"
    assert out == run_dir("t", "demo", settings, {"word": "other", "n": 3})
    assert read_run(out)["overrides"] == {"n": 3, "word": "other"}
    assert json.loads((out / "results.json").read_text()) == {"n": 3, "word": "other"}
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in base.iterdir()} == before


def test_out_names_the_folder_but_never_clears_a_foreign_one(root, settings, tmp_path):
    mine = tmp_path / "elsewhere"
    assert run_notebook("t", "demo", {"n": 4}, settings=settings, root=root, progress=False, out=mine) == mine
    assert read_run(mine)["overrides"] == {"n": 4}
    foreign = tmp_path / "foreign"; foreign.mkdir(); (foreign / "README.md").write_text("keep me")
    with pytest.raises(ValueError, match="not a ragkit run folder"):
        run_notebook("t", "demo", settings=settings, root=root, progress=False, out=foreign)
    assert (foreign / "README.md").read_text() == "keep me"


def test_sigterm_is_recorded_as_interrupted(tmp_path, settings):
    kill = ('import json, os, pathlib, signal, time\nos.kill(json.loads(pathlib.Path(out_dir, "run.json").read_text())["pid"], signal.SIGTERM)\n'
            'time.sleep(30)')
    d = project(tmp_path / "p", kill)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt): run_notebook("t", "smoke", settings=settings, root=d, progress=False)
    rec = read_run(settings.outputs_dir / "smoke" / "t")
    assert (rec["status"], rec["signal"]) == ("interrupted", "SIGTERM") and rec["seconds"] < 30
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_killed_run_shows_as_stale(root, settings):
    out = run_notebook("t", "demo", settings=settings, root=root, progress=False)
    import subprocess, sys
    dead = subprocess.Popen([sys.executable, "-c", "pass"]); dead.wait()
    runner.write_json(out / "run.json", {**read_run(out), "status": "running", "pid": dead.pid})
    assert status_lines(settings, "demo")[0].split()[:3] == ["demo/t", "stale", "(killed?)"]
    run_notebook("t", "demo", settings=settings, root=root, progress=False)  # a stale folder takes a new run
    assert read_run(out)["status"] == "ok"


def test_stream_shows_the_notebooks_own_output(tmp_path, settings, capsys):
    loop = 'from tqdm.auto import tqdm\nprint("hello from the notebook")\nfor i in tqdm(range(3), desc="loop"): pass'
    d = project(tmp_path / "p", loop)
    run_notebook("t", "smoke", settings=settings, root=d, stream=True)
    err = capsys.readouterr().err
    assert "  [cell 3/3]\n    hello from the notebook\n" in err  # tqdm's ipywidgets warning is not the user's to fix: dropped
    assert "loop:" not in err and "TqdmWarning" not in err and "\r" not in err  # in a log (not a terminal) the bar is left out
    assert f"t: ok in" in err and str(settings.outputs_dir / "smoke" / "t") in err
    assert "TQDM_MININTERVAL" not in os.environ
    saved = (settings.outputs_dir / "smoke" / "t" / "t.ipynb").read_text()  # the terminal had the bar; the saved notebook keeps only the print
    assert "hello from the notebook" in saved and "loop:" not in saved and "IProgress" not in saved


def test_clean_outputs_drops_progress_and_rewrites_machine_paths(tmp_path):
    "A synthetic executed notebook: bars and tqdm's IProgress warning go, other warnings stay with portable paths, images are untouched."
    root, home = tmp_path / "proj", Path.home()
    out = lambda **k: nbformat.v4.new_output(**k)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("run()")])
    nb.cells[0].outputs = [
        out(output_type="stream", name="stderr", text=f"{root}/.venv/lib/python3.11/site-packages/tqdm/auto.py:21: TqdmWarning: IProgress not found. "
            "Please update jupyter and ipywidgets.\n  from .autonotebook import tqdm as notebook_tqdm\n"),
        *[out(output_type="stream", name="stderr", text=f"\rNaive - BM25: {i}%|#| {i}/100 [00:01<00:02, 4.99it/s]") for i in range(0, 101, 25)],
        out(output_type="stream", name="stderr", text="\rLoading weights: 100%|##| 103/103 [00:00<00:00, 25710.49it/s]"),
        out(output_type="stream", name="stderr", text="\x1b[A"), out(output_type="stream", name="stderr", text="\n"),
        out(output_type="stream", name="stdout", text=f"results in {root}/outputs/paper/t and {home}/notes\n"),
        out(output_type="stream", name="stderr", text="/tmp/ipykernel_19492/3565495412.py:24: UserWarning: no NLI matcher\n  warnings.warn(msg)\n"),
        out(output_type="stream", name="stderr", text="reading /srv/data/squad.json\n"),
        out(output_type="display_data", data={"text/plain": f"{root}", "image/png": "iVBOR/tmp/x"})]
    got = portable.clean_outputs(json.loads(nbformat.writes(nb)), root, {"data_dir": Path("/srv/data"), "outputs_dir": root / "outputs"})
    texts = ["".join(o["text"]) if "text" in o else {k: "".join(v) for k, v in o["data"].items()} for o in got["cells"][0]["outputs"]]
    assert texts == ["results in outputs/paper/t and ~/notes\n", "<cell>:24: UserWarning: no NLI matcher\n  warnings.warn(msg)\n",
                     "reading <data_dir>/squad.json\n", {"text/plain": ".", "image/png": "iVBOR/tmp/x"}]


def test_reproduce_only_that_matches_nothing_is_an_error(root, monkeypatch, capsys, no_kernel):
    monkeypatch.chdir(root)
    with pytest.raises(ValueError, match="--only zzz: no such notebook in the reproduce list; choose from t, u"):
        reproduce("demo", ["zzz"], root=root)
    assert main(["reproduce", "--only", "zzz"]) == 2
    assert "choose from t, u" in capsys.readouterr().err
    assert no_kernel == []


def test_reproduce_reports_failure_and_seconds(root, settings, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(root); monkeypatch.delenv("RAGKIT_DATA_DIR", raising=False)
    monkeypatch.setenv("RAGKIT_OUTPUTS_DIR", str(tmp_path / "outputs"))
    assert main(["reproduce", "--profile", "demo", "--quiet"]) == 1  # "u" is listed but does not exist
    out = capsys.readouterr().out
    assert "reproduce --profile demo: 1 ok, 1 failed" in out
    table = out.split("reproduce --profile demo:")[1].splitlines()[1:]
    assert [l.split()[:2] for l in table] == [["t", "ok"], ["u", "failed"]]
    assert all(re.search(r" \d+\.\d s ", l) for l in table), table  # seconds per notebook
    assert "FileNotFoundError: no notebook 'u'" in table[1]


def test_a_data_dir_set_but_missing_is_refused(root, tmp_path, no_kernel):
    s = load_settings(env={"RAGKIT_DATA_DIR": str(tmp_path / "no-such-dir"), "RAGKIT_OUTPUTS_DIR": str(tmp_path / "outputs")})
    with pytest.raises(FileNotFoundError, match=r"does not exist; it is set by \$RAGKIT_DATA_DIR. Fix it, or unset it"):
        run_notebook("t", "demo", settings=s, root=root, progress=False)
    assert no_kernel == [] and not (tmp_path / "outputs").exists()


def test_ragkit_seed_is_refused():
    with pytest.raises(ValueError, match=r"\$RAGKIT_SEED is set but no longer read: .*pass `-p seed N`"):
        load_settings(env={"RAGKIT_SEED": "1"})


# The real project: profiles.toml must name real notebooks and parameters, with the defaults' types.
REAL = project_root(Path(__file__).parent)
REAL_PROFILES = load_profiles(REAL)
REAL_TABLES = [(nb, p, vals) for nb, t in REAL_PROFILES.items() if nb != "reproduce" for p, vals in t.items()]


def test_reproduce_list_names_existing_notebooks():
    nbs = REAL_PROFILES["reproduce"]["notebooks"]
    assert nbs and all(find_notebook(n, REAL).is_file() for n in nbs)


@pytest.mark.parametrize("nb,profile,vals", REAL_TABLES, ids=[f"{nb}.{p}" for nb, p, _ in REAL_TABLES])
def test_profiles_toml_matches_the_notebooks(nb, profile, vals):
    assert profile in notebooks.PROFILES and profile != "smoke", f"[{nb}.{profile}]: profiles are demo, paper and full (smoke is the defaults)"
    defaults = notebook_defaults(find_notebook(nb, REAL))
    assert set(vals) <= set(defaults), f"[{nb}.{profile}] sets {sorted(set(vals) - set(defaults))}, not parameters of {nb}"
    for k, v in vals.items(): check_value(nb, k, v, defaults[k], f"nbs/profiles.toml [{nb}.{profile}]")


RAGKIT = [__import__("sys").executable, "-c", "import sys; from ragkit.cli import main; sys.exit(main())"]
SLOW = 'import time\nprint("started", flush=True)\ntime.sleep(60 if n == 3 else 8)'  # n = 3: until interrupted


def ragkit(d: Path, settings, *args: str, **kw):
    "`ragkit ARGS` as its own process in project `d`, its outputs and caches those of `settings`."
    import subprocess
    env = dict(os.environ, RAGKIT_OUTPUTS_DIR=str(settings.outputs_dir), RAGKIT_CACHE_DIR=str(settings.cache_dir))
    return subprocess.Popen([*RAGKIT, *args], cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kw)


def test_a_folder_held_by_a_run_is_in_use_by_that_run(root, settings, tmp_path):
    "While a run holds a folder (its lock), another run there is told whose it is, and the folder is left as it was."
    out = tmp_path / "held"
    lock = runner.claim_run_dir(out)  # what a run does first, before it looks at the folder
    (out / "params.json").write_text("{}")  # its first file: without the lock the next run saw "no run.json" here
    with pytest.raises(ValueError, match=rf"{out} is in use by run {os.getpid()}, started .*--out DIR") as e:
        run_notebook("t", "demo", settings=settings, root=root, progress=False, out=out)
    assert "no run.json" not in str(e.value) and (out / "params.json").read_text() == "{}"
    runner.release_run_dir(out, lock); (out / "params.json").unlink()  # that run ended (and left nothing)
    assert run_notebook("t", "demo", settings=settings, root=root, progress=False, out=out) == out
    assert sorted(p.name for p in out.iterdir()) == ["params.json", "results.json", "run.json", "t.ipynb"]  # no lock


def test_two_runs_started_at_once_into_one_new_folder(tmp_path, settings):
    "Two `ragkit run --out X` at once: one runs, the other is told X is in use by the first's pid (not 'no run.json')."
    d = project(tmp_path / "p", SLOW)
    out = tmp_path / "both"
    ps = [ragkit(d, settings, "run", "t", "--out", str(out), "--quiet") for _ in range(2)]
    done = [(p.pid, p.wait(timeout=240), p.stderr.read()) for p in ps]
    won, lost = sorted(done, key=lambda r: r[1])
    assert (won[1], lost[1]) == (0, 2), done
    assert f"ragkit: error: {out} is in use by run {won[0]}" in lost[2] and "no run.json" not in lost[2], lost[2]
    assert read_run(out)["status"] == "ok" and read_run(out)["pid"] == won[0]


ANSWERING = ('from ragkit.lm.backends import build_reader\nlm = build_reader(reader, cache="toy")\n'
             'print("started", flush=True)\nlm.generate([f"Question {i}?" for i in range(16)])')  # answers take 8 s


@pytest.mark.parametrize("cell", ["sleeping", "answering"])
def test_an_interrupt_prints_one_line_and_the_resume_command(cell, tmp_path, settings):
    "Ctrl-C (SIGINT to the run's process group) mid-cell or mid-answer: no traceback, one line with the resume command."
    from ragkit.lm.openai import FakeOpenAIServer
    slow = lambda prompt: 8.0 if "Question" in prompt else 0.0  # the canary is answered at once, the questions are not
    with FakeOpenAIServer(default="Paris", models=["m"], delay=slow) as srv:
        d = project(tmp_path / "p", SLOW) if cell == "sleeping" else \
            project(tmp_path / "p", ANSWERING, params=PARAMS + f'\nreader = "openai:m@{srv.base_url}"')
        p = ragkit(d, settings, "run", "t", "-p", "n", "3", "--verbose", start_new_session=True)  # its own group, as a terminal's job
        seen = []
        while not any("started" in l for l in seen) and p.poll() is None: seen.append(p.stderr.readline())
        time.sleep(2)  # into the sleep, or with the questions in flight
        os.killpg(p.pid, signal.SIGINT)
        rest = p.stderr.read()
        assert p.wait(timeout=120) == 130, "".join(seen) + rest
    folder = settings.outputs_dir / "smoke" / f"t.{overrides_hash({'n': 3})}"
    said = [l for l in rest.splitlines() if l.strip()]  # the kernel's own warnings and tracebacks went to its kernel.log
    assert said == [f"ragkit: t interrupted (SIGINT) after {read_run(folder)['seconds']} s; its finished rows are kept "
                    f"in {folder}; resume with: ragkit run t --profile smoke -p n 3"], rest
    assert read_run(folder)["status"] == "interrupted" and not (folder / runner.LOCK).exists()
    assert "Kernel is running over TCP" in (folder / runner.KERNEL_LOG).read_text()  # kept: the run did not end ok


# Issue 55: the whole job in one line, quiet by default, one line on an interrupt.
EVALUATE = ('import time\nfrom ragkit.core import Example\nfrom ragkit.eval.evaluate import evaluate\n'
            'def slow(q): time.sleep(0.25); return "Paris"\n'
            'ev = evaluate(slow, [Example(f"q{i}", f"Question {i}?", ["Paris"]) for i in range(12)], out_dir=out_dir, '
            'name="slow", batch_size=2)\nprint("a line of the notebook the default leaves out")')


def two_notebooks(d: Path, *cells: str) -> Path:
    "A project whose reproduce list is t and u, two copies of one notebook."
    project(d, *cells, profiles='[reproduce]\nnotebooks = ["t", "u"]\n')
    (d / "nbs" / "u.ipynb").write_text((d / "nbs" / "t.ipynb").read_text())
    return d


def in_project(d: Path, settings, monkeypatch) -> Path:
    "Work in project `d` as its CLI user does (cwd, the settings' folders), with a log's job lines every second."
    monkeypatch.setattr(runner, "log_gaps", lambda k: 1.0)
    monkeypatch.setenv("RAGKIT_OUTPUTS_DIR", str(settings.outputs_dir)); monkeypatch.setenv("RAGKIT_CACHE_DIR", str(settings.cache_dir))
    monkeypatch.chdir(d)
    return d


def test_a_run_shows_its_start_end_and_job_line_not_the_notebooks_output(tmp_path, settings, monkeypatch, capsys):
    "The default: the start line, the job line now and then in a log (with the time left), the end line; nothing else."
    monkeypatch.setattr(runner, "log_gaps", lambda k: 0.5)  # a log's job lines: every half second, not after 30 s
    d = project(tmp_path / "p", EVALUATE)
    out = run_notebook("t", "smoke", settings=settings, root=d)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"t (profile smoke) -> {out}" and lines[-2].startswith(f"t: ok in ") and lines[-2].endswith(f" s -> {out}")
    jobs = lines[1:-2]
    assert jobs and all(re.fullmatch(r"t, cell \d/3: (no answers planned yet|\d+ of 12 answers planned so far; .*)", l) for l in jobs), lines
    assert any(re.search(r"answers/(s|min); (under a minute|about \d+ min) left for those$", l) for l in jobs), lines
    assert re.fullmatch(r"12 of 12 answers; [\d.]+ answers/s", lines[-1]), lines  # the job's last state stays
    assert sorted(p.name for p in out.iterdir()) == ["params.json", "progress.jsonl", "run.json", "slow", "t.ipynb"]  # no kernel.log


def test_quiet_keeps_the_start_and_end_lines_only(tmp_path, settings, monkeypatch, capsys):
    "--quiet: the start and end lines (how each run ended, for a script), no job line."
    in_project(project(tmp_path / "p", EVALUATE), settings, monkeypatch)
    assert main(["run", "t", "--quiet"]) == 0
    out = settings.outputs_dir / "smoke" / "t"
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and lines[0] == f"t (profile smoke) -> {out}" and re.fullmatch(rf"t: ok in [\d.]+ s -> {out}", lines[1]), lines


def test_reproduce_one_line_per_notebook_a_job_line_and_its_status(tmp_path, settings, monkeypatch, capsys):
    "reproduce: [k/n] start lines, each end line once, job lines counting notebooks; `ragkit status` says the same."
    d = in_project(two_notebooks(tmp_path / "p", EVALUATE), settings, monkeypatch)
    assert main(["reproduce", "--profile", "smoke"]) == 0
    err = capsys.readouterr().err.splitlines()
    t, u = (settings.outputs_dir / "smoke" / n for n in "tu")
    assert err[0] == f"[1/2] t (profile smoke) -> {t}" and f"[2/2] u (profile smoke) -> {u}" in err, err
    assert [l for l in err if re.match(r"\s*[tu]: ", l)] == [l for l in err if re.match(r"[tu]: ok in [\d.]+ s -> ", l)], err
    assert len([l for l in err if re.match(r"[tu]: ", l)]) == 2, err  # each notebook's end, once
    assert any(l.startswith("[0/2 notebooks] t, cell ") for l in err) and any(l.startswith("[1/2 notebooks] u, cell ") for l in err), err
    assert re.fullmatch(r"\[2/2 notebooks\]: 24 of 24 answers; [\d.]+ answers/s", err[-1]), err
    assert len(err) < 20, err
    assert main(["status", "--profile", "smoke"]) == 0
    job = [l for l in capsys.readouterr().out.splitlines() if l.startswith("job ")]
    assert len(job) == 1 and re.fullmatch(r"job reproduce --profile smoke: ok, started \S+; \[2/2 notebooks\]: 24 of 24 answers; "
                                          r"[\d.]+ answers/s", job[0]), job


def test_an_interrupted_reproduce_is_one_line_with_the_command_that_resumes_it(tmp_path, settings):
    "Ctrl-C in the first of two notebooks: one line naming both to run again, the interrupted one first; no traceback."
    d = two_notebooks(tmp_path / "p", SLOW)
    p = ragkit(d, settings, "reproduce", "--profile", "smoke", "--verbose", start_new_session=True)
    seen = []
    while not any("started" in l for l in seen) and p.poll() is None: seen.append(p.stderr.readline())
    time.sleep(2)
    os.killpg(p.pid, signal.SIGINT)
    rest = p.stderr.read()
    assert p.wait(timeout=120) == 130, "".join(seen) + rest
    said = [l for l in rest.splitlines() if l.strip()]
    assert len(said) == 1 and re.fullmatch(
        rf"ragkit: reproduce --profile smoke interrupted in t after \d+ s \(0 of 2 notebooks done\); the rows answered are "
        rf"kept in their run folders under {re.escape(str(settings.outputs_dir / 'smoke'))}; resume with: "
        r"ragkit reproduce --profile smoke --only t u", said[0]), rest
    assert p.stdout.read() == ""  # no table of notebooks after an interrupt
