"""The checks behind `test_fingerprints.py` and `test_keys.py`.

- `covered`: a method's run fingerprint moves with every one of its settings. Each class builds its own instance for it
  (`cls.fingerprint_example()`, next to the class in its notebook) and names, in `fingerprint_alternatives`, another
  value for a setting whose generic change the class would refuse.
- `key_problems`: a committed run folder's key, recomputed from today's classes and the settings it stored, is the key
  the folder is filed under (a new setting at its default, a renamed one without its old key, would move it)."""
import copy, importlib, json, pkgutil
from types import SimpleNamespace
import ragkit
from ragkit.core import Fingerprinted, Method, Retriever, init_settings, stable_hash
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


def covered(cls: type) -> list[str]:
    "The problems with `cls`'s fingerprint: a hand-written config, a setting that leaves it unchanged, a new setting it misses or counts at its default."
    problems = []
    if "config" in vars(cls): problems.append(f"{cls.__name__} writes `config` by hand")
    m = cls.fingerprint_example()
    base = fingerprint(m)
    for name in init_settings(cls):
        if name in cls.fingerprint_ignore: continue
        other = copy.copy(m)
        setattr(other, name, cls.fingerprint_alternatives.get(name, changed(getattr(m, name), name)))
        if fingerprint(other) == base: problems.append(f"{cls.__name__}: changing setting {name!r} leaves the fingerprint unchanged")
    ext = extended(cls)
    a, b = ext.fingerprint_example(), ext.fingerprint_example()
    b.new_setting = 1
    if fingerprint(a) == fingerprint(b): problems.append(f"{cls.__name__}: a new setting added by a subclass is not in the fingerprint")
    if a.fingerprint() != m.fingerprint(): problems.append(f"{cls.__name__}: a new setting at its default moves the fingerprint")
    return problems


def package_classes() -> dict[str, type]:
    "Every method and retriever class (a `Fingerprinted` subclass) the package defines, by name; the CLI and the site imported too."
    for m in pkgutil.walk_packages(ragkit.__path__, "ragkit."):
        if not m.name.endswith("_modidx"): importlib.import_module(m.name)
    found, todo = {}, list(Fingerprinted.__subclasses__())
    while todo:
        c = todo.pop()
        todo += c.__subclasses__()
        if c.__module__.startswith("ragkit.") and c not in (Method, Retriever): found[c.__qualname__] = c
    return found


def _derived_keys(obj) -> set:
    "The keys `derived_config` adds for `obj` (the class's example's, where the stored settings alone cannot compute them)."
    try: return set(obj.derived_config())
    except Exception: return set(type(obj).fingerprint_example().derived_config())


def class_problems(cls: type, stored: dict, where: str, classes: dict) -> list[str]:
    "Why today's `cls`, holding the settings `stored` records, would not count them as `stored` does ([] when it would)."
    obj, renamed = copy.copy(cls.fingerprint_example()), cls.committed_key()[1]
    keys = {renamed.get(n, "reader" if n == "lm" else n): n for n in init_settings(cls) if n not in cls.fingerprint_ignore}
    problems = [] if cls.tag is None or stored.get("method") == cls.tag else [f"{where}: tag {stored.get('method')!r}, not {cls.tag!r}"]
    for key, n in keys.items():
        p = init_settings(cls)[n]
        if key in stored: setattr(obj, n, SimpleNamespace(identity=stored[key]) if n == "lm" else stored[key])
        elif p.default is p.empty: problems.append(f"{where}: {cls.__name__}'s setting {n!r} has no default and the key lacks it")
        else: setattr(obj, n, p.default)
    if problems: return problems
    counted, derived = obj.counted(), _derived_keys(obj)
    problems += [f"{where}: {cls.__name__} would count setting {k!r} (= {v!r}) that the committed key lacks: the key would move"
                 for k, v in counted.items() if k not in stored]
    problems += [f"{where}: {cls.__name__} no longer counts committed key {k!r} (a renamed setting keeps its old key, and a setting "
                 "counted at its default stays counted, in ragkit.core.COMMITTED_KEYS)"
                 for k in stored if k not in counted and k not in derived and k not in ("method", "type", "corpus")]
    for k, v in stored.items():  # a nested retriever is checked against its own class
        for i, r in enumerate(v if isinstance(v, list) else [v]):
            if isinstance(r, dict) and "type" in r:
                sub = classes.get(r["type"])
                problems += (class_problems(sub, r, f"{where}.{k}[{i}]", classes) if sub else [f"{where}.{k}: no class {r['type']!r}"])
    return problems


def key_problems(config_file, classes: dict, defined_elsewhere: dict) -> list[str]:
    "Why a committed config.json's key would move under today's code ([] when it would not); `defined_elsewhere`: run name -> why its class is not the package's."
    cfg = json.loads(config_file.read_text(encoding="utf-8"))
    body = {k: cfg[k] for k in ("name", "method", "config")}
    if stable_hash(json.dumps(body, sort_keys=True, ensure_ascii=False), n=12) != cfg["fingerprint"]:
        return [f"{config_file}: its body does not hash to its fingerprint {cfg['fingerprint']}"]
    m, where = cfg["method"], str(config_file.parent)
    if cfg["name"] in defined_elsewhere: return []
    if "class" in cfg: candidates = [classes[cfg["class"].rsplit(".", 1)[-1]]] if cfg["class"].rsplit(".", 1)[-1] in classes else []
    else: candidates = [c for c in classes.values() if issubclass(c, Method) and c.tag == m.get("method")]
    if not candidates: return [f"{where}: no class of the package files runs like this one ({cfg.get('class') or m.get('method')})"]
    found = [class_problems(c, m, where, classes) for c in candidates]
    return [] if any(not p for p in found) else min(found, key=len)
