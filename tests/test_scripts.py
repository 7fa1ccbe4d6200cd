"""Every script in scripts/ runs on a tiny input, so a moved template, a renamed function or a changed signature fails
CI, not the user who runs the script months later.

The Python scripts are loaded from their files and their `main(argv)` is called in this process (one torch import for
all of them), each on SmolLM2-135M (`smollm2-135m-instruct`, shipped in a PyPI package), the demo data or random data,
writing into a temporary folder, never into outputs/bench/; every JSON a bench script writes names the CPU model and
cores. What CI lacks is smoke-tested on the part that runs without it: `bench_server.py` reads through llama.cpp's server (xllamacpp) instead of vLLM, whose CPU build
`ragkit serve` sets up in minutes (tests/test_serve.py covers it, slow); `site_browser.py` needs Chromium and the site
environment's playwright and is skipped, saying which is missing, where they are absent (its refusal without Chromium
is tested everywhere). The shell scripts (setup.sh, test.sh, lock.sh, site.sh) install, run or lock what CI itself
runs, or need the network: they are parsed with `bash -n`."""
import importlib.util, json, os, shutil, subprocess
from pathlib import Path
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"
TINY = "smollm2-135m-instruct"
COVERED = {"anatomy.py", "rerender.py", "bench_paths.py", "gpu_estimate.py", "bench_batching.py", "bench_engine.py", "bench_eor.py", "bench_generate.py", "bench_precision.py", "bench_reader.py",
           "bench_retrievers.py", "bench_server.py", "bench_starts.py", "site_browser.py", "lock.sh", "setup.sh", "site.sh", "test.sh",
           "walk_rules.py"}


def script(name: str):
    "The script scripts/<name>.py loaded as a module (its `main(argv)` not yet called)."
    spec = importlib.util.spec_from_file_location(f"script_{name}", SCRIPTS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_script_has_a_smoke_test():
    "A new script in scripts/ fails here until it is given a smoke test below."
    assert {p.name for p in SCRIPTS.iterdir() if p.suffix in (".py", ".sh")} == COVERED


@pytest.mark.parametrize("name", sorted(n for n in COVERED if n.endswith(".sh")))
def test_shell_scripts_parse(name):
    "bash -n: the shell scripts are valid bash (CI runs test.sh and setup.sh itself; lock.sh and site.sh need the network)."
    r = subprocess.run(["bash", "-n", str(SCRIPTS / name)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_walk_rules(tmp_path, capsys):
    "The walk on one small notebook: every case the rules accept runs on the smoke profile and is stored; a rerun resumes."
    rows, walk = tmp_path / "walk.jsonl", script("walk_rules")
    assert walk.main(["--only", "21_retrieve.bm25", "--rows", str(rows)]) == 0
    got = walk.read_walk(rows)
    assert set(got) == {'21_retrieve.bm25 k 1', '21_retrieve.bm25 n_questions 1'} and all(r["outcome"] == "ok" for r in got.values())
    assert walk.main(["--only", "21_retrieve.bm25", "--rows", str(rows), "--list"]) == 0
    assert "21_retrieve.bm25 k 1: ok" in capsys.readouterr().out and len(rows.read_text().splitlines()) == 2


def test_bench_eor(tmp_path):
    "EoR's objective and search on 60 random questions: the loop's choices equal the objective's."
    out = tmp_path / "eor.json"
    script("bench_eor").main(["--n", "60", "--m", "4", "--k", "2", "--reps", "2", "--out", str(out)])
    assert json.loads(out.read_text())["machine"]["cpu"]


def test_bench_generate(tmp_path):
    "ragkit's generate, score_batch and the embedder against plain transformers, random SmolLM2 weights on the CPU."
    out = tmp_path / "generate.json"
    script("bench_generate").main(["--reader", TINY, "--random", "--device", "cpu", "--dtype", "float32", "--prompts", "4",
                                   "--batches", "2", "--min-len", "10", "--max-len", "20", "--new-tokens", "2", "--score-pairs", "2",
                                   "--embed-passages", "4", "--prefill", "1x16", "--rounds", "1", "--out", str(out)])
    d = json.loads(out.read_text())
    assert d["rows"] and d["score_batch"] and d["embedder"]


def test_bench_batching(data_dir, tmp_path):
    "TransformersLM at batch 1, 2, 4 and 8 on SQuAD prompts, SmolLM2, two prompts."
    out = tmp_path / "batching.json"
    script("bench_batching").main(["--reader", TINY, "--n", "2", "--out", str(out)])
    assert json.loads(out.read_text())["machine"]["cpu"]


def test_bench_engine(tmp_path):
    "ragkit's generate against HF generate and the LM cache, SmolLM2, two short prompts."
    res = script("bench_engine").main(["--prompts", "2", "--words", "20", "--new", "2", "--out", str(tmp_path / "engine.json")])
    assert res["ratio_cold_over_warm"] > 1 and json.loads((tmp_path / "engine.json").read_text())["machine"]["cpus"]


def test_bench_precision(tmp_path):
    "The bare prefill in float32 and bfloat16, SmolLM2: one record for this CPU model."
    out = tmp_path / "precision.json"
    script("bench_precision").main(["--reader", TINY, "--out", str(out)])
    (rec,) = json.loads(out.read_text()).values()
    assert rec["cpu"]["name"] and rec["reader"] == TINY


def test_bench_retrievers(data_dir, tmp_path):
    "BM25 backends on SQuAD dev, 20 questions (the dense part embeds 2,067 paragraphs: minutes, left out)."
    out = tmp_path / "retrievers.json"
    script("bench_retrievers").main(["--questions", "20", "--k", "5", "--skip-dense", "--out", str(out)])
    d = json.loads(out.read_text())
    assert d["bm25"] and d["machine"]["cpu"]


def test_bench_reader(data_dir, tmp_path):
    "Both kinds of option (transformers, llama.cpp's server) on SmolLM2, two reading prompts; CPU model recorded."
    out = tmp_path / "reader.json"
    script("bench_reader").main(["--readers", TINY, "--options", "fp32,llama.cpp-2threads", "--n-agree", "2", "--n-squad", "1",
                                 "--n-long", "1", "--n-decode", "1", "--out", str(out)])
    d = json.loads(out.read_text())
    assert set(d["summary"][TINY]) == {"fp32", "llama.cpp-2threads"} and d["machine"]["cpu"] and d["machine"]["cpus"]


def test_bench_server_through_llama_cpp(data_dir, tmp_path, private_cache):
    "bench_server.py against a running server (llama.cpp's, serving SmolLM2; vLLM needs `ragkit serve`'s minutes-long setup)."
    from ragkit.lm.openai import llama_cpp_server
    out = tmp_path / "server.json"
    with llama_cpp_server(TINY, parallel=2, threads=2) as url:
        script("bench_server").main(["--model", TINY, "--reader", f"openai:{TINY}@{url}", "--dtype", "float32", "--n", "2",
                                     "--new-tokens", "2", "--concurrency", "1,2", "--out", str(out)])
    d = json.loads(out.read_text())
    assert [r["concurrency"] for r in d["rows"]] == [1, 2] and d["machine"]["cpu"] and d["machine"]["cpus"]
    agree = d["rows"][0]["vs_local_same_dtype"]
    assert agree["questions"] == 2 and 0 <= agree["identical_answers"] <= 1 and "mean_prob_diff_identical_answers" in agree


def test_bench_starts_with_the_stand_in_server(data_dir, tmp_path, private_cache):
    "bench_starts.py on the stand-in build (vLLM's takes minutes): each precision started, timed and asked; starts kept beside the file's rest."
    out = tmp_path / "server.json"
    out.write_text(json.dumps({"rows": ["kept"]}))
    script("bench_starts").main(["--build", "fake", "--configs", "eager", "--n", "2", "--new-tokens", "2", "--out", str(out)])
    d = json.loads(out.read_text())
    assert d["rows"] == ["kept"] and [(r["dtype"], r["start"]) for r in d["starts"]["rows"]] == [
        ("bfloat16", "cold"), ("bfloat16", "warm"), ("float32", "first in this precision (cache warm)")]
    assert all(r["ready_s"] > 0 and r["questions_per_s"] > 0 for r in d["starts"]["rows"])
    # the stand-in answers alike in every precision: nothing tells them apart (vLLM's do: the slow test in test_serve.py)
    assert d["starts"]["precisions_told_apart"] == {"eager float32": False}


def test_bench_paths(data_dir, tmp_path):
    "Every part on SmolLM2: rows per step, SuRe on one NQ question and LoRE on one SQuAD question, today's path against shared prefixes."
    out = tmp_path / "speed.json"
    script("bench_paths").main(["--parts", "rows,sure,lore", "--rows-readers", f"{TINY}:32", "--rows", "1,2", "--sure", "1", "--lore", "1",
                                "--sure-reader", TINY, "--lore-reader", TINY, "--sure-paths", "today,shared+batched",
                                "--lore-paths", "today,shared+batched", "--max-passages", "40", "--out", str(out)])
    d = json.loads(out.read_text())
    assert d["machine"]["cpu"] and [r["rows"] for r in d["rows"][TINY]["rows"]] == [1, 2]
    for part in ("sure", "lore"):
        runs = d[part]["runs"]
        assert set(runs) == {"today", "shared+batched"} and runs["today"]["x_today"] == 1.0 and d[part]["limit_s"] > 0
        assert runs["shared+batched"]["agreement_with_today"]["answers"] == 1.0  # the same greedy answers, computed once
    sure = d["sure"]  # summaries were asked (more calls than the candidates' one) exactly when a passage block was read once for two prompts
    assert (sure["runs"]["today"]["calls"] > 1) == (sure["repeated_prefix_tokens"] > 1000)


def test_anatomy_of_a_committed_run(data_dir, tmp_path):
    "The anatomy of the committed SuRe run (0.5B reader): every system's tokens and seconds, its summaries' repeated block, its limit."
    out = tmp_path / "anatomy.json"
    script("anatomy").main(["--profiles", "paper", "--runs", "70_papers.sure", "--out", str(out)])
    d = json.loads(out.read_text())
    (run,) = [r for r in d["runs"] if r["run"] == "outputs/paper/70_papers.sure"]
    sure = next(s for s in run["systems"] if s["system"] == "SuRe" and s["task"] == "nq")
    assert sure["summary_repeat_tokens"] > 1000 and 0 < sure["repeated_share"] < 0.5 and sure["limit_s"] > 0
    assert d["machine"]["cpu"] and d["ceilings"]["matmul_gflops_float32"] > 0


def test_gpu_estimate(data_dir, tmp_path):
    "gpu_estimate.py: every decide-gpu notebook estimated from its committed rows, questions counted from the data, hours positive."
    out = tmp_path / "decide-gpu.json"
    script("gpu_estimate").main(["--out", str(out)])
    d = json.loads(out.read_text())
    assert {r["notebook"] for r in d["runs"]} == {"40_papers.lore", "71_papers.sure.decide", "62_papers.eor.runs", "80_papers.witqa"}
    assert all(r["hours"] > 0 and all(t["questions"] > 0 and t["tokens_per_question"] > 0 for t in r["tasks"]) for r in d["runs"])
    assert d["bench"]["device"].startswith("NVIDIA H100") and d["bench"]["seconds_per_token"] > 0


def test_site_browser_refuses_without_chromium(tmp_path, capsys):
    "Without Chromium the browser check says how to get it and exits 2, before importing playwright."
    assert script("site_browser").main(["--site", str(tmp_path), "--chromium", ""]) == 2
    assert "apt-get install chromium" in capsys.readouterr().err


def test_site_browser_on_a_one_page_site(tmp_path):
    "The browser check on a one-page site, with the site environment's playwright and the system Chromium."
    py, chromium = ROOT / ".venv-site" / "bin" / "python", shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium: pytest.skip("no chromium on PATH (apt-get install chromium)")
    if not py.exists() or subprocess.run([str(py), "-c", "import playwright"], capture_output=True).returncode:
        pytest.skip("no .venv-site with playwright (scripts/site.sh makes it)")
    site = tmp_path / "_site"; site.mkdir()
    (site / "index.html").write_text("<!doctype html><html><head><title>t</title></head><body><p>A page.</p></body></html>")
    r = subprocess.run([str(py), str(SCRIPTS / "site_browser.py"), "--site", str(site), "--out", str(tmp_path / "shots"),
                        "--chromium", chromium], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "1 pages" in r.stdout and ": ok;" in r.stdout, r.stdout + r.stderr


def test_rerender_finds_a_committed_run_unchanged(data_dir, tmp_path):
    "The smallest committed run re-rendered from its rows alone (RAGKIT_ROWS_ONLY): every verdict and number as committed."
    rr = script("rerender")
    assert rr.differences({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == [".a[1].b: 2 -> 3"]
    assert rr.stable({"seconds": 3, "x": [{"started": 1, "y": 2}]}) == {"x": [{"y": 2}]}
    out = tmp_path / "rerender.json"
    assert rr.main(["--only", "63_papers.eor.inconsistency", "--profiles", "paper-split", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["all_same"] and [(r["profile"], r["notebook"], r["same_verdicts"]) for r in doc["runs"]] == [("paper-split", "63_papers.eor.inconsistency", True)]
    cold = tmp_path / "rerender-cold.json"  # --cold: the same run on its own empty cache folder, recorded apart
    assert rr.main(["--only", "63_papers.eor.inconsistency", "--profiles", "paper-split", "--cold", "--out", str(cold)]) == 0
    doc = json.loads(cold.read_text())
    assert doc["all_same"] and doc["cache"] == "empty per run" and doc["machine"]["cpus"] >= 1


def test_rerender_write_copies_a_runs_top_level_files_never_its_rows(tmp_path):
    "--write: the re-rendered notebook and records replace the committed ones; the rows below are left as committed."
    new, old = tmp_path / "new", tmp_path / "old"
    for d, text in ((new, "new"), (old, "old")):
        (d / "nq" / "Top-1").mkdir(parents=True)
        for f in ("62.ipynb", "results.json", "nq/Top-1/examples.jsonl"): (d / f).write_text(text)
    (new / ".results.json.1.tmp").write_text("partial")
    assert script("rerender").put_in_place(new, old) == ["62.ipynb", "results.json"]
    assert [(old / f).read_text() for f in ("62.ipynb", "results.json", "nq/Top-1/examples.jsonl")] == ["new", "new", "old"]
    assert not (old / ".results.json.1.tmp").exists()


FAKE_PYTHON = r'''#!/usr/bin/env bash
# Stands in for python in setup.sh: --version; -m venv DIR makes DIR/bin/python (this script); -m pip prints what pip
# prints, and fails on requirements.txt when FAIL_PIP is set.
case "$1 ${2:-}" in
  "--version "*) echo "Python 3.11.7";;
  "-m venv") mkdir -p "$3/bin" && cp "$0" "$3/bin/python";;
  "-m pip")
    for i in $(seq 1 40); do echo "Collecting package$i==1.0"; done
    echo "WARNING: Location 'file:///opt/pypi/simple/pip/' is ignored: it is neither a file nor a directory." >&2
    if [ -n "${FAIL_PIP:-}" ] && [[ " $* " == *" -r requirements.txt "* ]]; then echo "ERROR: No matching distribution found for package7" >&2; exit 1; fi;;
esac
'''


@pytest.mark.parametrize("fails", [False, True])
def test_setup_prints_one_line_per_step_and_logs_pip(tmp_path, fails):
    "setup.sh with a stand-in python: a line per step and one at the end; pip's lines in .venv/setup.log; a failed step shows the log's end."
    (tmp_path / "scripts").mkdir()
    shutil.copy(SCRIPTS / "setup.sh", tmp_path / "scripts" / "setup.sh")
    for f, text in [("requirements.txt", "a==1\nb==2\n"), ("requirements-nodeps.txt", "c==3\n"), ("pyproject.toml", "[project]\n")]:
        (tmp_path / f).write_text(text)
    py = tmp_path / "python"; py.write_text(FAKE_PYTHON); py.chmod(0o755)
    env = dict(os.environ, PYTHON=str(py), **({"FAIL_PIP": "1"} if fails else {}))
    env.pop("VERBOSE", None)
    r = subprocess.run(["bash", "scripts/setup.sh"], cwd=tmp_path, env=env, capture_output=True, text=True)
    out, log = r.stdout.splitlines(), (tmp_path / ".venv" / "setup.log").read_text()
    assert [l.split("] ")[0] for l in out[:4]] == [f"setup [{i}/4" for i in range(1, 5)][:len(out[:4])], r.stdout
    assert "Collecting package1==1.0" in log and "is ignored" in log and "Collecting" not in r.stdout
    if fails:
        assert r.returncode == 1 and len(out) == 3 and not (tmp_path / ".venv" / ".ragkit-installed").exists()
        assert r.stderr.startswith("setup: step 3 failed (exit 1); the last lines of .venv/setup.log") and \
               "ERROR: No matching distribution found for package7" in r.stderr and len(r.stderr.splitlines()) == 21, r.stderr
        return
    assert r.returncode == 0 and r.stderr == "" and len(out) == 5, r.stdout + r.stderr
    assert out[2] == "setup [3/4] installing pinned requirements (2 packages; minutes on a first setup)"
    assert out[4].startswith("setup: done in ") and out[4].endswith("s (pip's output: .venv/setup.log)")
    again = subprocess.run(["bash", "scripts/setup.sh"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert (again.returncode, again.stdout) == (0, "setup: .venv is up to date\n")
