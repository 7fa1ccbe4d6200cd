"""Notebook-first reproductions of retrieval-augmented QA papers (EoR, SuRe, WITQA, LoRE) on one shared toolkit

Modules:

- `ragkit.benchmark`: Every method ragkit reproduces, on the same seeded questions read by the same reader: accuracy with 95% intervals against what each costs, the Pareto front per task, and paired comparisons with naive RAG.
- `ragkit.cli`: `ragkit run`, `reproduce`, `status`, `list`, `serve` and `report ...`: every parser in one module, the leaf of the package; it imports the runner, the report, the site and the server, and nothing imports it.
- `ragkit.config`: Where data, caches and outputs live, and which models are the defaults: read from `settings.ini`, overridden by `RAGKIT_*` environment variables.
- `ragkit.core`: The nouns every ragkit notebook speaks in: `Example`, `Passage`, `Corpus` and `Hit`; the `Cost` of LM work; the shapes every floor builds on (`Prediction`, `Method`, `Retriever`); content-derived ids; data-file errors that name the file, the line and the fix; and the parameter rules (`OneOf`, `AtLeast`) a notebook declares for its values.
- `ragkit.data.cards`: Counts, question and answer lengths, and fact popularity of every dataset ragkit can load: the first reproduced analysis.
- `ragkit.data.corpora`: `load_corpus(name)` for every passage collection ragkit retrieves over: SQuAD paragraphs, the NQ gold passages, HotpotQA paragraphs, RetrievalQA contexts, NarrativeQA summaries, their union and the built-in `demo` Wikipedia slice; DPR-style 100-word chunking, content-derived pids, duplicates dropped and counted.
- `ragkit.data.demo`: A small real corpus and question set built from two PyPI archives alone: Wikipedia articles from the `gensim` wheel, DPR open-domain questions from the `pyserini` wheel, kept when a question names an article that holds its answer.
- `ragkit.data.registry`: One call, `load_dataset(name, split)`, for every QA dataset ragkit uses: a registry of `DatasetSpec`s that says where each split's file lives in the data directory, how to parse it, where it came from and under which licence.
- `ragkit.data.tasks`: One registry of what a paper notebook runs on — a question set, the corpus it is answered over and where its gold passages come from — one parser for the `datasets` parameter, and `prepare`: a seeded sample, the corpus restricted and capped.
- `ragkit.eval.evaluate`: `evaluate(method, examples, metrics)`: a per-example table and a bootstrap summary, written incrementally so an interrupted run resumes, with failures recorded instead of raised.
- `ragkit.eval.experiment`: One way to run a paper's experiment on prepared tasks: systems through `evaluate`, the paper's numbers beside ours, a cost table, a verdict per claim, and one writer for results and figures.
- `ragkit.eval.mechanism`: Whether a paper's mechanism acted on the questions a claim is judged on, counted from the rows' traces; exact tests for claims that few questions decide; and a Holm adjustment over a run's claims.
- `ragkit.eval.metrics`: Pure `(prediction, golds) -> float` metrics, max over golds — strict EM, whole-word containment, token F1, ROUGE-L, has-answer, CuratedTREC regex match — each with a card, and bootstrap aggregation kept apart.
- `ragkit.eval.semantic`: Matchers beside EM — BERTScore and embedding cosine with the local MiniLM encoder, NLI and BEM classifiers from a model path or hub id, and the lexical metrics — behind one batched pairwise interface; every score names its backend.
- `ragkit.evidence`: The questions that decide each claim of a committed run, read from its rows with no LM call: where the two systems' scores differ, each side's answer and a's trace in short, the counts checked against the verdict row, and one MyST page per run whose anchors the scoreboard links to.
- `ragkit.lm.backends`: `build_reader(reader, cache=..., device=..., dtype=...)`: one spec names any reader — a registry model, a local folder, a hub id or an OpenAI-compatible server — and one function builds it, cached; `check_reader` says before a run starts whether it can serve it.
- `ragkit.lm.base`: One interface for every LM backend: `generate(prompts, ...) -> [Completion]` with per-token log-probabilities, and `score(prompt, continuation)`, the teacher-forced log-probability used to rank candidates.
- `ragkit.lm.cache`: `CachedLM(lm, path)`: a content-addressed SQLite cache around any language model, safe for two processes and for a killed run.
- `ragkit.lm.models`: Short model names resolved to files shipped inside pinned PyPI packages, to a local path, or to a hub id; a content fingerprint for every weights file; and the GGUF reader dequantised once into the cache.
- `ragkit.lm.openai`: `OpenAILM`: ragkit's LM interface over any OpenAI-compatible HTTP endpoint (vLLM, the llama.cpp server, Ollama, OpenAI) — concurrent, with timeouts and retries, log-probs when the server gives them, and an API key that never leaves the request header.
- `ragkit.lm.reader`: Prompt templates kept as data, word for word, in one registry each paper's module adds its own to; `read(lm, question, document, template)` answers one question, `read_batch` many in one `lm.generate` call; answers are post-processed and the raw output is kept.
- `ragkit.lm.serve`: `ragkit serve MODEL`: set up vLLM in its own virtual environment and serve a registry model on 127.0.0.1 with the OpenAI API; every paper notebook then reads through it with `-p reader openai:...`.
- `ragkit.notebooks`: Where a reproducing notebook is, the profiles it runs under and its parameters: found, read with `ast` and checked against the rules its module declares before any kernel starts; one low module that `ragkit run` and `Experiment` share.
- `ragkit.papers.eor.algebra`: EoR's retriever names (`SE@RR@5&Wiki@5@CP`) parsed into pipelines of knowledge sources and operators, with the cost of every step.
- `ragkit.papers.eor.inconsistency`: EoR's analyses of why retrievers disagree: the relative win ratio (RWR, MRWR, MRLR), the four-way error decomposition with its per-error RWR, and the oracle upper bound of an ensemble — pure numpy functions and the figures that show them.
- `ragkit.papers.eor.method`: M responses from M retrievers, a weighted similarity between every pair (eq. 6), a pooled and retriever-weighted vote (eq. 7), and the weights searched by Nelder–Mead on cached responses (Section 4.2).
- `ragkit.papers.eor.runs`: Every question answered by the reader behind each of EoR's 16 retrievers, kept in the LM cache and in one table that every EoR analysis reads: the retrieved document, the answer, whether it is right, and what it cost.
- `ragkit.papers.eor.sources`: The concrete sources behind EoR's retriever names — `Wiki`, `SE`, `PK`, `HB`, `Oracle` and a live `Web` — with the reranker for `@RR`, the compressor for `@CP`, and `eor_retrievers()`, which builds all 16 retrievers.
- `ragkit.papers.lore.experiment`: LoRE's Table 1 on SQuAD, NarrativeQA and the demo data, beside the paper's numbers: the systems it runs, the paper's cells, the positional bias LoRE claims to fix, the cost claim against LLM re-ranking, and the claims they decide.
- `ragkit.papers.lore.method`: BM25 and dense retrieval fused by RRF, one greedy answer per retrieved context, the answer chosen by LoR = 0.8·Mean Score + 0.2/Context Rank; the naive baseline it is compared with, the ablations re-chosen from the same reads, and the LLM re-ranker its cost claim is against.
- `ragkit.papers.sure.decide`: SuRe's core mechanism decided on its own questions: candidates on every question, conditional summaries, validity and pairwise ranking only where the choice can change the answer, in a run sized by power.
- `ragkit.papers.sure.experiment`: SuRe's Tables 1, 3, 4 and 6 and Figure 4a on offline tasks, each beside the paper's numbers: the systems each table runs, the paper's cells, the diagnostics and mechanism checks of SuRe's selection, and the claims they decide.
- `ragkit.papers.sure.method`: Candidates from the retrieved passages, one summary per candidate conditioned on it, a validity check and pairwise ranking of the summaries, and the candidate whose summary wins.
- `ragkit.papers.witqa.experiment`: WITQA's analyses on the tasks that can be had offline: accuracy by popularity, passage accuracy, head/tail groups, selective integration beside Mallen et al.'s threshold and Algorithm 1 with the reader, with the paper's claims judged on intervals.
- `ragkit.papers.witqa.method`: WITQA's accuracy rule, its popularity bins and head/tail groups, the QA systems of Figures 11–13 (closed-book, retrieval-augmented, GenRead), passage accuracy, selective memory integration, Mallen et al.'s adaptive retrieval and Algorithm 1's round-trip question generation.
- `ragkit.portable`: An executed notebook as a reader of the repository should see it: progress bars dropped, this machine's paths rewritten to their names, so a committed run reads the same from any clone.
- `ragkit.report`: `ragkit report`: the generated blocks of README.md and docs/REFERENCE.md rendered from the committed run folders and benchmark files, the scoreboard screen `make reproduce` ends with, the timing records behind them, answer agreement between two runs, and executed notebooks made portable.
- `ragkit.retrieve.bm25`: Sparse retrieval with one tokeniser and one scoring formula, two backends: `rank_bm25` (the reference) and `bm25s` (fast), an index persisted per corpus, and the agreement between the two measured.
- `ragkit.retrieve.dense`: MiniLM sentence embeddings computed once per (corpus, model) and stored on disk, searched with FAISS through `index_factory` strings: exact inner product by default, HNSW or IVF for large corpora.
- `ragkit.retrieve.fusion`: One shape for every retriever, reciprocal rank fusion over any of them (`rrf`, `FusedRetriever`), and the fake retriever lessons and tests rank with.
- `ragkit.retrieve.rerank`: RankGPT's sliding window (Sun et al., 2023) as SuRe's original code prompts it: the reader reads a window of passages and answers with their new order; the two rules that read its reply, the walk from the back of the list to the front, and passages cut to a word budget.
- `ragkit.runner`: What `ragkit run` and `ragkit reproduce` do: papermill executes a notebook with a named parameter profile into its own folder under `outputs/`, never in place, and records what ran. (Finding notebooks and checking their parameters is `ragkit.notebooks`; the command line is `ragkit.cli`.)
- `ragkit.secrets`: What a credential looks like in a URL, how every message, log record and stored reply is kept free of one, and the one guard that keeps any library's log lines clean: shared by every client that holds a key (`OpenAILM`, `SerperClient`).
- `ragkit.site`: `ragkit report site`: the executed papers and every module's lessons as a static website built offline — a landing page that is the scoreboard of every claim, one page per committed reference run, one page per module — and the checks that every internal link and image of it resolves.
- `ragkit.speed`: The records under `outputs/bench/` of how fast ragkit reads and how long its runs take (make reproduce's timings, every way to run a reader against fp32, a served reader, ragkit's generate on a CPU or a GPU, the reader path's speed and each run's anatomy, the decide runs' GPU estimates), rendered as the blocks README and the reference show."""

__version__ = "0.1.0"

# The names README's quickstart uses, importable from `ragkit` itself. Each is imported from its module on first use, so
# `import ragkit` (and the command line) stays light. This file's docstring is nbdev's; the rest is kept by hand.
_HOMES = {"core": ("Corpus", "Passage", "Example", "Method", "Prediction"),
          "retrieve.bm25": ("BM25Retriever",), "retrieve.dense": ("DenseRetriever",),
          "retrieve.fusion": ("FusedRetriever", "rrf"), "lm.backends": ("build_reader",),
          "papers.lore.method": ("LoRE", "NaiveRAG"), "papers.sure.method": ("SuRe",),
          "eval.evaluate": ("evaluate", "compare", "summary_table")}
_HOME = {name: module for module, names in _HOMES.items() for name in names}
__all__ = list(_HOME)

def __getattr__(name: str):
    "A quickstart name (`from ragkit import LoRE`), imported from its module on first use."
    if name not in _HOME: raise AttributeError(f"module 'ragkit' has no attribute {name!r}")
    from importlib import import_module
    return getattr(import_module(f"ragkit.{_HOME[name]}"), name)

def __dir__() -> list[str]: return sorted([*globals(), *__all__])
