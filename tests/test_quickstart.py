"""README's "ragkit from Python" block, run exactly as written (issue 52): its own passages and questions, BM25 and MiniLM
fused by RRF, the offline 0.5B reader, LoRE beside the naive baseline, and the paired comparison it prints."""
import contextlib, io, re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_block(heading: str = "## ragkit from Python") -> str:
    "The first python block under `heading` in README.md, as written."
    section = (ROOT / "README.md").read_text(encoding="utf-8").split(heading + "\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S)[1]


def test_the_quickstart_runs_as_written():
    code, out, ns = readme_block(), io.StringIO(), {}
    assert len(code.strip().splitlines()) <= 15, "the quickstart is about ten lines"
    with contextlib.redirect_stdout(out): exec(compile(code, "README.md (ragkit from Python)", "exec"), ns)
    lore, naive = ns["lore"], ns["naive"]
    assert lore.summary["n"] == naive.summary["n"] == 2 and not lore.failed and not naive.failed
    assert list(lore.table["prediction"]) == ["Paris", "Berlin"]  # the real reader, greedy: each gold, as a short phrase
    assert lore.table["trace"].map(lambda t: len(t["candidates"])).tolist() == [2, 2]  # one answer per context read
    printed = out.getvalue()
    assert printed.startswith("Evaluation('LoRE - ") and "'metric': 'f1'" in printed and "'delta'" in printed
