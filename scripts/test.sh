#!/usr/bin/env bash
# The test command (`make test`): the nbdev invariants, then the notebooks' own tests and tests/ under pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONHASHSEED=0
source .venv/bin/activate

# Content of every exported module and notebook, so we can tell whether a tool changed anything.
snapshot() { find ragkit nbs -type f \( -name '*.py' -o -name '*.ipynb' \) -not -path '*/.ipynb_checkpoints/*' -print0 | sort -z | xargs -0 sha256sum; }

echo "test [1/3] nbdev-export leaves ragkit/ unchanged"
before=$(snapshot); nbdev-export; after=$(snapshot)
if [ "$before" != "$after" ]; then
  diff <(echo "$before") <(echo "$after") || true
  echo "FAIL: the exported library differs from the notebooks. Run nbdev-export and commit ragkit/." >&2; exit 1
fi

echo "test [2/3] nbdev-clean leaves nbs/ unchanged"
before=$(snapshot); nbdev-clean; after=$(snapshot)
if [ "$before" != "$after" ]; then
  diff <(echo "$before") <(echo "$after") || true
  echo "FAIL: some notebooks are not clean. Run nbdev-clean and commit nbs/." >&2; exit 1
fi

echo "test [3/3] notebooks (through nbdev's runner) and tests/ under pytest"
exec python -m pytest --durations=25 "$@"  # the slowest 25 are listed: where CI's time goes
