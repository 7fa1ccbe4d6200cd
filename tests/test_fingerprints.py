"Issue 38: a method's (and a retriever's) settings are its constructor's parameters, and its run fingerprint covers every one of them."
import importlib, pkgutil
from pathlib import Path
import pytest
import ragkit
from fingerprint import covered, fingerprinted_classes

CASE_DIR = Path(__file__).parent / "fingerprint_cases"


def _cases() -> tuple[dict, dict]:
    "Every case file's CASES and ALTERNATIVES, merged."
    cases, alts = {}, {}
    for f in sorted(CASE_DIR.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"fingerprint_cases.{f.stem}", f)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        cases.update(getattr(mod, "CASES", {}))
        alts.update(getattr(mod, "ALTERNATIVES", {}))
    return cases, alts


def _modules() -> list[str]:
    "Every module of the package (the CLI and the site included)."
    return [m.name for m in pkgutil.walk_packages(ragkit.__path__, "ragkit.") if not m.name.endswith("_modidx")]


def test_every_method_and_retriever_class_has_a_case():
    "A method or retriever class without a case would go unchecked: each one names how to build it."
    cases, _ = _cases()
    missing = sorted(c.__qualname__ for c in fingerprinted_classes(_modules()) if c not in cases and not c.__name__.startswith("_")
                     and c.__name__ not in ("Method", "Retriever"))
    assert not missing, f"add a case to tests/fingerprint_cases/ for: {missing}"


@pytest.mark.parametrize("cls", sorted(_cases()[0], key=lambda c: c.__qualname__), ids=lambda c: c.__qualname__)
def test_fingerprint_covers_every_setting(cls):
    "Changing any counted setting, or adding a new one in a subclass, changes the fingerprint; no class writes `config` by hand."
    cases, alts = _cases()
    assert not covered(cls, cases[cls], alts.get(cls))
