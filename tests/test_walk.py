"""Issue 53, item 5: every value a notebook's rules accept runs to the end on the smoke profile, or the rules refuse it
before any kernel. The walk's cases come from each rule's `walk_values` (ragkit.notebooks.walk_cases); the ones the
rules refuse are checked here, live; the ones they accept are run by scripts/walk_rules.py, whose rows
(outputs/bench/walk.jsonl) are held here to the current rules. A few accepted cases that once failed in the kernel are
run here for real."""
import importlib.util, json, warnings
from pathlib import Path

import pytest

from ragkit.notebooks import notebook_rules, project_root, walk_case, walk_cases
from ragkit.runner import run_notebook

ROOT = project_root(Path(__file__).parent)
spec = importlib.util.spec_from_file_location("walk_rules", ROOT / "scripts" / "walk_rules.py")
walk = importlib.util.module_from_spec(spec)
spec.loader.exec_module(walk)


@pytest.fixture(scope="module")
def cases():
    "Every case and what the rules say of it now, with the walk's empty outputs folder: None or the one-line refusal."
    with walk.scratch_outputs(): return {walk.case_key(*c): walk_case(*c, root=ROOT) for c in walk_cases(ROOT)}


def test_every_rule_says_what_a_walk_tries():
    "A rule without `walk_values` would leave its parameter out of the walk."
    missing = [(nb.stem, k, type(r).__name__) for nb in sorted((ROOT / "nbs").glob("[0-9]*.ipynb"))
               for k, r in (notebook_rules(nb) or {}).items() if not callable(getattr(r, "walk_values", None))]
    assert not missing, f"rules without walk_values: {missing}"


def test_what_the_rules_refuse_is_refused_in_one_line(cases):
    "Each refused case says so in one line naming its parameter and the fix (the issue's cases among them)."
    refused = {k: why for k, why in cases.items() if why is not None}
    for k in ['62_papers.eor.runs retrievers ""', '80_papers.witqa systems ""', '40_papers.lore retrievers ""']:
        assert "names none: name at least one of" in refused[k], k
    assert "no run of 70_papers.sure at" in refused['71_papers.sure.decide power_from "decide-gpu"']  # a pilot not here
    assert "ran other settings" in refused['71_papers.sure.decide power_from "paper"']  # a pilot of another reader
    assert "has no judged decisive claim on demo" in refused['40_papers.lore power_from "decide"']  # a pilot of other tasks
    assert "goes with -p retrievers" in refused['40_papers.lore retrievers "BM25"']  # the re-ranked Ensemble must run
    for k, why in refused.items():
        nb, parameter = k.split()[:2]  # a rule that reads this parameter (`given`) blames its own and names this one
        named = f"'{parameter}'" in why or f"-p {parameter}" in why or parameter == "datasets"
        assert "\n" not in why and nb in why and named, why


def test_a_template_that_is_no_answer_prompt_with_a_context_is_refused():
    "LoRE and the benchmark read a question and its context: a retrieval-free, summary or ranking prompt is refused."
    import ragkit.benchmark  # noqa: F401  (every template registered: the rule must not depend on what was imported)
    for nb, t in [("40_papers.lore", "eor-refree-llama2"), ("40_papers.lore", "eor-cp"), ("90_benchmark", "sure-rank"),
                  ("90_benchmark", "sure-rankgpt")]:
        why = walk_case(nb, "template", t, root=ROOT)
        assert why and "'template'" in why and "lore-context" in why, why
    assert walk_case("90_benchmark", "template", "witqa-context", root=ROOT) is None


def test_no_value_the_rules_accept_failed_in_the_walk(cases):
    "The walk's rows name current cases only, no case the rules still accept failed; cases not yet walked are named."
    rows = walk.read_walk()
    stale = sorted(set(rows) - set(cases))
    assert not stale, (f"{len(stale)} walk row(s) name no current case (e.g. {stale[:3]}): "
                       "run scripts/walk_rules.py --prune")
    failed = {k: r["error"] for k, r in rows.items() if r["outcome"] not in ("ok", "timeout") and cases[k] is None}
    assert not failed, (f"{len(failed)} accepted value(s) failed in the kernel: refuse them in the rule, or fix the "
                        f"notebook and run `scripts/walk_rules.py --again`: {dict(list(failed.items())[:5])}")
    pending = [k for k, why in cases.items() if why is None and (k not in rows or rows[k]["outcome"] == "timeout")]
    if pending: warnings.warn(f"{len(pending)} accepted case(s) not yet walked to the end (scripts/walk_rules.py; "
                              f"--again --timeout N for those that timed out), e.g. {pending[:3]}")


def test_witqa_with_the_closed_book_reader_alone_runs_to_the_end(tmp_path, monkeypatch):
    "80 -p systems vanilla (a listed value) ended in an AttributeError 2 minutes in: its agreement table had no columns."
    monkeypatch.setenv("RAGKIT_OUTPUTS_DIR", str(tmp_path))
    out = run_notebook("80_papers.witqa", "smoke", {"systems": "vanilla", "limit": 4}, root=ROOT, progress=False)
    res = json.loads((out / "results.json").read_text())
    assert res and (out / "run.json").is_file() and json.loads((out / "run.json").read_text())["status"] == "ok"


def test_a_run_stopped_at_the_timeout_is_not_a_failure(tmp_path):
    "A case the walk stopped at its timeout says nothing of its value: it is pending, not failed (older rows too)."
    rows = tmp_path / "walk.jsonl"
    said = [("limit", "over 1800 s"), ("w1", "ragkit: 40_papers.lore failed in cell 3")]
    row = lambda k, e: json.dumps(dict(notebook="40_papers.lore", parameter=k, value=0, outcome="failed", error=e))
    rows.write_text("\n".join(row(k, e) for k, e in said))
    assert {k.split()[1]: r["outcome"] for k, r in walk.read_walk(rows).items()} == {"limit": "timeout", "w1": "failed"}
