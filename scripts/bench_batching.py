"""Prompt tokens/s of TransformersLM at batch 1, 2, 4 and 8, for long and short reading prompts, in one process.

Why `TransformersLM(max_batch_tokens=1024)`: on a 2-core CPU padded batches of long prompts ran slower than single
prompts. This measures it on SQuAD prompts (five paragraphs: LoRE's naive baseline; one paragraph: a LoRE read) and
writes outputs/bench/batching.json. The cap itself is switched off (max_batch_tokens=None) so each batch size is what
it says. Answers are compared with batch 1's (greedy, so they should agree up to float noise of the padding).

    RAGKIT_DATA_DIR=../shared/data .venv/bin/python scripts/bench_batching.py [--reader NAME] [--n 16]
"""
from __future__ import annotations
import argparse, json, platform, time
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reader", default="qwen2.5-coder-0.5b-instruct")
    ap.add_argument("--n", type=int, default=16, help="short prompts (long ones: half as many)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "outputs" / "bench" / "batching.json")
    a = ap.parse_args(argv)
    from ragkit.data.tasks import prepare
    from ragkit.lm.base import TransformersLM
    prep = prepare("squad", a.n, 0, 300, 250)
    texts = [p.text for p in prep.corpus]
    sets = {"long (5 paragraphs)": [f"Context: {' '.join(texts[i:i + 5])}\nQuestion: {e.question}\nAnswer:" for i, e in enumerate(prep.examples[: a.n // 2])],
            "short (1 paragraph)": [f"Context: {texts[i]}\nQuestion: {e.question}\nAnswer:" for i, e in enumerate(prep.examples)]}
    lm = TransformersLM(a.reader, batch_size=1, max_batch_tokens=None, decode_rows=None, share_prefix=0)  # each batch prefilled and decoded as one (the rows it measures)
    lm.generate(sets["short (1 paragraph)"][:1], max_new_tokens=1)  # warm-up
    rows = []
    for name, prompts in sets.items():
        ref = None
        for bs in (1, 2, 4, 8):
            lm.batch_size = bs
            t = time.perf_counter(); out = lm.generate(prompts, max_new_tokens=6); dt = time.perf_counter() - t
            n = sum(c.prompt_tokens for c in out)
            ref = ref or [c.text for c in out]
            rows.append(dict(prompts=name, batch=bs, n_prompts=len(prompts), prompt_tokens=n, seconds=round(dt, 2),
                             prompt_tokens_per_s=round(n / dt, 1), agreement_with_batch1=sum(c.text == r for c, r in zip(out, ref)) / len(out)))
            print(rows[-1], flush=True)
    for r in rows:
        base = next(x for x in rows if x["prompts"] == r["prompts"] and x["batch"] == 1)
        r["x_batch1"] = round(r["prompt_tokens_per_s"] / base["prompt_tokens_per_s"], 3)
    from ragkit.runner import machine  # the CPU's model name and the cores this process may use
    doc = dict(machine=dict(**machine(), python=platform.python_version()),
               reader=lm.identity, new_tokens=6, note="one process, after a warm-up call; times vary with other load", rows=rows)
    a.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(a.out)
    return 0


if __name__ == "__main__": raise SystemExit(main())
