"""`ragkit report`: the subcommand answers --help through the installed command, checks the repository's README and
docs/REFERENCE.md (rendered, short, linked), prints one screen at the end of `make reproduce`, and stays out of the
runner's import."""
import subprocess, sys
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
    assert len(screen) <= 2 * len(tally(claim_rows(ROOT))) + 8 and screen[-1] == WHERE, screen
    assert main(["report", "scoreboard", "--all", "--root", str(ROOT)]) == 0
    every = capsys.readouterr().out
    assert all(r["claim"][:40] in every for r in claim_rows(ROOT)), "--all prints every committed claim"


def test_an_input_error_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["report", "compare", str(tmp_path), str(tmp_path), "--out", str(tmp_path / "c.json"), "--root", str(ROOT)]) == 2
    assert capsys.readouterr().err == f"ragkit report: error: {tmp_path}: no run.json; give two folders `ragkit run --out` wrote\n"


def test_the_runner_imports_the_report_module_only_for_its_command():
    code = "import sys, ragkit.runner; print('ragkit.report' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
