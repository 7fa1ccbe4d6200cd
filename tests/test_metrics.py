"""ragkit.eval.metrics against an independent implementation of the official SQuAD v1.1 formulas on the real SQuAD dev
answers, the CuratedTREC regex golds, randomized property tests (seeded; hypothesis is not installed) and the
bootstrap aggregation."""
import json, random, re, string
from collections import Counter

import numpy as np
import pytest

from ragkit.eval.metrics import (METRICS, METRIC_CARDS, bootstrap_ci, contains_match, exact_match, f1_score, has_answer,
                            metric_card, normalize_answer, paired_bootstrap, regex_match, rouge_l)


# --- reference: the SQuAD v1.1 definitions (Rajpurkar et al. 2016, evaluate-v1.1.py), written out independently ---
_REF_PUNCT = re.compile("[" + re.escape(string.punctuation) + "]")


def ref_normalize(text: str) -> str:
    "Lower-case, remove ASCII punctuation, remove whole-word articles, collapse white space."
    text = _REF_PUNCT.sub("", text.lower())
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def ref_f1(pred: str, gold: str) -> float:
    "Token F1 of one pair as published: common = multiset intersection; 0 if nothing is shared."
    p, g = ref_normalize(pred).split(), ref_normalize(gold).split()
    common = sum(min(c, g.count(t)) for t, c in Counter(p).items())
    if common == 0: return 0.0
    precision, recall = 1.0 * common / len(p), 1.0 * common / len(g)
    return (2 * precision * recall) / (precision + recall)


def ref_em(pred: str, gold: str) -> float:
    return float(ref_normalize(pred) == ref_normalize(gold))


def ref_max(fn, pred, golds):
    return max(fn(pred, g) for g in golds)


# --- real data ---
def _squad_dev(data_file):
    return json.loads(data_file("squad_v1.1/dev-v1.1.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def squad_cases(data_file):
    "(context, answers) for every SQuAD v1.1 dev question."
    d = _squad_dev(data_file)
    return [(p["context"], [a["text"] for a in qa["answers"]]) for art in d["data"] for p in art["paragraphs"] for qa in p["qas"]]


def test_squad_dev_size(squad_cases):
    assert len(squad_cases) == 10570


def test_em_f1_equal_reference_on_squad_dev(squad_cases):
    "Leave-one-out answers and the context's first three words as predictions: identical EM and F1 (bitwise)."
    n = diff_em = diff_f1 = 0
    for context, answers in squad_cases:
        preds = [(" ".join(context.split()[:3]), answers)]
        preds += [(a, answers[:i] + answers[i + 1:]) for i, a in enumerate(answers) if len(answers) > 1]
        for pred, golds in preds:
            n += 1
            diff_em += exact_match(pred, golds) != ref_max(ref_em, pred, golds)
            diff_f1 += f1_score(pred, golds) != ref_max(ref_f1, pred, golds)
    assert n > 30000
    assert (diff_em, diff_f1) == (0, 0)


def test_squad_golds_that_normalise_to_nothing(squad_cases):
    "ragkit scores a prediction that normalises to nothing 0; the script would give it EM 1 where a gold does too."
    assert [a for _, answers in squad_cases for a in answers if not normalize_answer(a)] == [".", ".", "."]
    assert exact_match("", ["interventionism", "."]) == 0.0 and ref_max(ref_em, "", ["interventionism", "."]) == 1.0


def test_has_answer_finds_squad_spans_in_their_context(squad_cases):
    "SQuAD answers are spans of the context, so has_answer holds almost always (spans cut inside a word do not)."
    rate = np.mean([has_answer(c, a) for c, a in squad_cases])
    assert rate > 0.97, rate


def test_curated_trec_patterns_all_compile(data_file):
    path = data_file("dpr_open_qa/topics.dpr.curated.test.txt")
    rows = [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]
    assert len(rows) == 694
    for r in rows: regex_match("placeholder answer", r["answer"])  # raises ValueError naming a bad pattern
    assert regex_match("It is China.", rows[2]["answer"]) == 1.0
    quebec = [r["answer"] for r in rows if any("Qu[eé]bec" in a for a in r["answer"])]
    assert len(quebec) == 1 and regex_match("Québec", quebec[0]) == 1.0  # DPR's NFD would miss this


# --- properties on random strings (seeded) ---
WORDS = ["the", "a", "an", "The", "Denver", "broncos", "U.S.", "1,000", "Paris", "“Hello”", "café", "theory",
         "Jean-Paul", "of", "!", "-", "São", "1889", "cat", "Cat.", "mat", "on", "is"]


def _phrase(rng: random.Random, lo: int = 0, hi: int = 5) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


@pytest.fixture(scope="module")
def random_cases():
    rng = random.Random(0)
    cases = []
    for _ in range(1500):
        golds = [_phrase(rng, 1, 3) for _ in range(rng.randint(1, 3))]
        pred = rng.choice([_phrase(rng), rng.choice(golds), f"{_phrase(rng, 0, 2)} {rng.choice(golds)} {_phrase(rng, 0, 2)}"])
        cases.append((pred, golds, _phrase(rng, 1, 3)))
    return cases


def _all_metrics(pred, golds):
    out = {k: fn(pred, golds) for k, fn in METRICS.items() if k != "regex_match"}
    out["regex_match"] = regex_match(pred, re.escape(golds) if isinstance(golds, str) else [re.escape(g) for g in golds])
    return out


def test_metrics_are_in_unit_interval(random_cases):
    for pred, golds, _ in random_cases:
        for k, v in _all_metrics(pred, golds).items():
            assert isinstance(v, float) and 0.0 <= v <= 1.0, (k, pred, golds, v)


def test_exact_implies_containment_implies_positive_f1(random_cases):
    n_exact = n_contains = 0
    for pred, golds, _ in random_cases:
        em, cm, f1 = exact_match(pred, golds), contains_match(pred, golds), f1_score(pred, golds)
        if em: assert cm == 1.0, (pred, golds); n_exact += 1
        if cm: assert f1 > 0, (pred, golds); n_contains += 1
        assert has_answer(pred, golds) == cm
    assert n_exact > 100 and n_contains > n_exact  # the generator does exercise both implications


def test_max_over_golds_is_monotone_when_adding_a_gold(random_cases):
    for pred, golds, extra in random_cases:
        before, after = _all_metrics(pred, golds), _all_metrics(pred, golds + [extra])
        assert all(after[k] >= before[k] for k in before), (pred, golds, extra, before, after)


def test_em_and_f1_match_reference_on_random_strings(random_cases):
    for pred, golds, _ in random_cases:
        if not normalize_answer(pred): continue  # ragkit scores a contentless prediction 0 by design
        assert exact_match(pred, golds) == ref_max(ref_em, pred, golds)
        assert f1_score(pred, golds) == ref_max(ref_f1, pred, golds)


def test_bare_str_gold_equals_one_element_list(random_cases):
    for pred, golds, _ in random_cases[:300]:
        assert _all_metrics(pred, golds[0]) == _all_metrics(pred, [golds[0]])


# --- errors ---
@pytest.mark.parametrize("name", sorted(METRICS))
def test_empty_golds_is_an_error_and_empty_prediction_scores_zero(name):
    with pytest.raises(ValueError, match="golds is empty"): METRICS[name]("Paris", [])
    assert METRICS[name]("", ["Paris"]) == 0.0
    with pytest.raises(TypeError, match="must be a str"): METRICS[name](None, ["Paris"])
    assert name in metric_card(name) and set(METRIC_CARDS[name]) == {"what", "inputs", "limits", "source"}


def test_rouge_l_hand_example():
    assert rouge_l("the cat sat on the mat", "the cat is on the mat") == pytest.approx(5 / 6)


# --- aggregation ---
def test_bootstrap_ci_is_deterministic_and_brackets_the_mean():
    v = np.random.default_rng(0).random(500) < 0.4
    m, lo, hi = bootstrap_ci(v, seed=7)
    assert (m, lo, hi) == bootstrap_ci(list(v), seed=7)
    assert lo < m < hi and m == pytest.approx(v.mean())
    assert bootstrap_ci(v, seed=8) != (m, lo, hi)
    assert bootstrap_ci(v, alpha=0.5)[2] - bootstrap_ci(v, alpha=0.5)[1] < hi - lo


def test_paired_bootstrap_orders_and_validates():
    rng = np.random.default_rng(2)
    a, b = (rng.random(300) < 0.55).astype(float), (rng.random(300) < 0.45).astype(float)
    r = paired_bootstrap(a, b)
    assert r["delta"] == pytest.approx(a.mean() - b.mean()) and r["lo"] <= r["delta"] <= r["hi"]
    assert paired_bootstrap(b, a)["p_value"] == pytest.approx(1 - r["p_value"], abs=0.02)
    assert paired_bootstrap(a, a)["p_value"] == 1.0
    with pytest.raises(ValueError, match="same examples"): paired_bootstrap(a, b[:-1])
    with pytest.raises(ValueError, match="non-finite"): paired_bootstrap(a, np.full(300, np.nan))
