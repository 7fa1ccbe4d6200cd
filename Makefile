# The two commands of README.md: `make reproduce` (sets up, then runs the main job) and `make test`.
.PHONY: screenshots setup reproduce test smoke site site-check
SHELL := /bin/bash

setup:
	@bash scripts/setup.sh

# Ends with one screen: per paper, the committed runs' tally beside the demo run's, and where every claim is.
reproduce: setup
	.venv/bin/ragkit reproduce --profile demo
	@echo
	@.venv/bin/ragkit report scoreboard --profile demo

# The static website (_site/): every reference run, every module's lessons and the claims scoreboard, built offline
# in its own small environment (.venv-site; no torch, so no `make setup` first).
site:
	@bash scripts/site.sh

# The site, then a real browser (the Debian chromium) on every page at 1400 and 400 px: about 4 minutes more.
site-check:
	@SITE_BROWSER=1 bash scripts/site.sh

# The committed screenshots (outputs/site/) are refreshed only here, on purpose: `make site` writes nothing tracked.
screenshots:
	@SITE_BROWSER=1 SITE_SCREENSHOTS=outputs/site bash scripts/site.sh

smoke: setup
	.venv/bin/ragkit reproduce --profile smoke

test: setup
	@bash scripts/test.sh
