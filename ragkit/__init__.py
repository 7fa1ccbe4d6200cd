"""Notebook-first reproductions of retrieval-augmented QA papers (EoR, SuRe, WITQA, LoRE) on one shared toolkit

Modules:

- `ragkit.config`: Where data, caches and outputs live, and which models are the defaults: read from `settings.ini`, overridden by `RAGKIT_*` environment variables.
- `ragkit.data.corpora`: `load_corpus(name)` for every passage collection ragkit retrieves over: SQuAD paragraphs, the NQ gold passages, HotpotQA paragraphs, RetrievalQA contexts, NarrativeQA summaries, their union and the built-in `demo` Wikipedia slice; DPR-style 100-word chunking, content-derived pids, duplicates dropped and counted.
- `ragkit.data.demo`: A small real corpus and question set built from two PyPI archives alone: Wikipedia articles from the `gensim` wheel, DPR open-domain questions from the `pyserini` wheel, kept when a question names an article that holds its answer.
- `ragkit.data.registry`: One call, `load_dataset(name, split)`, for every QA dataset ragkit uses: a registry of `DatasetSpec`s that says where each split's file lives in the data directory, how to parse it, where it came from and under which licence.
- `ragkit.eval.evaluate`: `evaluate(method, examples, metrics)`: a per-example table and a bootstrap summary, written incrementally so an interrupted run resumes, with failures recorded instead of raised.
- `ragkit.eval.metrics`: Pure `(prediction, golds) -> float` metrics, max over golds — strict EM, whole-word containment, token F1, ROUGE-L, has-answer, CuratedTREC regex match — each with a card, and bootstrap aggregation kept apart.
- `ragkit.eval.semantic`: Matchers beside EM — BERTScore and embedding cosine with the local MiniLM encoder, NLI and BEM classifiers from a model path or hub id, and the lexical metrics — behind one batched pairwise interface; every score names its backend.
- `ragkit.lm.base`: One interface for every LM backend: `generate(prompts, ...) -> [Completion]` with per-token log-probabilities, and `score(prompt, continuation)`, the teacher-forced log-probability used to rank candidates.
- `ragkit.lm.models`: Short model names resolved to files shipped inside pinned PyPI packages, to a local path, or to a hub id; a content fingerprint for every weights file; and the GGUF reader dequantised once into the cache.
- `ragkit.lm.openai`: `OpenAILM`: ragkit's LM interface over any OpenAI-compatible HTTP endpoint (vLLM, the llama.cpp server, Ollama, OpenAI) — concurrent, with timeouts and retries, log-probs when the server gives them, and an API key that never leaves the request header.
- `ragkit.lm.reader`: The four papers' prompt templates kept as data, word for word; `read(lm, question, document, template)` answers one question, `read_batch` many in one `lm.generate` call; answers are post-processed and the raw output is kept.
- `ragkit.papers.eor.inconsistency`: EoR's analyses of why retrievers disagree: the relative win ratio (RWR, MRWR, MRLR), the four-way error decomposition with its per-error RWR, and the oracle upper bound of an ensemble — pure numpy functions and the figures that show them.
- `ragkit.papers.eor.method`: M responses from M retrievers, a weighted similarity between every pair (eq. 6), a pooled and retriever-weighted vote (eq. 7), and the weights searched by Nelder–Mead on cached responses (Section 4.2).
- `ragkit.papers.eor.runs`: Every question answered by the reader behind each of EoR's 16 retrievers, kept in the LM cache and in one table that every EoR analysis reads: the retrieved document, the answer, whether it is right, and what it cost.
- `ragkit.papers.eor.sources`: The concrete sources behind EoR's retriever names — `Wiki`, `SE`, `PK`, `HB`, `Oracle` and a live `Web` — with the reranker for `@RR`, the compressor for `@CP`, and `eor_retrievers()`, which builds all 16 retrievers.
- `ragkit.retrieve.bm25`: Sparse retrieval with one tokeniser and one scoring formula, two backends: `rank_bm25` (the reference) and `bm25s` (fast), an index persisted per corpus, and the agreement between the two measured.
- `ragkit.retrieve.dense`: MiniLM sentence embeddings computed once per (corpus, model) and stored on disk, searched with FAISS through `index_factory` strings: exact inner product by default, HNSW or IVF for large corpora.
- `ragkit.runner`: `ragkit run` and `ragkit reproduce`: papermill executes a notebook with a named parameter profile into its own folder under `outputs/`, never in place, and records what ran."""

__version__ = "0.1.0"
