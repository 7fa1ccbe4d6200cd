"""The check behind `test_fingerprint_covers_every_setting`: a method's run fingerprint moves with every one of its settings.

A case is `make(cls) -> instance` for one method or retriever class, kept per paper in `tests/fingerprint_cases/*.py` as
`CASES = {Class: make}` (and `ALTERNATIVES = {Class: {setting: other value}}` where the generic change of a setting
would not be a value the class accepts)."""
import copy
from ragkit.core import Fingerprinted, init_settings
from ragkit.eval.evaluate import run_key


class Probe:
    "A stand-in setting no real run holds: described by its own identity."
    def __init__(self, tag: str): self.identity, self.name = f"probe:{tag}", f"probe-{tag}"


def changed(value, tag: str):
    "Another value of the same kind as `value` (a probe for objects)."
    if isinstance(value, bool): return not value
    if isinstance(value, int): return value + 1
    if isinstance(value, float): return value + 0.5
    if isinstance(value, str): return value + "~probe"
    if value is None: return "probe"
    if isinstance(value, (list, tuple)): return type(value)([*value, "probe"])
    return Probe(tag)


def fingerprint(m) -> str:
    "The 12-hex resume key `ragkit.eval.evaluate` files `m`'s rows under."
    return run_key(m, "case")["fingerprint"]


def extended(cls: type) -> type:
    "`cls` with one more setting, `new_setting`, as a newcomer would add it: a constructor parameter stored under its name."
    def __init__(self, *args, new_setting: int = 0, **kw):
        cls.__init__(self, *args, **kw)
        self.new_setting = new_setting
    return type(f"{cls.__name__}WithNewSetting", (cls,), {"__init__": __init__, "__module__": __name__})


def covered(cls: type, make, alternatives: dict | None = None) -> list[str]:
    "The problems with `cls`'s fingerprint: a hand-written config, a setting that leaves it unchanged, a new setting it misses."
    problems = []
    if "config" in vars(cls): problems.append(f"{cls.__name__} writes `config` by hand")
    m = make(cls)
    base = fingerprint(m)
    for name, param in init_settings(cls).items():
        if name in cls.fingerprint_ignore: continue
        other = copy.copy(m)
        setattr(other, name, (alternatives or {}).get(name, changed(getattr(m, name), name)))
        if fingerprint(other) == base: problems.append(f"{cls.__name__}: changing setting {name!r} leaves the fingerprint unchanged")
    ext = extended(cls)
    a, b = make(ext), make(ext)
    b.new_setting = 1
    if fingerprint(a) == fingerprint(b): problems.append(f"{cls.__name__}: a new setting added by a subclass is not in the fingerprint")
    return problems


def fingerprinted_classes(module_names) -> set[type]:
    "Every method and retriever class (a `Fingerprinted` subclass) defined in the named ragkit modules."
    import importlib
    mods = [importlib.import_module(n) for n in module_names]
    found, todo = set(), list(Fingerprinted.__subclasses__())
    while todo:
        c = todo.pop()
        todo += c.__subclasses__()
        if any(c.__module__ == m.__name__ for m in mods): found.add(c)
    return found
