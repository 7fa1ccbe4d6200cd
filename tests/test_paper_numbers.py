"""Issue 51: every paper's published numbers are data in one schema (`ragkit/papers/<paper>/paper.csv`), read by one
loader; each cell says where in the paper it is printed."""
from pathlib import Path
import pytest
from ragkit.eval.experiment import PAPER_COLUMNS, paper_numbers

PAPERS = sorted(p.parent.name for p in (Path(__file__).resolve().parents[1] / "ragkit" / "papers").glob("*/paper.csv"))


def test_every_paper_keeps_its_numbers_as_data():
    assert PAPERS == ["eor", "lore", "sure", "witqa"]


@pytest.mark.parametrize("paper", PAPERS)
def test_a_papers_numbers_load_in_the_one_schema(paper):
    rows = paper_numbers(f"ragkit.papers.{paper}")
    assert rows and all(tuple(r) == PAPER_COLUMNS for r in rows)
    assert all(r["source"].split()[0].lower() == paper for r in rows), "each source names the paper, then its table or section"
    assert all(any(w in r["source"] for w in ("Table", "Figure", "Section", "§", "App.")) for r in rows)
    cells = [(r["table"], r["task"], r["row"], r["column"], r["reader"]) for r in rows]
    assert len(cells) == len(set(cells)), "a cell is listed twice"


CLAIMED = sorted(p.parent.name for p in (Path(__file__).resolve().parents[1] / "ragkit" / "papers").glob("*/claims.csv"))


@pytest.mark.parametrize("paper", CLAIMED)
def test_a_papers_declared_claims_name_its_numbers_and_mechanisms(paper):
    "Every row of a claims.csv becomes a claim whose paper number comes from a table its paper.csv holds, and whose mechanism exists."
    import importlib, inspect
    from ragkit.eval.experiment import paper_claims
    from ragkit.eval.mechanism import Mechanism
    tasks = sorted({r["task"] for r in paper_numbers(f"ragkit.papers.{paper}")})
    tables = {r["table"] for r in paper_numbers(f"ragkit.papers.{paper}")}
    claims = paper_claims(f"ragkit.papers.{paper}", tasks, over=dict(r=["BM25"]), naive="Naive", metric="f1")
    assert claims and all(c.source for c in claims)
    assert any(c.paper is not None for c in claims), "no declared claim found its paper number"
    mods = [importlib.import_module(m) for m in (f"ragkit.papers.{paper}.experiment", f"ragkit.papers.{paper}.method") if importlib.util.find_spec(m)]
    names = {v.name for m in mods for _, v in inspect.getmembers(m) if isinstance(v, Mechanism)}
    assert {c.mechanism for c in claims if c.mechanism} <= names, "a claim names a mechanism its paper does not define"
    import csv
    with (Path(__file__).resolve().parents[1] / "ragkit" / "papers" / paper / "claims.csv").open(newline="") as fh:
        assert {r["table"] for r in csv.DictReader(fh) if r["table"]} <= tables, "a claim names a table its paper.csv lacks"
