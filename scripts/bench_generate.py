"""ragkit's reader on a device against plain transformers: `generate`, `score_batch` and the embedder, same model objects.

The reader issue's GPU measurement, in three sections, written to one JSON under outputs/bench/:

- **generate**: ragkit's `TransformersLM.generate` and Hugging Face `generate` decode the same prompts greedily in
  batches of the same rows (ragkit's own length-sorted batching), timed after a warm-up, without stop strings and with
  them (HF's `stop_strings`, its output then cut where ragkit cuts); the greedy tokens are compared position by
  position. A bare prefill forward (rows x prompt tokens) gives the card's ceiling in TFLOP/s (2 x parameters x tokens / s).
- **score_batch**: ragkit's batched, padded teacher-forced log-probabilities (what LoRE ranks by) against a plain
  unpadded forward pass per pair, at the run's precision and in float32: seconds and the largest absolute difference.
- **embedder**: `Embedder(device=...)` against `Embedder(device="cpu")` on the same passages: seconds and the cosine
  between each passage's two vectors.

`--profile FILE` adds a torch profile of one batch of each side (the operators by device and host time).

A checkpoint cannot travel to a GPU machine that has no network (at most 64 MiB go with a command), so `--random`
builds the reader's and the embedder's architectures (config and tokenizer, a few MB) with seeded random weights:
speed is the architecture's, and random weights decode to the token budget (no early end-of-sequence). Run from the
repository:

    .venv/bin/python scripts/bench_generate.py --device cuda --dtype bfloat16 --random [--arch DIR] [--embed-arch DIR]
    .venv/bin/python scripts/bench_generate.py --device cpu --prompts 16 --batches 1,8 --min-len 100 --max-len 300   # a CPU check

`--arch` is a folder with config.json and the tokenizer (default: the registry reader's folder in the model cache);
`--embed-arch` a sentence-transformers folder (default: the registry embedder's).
"""
from __future__ import annotations
import argparse, json, os, platform, random, shutil, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STOPS = ["\n\n", "Question:"]  # the readers' usual stop strings


def _sync(device: str) -> None:
    "Wait for the device's queued work (a no-op on the CPU)."
    import torch
    if str(device).startswith("cuda"): torch.cuda.synchronize()


def cpu_name() -> str:
    "The processor's model name and the cores this process may use."
    model = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("model name")), None) \
        if Path("/proc/cpuinfo").exists() else None
    return f"{model or platform.processor() or platform.machine()}, {len(os.sched_getaffinity(0))} cores"


def prompts_of(tok, n: int, lo: int, hi: int, seed: int) -> list[str]:
    "n texts of lo..hi words made from seeded random vocabulary (decoded, so they re-encode to about as many tokens)."
    rng = random.Random(seed)
    words = [w for w in (tok.decode([i]).strip() for i in range(1000, 20000)) if w.isalpha() and len(w) > 2]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(lo, hi))) for _ in range(n)]


def hf_generate(model, tok, seqs: list[list[int]], pad_id: int, new_tokens: int, device: str, stop=None) -> list[list[int]]:
    "Greedy continuations of left-padded `seqs` by transformers' own generate, end-of-sequence and after dropped."
    from ragkit.lm.base import left_pad
    ids, mask, _ = left_pad(seqs, pad_id, device)
    extra = dict(stop_strings=stop, tokenizer=tok) if stop else {}
    out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens, do_sample=False, pad_token_id=pad_id,
                         temperature=None, top_p=None, top_k=None, **extra)
    eos = model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, (list, tuple)) else [eos])
    rows = []
    for r in out[:, ids.shape[1]:].tolist():
        k = next((j for j, t in enumerate(r) if t in eos or t == pad_id), len(r))
        rows.append(r[:k])
    return rows


def same_positions(ours: list[list[int]], theirs: list[list[int]]) -> float:
    "Share of token positions where both decoded the same token (a position only one side reached counts as different)."
    hit = sum(sum(a == b for a, b in zip(x, y)) for x, y in zip(ours, theirs))
    return hit / max(1, sum(max(len(x), len(y)) for x, y in zip(ours, theirs)))


def run_sides(lm, texts, seqs, order, new_tokens, stop, dev, sides) -> dict:
    "Each side in `sides` ('ragkit' or 'hf') decodes every prompt once, in the given batches: seconds and token ids per side."
    import torch
    got = {}
    for side in sides:
        _sync(dev); t0 = time.perf_counter()
        if side == "ragkit": ids = [c.token_ids for c in lm.generate(texts, max_new_tokens=new_tokens, stop=stop, chat=False)]
        else:
            ids = [None] * len(seqs)
            with torch.no_grad():
                for part in order:
                    for i, r in zip(part, hf_generate(lm.model, lm.tok, [seqs[i] for i in part], lm.pad_id, new_tokens, dev, stop)): ids[i] = r
            if stop: ids = [lm._completion(t, [0.0] * len(t), "length", stop).token_ids for t in ids]  # cut where ragkit cuts
        _sync(dev)
        got.setdefault(side, []).append((time.perf_counter() - t0, ids))
    return got


def bench_generate(lm, texts, seqs, batches, new_tokens, stop, dev, rounds: int) -> list[dict]:
    "ragkit against HF generate at each batch size ('default': ragkit's own rows and token cap), one stop setting; best of `rounds`, alternating."
    from ragkit.lm.base import length_batches
    rows, default = [], (lm.batch_size, lm._token_cap())
    for b in batches:
        size, cap = default if b == "default" else (b, None)
        order = length_batches([len(s) for s in seqs], size, cap)
        lm.batch_size, lm.max_batch_tokens = size, cap
        sides = ["hf", "ragkit", "ragkit", "hf"][:2 * rounds] if rounds > 1 else ["ragkit", "hf"]  # each side once first and once second
        got = run_sides(lm, texts, seqs, order, new_tokens, stop, dev, sides)
        (t_ours, mine), (t_hf, theirs) = min(got["ragkit"], key=lambda x: x[0]), min(got["hf"], key=lambda x: x[0])
        row = dict(batch=b if b != "default" else f"default ({size} rows, cap {cap})", stop=stop, batches=len(order), rounds=rounds,
                   ragkit_s=round(t_ours, 3), hf_generate_s=round(t_hf, 3), ratio_to_hf=round(t_hf / t_ours, 3),
                   ragkit_each_s=[round(t, 3) for t, _ in got["ragkit"]], hf_each_s=[round(t, 3) for t, _ in got["hf"]],
                   same_greedy_tokens=round(same_positions(mine, theirs), 4), same_rows=round(sum(x == y for x, y in zip(mine, theirs)) / len(seqs), 4),
                   generated_tokens=sum(map(len, mine)), stopped_rows=sum(len(x) < new_tokens for x in mine))
        if rounds > 1:  # the card's own repeatability: each side against itself across rounds
            row["hf_vs_hf_same_tokens"] = round(same_positions(got["hf"][0][1], got["hf"][1][1]), 4)
            row["ragkit_vs_ragkit_same_tokens"] = round(same_positions(got["ragkit"][0][1], got["ragkit"][1][1]), 4)
        rows.append(row)
        print(row, flush=True)
    lm.batch_size, lm.max_batch_tokens = default
    return rows


def agreement(lm, texts, seqs, size: int, new_tokens: int, dev, label: str) -> dict:
    "Greedy-token agreement at one batch size under the current numerics: HF twice (its repeatability) and ragkit once."
    from ragkit.lm.base import length_batches
    order = length_batches([len(s) for s in seqs], size)
    keep, lm.batch_size, lm.max_batch_tokens = (lm.batch_size, lm.max_batch_tokens), size, None
    got = run_sides(lm, texts, seqs, order, new_tokens, None, dev, ["hf", "ragkit", "hf"])
    lm.batch_size, lm.max_batch_tokens = keep
    mine, (h1, h2) = got["ragkit"][0][1], (x[1] for x in got["hf"])
    row = dict(numerics=label, batch=size, dtype=str(lm.model.dtype).replace("torch.", ""), same_greedy_tokens=round(same_positions(mine, h1), 4),
               same_rows=round(sum(x == y for x, y in zip(mine, h1)) / len(seqs), 4), hf_vs_hf_same_tokens=round(same_positions(h1, h2), 4))
    print(row, flush=True)
    return row


def bench_prefill(model, dev, shape: str) -> dict:
    "The bare forward pass over random ids (rows x tokens), last position's logits only: seconds and TFLOP/s."
    import torch
    r_, n_ = (int(x) for x in shape.split("x"))
    ids = torch.randint(1000, 20000, (r_, n_), device=dev)
    with torch.no_grad():
        model(input_ids=ids, logits_to_keep=1); _sync(dev)
        t0 = time.perf_counter()
        for _ in range(3): model(input_ids=ids, logits_to_keep=1)
        _sync(dev); dt = (time.perf_counter() - t0) / 3
    params = sum(p.numel() for p in model.parameters())
    return dict(rows=r_, tokens=n_, seconds=round(dt, 4), tokens_per_s=round(r_ * n_ / dt), tflops=round(2 * params * r_ * n_ / dt / 1e12, 2))


def plain_scores(model, pairs, dev) -> list[float]:
    "Summed continuation log-probs by one unpadded forward pass per (prompt ids, continuation ids) pair."
    import torch
    out = []
    with torch.no_grad():
        for p, c in pairs:
            logits = model(input_ids=torch.tensor([p + c], device=dev)).logits[0, len(p) - 1:-1].float()
            out.append(torch.log_softmax(logits, -1).gather(1, torch.tensor(c, device=dev)[:, None]).sum().item())
    return out


def bench_score(lm, tok, n: int, seed: int, dev) -> dict:
    "ragkit's score_batch against a plain forward pass per pair: seconds and the largest absolute log-prob difference."
    rng = random.Random(seed + 1)
    prompts = prompts_of(tok, n, 100, 400, seed + 1)
    conts = [" " + " ".join(rng.choice(p.split()) for _ in range(rng.randint(1, 6))) for p in prompts]
    pairs = [(lm._encode(p, False), tok(c, add_special_tokens=False).input_ids) for p, c in zip(prompts, conts)]
    lm.score_batch(prompts[:2], conts[:2], chat=False)  # warm-up
    _sync(dev); t0 = time.perf_counter()
    ours = lm.score_batch(prompts, conts, chat=False)
    _sync(dev); t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = plain_scores(lm.model, pairs, dev)
    _sync(dev); t_ref = time.perf_counter() - t0
    diff = [abs(a - b) for a, b in zip(ours, ref)]
    row = dict(pairs=n, dtype=str(lm.model.dtype).replace("torch.", ""), continuation_tokens=[min(len(c) for _, c in pairs), max(len(c) for _, c in pairs)],
               ragkit_s=round(t_ours, 3), plain_forward_s=round(t_ref, 3), ratio_to_plain=round(t_ref / t_ours, 3),
               max_abs_diff=round(max(diff), 5), mean_abs_diff=round(sum(diff) / n, 6), mean_logprob=round(sum(ref) / n, 3),
               same_best_of_pairs=None)
    # how often the ranking a method reads is unchanged: for each pair of neighbouring rows, which scores higher
    row["same_best_of_pairs"] = round(sum((ours[i] > ours[i + 1]) == (ref[i] > ref[i + 1]) for i in range(0, n - 1, 2)) / (n // 2), 4)
    print(row, flush=True)
    return row


def random_folder(src: Path, seed: int, auto: str) -> Path:
    "A copy of the model folder `src` (config, tokenizer) with seeded random weights of its architecture."
    import torch, transformers
    tmp = Path(tempfile.mkdtemp(prefix="ragkit-bench-"))
    for f in Path(src).iterdir():
        if f.suffix not in (".safetensors", ".bin", ".gguf"):
            (shutil.copytree if f.is_dir() else shutil.copy)(f, tmp / f.name)
    torch.manual_seed(seed)
    cfg = transformers.AutoConfig.from_pretrained(src)
    getattr(transformers, auto).from_config(cfg).save_pretrained(tmp)
    return tmp


def bench_embedder(folder: Path, dev: str, n: int, tok, seed: int) -> dict:
    "Embedder on `dev` against the CPU on the same passages: seconds each and the cosine between a passage's two vectors."
    import numpy as np
    from ragkit.retrieve.dense import Embedder
    texts = prompts_of(tok, n, 60, 140, seed + 2)
    rows = {}
    for where in (dev, "cpu"):
        e = Embedder(str(folder), device=where, threads=len(os.sched_getaffinity(0)))
        e.encode(texts[:8]); _sync(where)
        t0 = time.perf_counter(); rows[where] = (e.encode(texts), time.perf_counter() - t0)
    (a, t_dev), (b, t_cpu) = rows[dev], rows["cpu"]
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    row = dict(passages=n, dim=int(a.shape[1]), device_s=round(t_dev, 3), cpu_s=round(t_cpu, 3), speedup=round(t_cpu / t_dev, 2),
               cosine_min=round(float(cos.min()), 6), cosine_mean=round(float(cos.mean()), 7),
               same_nearest=round(float(((a @ a.T).argsort(1)[:, -2] == (b @ b.T).argsort(1)[:, -2]).mean()), 4))
    print(row, flush=True)
    return row


def profile_batch(lm, texts, seqs, new_tokens, dev, path: Path) -> dict:
    "A torch profile of one batch (the longest prompts) by each side: operators by device and host time, and device busy share."
    import torch
    from torch.profiler import ProfilerActivity, profile
    part = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))[:lm.batch_size]
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if str(dev).startswith("cuda") else [])
    sort = "self_device_time_total" if ProfilerActivity.CUDA in acts else "self_cpu_time_total"
    out, lines = {}, []
    for side in ("ragkit", "hf", "ragkit"):  # ragkit twice: the first profiled run pays the profiler's own start-up
        run = (lambda: lm.generate([texts[i] for i in part], max_new_tokens=new_tokens, chat=False)) if side == "ragkit" else \
              (lambda: hf_generate(lm.model, lm.tok, [seqs[i] for i in part], lm.pad_id, new_tokens, dev))
        _sync(dev)
        with torch.no_grad(), profile(activities=acts) as prof:
            t0 = time.perf_counter(); run(); _sync(dev); wall = time.perf_counter() - t0
        ev = prof.key_averages()
        busy = sum(getattr(e, "self_device_time_total", 0) for e in ev) / 1e6
        out[side] = dict(rows=len(part), wall_s=round(wall, 3), device_busy_s=round(busy, 3),
                         kernel_launches=sum(e.count for e in ev if e.key.startswith("cudaLaunch")))
        lines += [f"== {side}: {len(part)} rows, {new_tokens} new tokens, wall {wall:.3f} s, device busy {busy:.3f} s"]
        for key in dict.fromkeys([sort, "self_cpu_time_total"]):
            try: lines.append(ev.table(sort_by=key, row_limit=25))
            except Exception as e: lines.append(f"(no table by {key}: {e})")
    path.parent.mkdir(parents=True, exist_ok=True); path.write_text("\n".join(lines) + "\n")
    print(out, flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reader", default="qwen2.5-coder-0.5b-instruct", help="registry name whose folder gives the architecture")
    ap.add_argument("--arch", type=Path, help="a folder with config.json and the tokenizer (default: the reader's)")
    ap.add_argument("--embed-arch", type=Path, help="a sentence-transformers folder (default: the registry embedder's)")
    ap.add_argument("--random", action="store_true", help="random weights of the architectures (no checkpoint needed)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--prompts", type=int, default=256)
    ap.add_argument("--min-len", type=int, default=300)
    ap.add_argument("--max-len", type=int, default=800)
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--batches", default="8,64,default", help="batch sizes; 'default' is ragkit's own for the device")
    ap.add_argument("--prefill", default="64x512", help="rows x tokens of the bare forward pass")
    ap.add_argument("--score-pairs", type=int, default=256, help="pairs for score_batch (0: skip)")
    ap.add_argument("--embed-passages", type=int, default=2000, help="passages for the embedder (0: skip)")
    ap.add_argument("--profile", type=Path, help="write a torch profile of one batch of each side here")
    ap.add_argument("--rounds", type=int, default=2, help="timed rounds per batch size without stop strings, sides alternating; the best counts")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    import torch, transformers
    from ragkit.lm.base import TransformersLM
    t_start = time.perf_counter()
    torch.manual_seed(a.seed)
    if a.random:
        from ragkit.lm.models import reader_dir
        tmp = random_folder(a.arch or Path(reader_dir(a.reader)), a.seed, "AutoModelForCausalLM")
        name = str(tmp)
    else: tmp, name = None, a.reader
    batches = [b if b == "default" else int(b) for b in a.batches.split(",")]
    lm = TransformersLM(name, device=a.device, dtype=a.dtype, max_length=4096, decode_rows=None, share_prefix=0)  # the same batches as HF generate
    model, dev = lm.model, lm.device
    texts = prompts_of(lm.tok, a.prompts, a.min_len, a.max_len, a.seed)
    seqs = lm._encode_all(texts, False, a.new_tokens)
    for stop in (None, STOPS):  # warm-up, each side and stop setting
        lm.generate(texts[:2], max_new_tokens=2, stop=stop, chat=False); hf_generate(model, lm.tok, seqs[:2], lm.pad_id, 2, dev, stop)
    kind = torch.device(dev).type
    out = a.out or ROOT / "outputs" / "bench" / f"generate-{kind}.json"
    doc = dict(what="ragkit TransformersLM.generate vs transformers generate, same model object, prompts and batches; greedy; "
                    "score_batch vs a plain forward pass; the embedder on the device vs the CPU",
               device=torch.cuda.get_device_name(dev) if kind == "cuda" else cpu_name(), cpu=cpu_name(),
               torch=torch.__version__, cuda=torch.version.cuda, transformers=transformers.__version__, dtype=a.dtype,
               weights="random (the architecture's config, seed %d)" % a.seed if a.random else lm.identity, architecture=model.config.model_type,
               parameters=sum(p.numel() for p in model.parameters()), prompts=len(seqs), prompt_tokens=[min(map(len, seqs)), max(map(len, seqs))],
               new_tokens=a.new_tokens, stop_strings=STOPS, complete=False,
               note="ratio_to_hf = HF generate seconds / ragkit seconds (above 1: ragkit faster); same_greedy_tokens = share of "
                    "token positions decoded alike; timed after a warm-up, in one process")
    def save(**part):  # after each section, so a run cut short keeps what it measured
        doc.update(part, seconds=round(time.perf_counter() - t_start, 1))
        out.parent.mkdir(parents=True, exist_ok=True); out.write_text(json.dumps(doc, indent=1) + "\n")
    from ragkit.lm.base import HostTensorWatch
    with HostTensorWatch() as watch:  # ragkit's own code makes no tensor off the model's device
        lm.generate(texts[:4], max_new_tokens=4, stop=STOPS, chat=False); lm.score_batch(texts[:2], [" a", " b"], chat=False)
    save(host_tensors_made_by_ragkit=watch.seen)
    rows = bench_generate(lm, texts, seqs, batches, a.new_tokens, None, dev, a.rounds)
    save(rows=rows)
    save(rows=rows + bench_generate(lm, texts, seqs, batches, a.new_tokens, STOPS, dev, 1))  # shapes warm by now: one round
    if kind == "cuda":  # the same comparison with deterministic kernels (no cuDNN attention): are differences ragkit's or the card's?
        torch.use_deterministic_algorithms(True, warn_only=True); torch.backends.cudnn.deterministic = True
        torch.backends.cuda.enable_cudnn_sdp(False)
        agree = [agreement(lm, texts, seqs, 64, a.new_tokens, dev, "deterministic algorithms, cuDNN attention off")]
        torch.use_deterministic_algorithms(False); torch.backends.cudnn.deterministic = False; torch.backends.cuda.enable_cudnn_sdp(True)
        save(agreement=agree)
    if a.profile: save(profile=profile_batch(lm, texts, seqs, a.new_tokens, dev, a.profile))
    save(prefill=bench_prefill(model, dev, a.prefill))
    print(doc["prefill"], flush=True)
    if a.score_pairs:
        score = [bench_score(lm, lm.tok, a.score_pairs, a.seed, dev)]
        save(score_batch=score)
        if lm.model.dtype != torch.float32:
            lm._model = model.float(); score.append(bench_score(lm, lm.tok, a.score_pairs, a.seed, dev))
            save(score_batch=score)
            if kind == "cuda": save(agreement=doc.get("agreement", []) + [agreement(lm, texts, seqs, 64, a.new_tokens, dev, "float32 weights")])
    if a.embed_passages:
        from ragkit.lm.models import resolve_model
        from ragkit.config import load_settings
        src = a.embed_arch or Path(resolve_model(load_settings().embedder).path)
        folder = random_folder(src, a.seed, "AutoModel") if a.random else src
        save(embedder=bench_embedder(folder, dev, a.embed_passages, lm.tok, a.seed),
             embedder_weights="random (the embedder's architecture)" if a.random else "the registry embedder")
        if a.random: shutil.rmtree(folder, ignore_errors=True)
    save(complete=True)
    print(out)
    if tmp: shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__": raise SystemExit(main())
