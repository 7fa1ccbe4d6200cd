"""Shared fixtures: the configured data directory (or a skip that says how to configure it), a temporary ragkit cache for
the session and for a test that asks (`private_cache`), and a guard that fails a test that writes the user's answers,
server records or outputs."""
import atexit, os, shutil, sys, tempfile
from pathlib import Path
import pytest
from ragkit.config import load_settings

SKIP_NO_DATA = "no data dir configured: set RAGKIT_DATA_DIR=../shared/data (or data_dir in settings.ini) to run the tests on real data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    "The configured data directory; the test is skipped when there is none."
    d = load_settings().data_dir
    if d is None: pytest.skip(SKIP_NO_DATA)
    return d


@pytest.fixture(scope="session")
def data_file(data_dir):
    "A function: the path of a file under the data directory, or a skip naming the missing file."
    def get(rel: str) -> Path:
        p = data_dir / rel
        if not p.exists(): pytest.skip(f"{p} not found")
        return p
    return get


# What a test may never write: the user's answers and server records, and the committed outputs. A write to them by
# the test process (an open for writing, a SQLite connection, a rename into them) fails the test that made it; a test
# gives these its own temporary folders (RAGKIT_CACHE_DIR, RAGKIT_OUTPUTS_DIR, a `registry`/`cache` argument).
# The built caches (demo data, models, embeddings, indexes) are shared on purpose: content-addressed, built once.
def _guarded() -> tuple[Path, ...]:
    "The user's LM caches and server registry, server logs and records, and outputs folder, resolved."
    s = load_settings()
    return tuple(p.resolve() for p in (s.cache_dir / "lm", s.cache_dir / "logs", s.outputs_dir))

_GUARDED, _TOUCHED, _WATCHING = _guarded(), [], [False]
_REAL_CACHE = load_settings().cache_dir  # the user's, before the session's own is set below
BUILT = ("demo", "embeddings", "bm25", "models", "venvs", "vllm")  # content-keyed builds a temporary cache may share


def _cache_sharing_builds(cache: Path) -> Path:
    "`cache` made a ragkit cache dir whose built models, data and indexes are the user's (linked); answers start empty."
    cache.mkdir(parents=True, exist_ok=True)
    for built in BUILT:
        (_REAL_CACHE / built).mkdir(parents=True, exist_ok=True)
        (cache / built).symlink_to(_REAL_CACHE / built, target_is_directory=True)
    return cache


# The whole session (in-process notebooks, and every subprocess through the environment) reads and writes answers,
# server records and logs in a temporary cache, unless a test sets its own.
_SESSION_CACHE = _cache_sharing_builds(Path(tempfile.mkdtemp(prefix="ragkit-test-cache-")))
os.environ["RAGKIT_CACHE_DIR"] = str(_SESSION_CACHE)
atexit.register(shutil.rmtree, _SESSION_CACHE, ignore_errors=True)  # links removed, not followed; even if no test ran
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _inside_guarded(path) -> str | None:
    "`path` if it lies in a guarded folder (as this process resolves it now), else None."
    try: p = Path(os.fsdecode(path)).resolve()
    except (TypeError, ValueError, OSError): return None
    return str(p) if any(p == g or p.is_relative_to(g) for g in _GUARDED) else None


def _audit(event: str, args: tuple) -> None:
    "The audit hook: note a write into a guarded folder while a test runs."
    if not _WATCHING[0]: return
    if event == "open":
        path, mode, flags = args
        writes = any(c in mode for c in "wax+") if isinstance(mode, str) else bool((flags or 0) & _WRITE_FLAGS)
        if writes and isinstance(path, (str, bytes, os.PathLike)) and (p := _inside_guarded(path)): _TOUCHED.append(p)
    elif event in ("sqlite3.connect", "os.rename", "os.replace", "os.remove", "os.mkdir", "shutil.rmtree"):
        target = args[1] if event in ("os.rename", "os.replace") else args[0]
        if isinstance(target, (str, bytes, os.PathLike)) and (p := _inside_guarded(target)) and not (
                event == "sqlite3.connect" and str(target).startswith("file:")):
            _TOUCHED.append(f"{p} ({event})")


sys.addaudithook(_audit)


@pytest.fixture(autouse=True)
def _keeps_to_its_own_folders():
    "Fail a test that wrote into the user's LM caches, server records or outputs (tests/conftest.py, _GUARDED)."
    _TOUCHED.clear(); _WATCHING[0] = True
    try: yield
    finally: _WATCHING[0] = False
    if _TOUCHED:
        pytest.fail(f"this test wrote into the user's folders ({', '.join(map(str, _GUARDED))}): "
                    f"{sorted(set(_TOUCHED))[:5]}; give it a temporary one (tmp_path: RAGKIT_CACHE_DIR, "
                    f"RAGKIT_OUTPUTS_DIR, or a registry/cache argument)", pytrace=False)



@pytest.fixture
def private_cache(tmp_path, monkeypatch) -> Path:
    "RAGKIT_CACHE_DIR set to this test's own cache, sharing the user's built models, data and indexes, not the session's answers."
    cache = _cache_sharing_builds(tmp_path / "cache")
    monkeypatch.setenv("RAGKIT_CACHE_DIR", str(cache))
    return cache
