"Run every notebook's own tests (its lesson cells) through nbdev's runner, one pytest case per notebook."
from pathlib import Path
import pytest
from nbdev.config import get_config
from nbdev.test import test_nb as run_nb_tests

NBS = sorted((Path(__file__).parent.parent / "nbs").glob("[0-9]*.ipynb"))


@pytest.mark.parametrize("nb", NBS, ids=[p.stem for p in NBS])
def test_notebook(nb):
    "The notebook's cells run top to bottom without error, skipping cells flagged with tst_flags."
    flags = get_config(nb.parent).tst_flags.split()
    ok, secs = run_nb_tests(nb, skip_flags=flags, showerr=True)
    assert ok, f"{nb.name} failed (see the traceback above); run `nbdev-test {nb}` to reproduce"


def test_some_notebooks_found():
    "Guard against a glob that silently matches nothing."
    assert len(NBS) >= 3


@pytest.mark.parametrize("nb", NBS, ids=[p.stem for p in NBS])
def test_papermill_reads_every_parameter(nb, caplog):
    "papermill parses every line of the parameters cell; a comment it cannot parse makes it call a real -p value 'unknown'."
    import papermill as pm
    with caplog.at_level("WARNING", logger="papermill"):
        pm.inspect_notebook(str(nb))
    bad = [r.getMessage() for r in caplog.records if "Unable to parse" in r.getMessage()]
    assert not bad, f"{nb.name}: {bad}; reword that line's comment (here '=', '<=' and '>=' in comments tripped papermill's parser)"


def test_package_docstring_names_every_module():
    "ragkit/__init__.py's module list is complete: a reader who opens the package first sees every module."
    import ragkit
    root = Path(ragkit.__file__).parent
    mods = {".".join(p.relative_to(root.parent).with_suffix("").parts) for p in root.rglob("*.py") if p.name not in ("__init__.py", "_modidx.py")}
    missing = sorted(m for m in mods if f"`{m}`" not in ragkit.__doc__)
    assert not missing, (f"ragkit/__init__.py's docstring does not list {missing}: nbdev lists a module only when its docstring holds "
                         "more than three lines, so give that notebook's `> ` description (above its `> Lessons:` line) two lines or "
                         "more, then run nbdev-export")


# Issue 40: every parameter of every notebook is checked before the kernel, so each one has a rule.
from ragkit.notebooks import notebook_parameters, notebook_rules  # noqa: E402

WITH_PARAMETERS = [p for p in NBS if notebook_parameters(p)]


@pytest.mark.parametrize("nb", WITH_PARAMETERS, ids=[p.stem for p in WITH_PARAMETERS])
def test_every_parameter_has_a_rule(nb):
    "A parameter without a rule is checked only for its type: a bad value would fail inside the kernel, minutes in."
    rules = notebook_rules(nb)
    assert rules is not None, f"{nb.stem}'s module does not import"
    missing = sorted(set(notebook_parameters(nb)) - set(rules))
    assert not missing, (f"{nb.stem}: parameter(s) {missing} have no rule; add one to PARAMETER_RULES in its module "
                         "(ragkit.core's OneOf, AtLeast, Between, WholeNumbers, Flag, Text or Parses) or to ragkit.notebooks.SHARED_RULES")


def test_the_rule_walk_finds_a_parameter_without_a_rule(tmp_path, monkeypatch):
    "The walk above can fail: a notebook with a parameter no rule covers is reported."
    import json, shutil
    import ragkit.notebooks as nbs
    nb = tmp_path / "nbs" / "63_papers.eor.inconsistency.ipynb"
    nb.parent.mkdir()
    shutil.copy(Path(__file__).parent.parent / "nbs" / "profiles.toml", nb.parent / "profiles.toml")
    src = json.loads((Path(__file__).parent.parent / "nbs" / nb.name).read_text())
    cell = next(c for c in src["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    cell["source"] = "".join(cell["source"]) + "\nbrand_new = 3  # a parameter added without a rule\n"
    nb.write_text(json.dumps(src))
    assert "brand_new" in set(notebook_parameters(nb)) - set(nbs.notebook_rules(nb))


# A lesson in a notebook that `ragkit run` executes shares the run's kernel: an environment variable it sets or pops
# stays for the run. 71's lesson popped RAGKIT_PROGRESS (the job line then showed no answers for hours) and 64's set
# HF_HUB_OFFLINE (a hub id in its decide-gpu profile could not download).
import json, re  # noqa: E402

ENV_CHANGE = re.compile(r"os\.environ(\[[^\]]+\]\s*=(?!=)|\.(pop|update|setdefault|clear|__setitem__|__delitem__)\()"
                        r"|del os\.environ")


@pytest.mark.parametrize("nb", WITH_PARAMETERS, ids=[p.stem for p in WITH_PARAMETERS])
def test_lessons_leave_the_run_environment(nb):
    "A run's kernel keeps the environment `ragkit run` gave it: lessons change os.environ only inside patch.dict."
    bad = [f"cell {i}: {line.strip()}" for i, c in enumerate(json.loads(nb.read_text(encoding="utf-8"))["cells"])
           if c["cell_type"] == "code" for line in "".join(c["source"]).splitlines() if ENV_CHANGE.search(line)]
    assert not bad, (f"{nb.name} changes the environment of the kernel its run shares: {bad}; wrap the lesson in "
                     "`with unittest.mock.patch.dict(os.environ, NAME=value):` so the run's own value is back after it")


def test_the_environment_check_sees_a_change():
    "The pattern above finds the ways a lesson could change the environment, and not a read or a patch.dict."
    for s in ('os.environ["X"] = "1"', 'os.environ.pop("X")', 'os.environ.setdefault("X", "1")', "del os.environ['X']",
              "os.environ.update(X='1')"):
        assert ENV_CHANGE.search(s), s
    for s in ('os.environ.get("X")', 'os.environ["X"] == "1"', 'with patch.dict(os.environ, X="1"):'):
        assert not ENV_CHANGE.search(s), s
