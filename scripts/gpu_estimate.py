"""How long each decide-gpu profile would take on one H100 (issue 50). Writes outputs/bench/decide-gpu.json;
`ragkit report readme` renders it.

An estimate, not a measurement: no H100 ran these profiles. For each decide-gpu run it multiplies three measured or
committed quantities:
- the questions the profile asks (limit 0: every question of each task, counted from the data);
- the tokens read and written per question, from the committed CPU run of the same systems (outputs/paper*/, the
  rows' prompt_tokens + tokens; Qwen2.5's and Mistral's tokenisers split English text within a few percent);
- the seconds per token of ragkit's `generate` on an H100 in bfloat16 (outputs/bench/generate-cuda.json, its batch-64
  row: a 0.63B Qwen2 architecture), scaled by the target reader's parameters over the benchmark's (prefill and decoding
  both grow about linearly with the weights at these batch sizes).
The benchmark's prompts were drawn uniformly between its two printed lengths, so their mean is taken as the midpoint.

    RAGKIT_DATA_DIR=../shared/data .venv/bin/python scripts/gpu_estimate.py      # seconds, no model
"""
from __future__ import annotations
import argparse, glob, json, os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARAMETERS = {  # the target readers' parameter counts, from their model cards on the Hugging Face hub
    "Qwen/Qwen2.5-7B-Instruct": 7.61e9,
    "mistralai/Mistral-7B-Instruct-v0.2": 7.24e9,
}
RUNS = {  # decide-gpu notebook -> (committed run folder, {task: the systems whose rows it reads}, the share of questions each system answers)
    "40_papers.lore": ("outputs/paper/40_papers.lore", {"squad": {"LoRE_-_Ensemble": "all"}}),
    "71_papers.sure.decide": ("outputs/paper-1.5b/70_papers.sure", {"nq": {"Base": "all", "SuRe": "decisive"}}),
    "62_papers.eor.runs": ("outputs/paper/62_papers.eor.runs", {"nq": {"*": "all"}}),
    "80_papers.witqa": ("outputs/paper/80_papers.witqa", {t: {"*": "all"} for t in ("demo", "nq", "popqa", "retrievalqa", "witqa-disamb")}),
}


def rows_of(folder: Path) -> list[dict]:
    "Every row of the examples.jsonl files under `folder` (one system's fingerprints)."
    return [json.loads(l) for f in sorted(glob.glob(str(folder / "*" / "examples.jsonl"))) for l in open(f, encoding="utf-8") if l.strip()]


def decisive_share(rows: list[dict]) -> float:
    "The share of SuRe rows whose candidates differ in exact match (the questions the decide run summarises)."
    from ragkit.eval.metrics import exact_match
    differ = [len({exact_match(c, r["golds"]) for c in (r.get("trace") or {}).get("candidates", [])}) > 1 for r in rows]
    return sum(differ) / len(differ) if differ else float("nan")


def tokens_per_question(run: Path, systems: dict[str, str], task: str) -> tuple[float, dict]:
    "Prompt plus generated tokens per question of `task` through `systems` (a decisive-only system weighed by its share)."
    total, parts = 0.0, {}
    for pattern, who in systems.items():
        for folder in sorted((run / task).glob(pattern)):
            rows = rows_of(folder)
            if not rows: continue
            per = sum(r.get("prompt_tokens", 0) + r.get("tokens", 0) for r in rows) / len(rows)
            if who == "decisive":  # SuRe's candidate call is the Base-sized one counted beside it; the rest runs on the decisive share
                base = parts.get("Base", 0.0)
                share = decisive_share(rows)
                per = (per - base) * share
                parts[f"{folder.name} (decisive share {share:.2f})"] = per
            else:
                parts[folder.name] = per
            total += per
    return total, parts


def questions(task: str) -> int:
    "Every question the task's data holds (a decide-gpu profile's limit 0)."
    from ragkit.data.registry import load_dataset
    from ragkit.data.tasks import task_of
    t = task_of(task)
    return len(load_dataset(t.dataset, t.split))


def bench_rate(bench: dict) -> dict:
    "Seconds per token of the H100 benchmark's batch-64 row, with what it rests on."
    row = next(r for r in bench["rows"] if r["batch"] == 64 and r["stop"] is None)
    lo, hi = bench["prompt_tokens"]
    tokens = bench["prompts"] * (lo + hi) / 2 + row["generated_tokens"]
    return dict(device=bench["device"], dtype=bench["dtype"], parameters=bench["parameters"], seconds=row["ragkit_s"], tokens=tokens,
                seconds_per_token=row["ragkit_s"] / tokens)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "outputs" / "bench" / "decide-gpu.json"))
    a = ap.parse_args(argv)
    from ragkit.notebooks import load_profiles, profile_params
    profiles = load_profiles(ROOT)
    rate = bench_rate(json.loads((ROOT / "outputs" / "bench" / "generate-cuda.json").read_text(encoding="utf-8")))
    runs = []
    for nb, (run, tasks) in RUNS.items():
        p = profile_params(nb, "decide-gpu", profiles)
        reader, asked = p["reader"], [t.strip() for t in p["datasets"].split(",")]
        scale = PARAMETERS[reader] / rate["parameters"]
        per_task = []
        for task in asked:
            if task not in tasks: raise SystemExit(f"{nb}: no committed rows say what {task} reads per question; add it to RUNS")
            tok, parts = tokens_per_question(ROOT / run, tasks[task], task)
            n = questions(task) if not p.get("limit") else min(p["limit"], questions(task))
            per_task.append(dict(task=task, questions=n, tokens_per_question=round(tok, 1), systems={k: round(v, 1) for k, v in parts.items()},
                                 hours=round(n * tok * rate["seconds_per_token"] * scale / 3600, 2)))
        runs.append(dict(notebook=nb, profile="decide-gpu", reader=reader, rows_from=run, tasks=per_task,
                         hours=round(sum(t["hours"] for t in per_task), 2)))
        print(f"{nb}: {runs[-1]['hours']:.2f} h on one {rate['device']} ({reader})")
    doc = dict(what="Estimated hours of each decide-gpu profile on one H100: questions x tokens per question (committed CPU rows) x "
                    "the H100 benchmark's seconds per token scaled by parameters; an estimate, no H100 ran these profiles",
               bench=rate, parameters=PARAMETERS, runs=runs)
    Path(a.out).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
