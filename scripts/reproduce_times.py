"""Record how long each notebook of a `ragkit reproduce` took, from the run folders it wrote.

`make reproduce` leaves one run folder per notebook under outputs/<profile>/, each with a run.json holding its
status, git revision and seconds. This script gathers them into one committed file, outputs/bench/reproduce-<profile>.json,
so the times README quotes come from a file the code wrote. A cold measurement, as README's table reports it:

    git clone <repo> fresh && cd fresh
    RAGKIT_CACHE_DIR=$(mktemp -d) RAGKIT_DATA_DIR=../shared/data make reproduce    # empty cache dir, no run folders
    .venv/bin/python scripts/reproduce_times.py --label cold --setup-seconds 60 --out <repo>/outputs/bench/reproduce-demo.json

(`--setup-seconds`: what `make setup` printed as "setup: done in N s", 0 when .venv already existed.)
Usage: reproduce_times.py [--profile demo] [--label cold|warm] [--setup-seconds S] [--out FILE]
"""
from __future__ import annotations
import argparse, json, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def collect(outputs: Path, profile: str) -> list[dict]:
    "One row per profile run folder (overrides folders excluded): notebook, status, seconds, git revision, start time."
    rows = []
    for f in sorted((outputs / profile).glob("*/run.json")):
        r = json.loads(f.read_text(encoding="utf-8"))
        if r.get("overrides"): continue
        rows.append({"notebook": r["notebook"], "status": r["status"], "seconds": round(r.get("seconds") or 0, 1),
                     "git": r["git"]["commit"], "dirty": r["git"].get("dirty"), "started": r.get("started")})
    return sorted(rows, key=lambda x: x["started"] or "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="demo")
    ap.add_argument("--label", default="cold", help="cold (empty cache dir, no run folders) or warm (both present)")
    ap.add_argument("--setup-seconds", type=float, default=0.0, help="what `make setup` printed, 0 if .venv existed")
    ap.add_argument("--outputs", type=Path, default=ROOT / "outputs", help="the outputs dir of the clone that ran")
    ap.add_argument("--out", type=Path, default=None, help="where to write (default: outputs/bench/reproduce-<profile>.json)")
    a = ap.parse_args(argv)
    rows = collect(a.outputs, a.profile)
    if not rows: sys.exit(f"no run folder with a run.json under {a.outputs / a.profile}: run `make reproduce` first")
    bad = [r["notebook"] for r in rows if r["status"] != "ok"]
    if bad: sys.exit(f"not every run is ok ({', '.join(bad)}): `ragkit status --profile {a.profile}` says why")
    out = a.out or ROOT / "outputs" / "bench" / f"reproduce-{a.profile}.json"
    rec = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    notebooks = sum(r["seconds"] for r in rows)
    rec[a.label] = {"profile": a.profile, "setup_seconds": a.setup_seconds, "notebook_seconds": round(notebooks, 1),
                    "total_minutes": round((notebooks + a.setup_seconds) / 60, 1), "runs": rows}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    for r in rows: print(f"{r['notebook']:32s} {r['seconds']:8.1f} s")
    print(f"{a.label}: {notebooks:.0f} s of notebooks + {a.setup_seconds:.0f} s setup = {(notebooks + a.setup_seconds) / 60:.1f} min -> {out}")
    return 0


if __name__ == "__main__": sys.exit(main())
