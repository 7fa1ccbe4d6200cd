"""Damaged files on disk. A data file that is truncated or not UTF-8 names itself and where to download it again; a
damaged LM cache names itself and says it can be deleted (losing only cached answers); a damaged embedding store
names its files and says delete them to recompute; damaged embedding shards, FAISS indexes and BM25 indexes, cheap
to redo, are rebuilt with a warning. Every file is written under tmp_path; nothing needs the real data or a model."""
import gzip, json, pickle, re, shutil, sqlite3, traceback, warnings
from pathlib import Path
import numpy as np
import pytest
from ragkit.core import Corpus, DamagedFile, Passage, read_jsonl
from ragkit.data.registry import DATASETS, load_dataset
from ragkit.data.corpora import CORPORA, load_corpus
from ragkit.lm.cache import CachedLM, _is_damage
from ragkit.lm.base import FakeLM
from ragkit.retrieve.dense import DenseRetriever, HashingEmbedder, embed_corpus, embedding_path
from ragkit.retrieve.bm25 import BM25Retriever

TOY = Corpus([Passage("p0", "Cats", "Cats sleep most of the day."), Passage("p1", "Dogs", "Dogs bark at cats and chase them."),
              Passage("p2", "Paris", "Paris is the capital of France."), Passage("p3", "Paris", "Paris is the capital of France."),
              Passage("p4", "Moon", "Apollo 11 landed on the Moon in July 1969.")], "toy")
QUERIES = ["capital of France", "moon landing 1969", "dogs chasing cats"]


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    "An empty data dir, configured the way users configure theirs (RAGKIT_DATA_DIR)."
    d = tmp_path / "data"; d.mkdir()
    monkeypatch.setenv("RAGKIT_DATA_DIR", str(d))
    return d


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    "An empty cache dir, configured through RAGKIT_CACHE_DIR."
    d = tmp_path / "cache"; d.mkdir()
    monkeypatch.setenv("RAGKIT_CACHE_DIR", str(d))
    return d


def put(path: Path, data: bytes) -> Path:
    "Write `data` to `path`, creating its folder."
    path.parent.mkdir(parents=True, exist_ok=True); path.write_bytes(data); return path


def shown(e: BaseException) -> str:
    "The traceback a user would see for `e` (chained exceptions included unless suppressed)."
    return "".join(traceback.format_exception(e))


def half_of_gzip(text: str) -> bytes:
    "The first half of the gzip of `text`: a download cut short."
    full = gzip.compress(text.encode()); return full[:len(full) // 2]


NQ_GOLD_ROWS = "".join(json.dumps({"question": f"q{i}", "answers": ["a"], "ctxs": [{"title": "T", "text": f"passage {i}", "isgold": True}]}) + "\n"
                       for i in range(3000))


# --- data files ---------------------------------------------------------------------------------------------------

def test_truncated_gz_dataset(data_dir):
    "A truncated .gz dataset file: the file, 'truncated', and the URL to download it again from; no EOFError."
    path = put(data_dir / DATASETS["nq-gold"].splits["dev"], half_of_gzip(NQ_GOLD_ROWS))
    with pytest.raises(DamagedFile) as e: load_dataset("nq-gold", "dev")
    msg = str(e.value)
    assert f"damaged file: {path}: truncated" in msg and DATASETS["nq-gold"].source_for("dev") in msg and f"save it over {path}" in msg
    assert e.value.path == path and "EOFError" not in shown(e.value)


# One file per reader: JSON lines, a DPR TSV, a CSV/TSV table, a whole JSON file, a folder of JSON files.
NOT_UTF8 = {("nq-open", "dev"): ("nq_open/NQ-open.dev.jsonl", '{"question": "ok", "answer": ["a"]}\n{"question": "café?", "answer": ["b"]}\n', 2),
            ("triviaqa", "test"): ("dpr_open_qa/topics.dpr.trivia.test.txt", "Who?\t['Zoë']\n", 1),
            ("witqa", "test"): ("witqa/witqa.tsv", "subject\tpredicate\nSão Paulo\tP1\n", 2),
            ("squad", "dev"): ("squad_v1.1/dev-v1.1.json", '{"data": [{"title": "Zürich"}]}', 1),
            ("entityquestions", "test"): ("entity_questions/test/P17.test.json", '[{"question": "Où?", "answers": ["ici"]}]', 1)}


@pytest.mark.parametrize("name,split", NOT_UTF8, ids=[f"{n}/{s}" for n, s in NOT_UTF8])
def test_non_utf8_dataset(data_dir, name, split):
    "A data file in Latin-1: the file, the first bad byte and its line, and where to download the file again."
    rel, text, line = NOT_UTF8[(name, split)]
    path = put(data_dir / rel, text.encode("latin-1"))
    with pytest.raises(DamagedFile) as e: load_dataset(name, split)
    bad = next(b for b in text.encode("latin-1") if b > 127)
    assert f"damaged file: {path}: not UTF-8 text: byte 0x{bad:02x} on line {line}" in str(e.value)
    assert DATASETS[name].source_for(split) in e.value.fix and "UnicodeDecodeError" not in shown(e.value)


def test_not_gzip_although_gz(tmp_path):
    "A .gz name on a plain file, and a read without a caller's hint, still name the file and say what to do."
    path = put(tmp_path / "rows.jsonl.gz", b'{"q": 1}\n')
    with pytest.raises(DamagedFile, match=r"rows\.jsonl\.gz: not a valid gzip file .*\n  how to fix it: replace it with a good copy"):
        list(read_jsonl(path))


def test_damaged_corpus_files(data_dir):
    "Corpora read through the same helpers: a truncated gz and a non-UTF-8 file name the file and the corpus's source."
    gold = put(data_dir / CORPORA["nq-gold"].path, half_of_gzip(NQ_GOLD_ROWS))
    with pytest.raises(DamagedFile, match="truncated") as e: load_corpus("nq-gold")
    assert e.value.path == gold and CORPORA["nq-gold"].source in e.value.fix
    squad = put(data_dir / CORPORA["squad"].path, '{"data": [{"title": "Zürich", "paragraphs": []}]}'.encode("latin-1"))
    with pytest.raises(DamagedFile, match="not UTF-8 text: byte 0xfc on line 1") as e: load_corpus("squad")
    assert e.value.path == squad and CORPORA["squad"].source in e.value.fix


def test_damaged_file_error_pickles():
    "DamagedFile crosses process boundaries (multiprocessing pickles exceptions) with its path, reason and fix."
    e = pickle.loads(pickle.dumps(DamagedFile("/x/y.gz", "truncated", "download it again")))
    assert (e.path, e.why, e.fix, str(e)) == (Path("/x/y.gz"), "truncated", "download it again", "damaged file: /x/y.gz: truncated\n  how to fix it: download it again")


# --- the LM cache --------------------------------------------------------------------------------------------------

def filled_cache(path: Path, n: int = 2000) -> None:
    "An LM cache file with `n` answers, checkpointed into the main file."
    lm = CachedLM(FakeLM({}, default="an answer " * 40), path)
    lm.generate([f"q{i}" for i in range(n)], max_new_tokens=64)
    lm.store._db().execute("PRAGMA wal_checkpoint(TRUNCATE)"); lm.store._db().close()


def test_lm_cache_not_a_database(tmp_path):
    "Something else saved under the cache's name: the file, that it is an LM cache, that deleting it loses only answers."
    path = put(tmp_path / "lm.sqlite", b"notes saved over the cache by mistake\n" * 50)
    with pytest.raises(DamagedFile) as e: CachedLM(FakeLM({}), path)
    msg = str(e.value)
    assert f"damaged file: {path}: not a readable SQLite database (file is not a database)" in msg
    for says in ("LM cache", "delete it (and lm.sqlite-wal, lm.sqlite-shm if present)", "loses only the cached answers"): assert says in msg
    assert "sqlite3.DatabaseError" not in shown(e.value)  # no bare traceback from inside sqlite3
    path.unlink()
    assert CachedLM(FakeLM({}, default="x"), path).generate(["q"])[0].text == "x"  # deleting it was the whole fix


@pytest.mark.parametrize("damage", ["truncated", "zeroed tail"])
def test_lm_cache_damaged_pages(tmp_path, damage):
    "A real cache whose pages are lost: the same message, raised on opening or at the first lookup."
    path = tmp_path / "lm.sqlite"; filled_cache(path)
    raw = path.read_bytes()
    path.write_bytes(raw[:len(raw) // 2] if damage == "truncated" else raw[:8192] + b"\0" * (len(raw) - 8192))
    with pytest.raises(DamagedFile, match="disk image is malformed") as e:
        CachedLM(FakeLM({}), path).generate([f"q{i}" for i in range(2000)], max_new_tokens=64)
    assert "loses only the cached answers" in e.value.fix


def test_lock_is_not_damage():
    "A busy or full database keeps SQLite's own error: only 'not a database' and 'malformed' mean damage."
    assert not _is_damage(sqlite3.OperationalError("database is locked"))
    assert not _is_damage(sqlite3.OperationalError("database or disk is full"))
    assert _is_damage(sqlite3.DatabaseError("file is not a database"))


# --- dense embeddings and FAISS indexes ----------------------------------------------------------------------------

def store_damages(path: Path) -> dict:
    "Ways the finished embedding store can be damaged: name -> (function that damages it, file named, reason)."
    meta = path.with_suffix(".json")
    return {"npy truncated": (lambda: path.write_bytes(path.read_bytes()[:len(path.read_bytes()) // 2]), path, "not a readable .npy array"),
            "npy not an array": (lambda: path.write_bytes(b"garbage" * 30), path, "not a readable .npy array"),
            "npy wrong shape": (lambda: np.save(path, np.zeros((3, 32), np.float32)), path, "has shape (3, 32), its sidecar says (5, 32)"),
            "sidecar not JSON": (lambda: meta.write_text(meta.read_text()[:40]), meta, "sidecar is not JSON"),
            "sidecar not an object": (lambda: meta.write_text("[1, 2]"), meta, "not a JSON object")}


@pytest.mark.parametrize("damage", list(store_damages(Path("x.npy"))))
def test_damaged_embedding_store(tmp_path, damage):
    "A damaged store is not silently re-embedded: the file, the reason, and which two files to delete to recompute."
    he = HashingEmbedder(32)
    good = np.array(embed_corpus(TOY, he, tmp_path, progress=False))
    path = embedding_path(TOY, he, tmp_path)
    hurt, named, why = store_damages(path)[damage]
    hurt()
    with pytest.raises(DamagedFile) as e: embed_corpus(TOY, he, tmp_path, progress=False)
    assert e.value.path == named and why in e.value.why
    assert f"delete {path.name} and {path.with_suffix('.json').name} in {tmp_path / 'embeddings'}" in e.value.fix
    calls = he.calls
    path.unlink(); path.with_suffix(".json").unlink()  # what the message says to do
    assert np.array_equal(embed_corpus(TOY, he, tmp_path, progress=False), good) and he.calls > calls


def test_damaged_shard_is_encoded_again(tmp_path):
    "An interrupted run left shards, one cut short: only that one is encoded again, with a warning naming it."
    he = HashingEmbedder(32)
    good = np.array(embed_corpus(TOY, he, tmp_path, shard_size=2, progress=False))
    path = embedding_path(TOY, he, tmp_path); parts = path.with_suffix(".parts"); parts.mkdir()
    for i in (0, 2, 4): np.save(parts / f"{i:010d}.npy", good[i:i + 2])
    path.unlink()
    shard = parts / f"{2:010d}.npy"; shard.write_bytes(shard.read_bytes()[:90])
    calls = he.calls
    with pytest.warns(UserWarning, match=f"{re.escape(str(shard))}: damaged embedding shard .*encoding its 2 passages again"):
        again = embed_corpus(TOY, he, tmp_path, shard_size=2, progress=False)
    assert np.array_equal(again, good) and he.calls == calls + 1 and not parts.exists()


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_damaged_faiss_index_is_rebuilt(cache_dir, damage):
    "A saved HNSW index faiss cannot read is rebuilt from the stored embeddings, with a warning; searches are unchanged."
    dense = DenseRetriever(TOY, HashingEmbedder(32), "HNSW32", progress=False)  # cache dir from RAGKIT_CACHE_DIR
    assert dense.index_path.is_relative_to(cache_dir)
    before = dense.batch_search(QUERIES, 3, progress=False)
    raw = dense.index_path.read_bytes()
    dense.index_path.write_bytes({"truncated": raw[:len(raw) // 2], "garbage": b"x" * 100, "empty": b""}[damage])
    with pytest.warns(UserWarning, match=f"{re.escape(str(dense.index_path))}: damaged FAISS index .*rebuilding it from the stored embeddings"):
        again = DenseRetriever(TOY, HashingEmbedder(32), "HNSW32", progress=False)
    assert again.batch_search(QUERIES, 3, progress=False) == before
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rebuilt file reads cleanly
        assert DenseRetriever(TOY, HashingEmbedder(32), "HNSW32", progress=False).index.ntotal == len(TOY)


# --- BM25 indexes --------------------------------------------------------------------------------------------------

BM25_DAMAGES = [("bm25s", "data.csc.index.npy", "truncated"), ("bm25s", "indices.csc.index.npy", "empty"),
                ("bm25s", "indptr.csc.index.npy", "garbage"), ("bm25s", "vocab.index.json", "truncated"),
                ("bm25s", "params.index.json", "empty"), ("bm25s", "ragkit.json", "garbage"),
                ("rank_bm25", "rank_bm25.pkl", "truncated"), ("rank_bm25", "rank_bm25.pkl", "empty"), ("rank_bm25", "ragkit.json", "truncated")]


@pytest.mark.parametrize("backend,victim,damage", BM25_DAMAGES, ids=[f"{b}-{v}-{d}" for b, v, d in BM25_DAMAGES])
def test_damaged_bm25_index_is_rebuilt(cache_dir, backend, victim, damage):
    "A damaged persisted BM25 index is rebuilt from the corpus with a warning naming its folder; rankings are unchanged."
    first = BM25Retriever(TOY, backend, progress=False)  # cache dir from RAGKIT_CACHE_DIR
    before, f = first.batch_search(QUERIES, 3, progress=False), first.folder / victim
    raw = f.read_bytes()
    f.write_bytes({"truncated": raw[:len(raw) // 2], "garbage": b"garbage!" * 3, "empty": b""}[damage])
    with pytest.warns(UserWarning, match=f"{re.escape(str(first.folder))}: damaged BM25 index .*rebuilding it from the corpus"):
        again = BM25Retriever(TOY, backend, progress=False)
    assert not again.loaded and again.batch_search(QUERIES, 3, progress=False) == before
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert BM25Retriever(TOY, backend, progress=False).loaded


def test_bm25_index_of_another_corpus_is_rebuilt(cache_dir, tmp_path):
    "Index files of another corpus under this corpus's sidecar (a bad copy): the size check catches it, then a rebuild."
    mine = BM25Retriever(TOY, progress=False)
    before = mine.batch_search(QUERIES, 3, progress=False)
    other = BM25Retriever(Corpus(list(TOY)[:3], "three"), cache_dir=tmp_path / "other", progress=False)
    for f in other.folder.iterdir():
        if f.name != "ragkit.json": shutil.copy(f, mine.folder / f.name)
    with pytest.warns(UserWarning, match="damaged BM25 index .*indexes 3 documents, not 5"):
        again = BM25Retriever(TOY, progress=False)
    assert again.batch_search(QUERIES, 3, progress=False) == before
