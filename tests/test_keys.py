"""Issue 51: keys that survive a new setting. Every committed row folder (every run, every profile) keeps its key under
today's code: its key is recomputed from the class that wrote it and the settings it stored, and a setting added at its
default, or renamed without its old key in `ragkit.core.COMMITTED_KEYS`, would show here as the folder it strands."""
import subprocess
from pathlib import Path
import pytest
from fingerprint import key_problems, package_classes

ROOT = Path(__file__).resolve().parents[1]


def committed_keys() -> list[Path]:
    "Every config.json git tracks under outputs/ (a user's own runs, untracked, are theirs)."
    out = subprocess.run(["git", "ls-files", "outputs"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return sorted(ROOT / f for f in out if f.endswith("/config.json"))


FOLDERS = committed_keys()
CLASSES = package_classes()
# Runs of a class a notebook defines for its lesson, not the package: their key holds settings without defaults only.
DEFINED_ELSEWHERE = {"First sentence - BM25": "90_benchmark's lesson class FirstSentence; its one setting, the retriever, has no default"}


def test_there_are_committed_folders_to_replay():
    assert len(FOLDERS) > 100


@pytest.mark.parametrize("config", FOLDERS, ids=lambda p: str(p.parent.relative_to(ROOT / "outputs")))
def test_a_committed_key_is_what_todays_code_computes(config):
    assert not key_problems(config, CLASSES, DEFINED_ELSEWHERE)
