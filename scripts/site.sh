#!/usr/bin/env bash
# `make site`: build the static website under _site/ from what is committed, offline, without executing anything.
# The site's tools live in their own environment (.venv-site, pinned in requirements-site.txt; no torch, no `make setup`),
# made here once and again only when the pins change; ragkit itself runs there from this checkout; the sources are written and the HTML built and link-checked by `ragkit report site`.
# With SITE_BROWSER=1 (`make site-check`) and Chromium installed (apt-get install chromium), a real browser then opens
# every page and saves screenshots under _site/screenshots/ (scripts/site_browser.py; `make screenshots` refreshes the
# committed ones in outputs/site/). Nothing tracked is written.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
stamp=.venv-site/.ragkit-installed
want=$(sha256sum requirements-site.txt | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "site [setup] creating .venv-site with $(grep -cvE '^\s*(#|$)' requirements-site.txt) pinned packages"
  [ -x .venv-site/bin/python ] || "$PY" -m venv .venv-site
  .venv-site/bin/python -m pip install --quiet -r requirements-site.txt 2>&1 | grep -v "is ignored: it is neither a file nor a directory" || true
  test "${PIPESTATUS[0]}" -eq 0
  echo "$want" > "$stamp"
fi
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" .venv-site/bin/python -c 'import sys; from ragkit.cli import main; sys.exit(main(sys.argv[1:]))' report site --out "${SITE_OUT:-_site}"
if [ "${SITE_BROWSER:-0}" = 1 ] && command -v chromium >/dev/null; then
  .venv-site/bin/python scripts/site_browser.py --site "${SITE_OUT:-_site}" --out "${SITE_SCREENSHOTS:-${SITE_OUT:-_site}/screenshots}"
elif [ "${SITE_BROWSER:-0}" = 1 ]; then
  echo "site: no chromium on PATH, so no browser check (apt-get install chromium)"
fi
echo "site: open ${SITE_OUT:-_site}/index.html in a browser (search needs a server: python3 -m http.server -d ${SITE_OUT:-_site})"
