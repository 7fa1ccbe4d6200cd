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


def test_every_decide_gpu_profile_runs_on_the_smoke_data_through_a_served_reader(tmp_path, monkeypatch, capsys, private_cache):
    "Each decide-gpu profile, served by the fake build, runs its notebook to results.json (the EoR pair reading the grid beside it)."
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


def _pilot(outputs: Path, notebook: str, doc: dict) -> Path:
    "A made-up pilot run: outputs/demo/<notebook>/results.json holding `doc` (demo: not a committed profile)."
    run = outputs / "demo" / notebook
    run.mkdir(parents=True)
    (run / "results.json").write_text(json.dumps(doc))
    return run


def test_power_sized_runs_take_their_size_from_a_pilot(tmp_path, monkeypatch):
    "Each decide notebook's sizing cell, run for real on the demo: a made-up pilot under RAGKIT_OUTPUTS_DIR (rows that say almost nothing differs) raises `limit` to its plan."
    outputs = tmp_path / "outputs"
    monkeypatch.setenv("RAGKIT_OUTPUTS_DIR", str(outputs))
    quiet = dict(lo=0.0, hi=0.0, unit="points")  # no question differed in 10,000: a spread of 1.7 points, a few questions decide
    _pilot(outputs, "40_papers.lore", dict(questions={"demo": [f"q{i}" for i in range(10000)]}, verdict=[
        dict(claim="LoR is right more often than Top-1 (Ensemble; decisive questions)", dataset="demo", n=10000, decisive="w", **quiet)]))
    _pilot(outputs, "64_papers.eor.method", dict(verdict=[dict(claim="EoR > Top-R (chosen on the training folds)", dataset="demo", n=10000, **quiet)]))
    sure = _pilot(outputs, "70_papers.sure", dict(
        questions={"demo": ["a", "b", "c", "d"]}, parameters=dict(resolve_71()),
        summaries=[dict(method="Base", fingerprint="f1", seconds=4.0, n=4), dict(method="SuRe", fingerprint="f2", seconds=8.0, n=2)],
        verdict=[dict(claim="SuRe's selection is right more often than its first candidate (decisive questions)", dataset="demo", n=2,
                      lo=-50.0, hi=50.0, acted=2, acted_of=2, decisive="w")]))
    for system, fp in (("Base", "f1"), ("SuRe", "f2")): (sure / "demo" / system / fp).mkdir(parents=True)
    runs = {"40_papers.lore": dict(retrievers="Ensemble", naive_full="", naive_max_tokens=0, rerank="", power_from="demo", limit=1, max_passages=300),
            "62_papers.eor.runs": dict(power_from="demo", power_cap=4, limit=1, retrievers="Wiki@10,ReFree"),
            "71_papers.sure.decide": dict(power_from="demo", goal=2, budget_hours=0.005, limit=1)}  # 18 reader seconds: a few questions
    for nb, over in runs.items():
        out = tmp_path / "runs" / nb
        args = ["run", nb, "--out", str(out), "--quiet"] + [x for k, v in over.items() for x in ("-p", k, str(v))]
        assert main(args) in (0, None), nb
        got = json.loads((out / "results.json").read_text())["parameters"]["limit"]
        assert got > 1, (nb, got)  # raised from the floor of 1 by the pilot's plan
        if nb == "62_papers.eor.runs": assert got == 4  # the cap binds (the plan says 5)


def resolve_71() -> dict:
    "The smoke parameters of 71_papers.sure.decide, which a pilot of 70_papers.sure must share."
    from ragkit.notebooks import notebook_defaults
    return notebook_defaults(find_notebook("71_papers.sure.decide"))
