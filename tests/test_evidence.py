"The deciding questions of every committed claim: counts that are the verdict's, anchors unique per run, a page per run."
import json, re
from pathlib import Path
import pytest
from markdown_it import MarkdownIt
from ragkit.evidence import RunRows, claim_anchor, committed_runs, deciding_questions, evidence_markdown, rivals

ROOT = Path(__file__).parent.parent
RUNS = committed_runs(ROOT)
IDS = [f"{r.parent.name}/{r.name}" for r in RUNS]


def verdict(run: Path) -> list[dict]:
    "The verdict rows of a committed run."
    return json.loads((run / "results.json").read_text(encoding="utf-8"))["verdict"]


def test_the_committed_runs_are_found():
    "Every profile's committed runs are read (a glob that matched nothing would pass every test below)."
    assert {"paper/70_papers.sure", "paper/40_papers.lore", "paper/90_benchmark", "paper-1.5b/70_papers.sure"} <= set(IDS)


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_counts_from_rows_are_the_verdicts(run):
    "Each claim with rows on both sides and one rival gives the verdict row's differing, won and lost questions exactly."
    rr = RunRows.read(run)
    for r in verdict(run):
        d = deciding_questions(rr, r)
        if d["reason"] is not None or len(rivals(r["b"])) != 1: continue
        got = (d["discordant"], d["wins"], d["losses"])
        assert got == (int(r["discordant"]), int(r["wins"]), int(r["losses"])), f"{r['claim']} ({r['dataset']}): rows {got}"
        assert d["matches"] and not any(n.startswith("the rows give") for n in d["notes"])
        assert len(d["questions"]) == min(20, d["discordant"])
        assert all((e["a_score"] > e["b_score"]) or (e["a_score"] < e["b_score"]) for e in d["questions"])


def test_most_pairwise_claims_have_rows():
    "The paper runs' two-system claims are shown from rows (a regression in finding row folders would turn them into reasons)."
    shown = {f"{run.parent.name}/{run.name}": sum(deciding_questions(RunRows.read(run), r)["reason"] is None for r in verdict(run)) for run in RUNS}
    assert shown["paper/70_papers.sure"] == 19 and shown["paper/40_papers.lore"] == 36 and shown["paper/90_benchmark"] == 69  # with the first-candidate and top-context rivals read from traces; the benchmark's Top-1 systems
    assert shown["paper/80_papers.witqa"] == 6 and shown["paper/62_papers.eor.runs"] == 2 and shown["paper/64_papers.eor.method"] == 0


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_claims_without_rows_say_why(run):
    "A claim without deciding questions names the reason and the notebook that computes its scores."
    rr = RunRows.read(run)
    for r in verdict(run):
        d = deciding_questions(rr, r)
        if d["reason"] is None: continue
        assert run.name in d["reason"] and "questions" not in d, d["reason"]


def test_a_mismatch_is_reported():
    "A verdict row whose counts the rows do not give is said to differ, with both counts."
    run = ROOT / "outputs" / "paper" / "70_papers.sure"
    r = dict(verdict(run)[0], wins=5, discordant=13)
    d = deciding_questions(run, r)
    assert d["matches"] is False and d["notes"][-1] == "the rows give 12 differing questions (4 won, 8 lost); the verdict row says 13 (5 won, 8 lost)"


def test_several_rivals_compare_the_best():
    "With several b the best of them by mean score is compared, as the verdict does, and the note says so."
    run = ROOT / "outputs" / "paper" / "70_papers.sure"
    for b in (["No retrieval", "Base"], ("Base", "No retrieval"), "No retrieval | Base"):
        d = deciding_questions(run, dict(verdict(run)[0], b=b))
        assert d["b_compared"] == "Base" and d["discordant"] == 12 and d["notes"][0].startswith("b is several systems")


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_anchors_unique_and_html_safe(run):
    "No two claims of a run share an anchor, and each is an id docutils keeps as it is."
    anchors = [claim_anchor(r) for r in verdict(run)]
    assert len(set(anchors)) == len(anchors)
    assert all(re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", a) for a in anchors)


def _table_widths(page: str) -> set[int]:
    "The cell counts of every table row markdown-it reads in `page`."
    toks = MarkdownIt("commonmark").enable("table").parse(page)
    opens = [i for i, t in enumerate(toks) if t.type == "tr_open"]
    closes = [i for i, t in enumerate(toks) if t.type == "tr_close"]
    return {sum(t.type in ("td_open", "th_open") for t in toks[i:j]) for i, j in zip(opens, closes)}


@pytest.mark.parametrize("run", RUNS, ids=IDS)
def test_every_run_renders(run):
    "Each committed run renders: a MyST target per claim in verdict order, its regenerating command, and tables of eight cells per row."
    page = evidence_markdown(run)
    assert re.findall(r"^\(([a-z0-9-]*claim-[a-z0-9-]+)\)=$", page, re.M) == [claim_anchor(r, profile=run.parent.name) for r in verdict(run)]
    assert f"`.venv/bin/ragkit run {run.name} --profile {run.parent.name}`" in page
    assert _table_widths(page) <= {8}
