"""Notebook-first reproductions of retrieval-augmented QA papers (EoR, SuRe, WITQA, LoRE) on one shared toolkit

Modules:

- `ragkit.config`: Where data, caches and outputs live, and which models are the defaults: read from `settings.ini`, overridden by `RAGKIT_*` environment variables."""

__version__ = "0.1.0"
