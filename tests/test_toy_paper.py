"""Issue 38: a fifth paper is its notebook plus a profile entry. A toy paper notebook, added to a copy of the repository
with no other edit, is exported and listed as a module, run by `ragkit reproduce`, and shown on the scoreboard and the site."""
import json, os, shutil, subprocess, sys
from pathlib import Path
import nbformat
from ragkit.config import load_settings
from ragkit.notebooks import project_root
from ragkit.site import claim_rows, module_notebooks, paper_pages

ROOT = project_root(Path(__file__).parent)
NB = "45_papers.toy"

MD = lambda s: nbformat.v4.new_markdown_cell(s)
CODE = lambda s: nbformat.v4.new_code_cell(s)


def toy_notebook() -> nbformat.NotebookNode:
    "A paper notebook as a newcomer writes one: a title naming the paper, its method exported, a parameters cell, an Experiment."
    params = CODE('datasets = "demo"\nlimit = 4\nseed = 0\nn_boot = 200\nout_dir = ""')
    params.metadata["tags"] = ["parameters"]
    nb = nbformat.v4.new_notebook(cells=[
        MD("# Toy: a fifth paper, as a newcomer adds one\n\n> The question's longest capitalised word as its answer, judged against a reader that never answers,\n"
           "> on the demo questions: the smallest paper notebook that runs end to end.\n> \n"
           "> Lessons: `nbs/45_papers.toy.ipynb`; on the site (`make site`): `papers.toy.html`."),
        CODE("#| default_exp papers.toy"),
        MD("The method, exported: its settings are its constructor's parameters."),
        CODE('#| export\nfrom ragkit.core import Method, Prediction\n\nclass Shout(Method):\n'
             '    "Answers with the question\'s longest capitalised word."\n    tag = "toy-shout"\n'
             '    @classmethod\n    def fingerprint_example(cls):\n        "A shouter of its default length."\n        return cls()\n'
             '    def __init__(self, min_len: int = 3, name: str = "Shout"): self.min_len, self.name = min_len, name\n'
             '    def answer_batch(self, questions):\n'
             '        return [Prediction(max([w for w in q.split() if w[:1].isupper() and len(w) >= self.min_len] or [""], key=len)) for q in questions]'),
        params,
        MD("The run: the method and a silent reader on the demo questions, one claim between them."),
        CODE("from ragkit.eval.experiment import Experiment, Claim\nfrom ragkit.eval.evaluate import ClosedBook\n"
             "from ragkit.lm.base import FakeLM\nfrom ragkit.papers.toy import Shout\n"
             f'ex = Experiment.from_notebook(globals(), "{NB}")\nprep = ex.prepare("demo")\n'
             'runs = ex.run({"Shout": Shout(), "Silent": ClosedBook(FakeLM(default="I do not know"), name="Silent")}, prep, progress=False)\n'
             'print(ex.finish(runs, [Claim("shouting beats silence", "demo", "Shout", "Silent", "f1")]))'),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "python3", "language": "python"}
    return nb


def copy_repository(dest: Path) -> Path:
    "The repository's sources, tests, docs and committed runs copied under `dest` (a clone, without git)."
    for d in ("nbs", "ragkit", "tests", "docs"):
        shutil.copytree(ROOT / d, dest / d, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    for d in ("paper", "paper-1.5b", "paper-split", "decide", "bench"):
        if (ROOT / "outputs" / d).is_dir(): shutil.copytree(ROOT / "outputs" / d, dest / "outputs" / d)
    for f in ("pyproject.toml", "settings.ini", "README.md"): shutil.copy(ROOT / f, dest / f)
    return dest


def add_toy_paper(root: Path) -> None:
    "The only two edits: the notebook, and its profile entry (its demo table and its place in the reproduce list)."
    nbformat.write(toy_notebook(), root / "nbs" / f"{NB}.ipynb")
    prof = root / "nbs" / "profiles.toml"
    text = prof.read_text().replace('notebooks = ["06_data.cards", ', f'notebooks = ["06_data.cards", "{NB}", ', 1)
    assert NB in text, "the [reproduce] list of nbs/profiles.toml changed shape: update this test's edit"
    prof.write_text(text + f'\n["{NB}".demo]\nlimit = 4\n')


def test_toy_paper_needs_only_its_notebook_and_profile(tmp_path):
    root = add_toy_paper(copy_repository(tmp_path / "repo")) or tmp_path / "repo"
    env = {**os.environ, "PYTHONPATH": str(root), "RAGKIT_OUTPUTS_DIR": str(root / "outputs"),
           "RAGKIT_CACHE_DIR": str(load_settings().cache_dir)}  # the demo data, built once, is shared
    bin_dir = Path(sys.executable).parent
    subprocess.run([str(bin_dir / "nbdev-export")], cwd=root, env=env, check=True, capture_output=True)
    cli = [sys.executable, "-c", "import sys; from ragkit.cli import main; sys.exit(main())"]
    subprocess.run(cli + ["report", "readme", "--write"], cwd=root, env=env, check=True, capture_output=True)  # README's recipe: the map
    assert f"`{NB}`" in (root / "docs" / "REFERENCE.md").read_text()
    assert (root / "ragkit" / "papers" / "toy.py").is_file()
    assert "`ragkit.papers.toy`" in (root / "ragkit" / "__init__.py").read_text(), "nbdev-export lists the new module by itself"
    where = subprocess.run([sys.executable, "-c", "import ragkit; print(ragkit.__file__)"], cwd=root, env=env, capture_output=True, text=True)
    assert where.stdout.strip() == str(root / "ragkit" / "__init__.py"), where.stdout + where.stderr

    run = subprocess.run([sys.executable, "-c", "import sys; from ragkit.cli import main; sys.exit(main())",
                          "reproduce", "--profile", "demo", "--only", NB, "--quiet"], cwd=root, env=env, capture_output=True, text=True)
    assert run.returncode == 0 and f"{NB}" in run.stdout and "1 ok, 0 failed" in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]
    res = json.loads((root / "outputs" / "demo" / NB / "results.json").read_text())
    assert [r["claim"] for r in res["verdict"]] == ["shouting beats silence"]

    rows = [r for r in claim_rows(root, "demo") if r["notebook"] == NB]
    assert [r["paper"] for r in rows] == ["Toy"], "the scoreboard names the paper from the notebook's title"
    board = subprocess.run([sys.executable, "-c", "import sys; from ragkit.cli import main; sys.exit(main())",
                            "report", "scoreboard", "--all", "--root", str(root), "--profile", "demo"], cwd=root, env=env, capture_output=True, text=True)
    assert board.returncode == 0 and "Toy" in board.stdout and "shouting beats silence" in board.stdout, board.stdout + board.stderr
    assert module_notebooks(root)["papers.toy"].name == f"{NB}.ipynb"
    assert NB in paper_pages(root, tmp_path / "site-src", "demo")

    # Every check CI runs that a new paper could fail, on the copy: its parameter rules, its method's fingerprint, the
    # package's module list, the notebook map and README's generated blocks.
    checks = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_fingerprints.py",
                             "tests/test_notebooks.py", "tests/test_report.py::test_readme_check_passes_on_the_repository",
                             "-k", "toy or Shout or package_docstring or fingerprint or readme_check or builds_its_example"],
                            cwd=root, env=env, capture_output=True, text=True)
    assert checks.returncode == 0 and "Shout" in subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "tests/test_fingerprints.py"], cwd=root, env=env, capture_output=True,
        text=True).stdout, checks.stdout[-3000:] + checks.stderr[-3000:]
