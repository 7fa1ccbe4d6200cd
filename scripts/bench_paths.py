"""The reader's paths on the decisive runs' own prompts, in one run (issue 49): today's against shared prefixes and
batched decoding, bf16, and llama.cpp on the GGUF, with answer agreement against today's float32.

Parts (each writes its section of the output as soon as it ends; a rerun skips sections already there):
- `rows`: seconds per decoding step against the rows decoded together, for each reader at its workload's context
  (the 0.5B at a LoRE prompt's ~300 tokens, the 1.5B at a SuRe prompt's ~1,500); `decode_rows` is chosen from it.
- `sure`: SuRe as the paper-1.5b profile runs it on NQ (Qwen2.5-Coder-1.5B, chat off, N = 10, K = 2, 64-token
  summaries ending "Passage: ") on the first `--sure` questions of its seeded sample.
- `lore`: LoRE with the Ensemble retriever as the paper profile runs it on SQuAD (Qwen2.5-Coder-0.5B, lore-short,
  k = 10, all 2,067 dev paragraphs, contexts cut to 250 words) on the first `--lore` questions.

Each path answers the same questions with the same weights; reader seconds are the wall time inside `generate`.
Agreement is over every call's text (SuRe: candidates, summaries, judgements; LoRE: each context's answer) and over
the final answers. today = float32, prefill batches decoded on their own (`decode_rows=None`, `share_prefix=0`).

    RAGKIT_DATA_DIR=../shared/data HF_HUB_OFFLINE=1 .venv/bin/python scripts/bench_paths.py      # about 40 min on 2 cores
    ... scripts/bench_paths.py --parts rows --out /tmp/rows.json                                  # one part
"""
from __future__ import annotations
import argparse, contextlib, json, platform, time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
SMALL, LARGE = "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"


def cpu_model() -> str:
    "The CPU's model name (lscpu's), or the platform's processor."
    try: return next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration): return platform.processor() or platform.machine()


class Timed:
    "An LM wrapper that adds up the seconds spent in `generate`, keeps every call's texts in order, and counts the prompt tokens a shared prefix repeats."
    def __init__(self, lm, tokens=None):
        self.lm, self.seconds, self.texts, self.calls, self.repeated, self.tokens = lm, 0.0, [], 0, 0, tokens
    def __getattr__(self, k): return getattr(self.lm, k)
    def generate(self, prompts, **kw):
        t0 = time.perf_counter(); out = self.lm.generate(prompts, **kw); self.seconds += time.perf_counter() - t0
        self.texts += [c.text for c in out]; self.calls += len(prompts)
        if self.tokens:  # what TransformersLM reads once: each group's shared tokens, repeated by every member after the first
            from ragkit.lm.base import prefix_groups
            self.repeated += sum(n * (len(g) - 1) for n, g in prefix_groups([self.tokens._encode(p, kw.get("chat", True)) for p in prompts]))
        return out


def step_seconds(lm, context: int, rows: int, steps: int = 6) -> float:
    "Seconds per decoding step of `rows` rows, each after `context` tokens (one shared prefill, its cache copied per row)."
    m, dev = lm.model, lm.model.device
    ids = torch.randint(100, 20000, (1, context), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        out = m(input_ids=ids, use_cache=True, logits_to_keep=1)
        from transformers import DynamicCache
        past = DynamicCache(ddp_cache_data=[(l.keys.expand(rows, -1, -1, -1).contiguous(), l.values.expand(rows, -1, -1, -1).contiguous())
                                            for l in out.past_key_values.layers])
        mask, nxt = torch.ones(rows, context, dtype=torch.long), torch.full((rows, 1), 1000)
        times = []
        for s in range(steps):
            mask = torch.cat([mask, torch.ones(rows, 1, dtype=torch.long)], 1)
            t0 = time.perf_counter()
            m(input_ids=nxt, attention_mask=mask, position_ids=torch.full((rows, 1), context + s), past_key_values=past, use_cache=True)
            times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def part_rows(args) -> dict:
    "Seconds per step and per generated token against rows, per reader at its workload's context."
    from ragkit.lm.base import TransformersLM
    out = {}
    for spec in args.rows_readers.split(","):
        reader, context = spec.rsplit(":", 1)
        context = int(context)
        lm = TransformersLM(reader)
        rows = {r: step_seconds(lm, context, r) for r in map(int, args.rows.split(","))}
        best = min(s / r for r, s in rows.items())
        out[reader] = dict(context=context, rows=[dict(rows=r, step_s=round(s, 4), per_token_s=round(s / r, 4),
                                                       x_best=round(s / r / best, 3)) for r, s in rows.items()])
        print(reader, {r: round(s, 3) for r, s in rows.items()}, flush=True)
        del lm
    return out


def sure_run(lm, questions, ret, tokens=None) -> dict:
    "One path's SuRe answers on `questions`: answers, every call's text and the reader seconds."
    from ragkit.papers.sure.method import SuRe
    t = Timed(lm, tokens)
    sure = SuRe(ret, t, n_passages=10, n_candidates=2, candidate_max_new_tokens=32, summary_max_new_tokens=64, parse="paper",
                passage_words=100, chat=False, prompts="paper", summary_end=" ")
    preds = sure.answer_batch(questions)
    return dict(answers=[p.answer for p in preds], texts=t.texts, seconds=t.seconds, calls=t.calls, repeated=t.repeated,
                prompt_tokens=sum(p.cost.prompt_tokens for p in preds), tokens=sum(p.cost.tokens for p in preds))


def lore_run(lm, questions, ret, tokens=None) -> dict:
    "One path's LoRE answers on `questions`."
    from ragkit.papers.lore.method import LoRE
    t = Timed(lm, tokens)
    preds = LoRE(ret, t, n_contexts=10, template="lore-short", chat=True).answer_batch(questions)
    return dict(answers=[p.answer for p in preds], texts=t.texts, seconds=t.seconds, calls=t.calls, repeated=t.repeated,
                prompt_tokens=sum(p.cost.prompt_tokens for p in preds), tokens=sum(p.cost.tokens for p in preds))


def agreement(ref: dict, got: dict) -> dict:
    "Shares of identical final answers and identical call texts."
    same = lambda a, b: round(sum(x == y for x, y in zip(a, b)) / max(len(a), 1), 4)
    return dict(answers=same(ref["answers"], got["answers"]), calls=same(ref["texts"], got["texts"]))


def compare(paths: dict, run, questions, ret, limit, done: dict, save) -> dict:
    "Every path on the same questions (those in `done` already ran; `save` keeps each as it ends); ratios and agreement against `today`, and each path's time against the limit."
    res = {}
    for name, make in paths.items():
        if name in done:
            res[name] = done[name]
            print(f"  {name}: from the partial file", flush=True)
            continue
        with contextlib.ExitStack() as stack:
            lm = make(stack)
            if name != "llama.cpp": lm.generate(["Warm up."], max_new_tokens=2)  # weights loaded outside the timing
            r = run(lm, questions, ret, lm if name == "shared+batched" else None)
        res[name] = done[name] = r
        save()
        print(f"  {name}: {r['seconds']:.1f} s reader ({r['seconds'] / len(questions):.1f} s per question)", flush=True)
    ref, rep = res["today"], res["shared+batched"]["repeated"]
    lim = limit(ref["prompt_tokens"] - rep, ref["tokens"])
    return dict(repeated_prefix_tokens=rep, limit_s=round(lim, 1), runs={
        name: dict(seconds=round(r["seconds"], 1), seconds_per_question=round(r["seconds"] / len(questions), 2),
                   x_today=round(r["seconds"] / ref["seconds"], 3), x_limit=round(r["seconds"] / lim, 2), calls=r["calls"],
                   prompt_tokens=r["prompt_tokens"], generated_tokens=r["tokens"], agreement_with_today=agreement(ref, r))
        for name, r in res.items()})


def limit_of(reader: str, flops: float, bw: float):
    "(unique prompt tokens, generated tokens) -> seconds at this machine's limit for `reader` in float32 (as scripts/anatomy.py)."
    import sys
    sys.path.insert(0, str(ROOT / "scripts"))
    from anatomy import parameters
    n, matmul = parameters(reader)
    return lambda unique, generated: unique * 2 * matmul / flops + generated * 4 * n / bw


def ceilings() -> tuple[float, float]:
    "This machine's float32 matmul FLOP/s and read bandwidth, measured now (scripts/anatomy.py's measures)."
    import sys
    sys.path.insert(0, str(ROOT / "scripts"))
    from anatomy import bandwidth, matmul_flops
    return matmul_flops(), bandwidth()


def lm_paths(reader: str) -> dict:
    "name -> a maker of that path's LM (today, shared prefixes + batched decoding, bf16 on that path, llama.cpp)."
    from ragkit.lm.base import TransformersLM
    base = dict(max_length=4096)
    out = {"today": lambda s: TransformersLM(reader, decode_rows=None, share_prefix=0, **base),
           "shared+batched": lambda s: TransformersLM(reader, **base),
           "bf16 shared+batched": lambda s: TransformersLM(reader, dtype="bfloat16", **base)}
    def llama(stack):
        from ragkit.lm.openai import OpenAILM, llama_cpp_server
        url = stack.enter_context(llama_cpp_server(reader, parallel=4, threads=2, n_ctx=4 * 4096))
        return OpenAILM(reader, url, api_key_env=None, concurrency=4, timeout=3600.0)  # 2 cores: a long prompt waits for the others
    out["llama.cpp"] = llama
    return out


def part_sure(args) -> dict:
    "SuRe on NQ with the 1.5B reader, every path."
    from ragkit.data.tasks import prepare
    from ragkit.papers.sure.experiment import sure_retriever
    prep = prepare("nq", limit=args.sure, seed=0, max_passages=0)
    qs = [e.question for e in prep.examples]
    paths = {k: v for k, v in lm_paths(args.sure_reader).items() if k in args.sure_paths.split(",")}
    return dict(task="nq", questions=len(qs), reader=args.sure_reader,
                **compare(paths, sure_run, qs, sure_retriever(prep), limit_of(args.sure_reader, *args.ceilings), *args.partial("sure")))


def part_lore(args) -> dict:
    "LoRE (Ensemble) on SQuAD with the 0.5B reader, every path."
    from ragkit.data.tasks import prepare
    from ragkit.papers.lore.experiment import lore_retrievers
    prep = prepare("squad", limit=args.lore, seed=0, max_passages=args.max_passages, context_words=250)
    qs = [e.question for e in prep.examples]
    ens = lore_retrievers(prep.corpus)[2]
    paths = {k: v for k, v in lm_paths(args.lore_reader).items() if k in args.lore_paths.split(",")}
    return dict(task="squad", questions=len(qs), reader=args.lore_reader, corpus=len(prep.corpus),
                **compare(paths, lore_run, qs, ens, limit_of(args.lore_reader, *args.ceilings), *args.partial("lore")))


PARTS = dict(rows=part_rows, sure=part_sure, lore=part_lore)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default="rows,sure,lore")
    ap.add_argument("--sure", type=int, default=8, help="NQ questions for SuRe")
    ap.add_argument("--lore", type=int, default=20, help="SQuAD questions for LoRE")
    every = "today,shared+batched,bf16 shared+batched,llama.cpp"
    ap.add_argument("--rows-readers", default=f"{SMALL}:300,{LARGE}:1500", help="reader:context pairs the rows part times")
    ap.add_argument("--rows", default="1,2,4,8,16,24,32", help="rows decoded together, timed per reader")
    ap.add_argument("--sure-reader", default=LARGE)
    ap.add_argument("--lore-reader", default=SMALL)
    ap.add_argument("--max-passages", type=int, default=0, help="LoRE's corpus cap (0: all 2,067 SQuAD dev paragraphs, as the paper profile)")
    ap.add_argument("--sure-paths", default=every, help="the paths SuRe is timed on (today and shared+batched are needed)")
    ap.add_argument("--lore-paths", default=every, help="the paths LoRE is timed on")
    ap.add_argument("--out", default=str(ROOT / "outputs/bench/speed.json"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    res = json.loads(out.read_text()) if out.exists() else {}
    res.update(what=__doc__.split("\n\n")[0], machine=dict(cpu=cpu_model(), cores=len(__import__("os").sched_getaffinity(0)),
               torch=torch.__version__, transformers=__import__("transformers").__version__))
    part_file = out.with_name(out.stem + ".partial.json")  # each finished path of an unfinished part, so a stopped run resumes per path
    partial = json.loads(part_file.read_text()) if part_file.exists() else {}
    def partial_of(part: str):
        "(the part's finished paths, a function that saves them)."
        done = partial.setdefault(f"{part}:{getattr(args, part)}", {})
        return done, lambda: part_file.write_text(json.dumps(partial))
    args.partial = partial_of
    args.ceilings = ceilings()
    res["ceilings"] = dict(matmul_gflops_float32=round(args.ceilings[0] / 1e9, 1), read_gbytes_per_s=round(args.ceilings[1] / 1e9, 2))
    for p in args.parts.split(","):
        if p in res: print(f"{p}: already in {out.name}; skipped"); continue
        print(f"{p} ...", flush=True)
        res[p] = PARTS[p](args)
        if p in ("sure", "lore"): res[p]["command_paths"] = getattr(args, f"{p}_paths").split(",")
        out.write_text(json.dumps(res, indent=1) + "\n")
    if all(p in res for p in args.parts.split(",")): part_file.unlink(missing_ok=True)
    print(json.dumps({k: v for k, v in res.items() if k != "rows"}, indent=1)[:3000])


if __name__ == "__main__":
    main()
