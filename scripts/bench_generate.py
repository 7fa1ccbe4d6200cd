"""ragkit's `TransformersLM.generate` against Hugging Face `generate`: same model object, same prompts, same batches.

The reader issue's GPU measurement. For each batch size both decode the same prompts greedily, in batches of that
many rows cut from the same length-sorted order (ragkit's own batching, with no token cap), timed after a warm-up;
the greedy tokens are compared prompt by prompt. A bare prefill forward (batch x prompt tokens, no generation) gives
the card's ceiling in TFLOP/s (2 x parameters x tokens / s). Writes one JSON under outputs/bench/.

A checkpoint cannot travel to a GPU machine that has no network (at most 64 MiB go with a command), so `--random`
builds the reader's architecture (its config.json and tokenizer, a few MB) with random weights: speed is the
architecture's, and random weights decode to the token budget (no early end-of-sequence). Run from the repository:

    .venv/bin/python scripts/bench_generate.py --device cuda --dtype bfloat16 --random [--arch DIR] [--batches 8,64]
    .venv/bin/python scripts/bench_generate.py --device cpu --prompts 16 --batches 1,8 --min-len 100 --max-len 300   # a CPU check

`--arch` is a folder with config.json and the tokenizer (default: the registry reader's folder in the model cache).
"""
from __future__ import annotations
import argparse, json, os, platform, random, shutil, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _sync(device: str) -> None:
    "Wait for the device's queued work (a no-op on the CPU)."
    import torch
    if device.startswith("cuda"): torch.cuda.synchronize()


def prompts_of(tok, n: int, lo: int, hi: int, seed: int) -> list[str]:
    "n texts of lo..hi tokens made from seeded random vocabulary (decoded, so they re-encode to about as many tokens)."
    rng = random.Random(seed)
    words = [w for w in (tok.decode([i]).strip() for i in range(1000, 20000)) if w.isalpha() and len(w) > 2]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(lo, hi))) for _ in range(n)]


def hf_generate(model, seqs: list[list[int]], pad_id: int, new_tokens: int, device: str) -> list[list[int]]:
    "Greedy continuations of left-padded `seqs` by transformers' own generate, end-of-sequence and after dropped."
    import torch
    from ragkit.lm.base import left_pad
    ids, mask, _ = left_pad(seqs, pad_id, device)
    out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens, do_sample=False, pad_token_id=pad_id,
                         temperature=None, top_p=None, top_k=None)
    eos = model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, (list, tuple)) else [eos])
    rows = []
    for r in out[:, ids.shape[1]:].tolist():
        k = next((j for j, t in enumerate(r) if t in eos), len(r))
        rows.append(r[:k])
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reader", default="qwen2.5-coder-0.5b-instruct", help="registry name whose folder gives the architecture")
    ap.add_argument("--arch", type=Path, help="a folder with config.json and the tokenizer (default: the reader's)")
    ap.add_argument("--random", action="store_true", help="random weights of the architecture (no checkpoint needed)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--prompts", type=int, default=256)
    ap.add_argument("--min-len", type=int, default=300)
    ap.add_argument("--max-len", type=int, default=800)
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--batches", default="8,64")
    ap.add_argument("--prefill", default="64x512", help="rows x tokens of the bare forward pass")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    import torch, transformers
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    from ragkit.lm.base import TransformersLM, length_batches
    torch.manual_seed(a.seed)
    tmp = None
    if a.random:
        src = a.arch
        if src is None:
            from ragkit.lm.models import reader_dir
            src = Path(reader_dir(a.reader))
        tmp = Path(tempfile.mkdtemp(prefix="ragkit-bench-"))
        cfg = AutoConfig.from_pretrained(src)
        AutoModelForCausalLM.from_config(cfg, dtype=getattr(torch, a.dtype)).save_pretrained(tmp)
        AutoTokenizer.from_pretrained(src).save_pretrained(tmp)
        name = str(tmp)
    else: name = a.reader
    batches = [int(b) for b in a.batches.split(",")]
    lm = TransformersLM(name, batch_size=max(batches), max_batch_tokens=None, device=a.device, dtype=a.dtype, max_length=4096)
    model, dev = lm.model, lm.device
    texts = prompts_of(lm.tok, a.prompts, a.min_len, a.max_len, a.seed)
    seqs = [lm._encode(t, chat=False) for t in texts]
    lm.generate(texts[:2], max_new_tokens=2, chat=False); hf_generate(model, seqs[:2], lm.pad_id, 2, dev)  # warm-up
    rows = []
    for b in batches:
        order = [i for batch in length_batches([len(s) for s in seqs], b) for i in batch]
        lm.batch_size = b
        _sync(dev); t0 = time.perf_counter()
        ours = lm.generate(texts, max_new_tokens=a.new_tokens, chat=False)
        _sync(dev); t_ours = time.perf_counter() - t0
        theirs = [None] * len(seqs)
        _sync(dev); t0 = time.perf_counter()
        with torch.no_grad():
            for k in range(0, len(order), b):
                part = order[k:k + b]
                for i, r in zip(part, hf_generate(model, [seqs[i] for i in part], lm.pad_id, a.new_tokens, dev)): theirs[i] = r
        _sync(dev); t_hf = time.perf_counter() - t0
        same = sum(c.token_ids == t for c, t in zip(ours, theirs)) / len(seqs)
        rows.append(dict(batch=b, ragkit_s=round(t_ours, 3), hf_generate_s=round(t_hf, 3), ratio_to_hf=round(t_hf / t_ours, 3),
                         same_greedy_tokens=round(same, 4), generated_tokens=sum(len(c.token_ids) for c in ours)))
        print(rows[-1], flush=True)
    r_, n_ = (int(x) for x in a.prefill.split("x"))
    ids = torch.randint(1000, 20000, (r_, n_), device=dev)
    with torch.no_grad():
        model(input_ids=ids, logits_to_keep=1); _sync(dev)
        t0 = time.perf_counter()
        for _ in range(3): model(input_ids=ids, logits_to_keep=1)
        _sync(dev); dt = (time.perf_counter() - t0) / 3
    params = sum(p.numel() for p in model.parameters())
    prefill = dict(rows=r_, tokens=n_, seconds=round(dt, 4), tokens_per_s=round(r_ * n_ / dt), tflops=round(2 * params * r_ * n_ / dt / 1e12, 2))
    print(prefill)
    kind = torch.device(dev).type
    doc = dict(what="ragkit TransformersLM.generate vs transformers generate, same model object, prompts and batches; greedy",
               device=torch.cuda.get_device_name(dev) if kind == "cuda" else f"{platform.processor() or platform.machine()} CPU, {len(os.sched_getaffinity(0))} cores",
               torch=torch.__version__, transformers=transformers.__version__, dtype=a.dtype,
               weights="random (the architecture's config)" if a.random else lm.identity, architecture=model.config.model_type,
               parameters=params, prompts=len(seqs), prompt_tokens=[min(map(len, seqs)), max(map(len, seqs))], new_tokens=a.new_tokens,
               rows=rows, prefill=prefill,
               note="ratio_to_hf = HF generate seconds / ragkit seconds (above 1: ragkit faster); timed after a warm-up, in one process")
    out = a.out or ROOT / "outputs" / "bench" / f"generate-{kind}.json"
    out.parent.mkdir(parents=True, exist_ok=True); out.write_text(json.dumps(doc, indent=1) + "\n")
    print(out)
    if tmp: shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__": raise SystemExit(main())
