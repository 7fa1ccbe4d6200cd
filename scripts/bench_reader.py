"""Reader speed and faithfulness, every option in one run (issue: the fastest faithful precision).

For each reader (SmolLM2-135M-Instruct, Qwen2.5-Coder-0.5B-Instruct) and each way of running it — transformers fp32
(the reference), bf16, per-channel dynamic int8 on the Linear layers, one torch thread instead of two, batch 1
instead of 8, and the llama.cpp server (xllamacpp) with 1 and 2 threads — it measures:

- prefill-heavy reading: `n_long` prompts of about 800 tokens (a SQuAD question with its gold paragraph and the
  paragraphs after it), 16 new tokens: prompt and generated tokens per second;
- decode-heavy writing: `n_decode` GenRead background documents (EoR's PK prompt), 128 new tokens: generated tokens/s;
- the bare forward pass over the long prompts (no generation): the prefill ceiling of this machine;
- answer agreement with fp32 greedy output on `n_agree` SQuAD questions read with their gold paragraph (the same
  prompt for every option: `lore-short`, the prompt of the demo and paper LoRE runs), and EM / F1 on the first
  `n_squad` of them; the tokens/s of that set is the short-prompt reading workload (LoRE's one context per call),
  where batching matters: about 250-token prompts, batched up to the reader's `max_batch_tokens`.

Every figure is a ratio to the fp32 option of the same reader measured in the same run. Results, with the machine
and the versions, go to outputs/bench/reader.json; a partial file lets an interrupted run resume per (reader, option).

    .venv/bin/python scripts/bench_reader.py                       # about an hour on 2 cores, alone
    .venv/bin/python scripts/bench_reader.py --readers smollm2-135m-instruct --n-agree 40   # a quick look
    .venv/bin/python scripts/bench_reader.py --lock /tmp/ragkit-cpu.lock   # on a machine shared with others: they run between options
"""
from __future__ import annotations
import argparse, contextlib, importlib, json, os, platform, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from ragkit.portable import portable_path  # the output path as the record holds it (no machine path)
for _paper in ("ragkit.papers.lore.method", "ragkit.papers.eor.sources"):  # register the prompts read with: LoRE's (lore-short,
    importlib.import_module(_paper)                                  # lore-context) and EoR's background documents (eor-pk)
OPTIONS = {  # name -> how the reader runs
    "fp32": dict(backend="transformers", dtype="float32", threads=2, batch_size=8),
    "bf16": dict(backend="transformers", dtype="bfloat16", threads=2, batch_size=8),
    "int8-dynamic": dict(backend="transformers", dtype="int8-dynamic", threads=2, batch_size=8),
    "fp32-1thread": dict(backend="transformers", dtype="float32", threads=1, batch_size=8),
    "fp32-batch1": dict(backend="transformers", dtype="float32", threads=2, batch_size=1),
    "llama.cpp-2threads": dict(backend="llama.cpp", threads=2, parallel=4),
    "llama.cpp-1thread": dict(backend="llama.cpp", threads=1, parallel=4),
}


def cpu_model() -> str:
    "The processor's model name, from /proc/cpuinfo (platform.processor() is often empty or just the architecture)."
    info = Path("/proc/cpuinfo")
    name = next((l.split(":", 1)[1].strip() for l in info.read_text().splitlines() if l.startswith("model name")), "") if info.is_file() else ""
    return name or platform.processor() or platform.machine()


def squad_items(n: int, seed: int = 0):
    "n (question, golds, gold paragraph, the two paragraphs after it) of SQuAD dev, a seeded sample."
    from ragkit.data.registry import load_dataset, sample_examples
    from ragkit.data.corpora import load_corpus, gold_pids
    exs = sample_examples(load_dataset("squad", "dev"), n, seed)
    corpus, gold = load_corpus("squad"), gold_pids("squad")
    pids = corpus.pids
    out = []
    for e in exs:
        g = gold[e.qid][0]; i = pids.index(g)
        out.append((e.question, list(e.answers), corpus[g].text, [corpus[p].text for p in pids[i + 1:i + 3]]))
    return out


def make_lm(reader: str, opt: dict, stack):
    "The LM of one option (a llama.cpp server is started inside `stack` and stopped with it)."
    if opt["backend"] == "transformers":
        from ragkit.lm.base import TransformersLM
        return TransformersLM(reader, batch_size=opt["batch_size"], dtype=opt["dtype"], threads=opt["threads"], decode_rows=None, share_prefix=0)  # batch_size is the batch it names
    from ragkit.lm.openai import OpenAILM, llama_cpp_server
    url = stack.enter_context(llama_cpp_server(reader, parallel=opt["parallel"], threads=opt["threads"], n_ctx=8192))
    return OpenAILM("local", url, api_key_env=None, concurrency=opt["parallel"])


@contextlib.contextmanager
def held(lock: str):
    "Inside: an exclusive flock on the file `lock` ('' holds nothing)."
    if not lock: yield; return
    import fcntl
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try: yield
        finally: fcntl.flock(f, fcntl.LOCK_UN)


def timed(fn):
    "(result, seconds) of fn()."
    t = time.perf_counter(); r = fn(); return r, time.perf_counter() - t


def run_option(reader: str, name: str, opt: dict, items, args) -> dict:
    "Every measurement of one (reader, option)."
    import contextlib
    from ragkit.lm.reader import read_batch, render
    from ragkit.eval.metrics import exact_match, f1_score
    with contextlib.ExitStack() as stack:
        lm = make_lm(reader, opt, stack)
        lm.generate(["Warm up: say hi."], max_new_tokens=2)  # load weights / start the server outside the timings
        long_q = [q for q, *_ in items[:args.n_long]]
        long_docs = ["\n\n".join([p, *rest]) for _, _, p, rest in items[:args.n_long]]
        reads, secs = timed(lambda: read_batch(lm, long_q, long_docs, args.template, 16, ["\n"], chat=True))
        prefill = dict(prompts=len(reads), seconds=round(secs, 2), prompt_tokens=sum(r.completion.prompt_tokens for r in reads),
                       new_tokens=sum(r.completion.cost.tokens for r in reads))
        prefill["tokens_per_s"] = round((prefill["prompt_tokens"] + prefill["new_tokens"]) / secs, 1)
        pk = [q for q, *_ in items[:args.n_decode]]
        docs, secs = timed(lambda: read_batch(lm, pk, None, "eor-pk", 128, None, post=None))
        decode = dict(prompts=len(docs), seconds=round(secs, 2), new_tokens=sum(r.completion.cost.tokens for r in docs),
                      texts=[r.answer for r in docs])
        decode["new_tokens_per_s"] = round(decode["new_tokens"] / secs, 2)
        agree_reads, secs = timed(lambda: read_batch(lm, [q for q, *_ in items[:args.n_agree]], [p for _, _, p, _ in items[:args.n_agree]],
                                                     args.template, 16, ["\n"], chat=True))
        answers = [r.answer for r in agree_reads]
        sq = list(zip(answers, items))[:args.n_squad]
        quality = dict(n=len(sq), em=sum(exact_match(a, g) for a, (_, g, _, _) in sq) / len(sq),
                       f1=sum(f1_score(a, g) for a, (_, g, _, _) in sq) / len(sq))
        read_tokens = sum(r.completion.prompt_tokens + r.completion.cost.tokens for r in agree_reads)
        out = dict(option=name, **{k: v for k, v in opt.items()}, identity=lm.identity, prefill=prefill, decode=decode,
                   agreement_set=dict(n=len(answers), seconds=round(secs, 2), tokens=read_tokens, tokens_per_s=round(read_tokens / secs, 1),
                                      answers=answers), squad_with_gold=quality)
        if opt["backend"] == "transformers":  # the bare forward pass over the long prompts: the machine's prefill ceiling
            import torch
            enc = [lm._encode(render(args.template, question=q, document=d), True) for q, d in zip(long_q, long_docs)]
            def forward():
                with torch.no_grad():
                    for i in range(0, len(enc), opt["batch_size"]):
                        ids, mask, pos = __import__("ragkit.lm.base", fromlist=["left_pad"]).left_pad(enc[i:i + opt["batch_size"]], lm.pad_id)
                        lm.model(input_ids=ids, attention_mask=mask, position_ids=pos, logits_to_keep=1)
            _, secs = timed(forward)
            out["forward_ceiling_tokens_per_s"] = round(sum(map(len, enc)) / secs, 1)
        if hasattr(lm, "close"): lm.close()
    return out


def summarize(results: dict) -> dict:
    "Per reader: each option's ratios to fp32 and agreement with fp32's answers."
    table = {}
    for reader, opts in results.items():
        ref = opts.get("fp32")
        if not ref: continue
        rows = {}
        for name, r in opts.items():
            agree = sum(a == b for a, b in zip(r["agreement_set"]["answers"], ref["agreement_set"]["answers"])) / len(ref["agreement_set"]["answers"])
            dec_agree = sum(a == b for a, b in zip(r["decode"]["texts"], ref["decode"]["texts"])) / len(ref["decode"]["texts"])
            rows[name] = dict(prefill_tokens_per_s=r["prefill"]["tokens_per_s"], prefill_x_fp32=round(r["prefill"]["tokens_per_s"] / ref["prefill"]["tokens_per_s"], 3),
                              prefill_x_forward_ceiling=round(r["prefill"]["tokens_per_s"] / ref["forward_ceiling_tokens_per_s"], 3),
                              read_tokens_per_s=r["agreement_set"].get("tokens_per_s"),
                              read_x_fp32=round(r["agreement_set"]["tokens_per_s"] / ref["agreement_set"]["tokens_per_s"], 3) if "tokens_per_s" in ref["agreement_set"] else None,
                              decode_tokens_per_s=r["decode"]["new_tokens_per_s"], decode_x_fp32=round(r["decode"]["new_tokens_per_s"] / ref["decode"]["new_tokens_per_s"], 3),
                              agreement_with_fp32=round(agree, 4), decode_agreement_with_fp32=round(dec_agree, 4),
                              em=round(r["squad_with_gold"]["em"], 4), f1=round(r["squad_with_gold"]["f1"], 4),
                              em_minus_fp32=round(r["squad_with_gold"]["em"] - ref["squad_with_gold"]["em"], 4))
        table[reader] = rows
    return table


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--readers", default="smollm2-135m-instruct,qwen2.5-coder-0.5b-instruct")
    ap.add_argument("--options", default=",".join(OPTIONS))
    ap.add_argument("--n-agree", type=int, default=200, help="reading prompts for answer agreement (gold paragraph only)")
    ap.add_argument("--n-squad", type=int, default=40, help="of those, the first n scored by EM/F1")
    ap.add_argument("--n-long", type=int, default=8, help="prefill-heavy prompts (gold paragraph + the next two)")
    ap.add_argument("--n-decode", type=int, default=4, help="decode-heavy prompts (PK documents, 128 new tokens)")
    ap.add_argument("--skip", default="", help="reader:option pairs left out, comma-separated (default: none)")
    ap.add_argument("--template", default="lore-short", help="the reading prompt (ragkit.lm.reader.TEMPLATES); lore-short is "
                    "what the demo and paper LoRE runs read with")
    ap.add_argument("--out", default=str(ROOT / "outputs" / "bench" / "reader.json"))
    ap.add_argument("--lock", default="", help="a file to flock while measuring each (reader, option), e.g. /tmp/ragkit-cpu.lock "
                    "on a machine shared with others: they run between options, never during one")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    out = Path(args.out); out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".partial.json")
    results = json.loads(partial.read_text()) if partial.exists() else {}
    items = squad_items(max(args.n_agree, args.n_long, args.n_decode))
    for reader in args.readers.split(","):
        for name in args.options.split(","):
            if f"{reader}:{name}" in args.skip.split(","): continue
            if name in results.get(reader, {}): print(f"{reader} / {name}: from {partial.name}", flush=True); continue
            with held(args.lock):
                t0 = time.time(); print(f"{reader} / {name} ...", flush=True)
                r = run_option(reader, name, OPTIONS[name], items, args)
            results.setdefault(reader, {})[name] = r
            partial.write_text(json.dumps(results, indent=1))
            print(f"  {time.time() - t0:.0f} s: prefill {r['prefill']['tokens_per_s']} tok/s, decode {r['decode']['new_tokens_per_s']} tok/s, "
                  f"EM {r['squad_with_gold']['em']:.2f} F1 {r['squad_with_gold']['f1']:.2f}", flush=True)
    import torch, transformers
    doc = dict(machine=dict(cpu=cpu_model(), cpus=len(os.sched_getaffinity(0)), python=platform.python_version(),
                            torch=torch.__version__, transformers=transformers.__version__),
               settings={**{k: v for k, v in vars(args).items() if k != "lock"}, "out": portable_path(args.out, ROOT)}, reference="fp32 (transformers, 2 threads, batches of at most 8 prompts and 1,024 padded tokens) of the same reader, same run",
               summary=summarize(results), results=results)
    out.write_text(json.dumps(doc, indent=1) + "\n"); partial.unlink(missing_ok=True)
    print(json.dumps(doc["summary"], indent=1))


if __name__ == "__main__":
    sys.exit(main())
