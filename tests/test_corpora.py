"The corpora against the real data directory (skipped when none is configured)."
from pathlib import Path
import pytest
from ragkit.config import load_settings
from ragkit.core import passage_id
from ragkit.data.corpora import UNION, corpus_stats, gold_pids, load_corpus, load_with_gold
from ragkit.data.registry import load_dataset

DATA_DIR = load_settings().data_dir
needs_data = pytest.mark.skipif(DATA_DIR is None or not Path(DATA_DIR).is_dir(),
                                reason="no data dir configured: set RAGKIT_DATA_DIR (e.g. ../shared/data)")

# Measured on the data dir described by its PROVENANCE.md (files verified by sha256 in provenance_files.tsv).
# passages, duplicates dropped (same title and whitespace-normalised text), blank documents dropped.
EXPECTED = {"squad": (2067, 0, 0), "nq-gold": (2588, 67, 0), "hotpotqa": (1021, 1, 0),
            "retrievalqa": (3338, 46, 90), "narrativeqa": (47, 0, 0)}
# First 12 hex of Corpus.hash: a change means every pid-keyed cache (embeddings, runs) of that corpus is stale.
HASHES = {"squad": "8c5937e6ca4b", "nq-gold": "10867f3d4412", "hotpotqa": "16432cb3bf19",
          "retrievalqa": "2c09382b55e6", "narrativeqa": "8140c70afcc9", "union": "5fa6b679d2e0"}


@needs_data
@pytest.mark.parametrize("name", UNION)
def test_corpus_counts(name):
    "Each corpus has the measured number of passages and drops the measured duplicates and blanks."
    c = load_corpus(name, DATA_DIR)
    s = corpus_stats(c)
    assert (s["passages"], s["duplicates_dropped"], s["empty_dropped"]) == EXPECTED[name]
    assert all(p.pid.startswith(c.pids[0].split("-")[0] + "-") for p in c)


@needs_data
@pytest.mark.parametrize("name", [*UNION, "union"])
def test_pids_and_hash_stable(name):
    "Two loads give the same pids in the same order and the recorded content hash."
    a, b = load_corpus(name, DATA_DIR), load_corpus(name, DATA_DIR)
    assert a.pids == b.pids and a.hash == b.hash
    assert a.hash[:12] == HASHES[name]


@needs_data
def test_squad_every_question_has_its_paragraph():
    "Each of the 10,570 SQuAD questions maps to its own paragraph's pid."
    c, gold = load_with_gold("squad", DATA_DIR)  # load times: printed by nbs/03_data.corpora.ipynb's real-data cell, not asserted here
    exs = load_dataset("squad", "dev", data_dir=DATA_DIR)
    assert set(gold) == {e.qid for e in exs}
    for e in exs:
        pid = passage_id("squad", e.meta["title"].replace("_", " "), e.meta["context"])
        assert gold[e.qid] == [pid] and pid in c


@needs_data
def test_nq_gold_and_narrativeqa_gold_match_the_datasets():
    "nq-gold and narrativeqa gold pids use ragkit.data.registry's qids and point at the question's own passage."
    nq, gold = load_with_gold("nq-gold", DATA_DIR)
    exs = load_dataset("nq-gold", "dev", data_dir=DATA_DIR)
    assert set(gold) == {e.qid for e in exs}
    for e in exs:
        (pid,) = gold[e.qid]
        assert " ".join(nq[pid].text.split()) == " ".join(e.meta["gold_passage"]["text"].split())
    nar, gold = load_with_gold("narrativeqa", DATA_DIR)
    exs = load_dataset("narrativeqa", "test", data_dir=DATA_DIR)
    assert len(nar) == len({" ".join(e.meta["passage"].split()) for e in exs}) == 47
    assert set(gold) == {e.qid for e in exs}
    assert all(nar[gold[e.qid][0]].text == e.meta["passage"] for e in exs)


@needs_data
def test_hotpot_gold_are_supporting_paragraphs():
    "Every HotpotQA question points at the paragraphs its supporting facts name (at least two)."
    c, gold = load_with_gold("hotpotqa", DATA_DIR)
    exs = load_dataset("hotpotqa", "dev-distractor", data_dir=DATA_DIR)
    assert set(gold) == {e.qid for e in exs}
    for e in exs:
        assert len(gold[e.qid]) >= 2
        assert {c[p].title for p in gold[e.qid]} == {t for t, _ in e.meta["supporting_facts"]}


@needs_data
def test_union_is_the_parts_minus_repeated_pids():
    "The union's size is the sum of its parts minus pids already seen, and it keeps every gold pid."
    parts = [load_corpus(n, DATA_DIR) for n in UNION]
    u, gold = load_with_gold("union", DATA_DIR)
    distinct = {pid for p in parts for pid in p.pids}
    assert len(u) == len(distinct) == sum(map(len, parts))  # per-corpus prefixes: no pid repeats across parts
    assert u.pids == list(dict.fromkeys(pid for p in parts for pid in p.pids))
    assert all(pid in u for pids in gold.values() for pid in pids)
    assert corpus_stats(u)["duplicates_dropped"] == sum(v[1] for v in EXPECTED.values())


@needs_data
@pytest.mark.parametrize("min_tail", [0, 25])
def test_chunked_passages_respect_the_window(min_tail):
    "100-word chunks are at most 100 words (up to 124 when a tail under 25 words is merged); gold stays in the corpus."
    for name in UNION:
        c, gold = load_with_gold(name, DATA_DIR, words=100, min_tail=min_tail)
        assert max(len(p.text.split()) for p in c) <= 100 + max(min_tail - 1, 0)
        assert all(pid in c for pids in gold.values() for pid in pids)
    sq = load_corpus("squad", DATA_DIR, words=100, min_tail=min_tail)
    assert len(sq) > 2067
