"`ragkit report`: the subcommand answers --help through the installed command, checks the repository's README, and stays out of the runner's import."
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
    for what in ("readme", "times", "compare", "clean"): assert what in r.stdout
    assert "report" in subprocess.run([str(RAGKIT), "--help"], capture_output=True, text=True, cwd=ROOT).stdout


def test_readme_check_passes_on_the_repository(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["report", "readme", "--check"]) == 0, "README's generated blocks are stale: run `ragkit report readme --write`"


def test_an_input_error_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["report", "compare", str(tmp_path), str(tmp_path), "--out", str(tmp_path / "c.json"), "--root", str(ROOT)]) == 2
    assert capsys.readouterr().err == f"ragkit report: error: {tmp_path}: no run.json; give two folders `ragkit run --out` wrote\n"


def test_the_runner_imports_the_report_module_only_for_its_command():
    code = "import sys, ragkit.runner; print('ragkit.report' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
