"""ragkit.papers.eor.method beyond the notebook's lessons: the vectorised voter and the training objective against the per-question
`vote` on random data of several shapes; similarity_tensor on real PopQA answers against ragkit.eval.semantic's
per-question matrices; the Nelder-Mead search's bounds, determinism and recovery of a known-good retriever; and
the benchmark script at a small size."""
import json
import warnings

import numpy as np
import pytest

from ragkit.papers.eor.method import (POOLINGS, EoRFit, EoRObjective, chosen, correct_matrix, eor_predict, similarity_tensor, top_r,
                        train_eor, vote, vote_batch)


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    "Never touch the hub (a lookup by name hangs ~50 s offline)."
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize("pooling", POOLINGS)
@pytest.mark.parametrize("M", [1, 2, 5, 16])
def test_vote_batch_equals_loop_of_vote(pooling, M):
    rng = np.random.default_rng(M)
    S = rng.random((200, M, M, 3)).round(2)
    S[:, np.arange(M), np.arange(M), :] = np.nan
    for trial in range(3):
        ws, wr = rng.random(3) + 0.01, rng.random(M).round(1) + 0.05 * (trial == 0)
        if not (wr > 0.1).any(): wr[0] = 0.5
        for thr in (0.0, 0.5):
            loop = [vote(S[n], ws, wr, pooling, threshold=thr, t=0.1) for n in range(len(S))]
            assert vote_batch(S, ws, wr, pooling, threshold=thr, t=0.1).tolist() == loop


@pytest.mark.parametrize("pooling", POOLINGS)
def test_objective_equals_vote_batch_across_many_kept_sets(pooling):
    rng = np.random.default_rng(1)
    S, C = rng.random((150, 8, 8, 2)), rng.random((150, 8)) < 0.5
    ob = EoRObjective(S, C, pooling=pooling, t=0.1)
    for _ in range(40):  # more kept sets than the cache holds (16): eviction must not change anything
        ws, wr = rng.random(2), rng.uniform(0, 0.6, 8)
        if not (wr > 0.1).any(): continue
        pick = vote_batch(S, ws, wr, pooling, threshold=0.3, t=0.1)
        assert ob.choose(ws, wr, 0.3).tolist() == pick.tolist()
        assert ob.accuracy(ws, wr, 0.3) == pytest.approx(chosen(C, pick).mean())
    assert len(ob._cache) <= 16


def test_ties_and_all_zero_go_to_the_first_kept_candidate():
    S = np.zeros((1, 4, 4, 1))
    assert vote_batch(S, [1], [0.3, 0.3, 0.3, 0.3]).tolist() == [0]
    assert vote_batch(S, [1], [0.05, 0.3, 0.6, 0.3], t=0.1).tolist() == [1]  # 0 is ignored, 1 is the first kept
    S[0, :, :, 0] = 1.0
    assert vote_batch(S, [1], [0.3, 0.6, 0.6, 0.3]).tolist() == [1]  # 1 and 2 tie on the best score


@pytest.fixture(scope="module")
def popqa_answers(data_dir):
    "12 questions x 5 'responses' built from real PopQA gold answers: aliases (agree) and other questions' answers."
    from ragkit.data.registry import load_dataset
    exs = [e for e in load_dataset("popqa", "test-1k", data_dir=data_dir) if len(e.answers) >= 2][:13]
    rows = [[e.answers[0], e.answers[1], e.answers[0], nxt.answers[0], ""] for e, nxt in zip(exs, exs[1:])]
    return rows, [list(e.answers) for e in exs[:12]], [e.question for e in exs[:12]]


def test_similarity_tensor_equals_per_question_pairwise(popqa_answers):
    from ragkit.papers.eor.method import _default_matcher
    from ragkit.eval.semantic import pairwise, pairwise_contains, pairwise_f1
    rows, golds, _ = popqa_answers
    S, names = similarity_tensor(rows, ("em", "f1", "bertscore"))
    assert S.shape == (12, 5, 5, 3) and names == ["em", "f1", "bertscore:minilm-l6@L6"]
    off, bs = ~np.eye(5, dtype=bool), _default_matcher("bertscore")  # the instance similarity_tensor used
    for n in range(12):
        assert np.array_equal(S[n, ..., 0][off], pairwise_contains(rows[n])[off])
        assert np.allclose(S[n, ..., 1][off], pairwise_f1(rows[n])[off])
        assert np.all(S[n, 4, :4, :] == 0) and np.all(S[n, :4, 4, :] == 0)  # the empty response
    assert np.allclose(S[:3, :4, :4, 2][:, off[:4, :4]], np.stack([pairwise(r[:4], bs)[off[:4, :4]] for r in rows[:3]]), atol=1e-5)
    assert np.all(S[:, 0, 2, :] > 0.999)  # identical responses
    C = correct_matrix(rows, golds)
    assert C[:, 0].all() and C[:, 2].all() and not C[:, 4].any()


def test_similarity_tensor_nli_absent_and_present(popqa_answers):
    from ragkit.eval.semantic import LexicalMatcher
    rows, _, questions = popqa_answers
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        S, names = similarity_tensor(rows, ("em", "nli", "nli-q"), query=questions)
    assert names == ["em", "nli:none", "nli-q:none"] and sum("no NLI matcher" in str(x.message) for x in w) == 2
    assert np.all(np.nan_to_num(S[..., 1:]) == 0)
    fit = train_eor(S, correct_matrix(rows, [[r[0]] for r in rows]), metrics=names, maxiter=50)
    assert fit.sim_weights.tolist() == [1.0, 0.0, 0.0]
    S2, names2 = similarity_tensor(rows, ("nli",), nli=LexicalMatcher("contains"))  # any directional matcher plugs in
    assert names2 == ["nli"] and np.allclose(S2, S2.transpose(0, 2, 1, 3), equal_nan=True)


def _planted(n: int, seed: int):
    "S, correct for 6 retrievers: r2 is always right and agrees with nobody's phrasing; the rest are noisy colluders."
    rng = np.random.default_rng(seed)
    acc = np.array([0.45, 0.4, 1.0, 0.35, 0.3, 0.2])
    lab = np.where(rng.random((n, 6)) < acc, 0, rng.integers(1, 3, (n, 6)))
    same = lab[:, :, None] == lab[:, None, :]
    em = same & (np.arange(6) != 2)[None, :, None] & (np.arange(6) != 2)[None, None, :]
    return np.stack([em.astype(float), np.where(same, 0.9, 0.4) + rng.uniform(-0.05, 0.05, same.shape)], -1), lab == 0


def test_training_respects_bounds_is_deterministic_and_beats_its_start():
    S, C = _planted(800, 0)
    names = ["em", "bertscore"]
    kw = dict(metrics=names, retrievers=[f"r{i}" for i in range(6)], search_threshold=True)
    fit = train_eor(S, C, **kw)
    again = train_eor(S, C, **kw)
    assert np.array_equal(fit.retriever_weights, again.retriever_weights) and fit.threshold == again.threshold
    assert np.all((fit.retriever_weights >= 0) & (fit.retriever_weights <= 0.6)) and 0 <= fit.threshold <= 0.3
    assert fit.train_accuracy >= fit.start_accuracy and fit.train_accuracy > C[:, top_r(C)].mean() - 1e-9
    assert "r2" in fit.kept and fit.retriever_weights[2] == fit.retriever_weights.max()
    S_test, C_test = _planted(400, 1)
    assert chosen(C_test, eor_predict(S_test, fit)).mean() >= 0.9
    d = json.loads(json.dumps(fit.to_dict()))
    assert set(d["retriever_weights"]) == {f"r{i}" for i in range(6)} and d["n_evals"] == fit.n_evals > 0


def test_clear_errors():
    S = np.random.default_rng(0).random((5, 3, 3, 2))
    with pytest.raises(ValueError, match="one weight per metric"): vote_batch(S, [1], [1, 1, 1])
    with pytest.raises(ValueError, match="unknown pooling"): vote_batch(S, [1, 1], [1, 1, 1], pooling="median")
    with pytest.raises(ValueError, match=r"correct must be \[N, M\]"): train_eor(S, np.ones((5, 2), bool))
    with pytest.raises(ValueError, match="trained on"):
        eor_predict(S[:, :2, :2], EoRFit(["a", "b"], ["x", "y", "z"], np.array([.5, .5]), np.ones(3), 0.0))
    with pytest.raises(TypeError, match="each question needs a list"): similarity_tensor(["a", "b"], ("em",))


def test_bench_script_small(tmp_path):
    import importlib.util, pathlib
    path = pathlib.Path(__file__).parent.parent / "scripts" / "bench_eor.py"
    spec = importlib.util.spec_from_file_location("bench_eor", path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    res = mod.main(["--n", "120", "--m", "6", "--k", "3", "--reps", "5", "--out", str(tmp_path / "eor.json")])
    saved = json.loads((tmp_path / "eor.json").read_text())
    assert saved["n"] == 120 and [r["pooling"] for r in saved["objective"]] == list(POOLINGS)
    assert all(r["choices_equal_to_loop"] == 120 for r in res["objective"])
    assert saved["search"]["train_accuracy"] >= saved["search"]["start_accuracy"]
