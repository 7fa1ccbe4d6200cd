"""Benchmark the engine against named reference runs on the same machine, in the same run, and print ratios.

1. Reader decoding: ragkit's `TransformersLM.generate` (batched greedy, KV cache, log-probs) against the reference
   `model.generate` of transformers on the same weights, the same left-padded batch and the same token budget.
   Also the prefill rate against a bare forward pass (the machine's ceiling for this model).
2. `CachedLM`: a warm call (every answer in the SQLite cache) against the cold call that filled it.

Usage: HF_HUB_OFFLINE=1 python scripts/bench_engine.py [--prompts 16] [--words 180] [--new 16] [--out bench.json]
Absolute times vary by machine; read the ratios.
"""
from __future__ import annotations
import argparse, json, tempfile, time
from pathlib import Path
import torch
from ragkit.lm.base import TransformersLM
from ragkit.lm.cache import CachedLM


def timed(f, *a, **kw):
    "(result, seconds) of f(*a, **kw)."
    t0 = time.perf_counter(); r = f(*a, **kw)
    return r, time.perf_counter() - t0


def prompts_of(n: int, words: int) -> list[str]:
    "n distinct reading prompts of about `words` words each (real text: the demo corpus when built, else filler)."
    try:
        from ragkit.data.corpora import load_corpus
        ps = [p for p in load_corpus("demo")][:n]
        return [f"{p.text[: words * 7]}\n\nQuestion: what is this passage about? Answer in a few words." for p in ps]
    except Exception:
        return [" ".join(f"word{i}_{j}" for j in range(words)) + "\nSummarise:" for i in range(n)]


def hf_reference(lm: TransformersLM, prompts: list[str], new: int) -> float:
    "Seconds for transformers' own greedy `generate` on the same left-padded batches."
    tok, model = lm.tok, lm.model
    tok.padding_side = "left"
    if tok.pad_token is None: tok.pad_token = tok.eos_token
    texts = [tok.apply_chat_template([{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True) for p in prompts]
    t0 = time.perf_counter()
    for i in range(0, len(texts), lm.batch_size):
        enc = tok(texts[i:i + lm.batch_size], return_tensors="pt", padding=True, add_special_tokens=False)
        with torch.inference_mode():
            model.generate(**enc, max_new_tokens=new, min_new_tokens=new, do_sample=False, pad_token_id=tok.pad_token_id)
    return time.perf_counter() - t0


def bare_forward(lm: TransformersLM, prompts: list[str]) -> tuple[int, float]:
    "(tokens, seconds) of one forward pass over each prompt batch: the prefill ceiling."
    tok, model = lm.tok, lm.model
    tok.padding_side = "left"
    enc_all = [tok(prompts[i:i + lm.batch_size], return_tensors="pt", padding=True) for i in range(0, len(prompts), lm.batch_size)]
    n = sum(int(e["attention_mask"].sum()) for e in enc_all)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for e in enc_all: model(**e, use_cache=False, logits_to_keep=1)
    return n, time.perf_counter() - t0


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=16); ap.add_argument("--words", type=int, default=180)
    ap.add_argument("--new", type=int, default=16); ap.add_argument("--out", default="")
    a = ap.parse_args(argv)
    lm = TransformersLM("smollm2-135m-instruct", batch_size=8, decode_rows=None, share_prefix=0)  # the same batches as HF generate
    ps = prompts_of(a.prompts, a.words)
    lm.generate(ps[:2], max_new_tokens=2)  # warm-up: threads, allocator
    out, t_ragkit = timed(lm.generate, ps, max_new_tokens=a.new)
    t_hf = hf_reference(lm, ps, a.new)
    n_tok, t_fwd = bare_forward(lm, ps)
    with tempfile.TemporaryDirectory() as d:
        c = CachedLM(lm, Path(d) / "bench.sqlite")
        _, t_cold = timed(c.generate, ps, max_new_tokens=a.new)
        _, t_warm = timed(c.generate, ps, max_new_tokens=a.new)
    res = dict(prompts=len(ps), prompt_tokens=n_tok, new_tokens=a.new,
               ragkit_generate_s=round(t_ragkit, 3), hf_generate_s=round(t_hf, 3),
               ratio_hf_over_ragkit=round(t_hf / t_ragkit, 3),
               prefill_ceiling_tok_s=round(n_tok / t_fwd, 1),
               cached_cold_s=round(t_cold, 3), cached_warm_s=round(t_warm, 5), ratio_cold_over_warm=round(t_cold / t_warm, 1))
    for k, v in res.items(): print(f"{k:>24}: {v}")
    from ragkit.runner import machine  # the CPU's model name and the cores this process may use
    if a.out: Path(a.out).write_text(json.dumps(dict(res, machine=machine()), indent=1))
    return res


if __name__ == "__main__": main()
