"""Walk every notebook's parameter rules (issue 53): each value a rule lets through must run to the end on the smoke
profile, or the rule must refuse it before any kernel. Appends one row per run to outputs/bench/walk.jsonl.

`ragkit.notebooks.walk_cases` lists the cases (each rule's `walk_values`, less the notebook's default); the ones the
rules refuse cost nothing and are not stored (tests/test_walk.py checks them live). Each case the rules accept is run
with `ragkit run <notebook> -p <parameter> <value>` into a scratch outputs folder (the committed profiles' runs, which
power_from and rows_from name, are read where they are), and its outcome (ok, or the failed
cell and error; or timeout, which says nothing of the value: run it alone with a longer --timeout) is appended to
outputs/bench/walk.jsonl with the git commit it ran at. A case with a row is skipped, so a killed walk resumes;
`--again` runs the cases whose row failed (after a fix) or timed out.

    RAGKIT_DATA_DIR=../shared/data .venv/bin/python scripts/walk_rules.py                  # every case not yet run
    RAGKIT_DATA_DIR=../shared/data .venv/bin/python scripts/walk_rules.py --only 80_papers.witqa --again
    .venv/bin/python scripts/walk_rules.py --list                                         # the cases and their state
    .venv/bin/python scripts/walk_rules.py --prune              # drop rows of cases no longer walked (a rule changed)
"""
from __future__ import annotations
import argparse, json, os, re, shutil, subprocess, sys, tempfile, time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROWS = ROOT / "outputs" / "bench" / "walk.jsonl"


def case_key(notebook: str, parameter: str, value) -> str:
    "One case as a stable string: notebook, parameter and the value as JSON."
    return f"{notebook} {parameter} {json.dumps(value)}"


def read_walk(path: Path = ROWS) -> dict[str, dict]:
    "The last row of each case in the walk file ({} when there is none); a run stopped at the timeout reads 'timeout'."
    if not path.is_file(): return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in rows:  # rows written before the outcome had its own word said "failed" with the error "over N s"
        if r["outcome"] == "failed" and re.fullmatch(r"over \d+ s", r.get("error", "")): r["outcome"] = "timeout"
    return {case_key(r["notebook"], r["parameter"], r["value"]): r for r in rows}


def git_commit() -> str:
    "The checkout's commit (12 hex digits), '' outside git."
    r = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return r.stdout.strip()


def run_case(notebook: str, parameter: str, value, outputs: Path, timeout: float) -> dict:
    "Run one case on the smoke profile; its outcome row (ok, or the error line ragkit printed)."
    cmd = [str(ROOT / ".venv" / "bin" / "ragkit"), "run", notebook, "-p", parameter, json.dumps(value)]
    env = os.environ | {"RAGKIT_OUTPUTS_DIR": str(outputs), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    t = time.perf_counter()
    try: p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired: return dict(outcome="timeout", error=f"over {timeout:.0f} s")  # not yet known
    secs = round(time.perf_counter() - t, 1)
    last = [line for line in (p.stdout + p.stderr).splitlines() if line.startswith(("ragkit:", notebook))]
    if p.returncode == 0: return dict(outcome="ok", seconds=secs)
    return dict(outcome="failed", seconds=secs, error=(last[-1] if last else f"exit {p.returncode}")[:500])


@contextmanager
def scratch_outputs():
    "An empty outputs folder as RAGKIT_OUTPUTS_DIR for the block, removed after (committed runs stay where they are)."
    d, old = Path(tempfile.mkdtemp(prefix="ragkit-walk-")), os.environ.get("RAGKIT_OUTPUTS_DIR")
    os.environ["RAGKIT_OUTPUTS_DIR"] = str(d)  # the rules here and the runs see the same folders (config.profile_dir)
    try: yield d
    finally:
        if old is None: os.environ.pop("RAGKIT_OUTPUTS_DIR", None)
        else: os.environ["RAGKIT_OUTPUTS_DIR"] = old
        shutil.rmtree(d, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=[], help="notebooks to walk (default: all)")
    ap.add_argument("--again", action="store_true", help="run again the cases whose stored row failed or timed out")
    ap.add_argument("--list", action="store_true", help="list the cases and their state; run nothing")
    ap.add_argument("--prune", action="store_true", help="drop the rows of cases the rules no longer walk; run nothing")
    ap.add_argument("--timeout", type=float, default=900, help="seconds one run may take")
    ap.add_argument("--rows", type=Path, default=ROWS, help="the walk's rows (JSONL)")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    with scratch_outputs() as outputs: return walk(a, outputs)


def prune(path: Path, current: set[str]) -> int:
    "Rewrite the walk file without the rows of cases not in `current` (a rule's walk values changed); say which."
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    key = lambda line: case_key(*(json.loads(line)[k] for k in ("notebook", "parameter", "value")))
    gone = [key(line) for line in lines if key(line) not in current]
    path.write_text("".join(line + "\n" for line in lines if key(line) in current), encoding="utf-8")
    print(f"{len(gone)} row(s) of cases no longer walked dropped: {gone}", file=sys.stderr)
    return 0


def walk(a: argparse.Namespace, outputs: Path) -> int:
    "List the cases and run those to run, into `outputs`."
    from ragkit.notebooks import walk_case, walk_cases
    cases = [c for c in walk_cases(ROOT) if not a.only or c[0] in a.only]
    if a.prune: return prune(a.rows, {case_key(*c) for c in walk_cases(ROOT)})
    done, todo = read_walk(a.rows), []
    for nb, k, v in cases:
        if (why := walk_case(nb, k, v, ROOT)) is not None: state = "refused: " + why[:100]
        elif (row := done.get(case_key(nb, k, v))) and (row["outcome"] == "ok" or not a.again): state = row["outcome"]
        else: state, _ = "to run", todo.append((nb, k, v))
        if a.list: print(f"{case_key(nb, k, v)}: {state}")
    print(f"{len(cases)} cases; {len(todo)} to run", file=sys.stderr)
    if a.list: return 0
    start = time.perf_counter()
    for i, (nb, k, v) in enumerate(todo, 1):
        row = dict(notebook=nb, parameter=k, value=v, commit=git_commit()) | run_case(nb, k, v, outputs, a.timeout)
        a.rows.parent.mkdir(parents=True, exist_ok=True)
        with a.rows.open("a", encoding="utf-8") as f: f.write(json.dumps(row) + "\n")
        left = (time.perf_counter() - start) / i * (len(todo) - i)
        print(f"[{i}/{len(todo)}] {case_key(nb, k, v)}: {row['outcome']} {row.get('error', '')[:160]} "
              f"(about {left / 60:.0f} min left)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
