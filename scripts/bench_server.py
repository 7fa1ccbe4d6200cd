"""Questions per second through an OpenAI-compatible server at client concurrency 1, 2, 4 and 8, beside local transformers.

The reader issue's throughput measurement. The same SQuAD gold-context prompts (LoRE's reading prompt: one
paragraph, one question, a short answer with per-token log-probabilities) are answered greedily, uncached:

1. by the local `TransformersLM` in every served precision and in float32 (the committed runs' precision), first,
   while no server runs;
2. through the server (`ragkit.lm.serve.vllm_server`, started here once per served precision with prefix caching
   off, since every level sends the same prompts; unless `--reader openai:...` names a running one) at each client
   concurrency, after one warm-up request. The server's record (its threads and the cores they are bound to) is kept.

Served answers are compared with the local ones in the same precision and in float32: the share of identical answers
over all questions, and LoRE's mean token probability's absolute difference, largest and median, over all questions
and over the questions whose answers are identical. `x_local` divides the local seconds in the same precision by the
served seconds; `x_fastest_local` the fastest local precision's. Writes outputs/bench/server.json.

    RAGKIT_DATA_DIR=../shared/data .venv/bin/python scripts/bench_server.py [--n 32] [--dtype bfloat16,float32] [--reader openai:...@http://...]
"""
from __future__ import annotations
import argparse, gc, importlib, json, os, platform, statistics, time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def machine() -> dict:
    "The CPU's model name (from /proc/cpuinfo) and the cores this process may use."
    info = Path("/proc/cpuinfo")
    name = next((l.split(":", 1)[1].strip() for l in info.read_text().splitlines() if l.startswith("model name")), "") if info.is_file() else ""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return dict(cpu=name or platform.processor() or platform.machine(), cpus=cores)


def prompts_of(n: int, seed: int) -> list[str]:
    "LoRE's reading prompt for `n` seeded SQuAD questions, each with its gold paragraph."
    from ragkit.data.tasks import prepare
    from ragkit.lm.reader import render
    importlib.import_module("ragkit.papers.lore.method")  # registers LoRE's prompts (lore-context) in the template registry
    prep = prepare("squad", n, seed)
    return [render("lore-context", question=e.question, document=e.meta["context"]) for e in prep.examples]


def timed(lm, prompts: list[str], new_tokens: int) -> tuple[float, list]:
    "Seconds and completions of one uncached, greedy call."
    t0 = time.perf_counter(); out = lm.generate(prompts, max_new_tokens=new_tokens); return time.perf_counter() - t0, out


def _diffs(d: list[float]) -> dict:
    "Largest and median of absolute differences (None for none)."
    return dict(max=round(max(d), 4), median=round(statistics.median(d), 4)) if d else dict(max=None, median=None)


def agreement(a: list, b: list) -> dict:
    "Identical answers (share of all questions) and mean-probability differences over all questions and over the identical ones."
    same = [x.text.strip() == y.text.strip() for x, y in zip(a, b)]
    d = [abs(x.mean_prob - y.mean_prob) for x, y in zip(a, b)]
    return dict(questions=len(a), identical_answers=round(sum(same) / len(a), 4),
                mean_prob_diff_all_answers=_diffs(d), mean_prob_diff_identical_answers=_diffs([x for x, s in zip(d, same) if s]))


def measure_local(model: str, dtypes: list[str], prompts: list[str], new_tokens: int) -> dict:
    "Per precision: the local reader's identity, seconds and questions/s on `prompts`, and its completions (after a warm-up)."
    from ragkit.lm.backends import build_reader
    local = {}
    for dtype in dtypes:
        lm = build_reader(model, dtype=dtype)
        lm.generate(prompts[:1], max_new_tokens=2)  # warm-up: loads the weights
        secs, outs = timed(lm, prompts, new_tokens)
        local[dtype] = dict(identity=lm.identity, seconds=round(secs, 2), questions_per_s=round(len(prompts) / secs, 3), outs=outs)
        print(f"local {lm.identity}: {local[dtype]['questions_per_s']} q/s", flush=True)
        del lm; gc.collect()
    return local


def measure_served(spec: str, dtype: str, levels: list[int], prompts: list[str], new_tokens: int, local: dict) -> list[dict]:
    "One row per client concurrency: the served seconds and questions/s, as a multiple of local, and agreement with local."
    from ragkit.lm.backends import build_reader
    fastest = min(local.values(), key=lambda v: v["seconds"])
    rows = []
    for c in levels:
        lm = build_reader(spec, concurrency=c)
        lm.generate(prompts[:1], max_new_tokens=2)  # warm-up
        secs, outs = timed(lm, prompts, new_tokens)
        rows.append(dict(dtype=dtype, concurrency=c, seconds=round(secs, 2), questions_per_s=round(len(prompts) / secs, 3),
                         x_local=round(local[dtype]["seconds"] / secs, 3) if dtype in local else None,
                         x_fastest_local=round(fastest["seconds"] / secs, 3), fastest_local=fastest["identity"], retries=lm.retries,
                         prompt_tokens=sum(o.prompt_tokens for o in outs), generated_tokens=sum(o.cost.tokens for o in outs),
                         vs_local_same_dtype=agreement(outs, local[dtype]["outs"]) if dtype in local else None,
                         vs_local_float32=agreement(outs, local["float32"]["outs"]), served=lm.identity))
        print({k: v for k, v in rows[-1].items() if not k.startswith("vs_")}, rows[-1]["vs_local_same_dtype"], flush=True)
    return rows


def server_threads(spec: str) -> dict:
    "How the server of `spec` computes, from the record `ragkit serve` kept: its build, threads and the cores they are bound to."
    from ragkit.lm.serve import server_record
    try: rec = server_record(spec)
    except FileNotFoundError as e: return dict(note=f"not started by ragkit serve here: {e}")
    env = rec.get("env", {})
    return dict(build=rec["build"], threads=env.get("OMP_NUM_THREADS"), threads_bound_to=rec.get("threads_bound_to"),
                kv_cache_gib=env.get("VLLM_CPU_KVCACHE_SPACE"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b-instruct", help="the model served and read locally")
    ap.add_argument("--reader", default="", help="an openai:... spec of a running server (default: start vLLM's CPU build here)")
    ap.add_argument("--dtype", default="bfloat16,float32", help="the served precisions, comma-separated (one with --reader); "
                    "the local reader reads in each and in float32")
    ap.add_argument("--n", type=int, default=32, help="SQuAD questions")
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--concurrency", default="1,2,4,8")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench" / "server.json")
    a = ap.parse_args(argv)
    dtypes = a.dtype.split(",")
    if a.reader and len(dtypes) != 1: ap.error(f"--reader names one running server: give its precision alone (--dtype {dtypes[0]})")
    from ragkit.lm.backends import check_reader
    from ragkit.lm.serve import vllm_server
    t0, prompts = time.time(), prompts_of(a.n, a.seed)
    local = measure_local(a.model, list(dict.fromkeys([*dtypes, "float32"])), prompts, a.new_tokens)
    rows, served = [], {}
    for dtype in dtypes:
        # Prefix caching off: every concurrency level sends the same prompts, and a cached prefix would flatter the later ones.
        ctx = nullcontext(a.reader) if a.reader else vllm_server(a.model, dtype=dtype, extra=("--no-enable-prefix-caching",))
        with ctx as spec:
            served[dtype] = dict(identity=spec.split("@")[0], health_check=check_reader(spec, needs=("logprobs",)),
                                 server=server_threads(spec))
            rows += measure_served(spec, dtype, [int(x) for x in a.concurrency.split(",")], prompts, a.new_tokens, local)
    doc = dict(what="questions/s of LoRE's reading prompt (SQuAD, gold paragraph), greedy, uncached: through an OpenAI-compatible server "
                    "at each client concurrency, and by local transformers on the same prompts in the same run",
               machine=machine(),
               server=("vLLM CPU build (vllm-cpu 0.32.0) on 127.0.0.1, prefix caching off, threads bound to every core, started by "
                       "ragkit.lm.serve.vllm_server" if not a.reader else "given (--reader)"),
               served=served, questions=len(prompts), new_tokens=a.new_tokens,
               local={k: {kk: vv for kk, vv in v.items() if kk != "outs"} for k, v in local.items()},
               local_vs_float32={d: agreement(v["outs"], local["float32"]["outs"]) for d, v in local.items() if d != "float32"},
               rows=rows, seconds=round(time.time() - t0),
               note="x_local = local seconds in the served precision / served seconds; x_fastest_local = the fastest local precision's "
                    "seconds / served seconds; timed after a warm-up; the machine runs one side at a time (local first, no server running)")
    if a.out.is_file() and "starts" in (old := json.loads(a.out.read_text())): doc["starts"] = old["starts"]  # bench_starts.py's
    a.out.parent.mkdir(parents=True, exist_ok=True); a.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(a.out)
    return 0


if __name__ == "__main__": raise SystemExit(main())
