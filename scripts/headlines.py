"""Render README's headline numbers from the committed reference runs (outputs/paper/<notebook>/results.json).

Nothing in the README's headline block is typed by hand: this script reads each committed run's results.json,
params.json and run.json and writes the block between the two markers below. A test (tests/test_paper_runs.py)
fails when the README's block differs from what this script renders, so a rerun must be followed by

    .venv/bin/python scripts/headlines.py --write

Usage: headlines.py [--write | --check] [--root DIR]  (default: print the block).
"""
from __future__ import annotations
import argparse, json, sys
from pathlib import Path

START, END = "<!-- headlines:start (written by scripts/headlines.py; do not edit) -->", "<!-- headlines:end -->"


def load_run(folder: Path) -> dict:
    "results.json, params.json and run.json of one run folder."
    return {n: json.loads((folder / f"{n}.json").read_text(encoding="utf-8")) for n in ("results", "params", "run")}


def _pct(x) -> str:
    "A share as a percentage with one decimal, or n/a."
    return "n/a" if x is None else f"{x:+.1f}"


def verdict_lines(rows: list[dict]) -> list[str]:
    "A markdown table of a verdict: claim, dataset, n, our difference with its 95% CI, the paper's, the verdict."
    out = ["| claim | dataset | n | ours (points, 95% CI) | paper | verdict |", "|---|---|---:|---|---|---|"]
    for r in rows:
        ours = "n/a" if r.get("ours") is None else f"{r['ours']:+.1f} [{r['lo']:+.1f}, {r['hi']:+.1f}]"
        out.append(f"| {r['claim']} | {r['dataset']} | {r.get('n', '')} | {ours} | {_pct(r.get('paper'))} | {r['verdict']} |")
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
    return "\n".join(out).rstrip() + "\n"


def splice(readme: str, block: str) -> str:
    "README text with the block between the markers replaced; an error when a marker is missing."
    if START not in readme or END not in readme: raise SystemExit(f"README.md lacks the markers {START!r} … {END!r}")
    head, rest = readme.split(START, 1)
    return head + START + "\n" + block + rest[rest.index(END):]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite README.md's headline block")
    ap.add_argument("--check", action="store_true", help="exit 1 when README.md's block differs from the rendered one")
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    a = ap.parse_args(argv)
    readme = a.root / "README.md"
    block = render(a.root)
    if not (a.write or a.check): print(block); return 0
    new = splice(readme.read_text(encoding="utf-8"), block)
    if a.check:
        if new != readme.read_text(encoding="utf-8"):
            print("README.md's headline block is stale: run `.venv/bin/python scripts/headlines.py --write`", file=sys.stderr)
            return 1
        return 0
    readme.write_text(new, encoding="utf-8"); return 0


if __name__ == "__main__": sys.exit(main())
