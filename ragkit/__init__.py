"""Notebook-first reproductions of retrieval-augmented QA papers (EoR, SuRe, WITQA, LoRE) on one shared toolkit

Modules:

- `ragkit.config`: Where data, caches and outputs live, and which models are the defaults: read from `settings.ini`, overridden by `RAGKIT_*` environment variables.
- `ragkit.core`: The nouns every ragkit notebook speaks in: `Example`, `Passage`, `Corpus` and `Hit`; the `Cost` of LM work; the shapes every floor builds on (`Prediction`, `Method`, `Retriever`); content-derived ids; data-file errors that name the file, the line and the fix; and the parameter rules (`OneOf`, `AtLeast`) a notebook declares for its values.
- `ragkit.data.cards`: Counts, question and answer lengths, and fact popularity of every dataset ragkit can load: the first reproduced analysis.
- `ragkit.data.corpora`: `load_corpus(name)` for every passage collection ragkit retrieves over: SQuAD paragraphs, the NQ gold passages, HotpotQA paragraphs, RetrievalQA contexts, NarrativeQA summaries, their union and the built-in `demo` Wikipedia slice; DPR-style 100-word chunking, content-derived pids, duplicates dropped and counted.
- `ragkit.data.demo`: A small real corpus and question set built from two PyPI archives alone: Wikipedia articles from the `gensim` wheel, DPR open-domain questions from the `pyserini` wheel, kept when a question names an article that holds its answer.
- `ragkit.data.registry`: One call, `load_dataset(name, split)`, for every QA dataset ragkit uses: a registry of `DatasetSpec`s that says where each split's file lives in the data directory, how to parse it, where it came from and under which licence.
- `ragkit.data.tasks`: One registry of what a paper notebook runs on — a question set, the corpus it is answered over and where its gold passages come from — one parser for the `datasets` parameter, and `prepare`: a seeded sample, the corpus restricted and capped.
- `ragkit.eval.evaluate`: `evaluate(method, examples, metrics)`: a per-example table and a bootstrap summary, written incrementally so an interrupted run resumes, with failures recorded instead of raised.
- `ragkit.eval.experiment`: One way to run a paper's experiment on prepared tasks: systems through `evaluate`, the paper's numbers beside ours, a cost table, a verdict per claim, and one writer for results and figures.
- `ragkit.eval.metrics`: Pure `(prediction, golds) -> float` metrics, max over golds — strict EM, whole-word containment, token F1, ROUGE-L, has-answer, CuratedTREC regex match — each with a card, and bootstrap aggregation kept apart.
- `ragkit.eval.semantic`: Matchers beside EM — BERTScore and embedding cosine with the local MiniLM encoder, NLI and BEM classifiers from a model path or hub id, and the lexical metrics — behind one batched pairwise interface; every score names its backend.
- `ragkit.lm.backends`: `build_reader(reader, cache=..., device=..., dtype=...)`: one spec names any reader — a registry model, a local folder, a hub id or an OpenAI-compatible server — and one function builds it, cached; `check_reader` says before a run starts whether it can serve it.
- `ragkit.lm.base`: One interface for every LM backend: `generate(prompts, ...) -> [Completion]` with per-token log-probabilities, and `score(prompt, continuation)`, the teacher-forced log-probability used to rank candidates.
- `ragkit.lm.cache`: `CachedLM(lm, path)`: a content-addressed SQLite cache around any language model, safe for two processes and for a killed run.
- `ragkit.lm.models`: Short model names resolved to files shipped inside pinned PyPI packages, to a local path, or to a hub id; a content fingerprint for every weights file; and the GGUF reader dequantised once into the cache.
- `ragkit.lm.openai`: `OpenAILM`: ragkit's LM interface over any OpenAI-compatible HTTP endpoint (vLLM, the llama.cpp server, Ollama, OpenAI) — concurrent, with timeouts and retries, log-probs when the server gives them, and an API key that never leaves the request header.
- `ragkit.lm.reader`: Prompt templates kept as data, word for word, in one registry each paper's module adds its own to; `read(lm, question, document, template)` answers one question, `read_batch` many in one `lm.generate` call; answers are post-processed and the raw output is kept.
- `ragkit.lm.serve`: `ragkit serve MODEL`: set up vLLM in its own virtual environment and serve a registry model on 127.0.0.1 with the OpenAI API; every paper notebook then reads through it with `-p reader openai:...`.
- `ragkit.papers.eor.algebra`: EoR's retriever names (`SE@RR@5&Wiki@5@CP`) parsed into pipelines of knowledge sources and operators, with the cost of every step.
- `ragkit.papers.eor.inconsistency`: EoR's analyses of why retrievers disagree: the relative win ratio (RWR, MRWR, MRLR), the four-way error decomposition with its per-error RWR, and the oracle upper bound of an ensemble — pure numpy functions and the figures that show them.
- `ragkit.papers.eor.method`: M responses from M retrievers, a weighted similarity between every pair (eq. 6), a pooled and retriever-weighted vote (eq. 7), and the weights searched by Nelder–Mead on cached responses (Section 4.2).
- `ragkit.papers.eor.runs`: Every question answered by the reader behind each of EoR's 16 retrievers, kept in the LM cache and in one table that every EoR analysis reads: the retrieved document, the answer, whether it is right, and what it cost.
- `ragkit.papers.eor.sources`: The concrete sources behind EoR's retriever names — `Wiki`, `SE`, `PK`, `HB`, `Oracle` and a live `Web` — with the reranker for `@RR`, the compressor for `@CP`, and `eor_retrievers()`, which builds all 16 retrievers.
- `ragkit.papers.lore`: BM25 and dense retrieval fused by RRF, one greedy answer per retrieved context, the answer chosen by LoR = 0.8·Mean Score + 0.2/Context Rank.
- `ragkit.papers.sure`: Candidates from the retrieved passages, one summary per candidate conditioned on it, a validity check and pairwise ranking of the summaries, and the candidate whose summary wins.
- `ragkit.papers.witqa`: WITQA's accuracy rule, the popularity bins and head/tail groups, passage accuracy and its agreement with the reader, selective memory integration and Mallen et al.'s adaptive retrieval, the four QA systems and the round-trip question generation.
- `ragkit.report`: `ragkit report`: README's generated blocks rendered from the committed run folders and benchmark files, the timing records behind them, answer agreement between two runs, and executed notebooks made portable.
- `ragkit.retrieve.bm25`: Sparse retrieval with one tokeniser and one scoring formula, two backends: `rank_bm25` (the reference) and `bm25s` (fast), an index persisted per corpus, and the agreement between the two measured.
- `ragkit.retrieve.dense`: MiniLM sentence embeddings computed once per (corpus, model) and stored on disk, searched with FAISS through `index_factory` strings: exact inner product by default, HNSW or IVF for large corpora.
- `ragkit.retrieve.fusion`: One shape for every retriever, reciprocal rank fusion, and EoR's retriever names (`SE@RR@5&Wiki@5@CP`) parsed into pipelines.
- `ragkit.runner`: `ragkit run` and `ragkit reproduce`: papermill executes a notebook with a named parameter profile into its own folder under `outputs/`, never in place, and records what ran.
- `ragkit.secrets`: What a credential looks like in a URL, how every message, log record and stored reply is kept free of one, and the one guard that keeps any library's log lines clean: shared by every client that holds a key (`OpenAILM`, `SerperClient`)."""

__version__ = "0.1.0"
