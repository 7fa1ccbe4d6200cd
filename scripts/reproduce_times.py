"""Record how long runs took, from the run folders they wrote, into a committed file under outputs/bench/.

Every run folder has a run.json (status, git revision, seconds) and a results.json whose summaries give each
evaluation's rows and answering seconds. This script gathers them so that the times README quotes come from a file
the code wrote (`scripts/headlines.py` renders README's timing block from these files). Two uses:

A whole `make reproduce`, cold, from a fresh clone (-> outputs/bench/reproduce-demo.json, key `cold`):

    git clone <repo> fresh && cd fresh
    RAGKIT_CACHE_DIR=$(mktemp -d) RAGKIT_DATA_DIR=../shared/data make reproduce    # empty cache dir, no run folders
    .venv/bin/python <repo>/scripts/reproduce_times.py --outputs outputs --label cold --setup-seconds 60

One run folder, e.g. a prefix of a paper profile timed alone (-> outputs/bench/paper-prefix.json, key = notebook):

    RAGKIT_CACHE_DIR=$(mktemp -d) .venv/bin/ragkit run 40_papers.lore --profile paper -p limit 30 --out /tmp/lore30
    .venv/bin/python scripts/reproduce_times.py --run /tmp/lore30

(`--setup-seconds`: what `make setup` printed as "setup: done in N s", 0 when .venv already existed.)
Usage: reproduce_times.py [--profile demo] [--label cold|warm] [--setup-seconds S] [--outputs DIR] [--run DIR] [--out FILE]
"""
from __future__ import annotations
import argparse, json, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def describe(folder: Path) -> dict:
    "One run folder: notebook, reader, profile, overrides, status, seconds, git revision, start, and each evaluation's answering time."
    r = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    res = folder / "results.json"
    doc = json.loads(res.read_text(encoding="utf-8")) if res.is_file() else {}
    evals = doc.get("summaries", [])
    return {"notebook": r["notebook"], "reader": doc.get("reader"), "profile": r.get("profile"), "overrides": r.get("overrides") or {}, "status": r["status"],
            "seconds": round(r.get("seconds") or 0, 1), "git": r["git"]["commit"], "dirty": r["git"].get("dirty"),
            "started": r.get("started"), "evaluations": [{"system": e.get("method"), "n": e.get("n"), "resumed": e.get("resumed"),
                                                           "seconds": round(e.get("seconds") or 0, 1)} for e in evals]}


def collect(outputs: Path, profile: str) -> list[dict]:
    "Every profile run folder of outputs/<profile>/ (override folders excluded), in the order they ran."
    rows = [describe(f.parent) for f in sorted((outputs / profile).glob("*/run.json"))]
    return sorted((r for r in rows if not r["overrides"]), key=lambda x: x["started"] or "")


def _save(out: Path, key: str, value: dict) -> None:
    "Set `key` of the JSON object in `out` (created if missing), keeping its other keys."
    rec = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    rec[key] = value
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="demo")
    ap.add_argument("--label", default="cold", help="cold (empty cache dir, no run folders) or warm (both present)")
    ap.add_argument("--setup-seconds", type=float, default=0.0, help="what `make setup` printed, 0 if .venv existed")
    ap.add_argument("--outputs", type=Path, default=ROOT / "outputs", help="the outputs dir of the clone that ran")
    ap.add_argument("--run", type=Path, default=None, help="record this one run folder instead of a whole profile")
    ap.add_argument("--out", type=Path, default=None, help="where to write (default: outputs/bench/reproduce-<profile>.json, "
                    "or outputs/bench/paper-prefix.json with --run)")
    a = ap.parse_args(argv)
    if a.run:
        if not (a.run / "run.json").is_file(): sys.exit(f"{a.run}: no run.json here; give the folder `ragkit run --out` wrote")
        row = describe(a.run)
        if row["status"] != "ok": sys.exit(f"{a.run}: the run is {row['status']!r}, not ok; rerun it to the end first")
        out = a.out or ROOT / "outputs" / "bench" / "paper-prefix.json"
        _save(out, f"{row['notebook']} {row['reader']}" if row["reader"] else row["notebook"], row)  # one record per notebook and reader
        print(f"{row['notebook']} ({row['profile']}, overrides {row['overrides']}): {row['seconds']:.0f} s -> {out}")
        return 0
    rows = collect(a.outputs, a.profile)
    if not rows: sys.exit(f"no run folder with a run.json under {a.outputs / a.profile}: run `make reproduce` first")
    bad = [r["notebook"] for r in rows if r["status"] != "ok"]
    if bad: sys.exit(f"not every run is ok ({', '.join(bad)}): `ragkit status --profile {a.profile}` says why")
    notebooks = sum(r["seconds"] for r in rows)
    _save(a.out or ROOT / "outputs" / "bench" / f"reproduce-{a.profile}.json", a.label,
          {"profile": a.profile, "setup_seconds": a.setup_seconds, "notebook_seconds": round(notebooks, 1),
           "total_minutes": round((notebooks + a.setup_seconds) / 60, 1), "runs": rows})
    for r in rows: print(f"{r['notebook']:32s} {r['seconds']:8.1f} s")
    print(f"{a.label}: {notebooks:.0f} s of notebooks + {a.setup_seconds:.0f} s setup = {(notebooks + a.setup_seconds) / 60:.1f} min")
    return 0


if __name__ == "__main__": sys.exit(main())
