"Issue 38 and 51: a method's (and a retriever's) settings are its constructor's parameters, and its run fingerprint covers every one of them."
import pytest
from fingerprint import covered, package_classes

CLASSES = package_classes()


def test_every_method_and_retriever_class_builds_its_example():
    "A class without a `fingerprint_example` would go unchecked: each one builds itself from fakes, next to its definition."
    missing = []
    for name, cls in sorted(CLASSES.items()):
        try: cls.fingerprint_example()
        except NotImplementedError: missing.append(name)
    assert not missing, f"add a `fingerprint_example` classmethod (built from fakes) to: {missing}"


@pytest.mark.parametrize("cls", [c for n, c in sorted(CLASSES.items()) if not n.startswith("_")], ids=lambda c: c.__qualname__)
def test_fingerprint_covers_every_setting(cls):
    "Changing any counted setting, or adding a new one in a subclass, changes the fingerprint (at its default it does not); no class writes `config` by hand."
    assert not covered(cls)


# Issue 40: a resume key covers everything an answer depends on, a fake reader's canned answers and a function's globals included.
from ragkit.core import Example, Method, Prediction, callable_fingerprint, plain
from ragkit.eval.evaluate import ClosedBook, evaluate
from ragkit.lm.base import FakeLM

QUESTIONS = [Example(f"q{i}", f"What is {i}?", [str(i)]) for i in range(3)]


def test_differently_set_fake_readers_never_share_rows(tmp_path):
    "ClosedBook(FakeLM(default='first')) then 'second' into one folder: the second run answers afresh, none of its rows resumed."
    first = evaluate(ClosedBook(FakeLM(default="first")), QUESTIONS, out_dir=tmp_path, progress=False)
    second = evaluate(ClosedBook(FakeLM(default="second")), QUESTIONS, out_dir=tmp_path, progress=False)
    assert first.path != second.path
    assert set(first.table.prediction) == {"first"} and set(second.table.prediction) == {"second"}
    again = evaluate(ClosedBook(FakeLM(default="first")), QUESTIONS, out_dir=tmp_path, progress=False)
    assert again.path == first.path and set(again.table.prediction) == {"first"}  # the same setting still resumes its own rows


def test_fake_reader_answers_dict_and_function_are_in_its_identity():
    "Canned answers by dict, or by a function (its code and what it closes over), each change the identity."
    assert FakeLM({"q": "a"}).identity != FakeLM({"q": "b"}).identity
    assert FakeLM(lambda p: "a").identity != FakeLM(lambda p: "b").identity
    assert FakeLM().identity == "fake:fake@-0.1"  # a fake with nothing canned keeps its short identity


SUFFIX = "!"


def _shout(prompt: str) -> str:
    "An answering function that reads a module global."
    return prompt.upper() + SUFFIX


class _Rewrite(Method):
    "A method with a function as a setting."
    def __init__(self, rewrite, name: str = "rewrite"): self.rewrite, self.name = rewrite, name
    def answer_batch(self, questions): return [Prediction(self.rewrite(q)) for q in questions]


def test_a_global_read_by_a_function_setting_is_in_the_fingerprint(tmp_path, monkeypatch):
    "Changing a global the setting's function reads moves the method's fingerprint, so its rows are not resumed."
    before = evaluate(_Rewrite(_shout), QUESTIONS, out_dir=tmp_path, progress=False)
    fp = callable_fingerprint(_shout)
    monkeypatch.setattr(__import__(__name__), "SUFFIX", "?")
    assert callable_fingerprint(_shout) != fp
    after = evaluate(_Rewrite(_shout), QUESTIONS, out_dir=tmp_path, progress=False)
    assert after.path != before.path and all(p.endswith("?") for p in after.table.prediction)
    assert plain(_shout)["callable"] == "_shout"
