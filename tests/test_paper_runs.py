"The committed reference runs (outputs/paper/<notebook>/ and outputs/paper-1.5b/<notebook>/): they parse, they ran their profile, and README shows them."
import json, os, re, shutil, subprocess
from pathlib import Path

import pytest

from ragkit.eval.experiment import DIRECTIONS, no_difference_bound
from ragkit.eval.mechanism import EQUIVALENT, EXACT_BELOW, NOT_RUN, NOT_TESTABLE, exact_direction, failing, holm
from ragkit.report import render_readme
from ragkit.notebooks import find_notebook, load_profiles, project_root, resolve_parameters

ROOT = project_root(Path(__file__).parent)
REFERENCE_PROFILES = ("paper", "paper-1.5b", "paper-split", "decide")  # the profiles whose runs are committed
FOLDERS = sorted(p for prof in REFERENCE_PROFILES for p in (ROOT / "outputs" / prof).glob("*") if p.is_dir())
RUNS = [p for p in FOLDERS if (p / "results.json").is_file()]  # finished runs
IN_PROGRESS = [p for p in FOLDERS if p not in RUNS]  # a run too long for one session: only its finished rows, committed to resume from
ROW_FILES = {"examples.jsonl", "config.json", "summary.json"}  # what one evaluation's folder holds (ragkit.eval.evaluate)


def _strict(path: Path):
    "JSON that refuses NaN and Infinity, as results.json promises."
    def bad(c): raise ValueError(f"{path}: non-standard JSON constant {c}")
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=bad)


@pytest.mark.parametrize("profile", REFERENCE_PROFILES)
def test_every_committed_run_has_its_profile(profile):
    with_profile = {nb for nb, t in load_profiles(ROOT).items() if nb != "reproduce" and profile in t}
    got = {p.name for p in (ROOT / "outputs" / profile).glob("*") if p.is_dir()}
    assert got <= with_profile, f"a folder under outputs/{profile}/ has no {profile} profile in nbs/profiles.toml"


@pytest.mark.parametrize("run", IN_PROGRESS, ids=[f"{p.parent.name}/{p.name}" for p in IN_PROGRESS])
def test_a_run_in_progress_holds_only_rows(run):
    "A reference run committed before it finished holds its evaluations' rows and nothing else: no record, notebook or results to mistake for a run."
    files = [f for f in run.rglob("*") if f.is_file()]
    assert files, f"{run} is empty"
    odd = [str(f.relative_to(run)) for f in files if f.name not in ROW_FILES or len(f.relative_to(run).parts) != 4]
    assert not odd, f"{run}: {odd[:3]} are not evaluation rows (task/system/fingerprint/file); finish the run (ragkit run {run.name} --profile {run.parent.name})"
    for f in (f for f in files if f.name == "config.json"):
        assert _strict(f)["fingerprint"] == f.parent.name, f"{f}: its fingerprint is not its folder's name"


@pytest.mark.parametrize("run", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_committed_run_matches_its_profile(run):
    results, params, rec = (_strict(run / f"{n}.json") for n in ("results", "params", "run"))
    profile = run.parent.name
    assert rec["status"] == "ok" and rec["profile"] == profile and not rec["overrides"], f"{run}/run.json: not a clean {profile} run"
    assert len(rec["git"]["commit"]) == 40
    expected = {k: v for k, v in resolve_parameters(find_notebook(run.name, ROOT), profile, root=ROOT).items() if k != "out_dir"}
    got = {k: v for k, v in params.items() if k != "out_dir"}
    assert got == expected, f"{run}/params.json differs from the {profile} profile: rerun `ragkit run {run.name} --profile {profile}`"
    ran = {k: v for k, v in results["parameters"].items() if k != "out_dir"}
    if expected.get("power_from"):  # a run sized by power: its pilot raised `limit` from the profile's floor, never lowered it
        assert ran.pop("limit") >= expected.pop("limit"), f"{run}: a power-sized run asked fewer questions than its profile's floor"
    assert ran == expected
    assert (run / f"{run.name}.ipynb").is_file(), "the executed notebook is missing"
    for fig in results.get("figures", []):
        assert (run / Path(fig).name).is_file(), f"{run}: figure {fig} is listed in results.json but not committed"
    assert not list(run.rglob("*.sqlite")), "an LM cache was committed"
    for row in results.get("verdict", []):  # every verdict says both things: its direction and its size
        assert row["direction"] in DIRECTIONS and row["size"] in ("consistent", "smaller", "larger", "n/a"), row["claim"]
        if row["direction"] == NOT_RUN: continue  # no direction: the mechanism did not act (test_no_verdict_on_a_mechanism_that_did_not_run)
        if row["direction"] == NOT_TESTABLE: assert row["size"] == "n/a", row["claim"]; continue  # declared, or undecided after Holm and sized out by its data
        if row["direction"] == EQUIVALENT: assert row["within_margin"] and -row["margin"] <= row["lo"] and row["hi"] <= row["margin"] or row["lo"] == row["hi"] == 0, row["claim"]
        raw = "undecided" if row["direction"] == EQUIVALENT else row["direction"]  # equivalent comes from an undecided test
        if row.get("test") == "exact sign test":  # fewer than EXACT_BELOW questions differ: the exact test decides, not the interval
            assert row["discordant"] < EXACT_BELOW and raw == exact_direction(row["wins"], row["losses"], row["p_exact"]), row["claim"]
            continue
        if raw != "undecided" and row.get("n", 0) >= 10: assert (row["lo"] > 0) == (raw == "holds"), row["claim"]
        if raw == "undecided" and row.get("n", 0) >= 10: assert row["lo"] <= 0 <= row["hi"] or row["direction"] == EQUIVALENT, row["claim"]
        paper, lo, hi = row.get("paper"), row["lo"], row["hi"]
        if lo == hi == 0 and row.get("n"): lo, hi = -no_difference_bound(row["n"]), no_difference_bound(row["n"])  # no question differs
        if paper is not None and row["size"] in ("smaller", "larger"): assert not lo <= paper <= hi, row["claim"]
        if row["size"] == "consistent" and row.get("bound") == "at least": assert hi >= paper, row["claim"]  # a lower bound: reached
        elif row["size"] == "consistent" and row.get("bound") == "at most": assert lo <= paper, row["claim"]  # an upper bound: not exceeded
        elif row["size"] == "consistent": assert lo <= paper <= hi, row["claim"]


@pytest.mark.parametrize("run", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_every_claim_records_its_test_and_its_adjusted_direction(run):
    "Each verdict row says how many questions differ, which test decided its direction, and its direction after Holm over the run."
    results = _strict(run / "results.json")
    assert "mechanisms" in results, f"{run}: results.json has no mechanism checks; re-render it (ragkit run {run.name} --profile {run.parent.name})"
    rows = results.get("verdict", [])
    for row in rows:
        assert {"discordant", "test", "p_two", "p_holm", "direction_holm"} <= set(row), row["claim"]
        assert row["direction_holm"] in (row["direction"], "undecided"), row["claim"]
    want = holm([None if r["direction"] == NOT_RUN else r["p_two"] for r in rows])
    got = [r["p_holm"] for r in rows]
    assert all((a is None and (b != b)) or (a is not None and abs(a - b) < 1e-9) for a, b in zip(got, want)), f"{run}: p_holm is not Holm over the run's claims"


@pytest.mark.parametrize("run", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_no_verdict_on_a_mechanism_that_did_not_run(run):
    "No committed claim about a mechanism gets a direction where its mechanism fell short: on the questions it judges where it has a gate, on its task where it has none."
    results = _strict(run / "results.json")
    health = results.get("mechanisms", [])
    for row in results.get("verdict", []):
        if not row.get("mechanism") or row["direction"] == NOT_TESTABLE: continue
        if isinstance(row.get("gate_ok"), bool):  # gated question by question (issue 48): the gate alone decides, counted on the judged questions
            assert row["gate_ok"] == (row["acted"] >= 10), (row["claim"], row["dataset"], row["gate"])
            assert (row["direction"] == NOT_RUN) == (not row["gate_ok"]), (row["claim"], row["dataset"], row["gate"])
            if not row["gate_ok"]: assert row["direction_holm"] == NOT_RUN and row["test"] == "none", (row["claim"], row["dataset"])
            continue
        fails = failing(health, row["mechanism"], row["dataset"], [row.get("a") or ""])
        if fails: assert row["direction"] == NOT_RUN and row["direction_holm"] == NOT_RUN, (row["claim"], row["dataset"], fails[0]["check"])


@pytest.mark.parametrize("run", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_no_test_named_where_none_decided(run):
    "A committed row names a test only where one decided it (10 or more questions, a mechanism that acted, a testable claim), and sizes nothing on fewer than 10 differing questions."
    for row in _strict(run / "results.json").get("verdict", []):
        if "within_margin" not in row: continue  # a row written before issue 48's rules
        if row["direction"] == NOT_TESTABLE: continue  # declared: no test; too few questions in the data: tested, undecided, and sized out
        undecidable = (row.get("n") or 0) < 10 or row["direction"] == NOT_RUN
        assert (row["test"] == "none") == undecidable, (row["claim"], row["dataset"], row["test"])
        m = row.get("discordant") if row.get("discordant") is not None else row.get("rests_on")
        if m is not None and m == m and m < 10: assert row["size"] == "n/a", (row["claim"], row["dataset"], m)


def _absolute_strings(obj, where=""):
    "Every string in a JSON tree that is an absolute path, with where it is."
    if isinstance(obj, str): return [(where, obj)] if obj.startswith("/") else []
    if isinstance(obj, dict): return [x for k, v in obj.items() for x in _absolute_strings(v, f"{where}.{k}")]
    if isinstance(obj, list): return [x for i, v in enumerate(obj) for x in _absolute_strings(v, f"{where}[{i}]")]
    return []


@pytest.mark.parametrize("run", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_committed_records_hold_no_machine_path(run):
    "params.json, run.json, results.json and the executed notebook's parameters and metadata name no absolute path."
    for name in ("params", "run", "results"):
        bad = _absolute_strings(_strict(run / f"{name}.json"))
        assert not bad, f"{run.name}/{name}.json holds absolute paths, e.g. {bad[0]}: re-render the run (ragkit run {run.name} --profile {run.parent.name})"
    nb = json.loads((run / f"{run.name}.ipynb").read_text(encoding="utf-8"))
    injected = [c for c in nb["cells"] if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
    bad = _absolute_strings(nb["metadata"].get("papermill", {})) + [("injected", l) for c in injected for l in c["source"] if '= "/' in l]
    assert not bad, f"{run.name}.ipynb holds absolute paths, e.g. {bad[0]}"


MACHINE_PATH = re.compile(r"(?<![\w.~<>-])/(?:work|home|tmp|root|Users|private|var/folders)/|" + re.escape(str(ROOT)))  # a machine's folders


def _text_of(f: Path) -> str:
    "A committed file's text as this test greps it: an executed notebook without its image data (base64 may spell anything)."
    if f.suffix != ".ipynb": return f.read_bytes().decode("utf-8", errors="replace")
    nb = json.loads(f.read_text(encoding="utf-8"))
    for o in (o for c in nb["cells"] for o in c.get("outputs", []) if "data" in o):
        o["data"] = {k: v for k, v in o["data"].items() if not k.startswith("image/")}
    return json.dumps(nb, ensure_ascii=False)


@pytest.mark.parametrize("run", FOLDERS, ids=[f"{p.parent.name}/{p.name}" for p in FOLDERS])
def test_no_machine_path_in_committed_runs(run):
    "No file of a committed run names a folder of the machine that ran it (in an executed notebook: its outputs neither)."
    bad = []
    for f in sorted(p for p in run.rglob("*") if p.is_file()):
        text = _text_of(f)
        if m := MACHINE_PATH.search(text): bad.append(f"{f.relative_to(ROOT)}: ...{text[max(0, m.start() - 60):m.end() + 40]!r}")
    assert not bad, (f"{len(bad)} file(s) name a machine path, e.g. {bad[0]}; make them portable with "
                     f"`ragkit report clean {run.relative_to(ROOT)}` or re-render the run (ragkit run {run.name} --profile {run.parent.name})")


def test_readme_headlines_are_rendered_from_the_committed_runs():
    "README.md's and docs/REFERENCE.md's generated blocks are what the committed runs and outputs/bench/ render."
    for doc, (old, new) in render_readme(ROOT).items():
        assert new == old, f"{doc}'s generated blocks are stale: run `ragkit report readme --write`"


def test_a_paper_run_regenerates_from_its_committed_rows(data_dir, tmp_path):
    "`ragkit run 64_papers.eor.method --profile paper` on copies of the committed 62 and 64 runs rebuilds the same verdict and Table 1."
    out = tmp_path / "outputs"
    for nb in ("62_papers.eor.runs", "64_papers.eor.method"):
        shutil.copytree(ROOT / "outputs" / "paper" / nb, out / "paper" / nb)
    before = json.loads((out / "paper" / "64_papers.eor.method" / "results.json").read_text(encoding="utf-8"))
    env = {**os.environ, "RAGKIT_OUTPUTS_DIR": str(out), "RAGKIT_DATA_DIR": str(data_dir)}
    r = subprocess.run([str(ROOT / ".venv" / "bin" / "ragkit"), "run", "64_papers.eor.method", "--profile", "paper"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    after = json.loads((out / "paper" / "64_papers.eor.method" / "results.json").read_text(encoding="utf-8"))
    assert after["verdict"] == before["verdict"] and after["table1"] == before["table1"] and after["what_reproduces"] == before["what_reproduces"]


def test_no_committed_record_holds_an_absolute_path():
    "Every committed run.json, results.json and params.json names folders relative to the project or a configured dir, never this machine's."
    names = ("run.json", "results.json", "params.json")
    files = [f for f in subprocess.run(["git", "ls-files", "outputs"], cwd=ROOT, capture_output=True, text=True).stdout.split()
             if f.rsplit("/", 1)[-1] in names]
    absolute = re.compile(r"^(/[^/\s]+/|[A-Za-z]:\\)")  # from a root (POSIX, Windows); ~/... names the home folder

    def strings(x, where=""):
        if isinstance(x, dict):
            for k, v in x.items(): yield from strings(v, f"{where}.{k}")
        elif isinstance(x, list):
            for i, v in enumerate(x): yield from strings(v, f"{where}[{i}]")
        elif isinstance(x, str): yield where, x

    bad = [(f, w, s) for f in files for w, s in strings(json.loads((ROOT / f).read_text())) if absolute.match(s)]
    assert files and not bad, bad[:5]
