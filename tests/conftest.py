"Shared fixtures: the configured data directory, or a skip that says how to configure it."
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
