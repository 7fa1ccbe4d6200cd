"""`ragkit report`: the subcommand answers --help through the installed command, checks the repository's README and
docs/REFERENCE.md (rendered, short, linked), prints one screen at the end of `make reproduce`, and stays out of the
runner's import."""
import re, subprocess, sys
from pathlib import Path

import pytest

from ragkit.cli import main
from ragkit.notebooks import project_root

ROOT = project_root(Path(__file__).parent)
RAGKIT = Path(sys.executable).parent / "ragkit"  # the console script pyproject.toml installs


def test_report_help_names_every_subcommand():
    r = subprocess.run([str(RAGKIT), "report", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    for what in ("readme", "times", "compare", "clean", "scoreboard"): assert what in r.stdout
    assert "report" in subprocess.run([str(RAGKIT), "--help"], capture_output=True, text=True, cwd=ROOT).stdout


def test_readme_check_passes_on_the_repository(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["report", "readme", "--check"]) == 0, "README's generated blocks are stale: run `ragkit report readme --write`"


def test_readme_is_short_and_its_generated_tables_are_too():
    "README is what a newcomer reads to the end: under 250 lines, no generated table over 15 rows (long ones live in docs/REFERENCE.md)."
    from ragkit.report import BLOCKS, README, markers
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 250, f"README.md has {len(readme.splitlines())} lines: move reference material to docs/REFERENCE.md"
    for name, (doc, _) in BLOCKS.items():
        if doc != README: continue
        start, end = markers(name)
        block = readme.split(start, 1)[1].split(end, 1)[0]
        rows = [l for l in block.splitlines() if l.startswith("|") and not l.startswith("|---")]
        assert len(rows) <= 16, f"README's {name} block has a table of {len(rows) - 1} rows: render it in docs/REFERENCE.md"


def test_scoreboard_is_one_screen_and_all_lists_every_claim(capsys):
    "`make reproduce` ends with `ragkit report scoreboard`: a screen with the tally per paper; --all keeps every claim, one a line."
    from ragkit.report import WHERE, claim_rows, tally
    assert main(["report", "scoreboard", "--root", str(ROOT)]) == 0
    screen = capsys.readouterr().out.splitlines()
    assert len(screen) <= 3 * len(tally(claim_rows(ROOT))) + 9 and screen[-1] == WHERE, screen
    assert main(["report", "scoreboard", "--all", "--root", str(ROOT)]) == 0
    every = capsys.readouterr().out
    assert all(r["claim"][:40] in every for r in claim_rows(ROOT)), "--all prints every committed claim"


def _readme_tally() -> dict[str, list[int]]:
    "README's summary block as rendered: paper -> its row's counts, and the column names under the key 'columns'."
    from ragkit.report import render_summary
    table = [l.strip("|").split(" | ") for l in render_summary(ROOT).splitlines() if l.startswith("| ") and not l.startswith("|---")]
    return {"columns": [c.strip() for c in table[0][1:]], **{r[0].strip(): [int(c) for c in r[1:]] for r in table[1:]}}


def _screen_tally() -> dict[str, list[int]]:
    "The screen of `ragkit report scoreboard`: paper -> the committed runs' counts, and its two-line column names joined."
    from ragkit.report import scoreboard_screen
    lines = scoreboard_screen(ROOT).splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("paper "))
    first = next(l for l in lines if l.split()[1:2] == ["committed"])
    ends = [m.end() for m in re.finditer(r"\d+", first)]  # counts and names are right-aligned: a column ends where its count does
    starts = [first.index("committed") + len("committed")] + ends[:-1]
    names = [" ".join(x for x in (lines[head - 1][a:e].strip(), lines[head][a:e].strip()) if x) for a, e in zip(starts, ends)]
    rows = [l.split() for l in lines if l.split()[1:2] == ["committed"]]
    return {"columns": names, **{r[0]: [int(c) for c in r[2:]] for r in rows}}


def _card_tally() -> dict[str, list[int]]:
    "The site's cards: paper -> the numbers of its lines, and the names of the first card's lines (the verdict words without their badge)."
    from ragkit.report import claim_rows
    from ragkit.site import cards
    page = cards(claim_rows(ROOT))
    found = {m[1]: re.findall(r"<li>(\d+) (.*?)</li>", m[2]) for m in re.finditer(r"<h3>(.*?)</h3>(.*?)</div>", page)}
    first = next(iter(found.values()))
    return {"columns": [re.sub(r"<[^>]+>", "", n) for _, n in first], **{p: [int(c) for c, _ in li] for p, li in found.items()}}


def test_readme_scoreboard_and_cards_count_the_same():
    "README's tally, the scoreboard's screen and the site's cards: the same papers, columns (in DIRECTIONS' order) and counts for the committed runs."
    from ragkit.eval.experiment import DIRECTIONS
    from ragkit.report import claim_rows, tally
    readme, screen, cards = _readme_tally(), _screen_tally(), _card_tally()
    assert readme["columns"] == ["claims", "with a paper number", *DIRECTIONS], readme["columns"]
    assert screen == readme and cards == readme, (readme, screen, cards)
    rows = claim_rows(ROOT)
    assert sum(v[0] for k, v in readme.items() if k != "columns") == len(rows)  # every claim, not only those with a paper number
    holm = [r.get("direction_holm", r["direction"]) for r in rows]
    assert [sum(v[2 + i] for k, v in readme.items() if k != "columns") for i in range(len(DIRECTIONS))] == [holm.count(d) for d in DIRECTIONS]
    assert sorted(k for k in readme if k != "columns") == sorted(t["paper"] for t in tally(rows))


def test_each_paper_has_one_sentence_everywhere():
    "The outcome sentence of each paper is README's, the screen's and the card's, and names our reader's size against the paper's reader."
    from ragkit.report import PAPER_READERS, claim_rows, outcome_sentence, render_summary, scoreboard_screen, tally
    from ragkit.site import cards
    rows = claim_rows(ROOT)
    summary, screen, page = render_summary(ROOT), scoreboard_screen(ROOT), cards(rows)
    for t in tally(rows):
        s = outcome_sentence(rows, t["paper"])
        assert s.startswith("With a 0.5B reader") and f"of {t['claims']} claims" in s, s
        assert f"- **{t['paper']}**: {s}" in summary.splitlines() and f"{t['paper']}: {s}" in screen.splitlines(), t["paper"]
        assert f'<h3>{t["paper"]}</h3><p class="card-outcome">{s}</p>' in page, t["paper"]
        p = PAPER_READERS.get(t["paper"])
        assert (p is None) == (t["paper"] == "Benchmark") and (p is None or f"the paper's {p['reader']} (" in s), s


def test_scoreboard_all_shows_what_undecided_claims_need(capsys):
    "--all says, for a claim left undecided (or whose mechanism did not act), the questions a decision would need: where its row has n_needed."
    from ragkit.report import claim_rows, needs_text
    assert main(["report", "scoreboard", "--all", "--root", str(ROOT), "--profile", "paper"]) == 0
    every = capsys.readouterr().out
    needs = [needs_text(r) for r in claim_rows(ROOT) if needs_text(r)]
    assert all(f"; needs {n}" in every for n in needs)
    assert every.count("; needs ") >= len(needs)


def test_an_input_error_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["report", "compare", str(tmp_path), str(tmp_path), "--out", str(tmp_path / "c.json"), "--root", str(ROOT)]) == 2
    assert capsys.readouterr().err == f"ragkit report: error: {tmp_path}: no run.json; give two folders `ragkit run --out` wrote\n"


def test_the_runner_imports_the_report_module_only_for_its_command():
    code = "import sys, ragkit.runner; print('ragkit.report' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
