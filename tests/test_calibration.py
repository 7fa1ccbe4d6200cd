"""Calibration of the verdict rules (issue 48): claims whose truth is known, judged by the same code as a paper's claims
(`ragkit.eval.experiment.verdict`, Holm's adjustment included), at least 1,000 per case."""
import pandas as pd
import pytest
from ragkit.eval.experiment import DIRECTIONS, calibration, simulated_claims, verdict
from ragkit.eval.mechanism import NOT_RUN

N = 1000  # simulated claims per case
B = 200  # bootstrap draws per claim (the verdicts' interval; enough for a 95% percentile interval here, and fast)


@pytest.mark.parametrize("n", [60, 200])  # about 18 differing questions (the exact test decides) and 60 (the bootstrap)
def test_no_effect_decides_at_most_5_percent(n):
    "With no true effect, holds or reversed after Holm comes out at most 5% of the time."
    c = calibration(N, n, 0.3, n_boot=B, seed=11)
    assert c["holds"] + c["reversed"] <= 0.05, c


def test_inert_mechanism_never_gets_a_direction():
    "A mechanism that never acts always reads 'mechanism did not run'."
    assert calibration(N // 2, 50, acts=0.0, n_boot=B, seed=12)[NOT_RUN] == 1.0


def test_mechanism_acting_on_few_questions_never_gets_a_direction():
    "Every claim whose gate acted on fewer than 10 of its questions reads 'mechanism did not run', and nothing else does."
    claims, runs = simulated_claims(N // 2, 100, acts=0.05, seed=13)
    v = pd.concat([verdict(claims[i:i + 10], runs, B, i) for i in range(0, N // 2, 10)])
    assert (v.acted < 10).sum() > 0.25 * N  # the case is the one meant: most gates acted on fewer than 10
    assert (v.direction_holm[v.acted < 10] == NOT_RUN).all() and (v.direction_holm[v.acted >= 10] != NOT_RUN).all()


def test_large_no_effect_sample_reads_equivalent():
    "No effect on 3,000 questions reads equivalent (its interval inside ±3 points), not undecided."
    c = calibration(200, 3000, differ=0.1, n_boot=B, seed=14)
    assert c["equivalent"] >= 0.9 and c["holds"] + c["reversed"] <= 0.05, c


def test_paper_sized_effect_is_found_and_never_reversed():
    "A true +10-point effect on 300 questions mostly holds and is never reversed."
    c = calibration(200, 300, effect=10.0, n_boot=B, seed=15)
    assert c["holds"] >= 0.7 and c["reversed"] == 0.0, c
    assert set(c) >= set(DIRECTIONS)
