"""ragkit.eval.semantic on real answers: PopQA gold aliases (true matches) against the answers of other questions
(non-matches) with the offline MiniLM backends; BERTScore against bert_score.score called directly; pairwise matrices
on real answers; the offline error of NLI/BEM without a model; and the batch validation errors."""
import os

import numpy as np
import pytest

from ragkit.eval.metrics import contains_match, f1_score
from ragkit.eval.semantic import (BEMMatcher, BERTScoreMatcher, EmbeddingMatcher, LexicalMatcher, Matcher, NLIMatcher,
                             as_metric, available_matchers, pairwise, pairwise_contains, pairwise_f1)


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    "Never touch the hub (a lookup by name hangs ~50 s offline)."
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def popqa_pairs(data_dir):
    "200 real answer pairs: 100 (first gold, alias) matches and 100 (first gold, next question's gold) non-matches."
    from ragkit.data.registry import load_dataset
    exs = load_dataset("popqa", "test-1k", data_dir=data_dir)
    pos = [(e.answers[0], e.answers[1]) for e in exs if len(e.answers) > 1][:100]
    neg = [(a.answers[0], b.answers[0]) for a, b in zip(exs, exs[1:]) if a.answers[0] != b.answers[0]][:100]
    assert len(pos) == len(neg) == 100
    return pos + neg, np.array([True] * 100 + [False] * 100)


@pytest.fixture(scope="module")
def bs():
    return BERTScoreMatcher()


@pytest.fixture(scope="module")
def emb():
    return EmbeddingMatcher()


def test_matchers_follow_the_protocol(bs, emb):
    for m in (bs, emb, LexicalMatcher("f1")): assert isinstance(m, Matcher)


@pytest.mark.parametrize("which", ["bs", "emb"])
def test_aliases_score_above_other_answers(which, request, popqa_pairs):
    m = request.getfixturevalue(which)
    pairs, is_pos = popqa_pairs
    s = m.score_pairs([c for c, _ in pairs], [r for _, r in pairs])
    assert s.shape == (200,) and np.all((s > -1.0001) & (s < 1.0001))
    assert s[is_pos].mean() > s[~is_pos].mean() + 0.3, (m.name, s[is_pos].mean(), s[~is_pos].mean())


def test_bertscore_equals_the_package(bs, popqa_pairs):
    from bert_score import score
    pairs, _ = popqa_pairs
    c, r = [a for a, _ in pairs[:20]], [b for _, b in pairs[:20]]
    ref = score(c, r, model_type=bs.path, num_layers=6, lang="en")[2].numpy()
    np.testing.assert_allclose(bs.score_pairs(c, r), ref, atol=1e-5)


def test_bertscore_and_cosine_are_symmetric(bs, emb, popqa_pairs):
    pairs, _ = popqa_pairs
    c, r = [a for a, _ in pairs[95:105]], [b for _, b in pairs[95:105]]
    for m in (bs, emb): np.testing.assert_allclose(m.score_pairs(c, r), m.score_pairs(r, c), atol=1e-5)


def test_lexical_matchers_equal_the_metrics(popqa_pairs):
    pairs, _ = popqa_pairs
    c, r = [a for a, _ in pairs], [b for _, b in pairs]
    assert list(LexicalMatcher("f1").score_pairs(c, r)) == [f1_score(a, [b]) for a, b in pairs]
    assert list(LexicalMatcher("contains").score_pairs(c, r)) == [contains_match(a, [b]) for a, b in pairs]


def test_pairwise_on_real_answers(emb, popqa_pairs):
    pairs, _ = popqa_pairs
    resp = [a for a, _ in pairs[:8]]
    for S in (pairwise(resp, emb), pairwise_f1(resp), pairwise_contains(resp)):
        assert S.shape == (8, 8) and np.isnan(np.diag(S)).all()
        assert np.array_equal(S, S.T, equal_nan=True)
    S = pairwise(resp, LexicalMatcher("contains"), diagonal=1.0)
    assert np.all(np.diag(S) == 1.0)


def test_every_score_names_its_backend(bs, emb):
    assert bs.name == "bertscore:minilm-l6@L6" and emb.name == "embed-cos:minilm-l6>=0.8"
    assert EmbeddingMatcher(threshold=None).name == "embed-cos:minilm-l6"
    assert as_metric(emb).__name__ == emb.name


def test_nli_and_bem_without_a_model_fail_clearly():
    for make in (NLIMatcher, BEMMatcher):
        with pytest.raises(FileNotFoundError, match="has no local copy and HF_HUB_OFFLINE is set"): make()
    av = available_matchers()
    assert av["bertscore"] is None and av["embed-cos"] is None and av["f1"] is None
    assert "no local copy" in av["nli"] and "no local copy" in av["bem"]


def test_bad_batches_fail_before_any_model(emb):
    with pytest.raises(TypeError, match="wrap one answer in a list"): emb.score_pairs("Paris", ["London"])
    with pytest.raises(ValueError, match="same length"): emb.score_pairs(["a", "b"], ["c"])
    with pytest.raises(ValueError, match="golds is empty"): emb.match("Paris", [])
    assert emb.score_pairs([], []).shape == (0,)
