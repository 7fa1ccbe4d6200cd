"EoR's two knowledge sources: they differ in content in the paper-split run, and the paper run says where they do not."
import json
from pathlib import Path

import pytest

from ragkit.core import Corpus, Passage
from ragkit.eval.mechanism import NOT_RUN
from ragkit.papers.eor.runs import complement, split_sources
from ragkit.notebooks import project_root

ROOT = project_root(Path(__file__).parent)
PAPER, SPLIT = ROOT / "outputs" / "paper", ROOT / "outputs" / "paper-split"


def _results(folder: Path) -> dict:
    "A run's results.json, or skip when the run is not committed."
    f = folder / "results.json"
    if not f.is_file(): pytest.skip(f"{folder} is not committed")
    return json.loads(f.read_text(encoding="utf-8"))


def _toy(n: int = 30) -> tuple[Corpus, Corpus]:
    "Wiki with one passage per title, SE with a longer page per title."
    wiki = Corpus([Passage(f"w{i}", f"T{i}", f"fact {i}.") for i in range(n)], "wiki")
    return wiki, Corpus([Passage(f"s{i}", f"T{i}", f"intro. fact {i}. more.") for i in range(n)], "se")


def test_split_takes_disjoint_seeded_titles_from_each_source():
    wiki, se = _toy()
    w1, s1 = split_sources(wiki, se, 0.3, seed=1)
    w2, s2 = split_sources(wiki, se, 0.3, seed=1)
    assert [p.pid for p in w1] == [p.pid for p in w2] and [p.pid for p in s1] == [p.pid for p in s2]  # seeded
    gone_w = {p.title for p in wiki} - {p.title for p in w1}
    gone_s = {p.title for p in se} - {p.title for p in s1}
    assert len(gone_w) == len(gone_s) == 9 and not gone_w & gone_s
    assert split_sources(wiki, se, 0.3, seed=2)[0].hash != w1.hash  # another seed, another draw
    with pytest.raises(ValueError, match="source_split=-0.1"): split_sources(wiki, se, -0.1)


def test_complement_counts_each_way():
    hits = dict(Wiki=[[False] * 10, [True], [False]], SE=[[True], [False], [True, False]])
    assert complement(hits) == dict(se1_not_wiki10=2, wiki10_not_se1=1)


def test_paper_run_reports_its_overlap_and_gives_the_source_claim_no_verdict():
    "In the paper run SE holds Wiki's passages, so the sources' claim reads 'mechanism did not run' and every win is from shared knowledge."
    o = _results(PAPER / "62_papers.eor.runs")["source_overlap"]["nq"]
    assert o["wiki_inside_se"] > 0.9 * o["wiki"]
    inc = _results(PAPER / "63_papers.eor.inconsistency")
    pair = [r for r in inc["verdict"] if "the paper's pair" in r["claim"]]
    assert pair and pair[0]["direction"] == NOT_RUN
    wins = [w for w in inc["rwr_wins"] if w["pair"] == "SE@1 over Wiki@10"][0]
    assert wins["only_i_held"] == 0 and wins["both_held"] + wins["neither_held"] + wins["only_j_held"] == wins["wins"]


def test_split_run_has_sources_that_differ():
    "The judged setting: over the whole NQ corpus, SE@1 holds an answer where Wiki@10 does not on more than 0 questions."
    res = _results(SPLIT / "62_papers.eor.runs")
    assert res["parameters"]["source_split"] > 0
    sup = [r for r in res["corpus_support"] if r["dataset"] == "nq"]
    assert sup and sup[0]["se1_not_wiki10"] > 0 and sup[0]["wiki10_not_se1"] > 0
    o = res["source_overlap"]["nq"]
    assert o["wiki_inside_se"] < o["wiki"]
