"""Re-render every committed run from its committed rows, answering nothing, and compare what it writes with what is
committed (issue 51: a refactor must leave every verdict and every number as it was). Writes outputs/bench/rerender.json.

The committed runs (outputs/paper*/ and outputs/decide/, each folder with a results.json) are copied to a scratch
outputs folder; each is run again there, in notebook order, with `ragkit run <notebook> --profile <profile>` under
RAGKIT_ROWS_ONLY=1, so a system that finds a question without a row stops the run instead of asking the reader (its
key moved, or its rows are missing). Its new results.json is then compared with the committed one, key by key, after
dropping what a rerun changes by nature: seconds, start and end times, the git revision and absolute paths. A
parameter added since the run, at its default, or a field named in `ADDED` (a verdict row's `judged_qids`) is listed
apart (`parameters_added`), not counted as a difference: what the run said is unchanged.

    RAGKIT_DATA_DIR=../shared/data .venv/bin/python scripts/rerender.py                # every committed run
    RAGKIT_DATA_DIR=../shared/data .venv/bin/python scripts/rerender.py --only 64_papers.eor.method
    .venv/bin/python scripts/rerender.py --root /tmp/clone                             # the code of another checkout
    .venv/bin/python scripts/rerender.py --only 63_papers.eor.inconsistency --profiles paper-split   # one run
    .venv/bin/python scripts/rerender.py --write     # and put each unchanged run's new notebook and records in place
    RAGKIT_DATA_DIR=../shared/data .venv/bin/python scripts/rerender.py --cold        # each on an empty cache (run pages)

With --write, a run whose results re-render with every number unchanged gets its re-rendered top-level files (the
executed notebook, figures, results.json, run.json, params.json) copied over the committed ones, so that the executed
notebook shows today's code and prose; its rows (the folders below) are never copied. A run that changed is left as
committed.

With --cold, each run gets its own empty ragkit cache folder (RAGKIT_CACHE_DIR: no demo build, embeddings, indexes or LM
cache), as a reader's first run of one page in a fresh clone would, and the times go to outputs/bench/rerender-cold.json;
the site shows them beside the warm ones. Time it on an otherwise idle machine.
"""
from __future__ import annotations
import argparse, json, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path
from typing import Sequence

from ragkit.config import COMMITTED as PROFILES  # the committed profiles (.gitignore)

ROOT = Path(__file__).resolve().parent.parent
# what a rerun changes by nature: times, the revision, paths, and what the last attempt itself asked the reader
# (`lm_counters`, `resumed`: a run finished by an attempt that answered questions re-renders with none answered)
VOLATILE = {"seconds", "started", "finished", "git", "out_dir", "wall_s", "elapsed", "lm_counters", "resumed"}


def committed_runs(root: Path, only: set[str], profiles: Sequence[str] = PROFILES) -> list[tuple[str, str]]:
    """(profile, notebook) of every committed run with a results.json, in notebook order.

    The order is only for reading: a run that reads another (a pilot, a grid) reads the committed one under outputs/,
    whatever this rerender has written (`ragkit.config.profile_dir`)."""
    runs = [(p, f.parent.name) for p in profiles for f in (root / "outputs" / p).glob("*/results.json")]
    return sorted((r for r in runs if not only or r[1] in only), key=lambda r: (r[1], PROFILES.index(r[0])))


ADDED = (".judged_qids",)  # fields a run writes that committed runs predate: listed apart, as new parameters are


def stable(x):
    "`x` without the fields a rerun changes by nature."
    if isinstance(x, dict): return {k: stable(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list): return [stable(v) for v in x]
    return x


def differences(a, b, at: str = "") -> list[str]:
    "The paths where two JSON documents differ, as 'path: committed -> rerendered'."
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in differences(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{at}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{at}[{i}]")]
    return [] if a == b else [f"{at or '.'}: {json.dumps(a)[:120]} -> {json.dumps(b)[:120]}"]


def rerender(root: Path, scratch: Path, profile: str, nb: str, cache: Path | None = None) -> dict:
    "Run `nb` under `profile` in `scratch` from its rows alone (`cache`: an empty cache folder), and compare its results.json."
    env = {**os.environ, **({"RAGKIT_CACHE_DIR": str(cache)} if cache else {}), "PYTHONPATH": str(root), "RAGKIT_OUTPUTS_DIR": str(scratch), "RAGKIT_ROWS_ONLY": "1", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    t0 = time.time()
    r = subprocess.run([sys.executable, "-c", "import sys; from ragkit.cli import main; sys.exit(main())", "run", nb, "--profile", profile],
                       cwd=root, env=env, capture_output=True, text=True)
    out = dict(profile=profile, notebook=nb, seconds=round(time.time() - t0, 1), ok=r.returncode == 0)
    if r.returncode != 0: return out | dict(error=(r.stdout + r.stderr)[-1500:])
    old = json.loads((root / "outputs" / profile / nb / "results.json").read_text(encoding="utf-8"))
    new = json.loads((scratch / profile / nb / "results.json").read_text(encoding="utf-8"))
    every = differences(stable(old), stable(new))
    added = [d for d in every if ': "<absent>" -> ' in d
             and (".parameters." in d or d.split(": ", 1)[0].endswith(ADDED))]
    diff = [d for d in every if d not in added]
    in_verdict = [d for d in diff if d.startswith((".verdict[", ".verdict:"))]
    return out | dict(same_verdicts=not in_verdict, verdicts=len(old.get("verdict") or []),
                      same_everything=not diff, differences=diff[:40], n_differences=len(diff), parameters_added=added)


def relocate(text: str, scratch: Path, outputs: Path, root: Path) -> str:
    "`text` with the scratch outputs folder named as the committed one, in each form a record uses (from nbs/, the root, /)."
    forms = [(os.path.relpath(scratch, root / "nbs"), os.path.relpath(outputs, root / "nbs")),  # out_dir, from nbs/
             (os.path.relpath(scratch, root), os.path.relpath(outputs, root)),  # run.json's out and settings
             (str(scratch), str(outputs))]  # longest first: each relative form holds the next as its tail
    for old, new in forms: text = text.replace(old, new)
    return text


def put_in_place(new: Path, committed: Path, scratch: Path | None = None, root: Path = ROOT) -> list[str]:
    "Copy the re-rendered run's top-level files over the committed run's (never its rows), scratch paths renamed; the names."
    names = sorted(f.name for f in new.iterdir() if f.is_file() and not f.name.startswith("."))
    outputs = committed.parent.parent
    for name in names:
        if scratch is None or (new / name).suffix not in (".json", ".ipynb", ".md", ".txt", ".csv", ".html"):
            shutil.copy2(new / name, committed / name)
        else: (committed / name).write_text(relocate((new / name).read_text(encoding="utf-8"), scratch, outputs, root), encoding="utf-8")
    return names


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(ROOT), help="the checkout whose code re-renders (default: this one)")
    ap.add_argument("--only", default="", help="comma-separated notebooks (default: every committed run)")
    ap.add_argument("--profiles", default=",".join(PROFILES), help="comma-separated committed profiles (default: all of them)")
    ap.add_argument("--out", default="", help="the record (default: outputs/bench/rerender.json, or rerender-cold.json)")
    ap.add_argument("--cold", action="store_true", help="each run on its own empty cache folder (a reader's first run)")
    ap.add_argument("--write", action="store_true", help="copy each unchanged run's re-rendered notebook and records in place")
    a = ap.parse_args(argv)
    a.out = a.out or str(ROOT / "outputs" / "bench" / ("rerender-cold.json" if a.cold else "rerender.json"))
    root = Path(a.root).resolve()
    runs = committed_runs(root, {x.strip() for x in a.only.split(",") if x.strip()}, [p.strip() for p in a.profiles.split(",") if p.strip()])
    with tempfile.TemporaryDirectory(prefix="ragkit-rerender-") as tmp:
        scratch = Path(tmp)
        for p in PROFILES:
            if (root / "outputs" / p).is_dir(): shutil.copytree(root / "outputs" / p, scratch / p)
        got = []
        rev = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
        from ragkit.runner import machine
        def record() -> dict:  # written after each run, so a stopped re-render keeps the runs it finished
            doc = dict(git=rev, machine=machine(), cache="empty per run" if a.cold else "warm (the machine's own)", runs=got,
                       all_same=all(g["ok"] and g["same_everything"] for g in got), complete=len(got) == len(runs))
            Path(a.out).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            return doc
        for i, (profile, nb) in enumerate(runs, 1):
            print(f"[{i}/{len(runs)}] {profile}/{nb} ...", flush=True)
            with tempfile.TemporaryDirectory(prefix="ragkit-cold-cache-") as cache:
                got.append(rerender(root, scratch, profile, nb, Path(cache) if a.cold else None))
            g = got[-1]
            if a.write and g["ok"] and g["same_everything"]:
                g["written"] = put_in_place(scratch / profile / nb, root / "outputs" / profile / nb, scratch, root)
            print(f"    {'ok' if g['ok'] else 'FAILED'} in {g['seconds']:.0f} s" +
                  (f"; verdicts {'unchanged' if g['same_verdicts'] else 'CHANGED'} ({g['verdicts']}), "
                   f"{'every number unchanged' if g['same_everything'] else str(g['n_differences']) + ' differences'}" if g["ok"] else ""), flush=True)
            record()
        doc = record()
    print(f"{sum(g['ok'] and g['same_everything'] for g in got)} of {len(got)} runs re-rendered unchanged -> {a.out}")
    return 0 if doc["all_same"] else 1


if __name__ == "__main__":
    sys.exit(main())
