"""Issue 50, item 6: every decide-gpu profile runs here on the smoke data through a served reader (ragkit serve's fake
build: an OpenAI-compatible server answering "OK"), so its parameters pass each notebook's rules and its notebook runs
end to end on the served path. Only what a CPU without the hub cannot have is overridden: the tasks and their size
(the demo, a few questions, its corpus capped as the smoke runs cap it), the reader (the server), the device (cpu), the NLI model (none offline) and EoR's whole-corpus
has-answer check; everything else is the profile's. The estimated hours come from scripts/gpu_estimate.py."""
import os
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import json
from pathlib import Path
import pytest
from ragkit.cli import main
from ragkit.lm.serve import vllm_server
from ragkit.notebooks import find_notebook, load_profiles, profile_params

ROOT = Path(__file__).resolve().parent.parent
GPU = "decide-gpu"
ORDER = ["40_papers.lore", "62_papers.eor.runs", "63_papers.eor.inconsistency", "64_papers.eor.method", "71_papers.sure.decide", "80_papers.witqa"]
SMOKE = {  # notebook -> what a CPU without the hub runs instead (the demo's corpus capped as the smoke runs cap it)
    "40_papers.lore": dict(datasets="demo", limit=2, max_passages=300),
    "62_papers.eor.runs": dict(datasets="demo", limit=6, support="", max_passages=200),  # 64 cross-fits 5 folds: at least 5 questions
    "63_papers.eor.inconsistency": {},
    "64_papers.eor.method": dict(nli_model=""),
    "71_papers.sure.decide": dict(datasets="demo", limit=2, max_passages=300),
    "80_papers.witqa": dict(datasets="demo", limit=4),
}


def test_every_paper_has_a_decide_gpu_profile_with_its_estimated_hours():
    "The notebooks with a decide-gpu profile are the papers' decide runs, each reads on cuda, and decide-gpu.json estimates each reader notebook."
    profiles = load_profiles(ROOT)
    have = [nb for nb in ORDER if GPU in {p for (n, p) in ((k, q) for k, v in profiles.items() if isinstance(v, dict) for q in v) if n == nb}]
    assert have == ORDER
    est = {r["notebook"]: r for r in json.loads((ROOT / "outputs" / "bench" / "decide-gpu.json").read_text())["runs"]}
    for nb in ORDER:
        p = profile_params(nb, GPU, profiles)
        if "reader" in p:
            assert p["device"] == "cuda" and p["dtype"] == "bfloat16" and "/" in p["reader"], (nb, p)  # a hub id of the papers' scale
            assert est[nb]["reader"] == p["reader"] and est[nb]["hours"] > 0, nb


def test_every_decide_gpu_profile_runs_on_the_smoke_data_through_a_served_reader(tmp_path, monkeypatch, capsys):
    "Each decide-gpu profile, served by the fake build, runs its notebook to results.json (the EoR pair reading the grid beside it)."
    from ragkit.config import load_settings
    cache = tmp_path / "cache"
    for built in ("demo", "embeddings", "bm25", "models"):  # content-keyed artefacts shared with the real cache; its LM answers and servers stay apart
        (cache / built).parent.mkdir(parents=True, exist_ok=True)
        (load_settings().cache_dir / built).mkdir(parents=True, exist_ok=True)
        (cache / built).symlink_to(load_settings().cache_dir / built, target_is_directory=True)
    monkeypatch.setenv("RAGKIT_CACHE_DIR", str(cache))
    out = tmp_path / GPU
    with vllm_server("smollm2-135m-instruct", build="fake", dtype="float32") as spec:
        for nb in ORDER:
            over = SMOKE[nb] | ({"reader": spec, "device": "cpu", "dtype": "float32"} if "reader" in profile_params(nb, GPU, load_profiles(ROOT)) else {})
            args = ["run", nb, "--profile", GPU, "--out", str(out / nb), "--quiet"] + [x for k, v in over.items() for x in ("-p", k, str(v))]
            assert main(args) in (0, None), capsys.readouterr().out[-3000:]
            doc = json.loads((out / nb / "results.json").read_text())
            assert doc["parameters"].get("reader", spec) == spec or "reader" not in over
            for k, v in profile_params(nb, GPU, load_profiles(ROOT)).items():  # the profile's own values, where not overridden
                if k not in over and k in doc["parameters"]: assert doc["parameters"][k] == v, (nb, k)
