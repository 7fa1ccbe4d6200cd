"The committed reference runs (outputs/paper/<notebook>/): they parse, they ran the `paper` profile, and README shows them."
import importlib.util, json
from pathlib import Path

import pytest

from ragkit.runner import find_notebook, load_profiles, project_root, resolve_parameters

ROOT = project_root(Path(__file__).parent)
RUNS = sorted(p for p in (ROOT / "outputs" / "paper").glob("*") if p.is_dir())


def _strict(path: Path):
    "JSON that refuses NaN and Infinity, as results.json promises."
    def bad(c): raise ValueError(f"{path}: non-standard JSON constant {c}")
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=bad)


def test_every_paper_profile_has_a_committed_run_or_is_listed_as_missing():
    with_paper = {nb for nb, t in load_profiles(ROOT).items() if nb != "reproduce" and "paper" in t}
    assert {p.name for p in RUNS} <= with_paper, "a folder under outputs/paper/ has no paper profile in nbs/profiles.toml"


@pytest.mark.parametrize("run", RUNS, ids=[p.name for p in RUNS])
def test_committed_run_matches_the_paper_profile(run):
    results, params, rec = (_strict(run / f"{n}.json") for n in ("results", "params", "run"))
    assert rec["status"] == "ok" and rec["profile"] == "paper" and not rec["overrides"], f"{run}/run.json: not a clean paper run"
    assert len(rec["git"]["commit"]) == 40
    expected = {k: v for k, v in resolve_parameters(find_notebook(run.name, ROOT), "paper", root=ROOT).items() if k != "out_dir"}
    got = {k: v for k, v in params.items() if k != "out_dir"}
    assert got == expected, f"{run}/params.json differs from the paper profile: rerun `ragkit run {run.name} --profile paper`"
    assert {k: v for k, v in results["parameters"].items() if k != "out_dir"} == expected
    assert (run / f"{run.name}.ipynb").is_file(), "the executed notebook is missing"
    for fig in results.get("figures", []):
        assert (run / Path(fig).name).is_file(), f"{run}: figure {fig} is listed in results.json but not committed"
    assert not list(run.rglob("*.sqlite")), "an LM cache was committed"


def test_readme_headlines_are_rendered_from_the_committed_runs():
    spec = importlib.util.spec_from_file_location("headlines", ROOT / "scripts" / "headlines.py")
    h = importlib.util.module_from_spec(spec); spec.loader.exec_module(h)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert h.render_readme(readme, ROOT) == readme, "README's headline or timing block is stale: run scripts/headlines.py --write"
