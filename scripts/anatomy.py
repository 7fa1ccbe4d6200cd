"""Cost anatomy of every committed paper run (issue 49): where its reader time went, and how far it is from this
machine's limit. Writes outputs/bench/anatomy.json; `ragkit report readme` renders it.

From each run's rows (outputs/paper*/<notebook>/**/examples.jsonl): questions, reader calls and those answered from
the LM cache, prompt tokens, generated tokens and the seconds the rows record. Calls answered from the cache cost no
reader time, so the computed share of a row's tokens is taken in proportion to its computed calls (rows do not say
which call was cached). A system whose rows hold calls but no seconds re-chose its answers from another system's reads
(LoRE's Top-1, MeanProb and Best-of-k): it is listed with `reader_ran: false` and left out of the run's totals.

Repeated prefixes (prompt tokens that repeat a prefix already computed for the same question):
- SuRe's summary prompts (every system whose trace holds summaries) are rendered again from the row (its passages from
  the task's corpus, its question and candidates) and tokenised as the run read them: each candidate's prompt after the
  first repeats the tokens it shares with the first;
- every other call of a chat-formatted run repeats at least the chat template's head (a lower bound: the instruction
  a template puts before its first field is also repeated, and is not counted).

The limit: unique prompt tokens at the measured matmul ceiling (2 FLOPs per token for each parameter a token's matmuls
use: all but the token embedding, a lookup; a prompt's logits are taken for its last token only) plus generated tokens
at the measured memory bandwidth for the weights (each token reads every weight once: batch-1 decoding; batched
decoding, which reads them once for many rows, can beat it).

    RAGKIT_DATA_DIR=../shared/data HF_HUB_OFFLINE=1 .venv/bin/python scripts/anatomy.py     # a few minutes, alone
"""
from __future__ import annotations
import argparse, json, os, time
from collections import defaultdict
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ("paper", "paper-1.5b", "paper-split")
BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def matmul_flops(dtype: str = "float32", m: int = 512, k: int = 1536, n: int = 8960, repeats: int = 7) -> float:
    "FLOP/s of the best of `repeats` (m x k) @ (k x n) products: a prefill's largest matmul, the ceiling a reader's prefill can reach."
    a, b = torch.randn(m, k, dtype=getattr(torch, dtype)), torch.randn(k, n, dtype=getattr(torch, dtype))
    a @ b
    best = min(_timed(lambda: a @ b) for _ in range(repeats))
    return 2 * m * k * n / best


def bandwidth(gib: float = 1.0, repeats: int = 7) -> float:
    "Bytes/s of the best of `repeats` full reads (a sum) of a `gib` GiB float32 tensor: what a decoding step's weight reads can reach."
    x = torch.ones(int(gib * 2**30 / 4))
    x.sum()
    return x.numel() * 4 / min(_timed(x.sum) for _ in range(repeats))


def _timed(f) -> float:
    "Seconds of one call of f."
    t0 = time.perf_counter(); f(); return time.perf_counter() - t0


def parameters(reader: str) -> tuple[int, int]:
    "The reader's parameters: all of them, and those in the matmuls a prompt token passes (all but the token embedding, a lookup), from its safetensors headers."
    from safetensors import safe_open
    from ragkit.lm.models import reader_dir
    n = emb = 0
    for f in sorted(Path(reader_dir(reader)).glob("*.safetensors")):
        with safe_open(f, "pt") as s:
            for k in s.keys():
                shape = s.get_slice(k).get_shape()
                size = int(torch.tensor(shape).prod()) if shape else 1
                n += size
                if "embed_tokens" in k: emb += size
    return n, n - emb


class Prompts:
    "Tokenises prompts as a run's reader read them, and renders SuRe's summary prompts again from a row."
    def __init__(self, reader: str):
        from ragkit.lm.base import TransformersLM
        self.lm, self.corpora = TransformersLM(reader), {}

    def head(self, chat: bool) -> int:
        "Tokens every prompt of a chat-formatted run begins with (the template's head before the user's text)."
        from ragkit.lm.base import common_prefix
        return common_prefix(self.lm._encode("alpha beta", chat), self.lm._encode("zeta eta", chat)) if chat else 0

    def corpus(self, task: str):
        "The task's whole corpus (pid -> passage)."
        if task not in self.corpora:
            from ragkit.data.tasks import prepare
            self.corpora[task] = prepare(task, 0, 0, 0).corpus  # every question: a given-context task's corpus is its questions' passages
        return self.corpora[task]

    def summary_repeat(self, row: dict, task: str, p: dict, chat: bool) -> int:
        "Tokens the row's summary prompts after the first repeat from the first (0 without two summaries), rendered by SuRe itself."
        import types
        from ragkit.papers.sure.method import SuRe
        from ragkit.lm.base import FakeLM, common_prefix
        t = row.get("trace") or {}
        cands = t.get("candidates") or []
        if len(t.get("summaries") or []) < 2 or len(cands) < 2: return 0
        sure = SuRe(types.SimpleNamespace(corpus=self.corpus(task), name="rows"), FakeLM(), passage_words=p.get("passage_words") or 100,
                    prompts=p.get("prompts") or "paper", summary_end=" " if p.get("summary_end") == "space" else "")
        block = sure.block_of(t["pids"])
        ids = [self.lm._encode(sure.summary_prompt(block, row["question"], t.get("choices") or cands, j, c), chat) for j, c in enumerate(cands)]
        return sum(common_prefix(ids[0], x) for x in ids[1:])


def run_anatomy(folder: Path, prompts: dict, limits: dict, root: Path = ROOT) -> dict | None:
    "The anatomy of one committed run folder (None when it holds no rows of its own)."
    p = json.loads((folder / "params.json").read_text())
    files = sorted(folder.rglob("examples.jsonl"))
    if not files or not p.get("reader"): return None
    reader, dtype = p["reader"], p.get("dtype") or "float32"
    if reader not in prompts: prompts[reader] = Prompts(reader)
    pr, chat = prompts[reader], p.get("chat", True) is not False
    head = pr.head(chat)
    systems = defaultdict(lambda: defaultdict(float))
    for f in files:
        rel = f.relative_to(folder).parts
        task, system = (rel[1], f"{rel[2]} (pilot)") if rel[0] == "pilot" else (rel[0], rel[1])
        s = systems[(task, system)]
        for line in f.open():
            r = json.loads(line)
            calls, cached = r.get("lm_calls", 0), r.get("cached_calls", 0)
            share = (calls - cached) / calls if calls else 0.0
            rep = pr.summary_repeat(r, task, p, chat)
            rep_calls = max(calls - 1, 0) * head
            s["questions"] += 1; s["calls"] += calls; s["cached_calls"] += cached
            s["prompt_tokens"] += r.get("prompt_tokens", 0); s["generated_tokens"] += r.get("tokens", 0)
            s["computed_prompt_tokens"] += share * r.get("prompt_tokens", 0); s["computed_generated_tokens"] += share * r.get("tokens", 0)
            s["repeated_prefix_tokens"] += share * (rep + rep_calls); s["summary_repeat_tokens"] += share * rep
            s["seconds"] += r.get("seconds") or 0.0
    lim = limits[(reader, dtype)]
    out, tot = [], defaultdict(float)
    for (task, system), s in sorted(systems.items()):
        if s["calls"] and s["seconds"] < 0.001 * s["calls"]:  # tokens but no time: answers re-chosen from another system's reads (LoRE's Top-1, MeanProb)
            out.append(dict(task=task, system=system, questions=s["questions"], reader_ran=False))
            continue
        unique = s["computed_prompt_tokens"] - s["repeated_prefix_tokens"]
        limit = unique / lim["prefill_tokens_per_s"] + s["computed_generated_tokens"] / lim["decode_tokens_per_s"]
        row = dict(task=task, system=system, **{k: round(v, 1) for k, v in s.items()}, limit_s=round(limit, 1))
        row["repeated_share"] = round(s["repeated_prefix_tokens"] / s["computed_prompt_tokens"], 4) if s["computed_prompt_tokens"] else 0.0
        row["x_limit"] = round(s["seconds"] / limit, 2) if limit else None
        out.append(row)
        for k, v in s.items(): tot[k] += v
        tot["limit_s"] += limit
    tot = {k: round(v, 1) for k, v in tot.items()}
    tot["repeated_share"] = round(tot["repeated_prefix_tokens"] / tot["computed_prompt_tokens"], 4) if tot["computed_prompt_tokens"] else 0.0
    tot["x_limit"] = round(tot["seconds"] / tot["limit_s"], 2) if tot["limit_s"] else None
    run = json.loads((folder / "run.json").read_text()) if (folder / "run.json").is_file() else {}
    return dict(run=str(folder.relative_to(root)), recorded_on=run.get("machine"), reader=reader, dtype=dtype, chat=chat, head_tokens=head, totals=tot, systems=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "outputs/bench/anatomy.json"))
    ap.add_argument("--profiles", default=",".join(PROFILES), help="the profiles whose committed runs are read")
    ap.add_argument("--runs", default="*", help="a glob of run folders under outputs/<profile>/ (default: every one)")
    ap.add_argument("--root", default=str(ROOT), help="the project whose outputs/ is read")
    args = ap.parse_args(argv)
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    flops, bw = matmul_flops(), bandwidth()
    print(f"matmul ceiling {flops / 1e9:.0f} GFLOP/s (float32), read bandwidth {bw / 1e9:.1f} GB/s", flush=True)
    root = Path(args.root)
    folders = [f for prof in args.profiles.split(",") for f in sorted((root / "outputs" / prof).glob(args.runs)) if (f / "params.json").is_file()]
    readers = sorted({json.loads((f / "params.json").read_text()).get("reader") for f in folders} - {None})
    limits, prompts, runs = {}, {}, []
    for r in readers:
        n, matmul = parameters(r)
        for dtype in ("float32",):
            limits[(r, dtype)] = dict(parameters=n, matmul_parameters=matmul, prefill_tokens_per_s=flops / (2 * matmul),
                                      decode_tokens_per_s=bw / (n * BYTES[dtype]))
    for f in folders:
        a = run_anatomy(f, prompts, limits, root)
        if a:
            runs.append(a)
            t = a["totals"]
            print(f"{a['run']}: {t['seconds']:.0f} s recorded, limit {t['limit_s']:.0f} s (x{t['x_limit']}), repeated prefix {t['repeated_share']:.1%}", flush=True)
    doc = dict(what=__doc__.split("\n\n")[0], script="scripts/anatomy.py",
               machine=dict(cpu=next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), ""),
                            cores=len(os.sched_getaffinity(0)), torch=torch.__version__),
               ceilings=dict(matmul_gflops_float32=round(flops / 1e9, 1), read_gbytes_per_s=round(bw / 1e9, 2)),
               readers={f"{r}:{d}": {k: (round(v, 2) if isinstance(v, float) else v) for k, v in l.items()} for (r, d), l in limits.items()},
               runs=runs)
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
