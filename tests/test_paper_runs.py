"The committed reference runs (outputs/paper/<notebook>/ and outputs/paper-1.5b/<notebook>/): they parse, they ran their profile, and README shows them."
import importlib.util, json
from pathlib import Path

import pytest

from ragkit.eval.experiment import no_difference_bound
from ragkit.runner import find_notebook, load_profiles, project_root, resolve_parameters

ROOT = project_root(Path(__file__).parent)
REFERENCE_PROFILES = ("paper", "paper-1.5b")  # the profiles whose runs are committed
RUNS = sorted(p for prof in REFERENCE_PROFILES for p in (ROOT / "outputs" / prof).glob("*") if p.is_dir())


def _strict(path: Path):
    "JSON that refuses NaN and Infinity, as results.json promises."
    def bad(c): raise ValueError(f"{path}: non-standard JSON constant {c}")
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=bad)


@pytest.mark.parametrize("profile", REFERENCE_PROFILES)
def test_every_committed_run_has_its_profile(profile):
    with_profile = {nb for nb, t in load_profiles(ROOT).items() if nb != "reproduce" and profile in t}
    got = {p.name for p in (ROOT / "outputs" / profile).glob("*") if p.is_dir()}
    assert got <= with_profile, f"a folder under outputs/{profile}/ has no {profile} profile in nbs/profiles.toml"


@pytest.mark.parametrize("run", RUNS, ids=[f"{p.parent.name}/{p.name}" for p in RUNS])
def test_committed_run_matches_its_profile(run):
    results, params, rec = (_strict(run / f"{n}.json") for n in ("results", "params", "run"))
    profile = run.parent.name
    assert rec["status"] == "ok" and rec["profile"] == profile and not rec["overrides"], f"{run}/run.json: not a clean {profile} run"
    assert len(rec["git"]["commit"]) == 40
    expected = {k: v for k, v in resolve_parameters(find_notebook(run.name, ROOT), profile, root=ROOT).items() if k != "out_dir"}
    got = {k: v for k, v in params.items() if k != "out_dir"}
    assert got == expected, f"{run}/params.json differs from the {profile} profile: rerun `ragkit run {run.name} --profile {profile}`"
    assert {k: v for k, v in results["parameters"].items() if k != "out_dir"} == expected
    assert (run / f"{run.name}.ipynb").is_file(), "the executed notebook is missing"
    for fig in results.get("figures", []):
        assert (run / Path(fig).name).is_file(), f"{run}: figure {fig} is listed in results.json but not committed"
    assert not list(run.rglob("*.sqlite")), "an LM cache was committed"
    for row in results.get("verdict", []):  # every verdict says both things: its direction and its size
        assert row["direction"] in ("holds", "reversed", "undecided") and row["size"] in ("consistent", "smaller", "larger", "n/a"), row["claim"]
        if row["direction"] != "undecided" and row.get("n", 0) >= 10: assert (row["lo"] > 0) == (row["direction"] == "holds"), row["claim"]
        if row["direction"] == "undecided" and row.get("n", 0) >= 10: assert row["lo"] <= 0 <= row["hi"], row["claim"]
        paper, lo, hi = row.get("paper"), row["lo"], row["hi"]
        if lo == hi == 0 and row.get("n"): lo, hi = -no_difference_bound(row["n"]), no_difference_bound(row["n"])  # no question differs
        if paper is not None and row["size"] in ("smaller", "larger"): assert not lo <= paper <= hi, row["claim"]
        if row["size"] == "consistent": assert lo <= paper <= hi, row["claim"]


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


def test_readme_headlines_are_rendered_from_the_committed_runs():
    spec = importlib.util.spec_from_file_location("headlines", ROOT / "scripts" / "headlines.py")
    h = importlib.util.module_from_spec(spec); spec.loader.exec_module(h)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert h.render_readme(readme, ROOT) == readme, "README's headline or timing block is stale: run scripts/headlines.py --write"
