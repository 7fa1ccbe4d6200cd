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
