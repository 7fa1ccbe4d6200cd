"""Render README's headline numbers from the committed reference runs (outputs/paper/<notebook>/results.json).

Nothing in the README's headline block is typed by hand: this script reads each committed run's results.json,
params.json and run.json and writes the block between the two markers below; likewise the timing block, from the
files scripts/reproduce_times.py writes under outputs/bench/. A test (tests/test_paper_runs.py)
fails when the README's block differs from what this script renders, so a rerun must be followed by

    .venv/bin/python scripts/headlines.py --write

Usage: headlines.py [--write | --check] [--root DIR]  (default: print the block).
"""
from __future__ import annotations
import argparse, json, sys
from pathlib import Path

START, END = "<!-- headlines:start (written by scripts/headlines.py; do not edit) -->", "<!-- headlines:end -->"
# README's timing block: how long `make reproduce` and a paper-profile prefix took, from scripts/reproduce_times.py's files.
T_START, T_END = "<!-- timings:start (written by scripts/headlines.py; do not edit) -->", "<!-- timings:end -->"
# README's reader-speed block: scripts/bench_reader.py's outputs/bench/reader.json and reader-lore-short.json.
B_START, B_END = "<!-- bench:start (written by scripts/headlines.py; do not edit) -->", "<!-- bench:end -->"
# README's "Bigger readers" block: scripts/bench_server.py's server.json and scripts/bench_generate.py's generate-<device>.json.
R_START, R_END = "<!-- readers:start (written by scripts/headlines.py; do not edit) -->", "<!-- readers:end -->"
FAITHFUL = 0.95  # an option is faithful when at least this share of its reading answers equal fp32's
FASTER = 1.1  # and faster when at least this many times fp32's throughput (below it: run-to-run noise)


def load_run(folder: Path) -> dict:
    "results.json, params.json and run.json of one run folder."
    return {n: json.loads((folder / f"{n}.json").read_text(encoding="utf-8")) for n in ("results", "params", "run")}


def verdict_lines(rows: list[dict]) -> list[str]:
    "A markdown table of a verdict: claim, dataset, n, our difference with its 95% CI, the paper's, direction and size."
    out = ["| claim | dataset | n | ours (95% CI) | paper | direction | size |", "|---|---|---:|---|---|---|---|"]
    for r in rows:
        u = "%" if r.get("unit") == "%" else ""
        ours = "n/a" if r.get("ours") is None else f"{r['ours']:+.1f}{u} [{r['lo']:+.1f}{u}, {r['hi']:+.1f}{u}]"
        paper = "n/a" if r.get("paper") is None else f"{r['paper']:+.1f}{u}"
        out.append(f"| {r['claim']} | {r['dataset']} | {r.get('n', '')} | {ours} | {paper} | {r['direction']} | {r['size']} |")
    return out


def scale_lines(rows: list[dict]) -> list[str]:
    "A run's reader-scale table (results.json's `reader_scale`): per claim, each reader's n, direction and size."
    labels = [c[len("direction ("):-1] for c in rows[0] if c.startswith("direction (")]
    out = ["| claim | dataset | " + " | ".join(f"`{l}`: n, direction, size" for l in labels) + " |", "|---|---|" + "---|" * len(labels)]
    for r in rows:
        cells = ["not run" if r.get(f"direction ({l})") is None else f"{int(r[f'n ({l})'])}, {r[f'direction ({l})']}, {r[f'size ({l})']}" for l in labels]
        out.append(f"| {r['claim']} | {r['dataset']} | " + " | ".join(cells) + " |")
    return out


def system_lines(rows: list[dict]) -> list[str]:
    "A per-system score table (LoRE's and SuRe's Table 1, WITQA's accuracy), ours beside the paper's where it has one."
    cols = [c for c in rows[0] if c.endswith(("(ours)", "(paper)"))]
    out = ["| dataset | system | n | " + " | ".join(cols) + " |", "|---|---|---:|" + "---|" * len(cols)]
    for r in rows:
        out.append(f"| {r['dataset']} | {r['system']} | {r.get('n', '')} | " + " | ".join("n/a" if r.get(c) is None else str(r[c]) for c in cols) + " |")
    return out


def reader_of(folder: Path, r: dict) -> str:
    "Which reader a run's answers came from: its results' `reader`, or that of the grid run it read (EoR's 63 and 64)."
    if r["results"].get("reader"): return f"reader `{r['results']['reader']}`"
    grid = r["params"].get("grid")
    src = folder.parent / grid / "results.json" if grid else None
    if src and src.is_file() and json.loads(src.read_text(encoding="utf-8")).get("reader"):
        return f"reader `{json.loads(src.read_text(encoding='utf-8'))['reader']}` (the answers of `{grid}`)"
    return "reader not recorded"


def render(root: Path) -> str:
    "The headline block for every run folder under root/outputs/paper/, in notebook order."
    folders = sorted(p for p in (root / "outputs" / "paper").glob("*") if (p / "results.json").is_file())
    if not folders: return "No reference run is committed yet (`outputs/paper/` is empty).\n"
    out = []
    for f in folders:
        r = load_run(f)
        res, run = r["results"], r["run"]
        secs = run.get("seconds")
        mins = "time not recorded" if secs is None else f"{secs:.0f} s" if secs < 120 else f"{secs / 60:.0f} min"
        rows = sum(x.get("n", 0) for x in res.get("summaries", []))
        resumed = sum(x.get("resumed", 0) for x in res.get("summaries", []))
        answering = sum(x.get("seconds", 0) for x in res.get("summaries", [])) / 60
        took = (f"answering took {answering:.0f} min on the 2-core machine, summed over its {rows} rows and the attempts that "
                f"computed them (the last attempt resumed {resumed} of them and took {mins})") if resumed else f"{mins} on the 2-core machine"
        out += [f"**{f.name}** — {reader_of(f, r)}, git `{run['git']['commit'][:10]}`; "
                f"{took} (`outputs/paper/{f.name}/`).", ""]
        scores = next((res[k] for k in ("table1", "accuracy") if isinstance(res.get(k), list) and res[k]
                       and any(c.endswith("(ours)") for c in res[k][0])), None)
        if scores: out += system_lines(scores) + [""]
        if res.get("verdict"): out += verdict_lines(res["verdict"]) + [""]
        else: out += ["(This run computes what the next notebooks judge; it decides no claim itself.)", ""]
        scale = root / "outputs" / "paper-1.5b" / f.name
        if (scale / "results.json").is_file():
            r2 = load_run(scale)
            secs2 = sum(x.get("seconds", 0) for x in r2["results"].get("summaries", [])) / 60
            out += [f"Reader scale: the same claims read by `{r2['results'].get('reader')}` (profile `paper-1.5b`, git "
                    f"`{r2['run']['git']['commit'][:10]}`, {secs2:.0f} min of answering; `outputs/paper-1.5b/{f.name}/`), beside this run's "
                    "reader on all its questions and on the 1.5B run's questions only:", ""]
            rows = res.get("reader_scale") or []
            out += (scale_lines(rows) if rows and len([c for c in rows[0] if c.startswith("direction (")]) > 1
                    else ["(this run's reader-scale table predates the 1.5B run: rerun it to set them side by side)"]) + [""]
    return "\n".join(out).rstrip() + "\n"


def _dur(secs: float) -> str:
    "Seconds as '13 s' under two minutes, else minutes with one decimal."
    return f"{secs:.0f} s" if secs < 120 else f"{secs / 60:.1f} min"


def _bench(root: Path, name: str) -> dict | None:
    "outputs/bench/<name> of root, parsed, or None when it is not there."
    p = root / "outputs" / "bench" / name
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else None


def render_timings(root: Path) -> str:
    "The timing block: each demo notebook cold and warm, the whole `make reproduce`, and any paper-profile prefix timed alone."
    rec = _bench(root, "reproduce-demo.json")
    if rec is None: return "No timing is recorded yet (`scripts/reproduce_times.py` writes `outputs/bench/reproduce-demo.json`).\n"
    labels = [l for l in ("cold", "warm") if l in rec]
    secs = {l: {r["notebook"]: r["seconds"] for r in rec[l]["runs"]} for l in labels}
    out = ["| notebook | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    for nb in secs[labels[0]]:
        out.append(f"| `{nb}` | " + " | ".join(_dur(secs[l][nb]) if nb in secs[l] else "n/a" for l in labels) + " |")
    out.append("")
    for l in labels:
        x = rec[l]
        out.append(f"- `make reproduce` {l} (git `{x['runs'][0]['git'][:7]}`): **{x['total_minutes']} min** in all, "
                   f"{_dur(x['setup_seconds'])} of setup and {_dur(x['notebook_seconds'])} of notebooks.")
    for r in (_bench(root, "paper-prefix.json") or {}).values():
        nb = r["notebook"]
        n = max(e["n"] for e in r["evaluations"])
        answering = sum(e["seconds"] for e in r["evaluations"])
        full = json.loads((root / "outputs" / "paper" / nb / "params.json").read_text(encoding="utf-8")).get("limit") \
            if (root / "outputs" / "paper" / nb / "params.json").is_file() else None
        per = ", ".join(f"{e['system']} {_dur(e['seconds'])}" for e in r["evaluations"])
        est = f"; at that rate {full} questions take about {(answering / n * full + r['seconds'] - answering) / 60:.0f} min" if full else ""
        out += ["", f"`{nb}`'s paper profile on {n} of its questions (its seeded sample's first {n} draws, `-p {' -p '.join(f'{k} {v}' for k, v in r['overrides'].items())}`), "
                f"reader `{r.get('reader') or 'not recorded'}`, alone from an empty cache (git `{r['git'][:7]}`): {_dur(answering)} of answering ({answering / n:.1f} s per "
                f"question: {per}) and {_dur(r['seconds'] - answering)} for the rest{est}."]
    return "\n".join(out) + "\n"


def _x(v) -> str:
    "A ratio as '1.23×', or n/a."
    return "n/a" if v is None else f"{v:.2f}×"


def render_bench(root: Path) -> str:
    "The reader-speed block: every option's speed as a ratio to fp32 (same reader, same run), its agreement, and what is faithful."
    bench = root / "outputs" / "bench"
    doc = _bench(root, "reader.json")
    if doc is None: return "No reader benchmark is recorded yet (`scripts/bench_reader.py` writes `outputs/bench/reader.json`).\n"
    st = doc["settings"]
    out = [f"`outputs/bench/reader.json` ({st['n_agree']} `{st.get('template', 'lore-context')}` reading prompts for agreement, "
           f"{st['n_long']} long prompts for prefill, {st['n_decode']} PK documents for decoding; torch {doc['machine']['torch']}, "
           f"{doc['machine']['cpus']} cores). Speeds are ratios to fp32 of the same reader in the same run; *read* is the "
           f"agreement set's own throughput (short one-context prompts, batched).", "",
           f"| reader | option | prefill | read | decode | answers = fp32's | PK documents = fp32's | EM − fp32 (first {st['n_squad']} of them) |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    verdicts = []
    for reader, opts in doc["summary"].items():
        for name, r in opts.items():
            out.append(f"| `{reader}` | {name} | {_x(r['prefill_x_fp32'])} | {_x(r.get('read_x_fp32'))} | {_x(r['decode_x_fp32'])} | "
                       f"{r['agreement_with_fp32']:.3f} | {r['decode_agreement_with_fp32']:.2f} | {r['em_minus_fp32']:+.3f} |")
        faithful = {n: r for n, r in opts.items() if n != "fp32" and r["agreement_with_fp32"] >= FAITHFUL}
        picks = []
        for work, col in (("reading", "read_x_fp32"), ("long-prompt prefill", "prefill_x_fp32"), ("decoding", "decode_x_fp32")):
            cands = {n: r[col] for n, r in faithful.items() if r.get(col) is not None and r[col] >= FASTER}
            picks.append(f"{work}: {max(cands, key=cands.get)} ({_x(max(cands.values()))})" if cands else f"{work}: fp32")
        verdicts.append(f"- `{reader}`, the fastest faithful option per workload — " + "; ".join(picks) + ".")
    out += ["", f"Faithful means at least {FAITHFUL:.0%} of the {st['n_agree']} reading answers equal fp32's (judged on reading "
            "answers only: the PK-document column says how often a 128-token document stays identical); faster means at "
            f"least {FASTER:.1f}× fp32 (smaller ratios are within run-to-run noise here)."] + verdicts
    d = _bench(root, "reader-lore-short.json")
    if d is not None:
        out += ["", f"EM on another set, the {d['settings']['n_squad']} SQuAD dev questions that `bench_reader.py --n-agree "
                f"{d['settings']['n_agree']}` samples, gold paragraph given, `{d['settings']['template']}` prompt "
                "(`outputs/bench/reader-lore-short.json`): " + "; ".join(
                    f"`{reader}` {name} EM {r['em']:.3f}, F1 {r['f1']:.3f}" for reader, opts in d["summary"].items() for name, r in opts.items()) + "."]
    prec = _bench(root, "precision.json")
    if prec:
        out += ["", "`outputs/bench/precision.json` (`scripts/bench_precision.py`: the bare prefill forward pass, 2 × 512 tokens, one "
                "record per CPU model): " + "; ".join(
                    f"{r['cpu']['name']} ({cpu}; bf16 flags: {', '.join(r['cpu']['bf16_flags']) or 'none'}), `{r['reader']}` "
                    f"float32 {r['float32']['prefill_tokens_per_s']:.0f} and bfloat16 {r['bfloat16']['prefill_tokens_per_s']:.0f} tokens/s, "
                    f"bfloat16 at {r['bf16_x_fp32']:.2f}× float32 ({r['date']})" for cpu, r in prec.items()) + "."]
    for cf in sorted(bench.glob("compare-*.json")):
        c = json.loads(cf.read_text(encoding="utf-8"))
        out += ["", f"`outputs/bench/{cf.name}` (`scripts/compare_runs.py`): `{c['notebook']}` read by "
                f"`{c['readers']['other']}` against `{c['readers']['reference']}` (git `{c['git']['other'][:7]}` and "
                f"`{c['git']['reference'][:7]}`): {c['same_prediction_overall']:.1%} of all predictions identical.", "",
                "| dataset | system | n | same prediction | EM (reference → other) | F1 (reference → other) |", "|---|---|---:|---:|---|---|"]
        for r in c["systems"]:
            cell = lambda m: f"{r[m]['reference']:.3f} → {r[m]['other']:.3f}" if m in r else "n/a"
            out.append(f"| {r['dataset']} | {r['system'].replace('_', ' ')} | {r['n']} | {r['same_prediction']:.3f} | {cell('exact_match')} | {cell('f1')} |")
    return "\n".join(out) + "\n"


def render_readers(root: Path) -> str:
    "The 'Bigger readers' block: served against local throughput and agreement, and ragkit's decoding against HF generate."
    out = []
    srv = _bench(root, "server.json")
    if srv is None: out.append("No server benchmark is recorded yet (`scripts/bench_server.py` writes `outputs/bench/server.json`).")
    else:
        loc = srv["local"]
        out += [f"`outputs/bench/server.json` (`scripts/bench_server.py`: {srv['questions']} SQuAD questions with their gold paragraph, "
                f"LoRE's reading prompt, greedy, {srv['new_tokens']} new tokens, uncached; {srv['machine']['processor']}, "
                f"{srv['machine']['cpus']} cores; server: {srv['server']}, served as `{srv['served']}`). Local transformers on the "
                "same prompts in the same run: " + "; ".join(f"{d} {v['questions_per_s']:.2f} questions/s" for d, v in loc.items()) +
                f" (bfloat16 and float32 answers identical on {srv['local_bf16_vs_float32']['identical']:.0%}).", "",
                "| client concurrency | questions/s | × local (same precision) | answers = local's (same precision) | largest / median mean-probability difference | answers = local float32's |",
                "|---:|---:|---:|---:|---:|---:|"]
        for r in srv["rows"]:
            a, f = r["vs_local_same_dtype"], r["vs_local_float32"]
            out.append(f"| {r['concurrency']} | {r['questions_per_s']:.2f} | {r['x_local']:.2f}× | {a['identical']:.1%} | "
                       f"{a['mean_prob_diff_max']:.3f} / {a['mean_prob_diff_median']:.3f} | {f['identical']:.1%} |")
    for g in sorted((root / "outputs" / "bench").glob("generate-*.json")):
        d = json.loads(g.read_text(encoding="utf-8"))
        out += ["", f"`outputs/bench/{g.name}` (`scripts/bench_generate.py`: {d['device']}, {d['dtype']}, {d['weights']} of "
                f"{d['architecture']} ({d['parameters'] / 1e6:.0f} M parameters); {d['prompts']} prompts of {d['prompt_tokens'][0]}–"
                f"{d['prompt_tokens'][1]} tokens, {d['new_tokens']} new tokens; torch {d['torch']}, transformers {d['transformers']}). "
                f"Bare prefill, {d['prefill']['rows']} × {d['prefill']['tokens']} tokens: {d['prefill']['tokens_per_s']:,} tokens/s "
                f"({d['prefill']['tflops']} TFLOP/s).", "",
                "| batch | ragkit `generate` s | HF `generate` s | ragkit speed ÷ HF's | same greedy tokens as HF |", "|---:|---:|---:|---:|---:|"]
        out += [f"| {r['batch']} | {r['ragkit_s']:.2f} | {r['hf_generate_s']:.2f} | {r['ratio_to_hf']:.2f}× | {r['same_greedy_tokens']:.1%} |" for r in d["rows"]]
    return "\n".join(out) + "\n"


def splice(readme: str, block: str, start: str = START, end: str = END) -> str:
    "README text with the block between the markers replaced; an error when a marker is missing."
    if start not in readme or end not in readme: raise SystemExit(f"README.md lacks the markers {start!r} … {end!r}")
    head, rest = readme.split(start, 1)
    return head + start + "\n" + block + rest[rest.index(end):]


def render_readme(readme: str, root: Path) -> str:
    "README text with its four blocks (headlines, timings, reader speed, bigger readers) rendered from root's files."
    out = splice(splice(splice(readme, render(root)), render_timings(root), T_START, T_END), render_bench(root), B_START, B_END)
    return splice(out, render_readers(root), R_START, R_END)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite README.md's headline block")
    ap.add_argument("--check", action="store_true", help="exit 1 when README.md's block differs from the rendered one")
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    a = ap.parse_args(argv)
    readme = a.root / "README.md"
    if not (a.write or a.check): print(render(a.root)); print(render_timings(a.root)); print(render_bench(a.root)); print(render_readers(a.root)); return 0
    new = render_readme(readme.read_text(encoding="utf-8"), a.root)
    if a.check:
        if new != readme.read_text(encoding="utf-8"):
            print("README.md's headline, timing or reader-speed block is stale: run `.venv/bin/python scripts/headlines.py --write`", file=sys.stderr)
            return 1
        return 0
    readme.write_text(new, encoding="utf-8"); return 0


if __name__ == "__main__": sys.exit(main())
