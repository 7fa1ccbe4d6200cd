"The dataset registry against the real data directory (skipped when none is configured)."
from pathlib import Path
import pytest
from ragkit.config import load_settings
from ragkit.core import DataError
from ragkit.data.registry import DATASETS, available, dataset_table, load_dataset

DATA_DIR = load_settings().data_dir
needs_data = pytest.mark.skipif(DATA_DIR is None or not Path(DATA_DIR).is_dir(),
                                reason="no data dir configured: set RAGKIT_DATA_DIR (e.g. ../shared/data)")

# Row counts stated in the data dir's PROVENANCE.md.
EXPECTED = {
    ("nq-open", "dev"): 3610, ("nq-open", "efficientqa-dev"): 1800, ("nq-open", "efficientqa-test"): 1769,
    ("nq-open", "dpr-test"): 3610, ("nq-open", "test-1k"): 1000, ("nq-gold", "dev"): 2655,
    ("squad", "dev"): 10570, ("squad", "dpr-test"): 10554,  # DPR's SQuAD topics repeat 16 rows, dropped with a warning
    ("triviaqa", "test"): 11313, ("triviaqa", "dev"): 8837, ("triviaqa", "test-1k"): 1000,
    ("webq", "test"): 2032, ("webq", "dev"): 300, ("webq", "train"): 3478, ("webq", "dpr-test"): 2032,
    ("curatedtrec", "test"): 693,  # one of the 694 lines repeats an earlier one ("popqa", "test-1k"): 1000, ("popqa", "longtail"): 1399,
    ("witqa-disamb", "test"): 2256, ("entityquestions", "dev"): 22068, ("entityquestions", "test"): 22075,
    ("entityquestions", "longtail"): 2882, ("hotpotqa", "dev-distractor"): 103, ("hotpotqa", "dev-500"): 500,
    ("2wikimultihopqa", "dev-500"): 500, ("musique", "dev-500"): 500, ("retrievalqa", "test"): 250,
    ("narrativeqa", "test"): 50,
}
FILE_SPLITS = [(n, s) for n, spec in DATASETS.items() for s, rel in spec.splits.items() if rel is not None]


@needs_data
@pytest.mark.parametrize("name,split", FILE_SPLITS, ids=[f"{n}/{s}" for n, s in FILE_SPLITS])
def test_split_loads(name, split):
    "Every split whose file exists loads with PROVENANCE's row count, questions, answers and unique qids."
    if (name, split) not in available(DATA_DIR): pytest.skip(f"{DATASETS[name].splits[split]} is not in {DATA_DIR}")
    exs = load_dataset(name, split, data_dir=DATA_DIR)
    assert len(exs) > 0
    if (name, split) in EXPECTED: assert len(exs) == EXPECTED[(name, split)]
    assert all(e.question.strip() and len(e.answers) >= 1 and all(isinstance(a, str) for a in e.answers) for e in exs)
    qids = [e.qid for e in exs]
    assert len(set(qids)) == len(qids), "qids must be unique within a split"
    assert all(q.startswith(f"{name}/{split}/") for q in qids)


@needs_data
def test_every_expected_split_is_available():
    "The data dir holds every split PROVENANCE describes (catches a renamed or moved file)."
    assert set(EXPECTED) <= set(available(DATA_DIR))


@needs_data
def test_every_data_file_is_reachable():
    "Every dataset file in the data dir is read by some (name, split); only documentation files are left over."
    root = Path(DATA_DIR)
    used = {(root / rel).resolve() for spec in DATASETS.values() for rel in spec.splits.values() if rel}
    files = {p.resolve() for p in root.rglob("*") if p.is_file()}
    reached = {f for f in files if f in used or any(u in f.parents for u in used)}
    leftover = sorted(str(f.relative_to(root.resolve())) for f in files - reached)
    assert leftover == ["PROVENANCE.md", "longtailqa/UPSTREAM_README.md", "provenance_files.tsv", "retrievalqa/data_statistics.jsonl"]


@needs_data
def test_required_names():
    "The names the notebooks rely on exist and carry what they promise."
    assert len(load_dataset("nq-open", "dev", data_dir=DATA_DIR)) == 3610
    sq = load_dataset("squad", "dev", data_dir=DATA_DIR, limit=3)
    assert sq[0].qid == "squad/dev/56be4db0acb8001400a502ec" and sq[0].meta["title"] == "Super_Bowl_50" and sq[0].meta["context"]
    assert load_dataset("webq", "test", data_dir=DATA_DIR)[0].question == "what does jamaican people speak?"
    assert load_dataset("triviaqa", "test", data_dir=DATA_DIR)[0].answers == ["David Seville"]


@needs_data
def test_popularity_fields():
    "PopQA rows carry int s_pop/o_pop and a relation; EntityQuestions rows a relation name and id."
    for split in ("test-1k", "longtail"):
        exs = load_dataset("popqa", split, data_dir=DATA_DIR)
        assert all(isinstance(e.meta["s_pop"], int) and isinstance(e.meta["o_pop"], int) and e.meta["relation"] for e in exs)
    assert max(e.meta["s_pop"] for e in load_dataset("popqa", "longtail", data_dir=DATA_DIR)) < 100
    eq = load_dataset("entityquestions", "test", data_dir=DATA_DIR)
    assert len({e.meta["relation_id"] for e in eq}) == 24 and all(not e.meta["relation"].startswith("P") for e in eq)
    assert all(e.meta["relation"] for e in load_dataset("witqa-disamb", data_dir=DATA_DIR))


@needs_data
def test_passages_in_meta():
    "Datasets with passages put them where the brief says."
    assert all(e.meta["gold_passage"]["text"] for e in load_dataset("nq-gold", data_dir=DATA_DIR))
    hp = load_dataset("hotpotqa", "dev-distractor", data_dir=DATA_DIR)
    assert hp[0].qid == "hotpotqa/dev-distractor/5a8b57f25542995d1e6f1371" and len(hp[0].meta["paragraphs"]) == 10
    rq = load_dataset("retrievalqa", data_dir=DATA_DIR)
    assert all(5 <= len(e.meta["contexts"]) <= 25 for e in rq) and len({e.meta["data_source"] for e in rq}) == 5
    assert all(e.meta["passage"] for e in load_dataset("narrativeqa", data_dir=DATA_DIR))
    assert all(e.meta["answer_type"] == "regex" for e in load_dataset("curatedtrec", data_dir=DATA_DIR))


@needs_data
def test_largest_split_loads():
    "The largest split (24 relation files) loads whole, with one relation id per file and unique qids."
    exs = load_dataset("entityquestions", "test", data_dir=DATA_DIR)
    assert len(exs) == 22075 and len({e.qid for e in exs}) == 22075 and len({e.meta["relation_id"] for e in exs}) == 24
    # Its load time (~0.1 s measured) is a benchmark's business, not a test's: the `slow` cell of nbs/02_data.registry.ipynb
    # prints every split's load time; a scripts/bench_data.py would be the place to track it.


def test_limit_is_first_n(tmp_path):
    "`limit` keeps the first N rows in file order."
    (tmp_path / "nq_open").mkdir()
    (tmp_path / "nq_open/NQ-open.dev.jsonl").write_text("".join(f'{{"question": "q{i}", "answer": ["a"]}}\n' for i in range(5)))
    assert [e.qid for e in load_dataset("nq-open", "dev", data_dir=tmp_path, limit=2)] == ["nq-open/dev/0", "nq-open/dev/1"]


def test_missing_file_message(tmp_path):
    "A missing file names the file, the data dir it was expected in and the URL to download it from."
    with pytest.raises(DataError) as e: load_dataset("witqa", "test", data_dir=tmp_path)
    msg = str(e.value)
    assert str(tmp_path / "witqa" / "witqa.tsv") in msg and f"inside the data dir {tmp_path}" in msg
    assert "https://github.com/megagonlabs/witqa" in msg


def test_unknown_names():
    "Unknown dataset and split names list the known ones."
    with pytest.raises(ValueError, match="Did you mean 'triviaqa'"): load_dataset("trivia", data_dir=".")
    with pytest.raises(ValueError, match="Known: test, dev, train, dpr-test"): load_dataset("webq", "validation", data_dir=".")


def test_table_covers_registry(tmp_path):
    "dataset_table has one row per registered (name, split), available only for the demo in an empty dir."
    tab = dataset_table(tmp_path)
    assert len(tab) == sum(len(s.splits) for s in DATASETS.values())
    assert set(tab[tab.available].name) == {"demo"}
