"""Answer agreement between two run folders of the same notebook, system by system (e.g. a reader in fp32 and bf16).

A faster path (another precision, another backend) may change answers. This reads each folder's per-system row files
(`<dataset>/<system>/<fingerprint>/examples.jsonl`, as `ragkit.eval.evaluate` writes them), pairs the rows by
question id, and writes, per (dataset, system): the questions both answered, the share whose prediction is identical,
and each metric's mean in both runs with the difference.

    .venv/bin/python scripts/compare_runs.py REFERENCE_DIR OTHER_DIR --out outputs/bench/NAME.json
"""
from __future__ import annotations
import argparse, json, sys
from pathlib import Path

METRICS = ("exact_match", "f1", "rouge_l", "accuracy", "correct")


def rows_of(folder: Path) -> dict:
    "(dataset, system) -> {qid: row} from every examples.jsonl under `folder` (one fingerprint folder per system)."
    out = {}
    for f in sorted(folder.glob("*/*/*/examples.jsonl")):
        key = (f.parts[-4], f.parts[-3])
        if key in out: sys.exit(f"{folder}: two row files for {key}; compare folders that each hold one run")
        out[key] = {r["qid"]: r for r in map(json.loads, f.read_text(encoding="utf-8").splitlines()) if not r.get("error")}
    return out


def compare(ref: Path, other: Path) -> list[dict]:
    "One record per (dataset, system) present in both folders."
    a, b = rows_of(ref), rows_of(other)
    recs = []
    for key in sorted(set(a) & set(b)):
        qs = sorted(set(a[key]) & set(b[key]))
        if not qs: continue
        rec = dict(dataset=key[0], system=key[1], n=len(qs),
                   same_prediction=round(sum(a[key][q]["prediction"] == b[key][q]["prediction"] for q in qs) / len(qs), 4))
        for m in METRICS:
            if all(m in a[key][q] and m in b[key][q] for q in qs):
                ma, mb = (sum(float(x[key][q][m]) for q in qs) / len(qs) for x in (a, b))
                rec[m] = dict(reference=round(ma, 4), other=round(mb, 4), difference=round(mb - ma, 4))
        recs.append(rec)
    return recs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reference", type=Path, help="the reference run folder (e.g. the fp32 run)")
    ap.add_argument("other", type=Path, help="the run to compare with it")
    ap.add_argument("--out", type=Path, required=True, help="where the JSON goes")
    a = ap.parse_args(argv)
    for d in (a.reference, a.other):
        if not (d / "run.json").is_file(): sys.exit(f"{d}: no run.json; give two folders `ragkit run --out` wrote")
    runs = {k: json.loads((d / "run.json").read_text(encoding="utf-8")) for k, d in (("reference", a.reference), ("other", a.other))}
    readers = {k: json.loads((d / "results.json").read_text(encoding="utf-8")).get("reader") for k, d in (("reference", a.reference), ("other", a.other))}
    recs = compare(a.reference, a.other)
    if not recs: sys.exit("the two folders share no (dataset, system) with common questions")
    doc = dict(notebook=runs["reference"]["notebook"], readers=readers,
               git={k: r["git"]["commit"] for k, r in runs.items()}, systems=recs,
               same_prediction_overall=round(sum(r["same_prediction"] * r["n"] for r in recs) / sum(r["n"] for r in recs), 4))
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    for r in recs: print(f"{r['dataset']:10s} {r['system']:20s} n={r['n']:4d} same={r['same_prediction']:.3f}")
    print(f"overall {doc['same_prediction_overall']:.3f} -> {a.out}")
    return 0


if __name__ == "__main__": sys.exit(main())
