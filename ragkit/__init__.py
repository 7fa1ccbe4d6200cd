"""Notebook-first reproductions of retrieval-augmented QA papers (EoR, SuRe, WITQA, LoRE) on one shared toolkit

Modules:

- `ragkit.config`: Where data, caches and outputs live, and which models are the defaults: read from `settings.ini`, overridden by `RAGKIT_*` environment variables.
- `ragkit.runner`: `ragkit run` and `ragkit reproduce`: papermill executes a notebook with a named parameter profile into its own folder under `outputs/`, never in place, and records what ran."""

__version__ = "0.1.0"
