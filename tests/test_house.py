"""The house's size rules (issue 51), checked on the notebooks that export the package, so a new feature cannot regrow
what a refactor cut: no exported cell over 60 lines, the median exported cell at most 12 lines, at most 2 % of the
package's lines over 120 characters. A failure names the cells or files to split or wrap."""
import json
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def exported_cells() -> list[tuple[str, str, int]]:
    "(notebook, cell id, lines) of every exported code cell, counting every line but nbdev's `#|` directives."
    out = []
    for f in sorted((ROOT / "nbs").glob("*.ipynb")):
        for c in json.loads(f.read_text(encoding="utf-8"))["cells"]:
            lines = "".join(c["source"]).splitlines() if c["cell_type"] == "code" else []
            if any(line.strip().startswith("#| export") for line in lines[:3]):
                out.append((f.name, c.get("id", "?"), sum(not line.startswith("#|") for line in lines)))
    return out


def test_cells_are_found():
    cells = exported_cells()
    assert len(cells) > 500 and any(nb == "00_core.ipynb" for nb, _, _ in cells)


def test_no_exported_cell_over_60_lines():
    long = [f"{nb} cell {cid}: {n} lines" for nb, cid, n in exported_cells() if n > 60]
    assert not long, "split these cells at a function boundary, with a sentence of why between: " + "; ".join(long)


def test_the_median_exported_cell_is_at_most_12_lines():
    sizes = [n for _, _, n in exported_cells()]
    assert statistics.median(sizes) <= 12, f"median exported cell {statistics.median(sizes)} lines (at most 12)"


def test_few_lines_over_120_characters():
    files = [p for p in (ROOT / "ragkit").rglob("*.py") if p.name != "_modidx.py"]
    lines = [(p, line) for p in files for line in p.read_text(encoding="utf-8").splitlines()]
    wide = [p for p, line in lines if len(line) > 120]
    assert len(wide) <= 0.02 * len(lines), (f"{len(wide)} of {len(lines)} lines over 120 characters, most in "
                                            f"{max(set(wide), key=wide.count).relative_to(ROOT)}")
