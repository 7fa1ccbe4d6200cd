# The two commands of README.md: `make reproduce` (sets up, then runs the main job) and `make test`.
.PHONY: setup reproduce test smoke
SHELL := /bin/bash

setup:
	@bash scripts/setup.sh

reproduce: setup
	.venv/bin/ragkit reproduce --profile demo

smoke: setup
	.venv/bin/ragkit reproduce --profile smoke

test: setup
	@bash scripts/test.sh
