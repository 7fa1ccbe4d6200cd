"""Is bfloat16 faster than float32 on this CPU? A two-minute check before choosing a run's precision.

The reader benchmark (scripts/bench_reader.py, an hour) found bfloat16 3x faster than float32 for Qwen2.5-Coder-0.5B on
an AMD EPYC with AVX-512 BF16; the machines this repository runs on change between sessions, and on an Intel Xeon
(family 6 model 207) bfloat16 was the slower one. This script measures, on the machine it runs on, the bare prefill
forward pass of a reader (2 prompts of 512 random token ids, 3 timed passes after one warm-up) and a 1024x1024 matmul
in both precisions, and records them with the CPU's identity and its bf16-related flags. One record per CPU model, so
files from several machines accumulate in outputs/bench/precision.json.

    .venv/bin/python scripts/bench_precision.py [--reader qwen2.5-coder-0.5b-instruct]
"""
from __future__ import annotations
import argparse, json, os, platform, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu_identity() -> dict:
    "Vendor, family, model and the flags that matter for bf16 matmuls, from /proc/cpuinfo."
    info = {}
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if ":" in line:
            k, v = (x.strip() for x in line.split(":", 1))
            info.setdefault(k, v)
    flags = set(info.get("flags", "").split())
    return dict(vendor=info.get("vendor_id"), family=info.get("cpu family"), model=info.get("model"), name=info.get("model name"),
                cores=len(os.sched_getaffinity(0)), bf16_flags=sorted(f for f in flags if "bf16" in f or f.startswith("amx")))


def measure(reader: str, dtype: str) -> dict:
    "Prefill tokens/s of the reader's forward pass and matmul GFLOP/s, in `dtype`."
    import torch
    from ragkit.lm.base import TransformersLM
    torch.manual_seed(0)
    model = TransformersLM(reader, dtype=dtype).model
    ids = torch.randint(100, 20000, (2, 512))
    with torch.inference_mode():
        model(input_ids=ids, logits_to_keep=1)
        t = time.perf_counter()
        for _ in range(3): model(input_ids=ids, logits_to_keep=1)
        prefill = 3 * ids.numel() / (time.perf_counter() - t)
        x = torch.randn(1024, 1024, dtype=getattr(torch, dtype)); x @ x
        t = time.perf_counter()
        for _ in range(20): x @ x
        gflops = 20 * 2 * 1024 ** 3 / (time.perf_counter() - t) / 1e9
    return dict(prefill_tokens_per_s=round(prefill, 1), matmul_gflops=round(gflops, 1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reader", default="qwen2.5-coder-0.5b-instruct")
    ap.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench" / "precision.json")
    a = ap.parse_args(argv)
    import torch
    cpu = cpu_identity()
    got = {d: measure(a.reader, d) for d in ("float32", "bfloat16")}
    rec = dict(cpu=cpu, reader=a.reader, torch=torch.__version__, python=platform.python_version(), date=time.strftime("%Y-%m-%d"), **got,
               bf16_x_fp32=round(got["bfloat16"]["prefill_tokens_per_s"] / got["float32"]["prefill_tokens_per_s"], 2))
    doc = json.loads(a.out.read_text()) if a.out.is_file() else {}
    doc[f"{cpu['vendor']} family {cpu['family']} model {cpu['model']}"] = rec
    a.out.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(rec, indent=2))
    return 0


if __name__ == "__main__": raise SystemExit(main())
