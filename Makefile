# The two commands of README.md: `make reproduce` (sets up, then runs the main job) and `make test`.
.PHONY: setup reproduce test smoke site
SHELL := /bin/bash

setup:
	@bash scripts/setup.sh

reproduce: setup
	.venv/bin/ragkit reproduce --profile demo
	@.venv/bin/ragkit report scoreboard --profile demo
	@echo "The executed papers as a website: make site, then open _site/index.html"

# The static website (_site/): every reference run, every module's lessons and the claims scoreboard, built offline.
site: setup
	@bash scripts/site.sh

smoke: setup
	.venv/bin/ragkit reproduce --profile smoke

test: setup
	@bash scripts/test.sh
