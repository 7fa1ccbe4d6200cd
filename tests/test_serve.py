"""A real OpenAI-compatible server end to end: vLLM's CPU build serving the registry's Qwen on loopback (slow).

Not in `make test` (a CPU start takes a minute or two, and the answers a few more); run it with
`scripts/test.sh -m slow tests/test_serve.py` after `ragkit serve` has set vLLM up once."""
import os
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import pytest
from ragkit.lm.backends import build_reader, check_reader
from ragkit.lm.serve import vllm_env_dir, vllm_server

needs_vllm = pytest.mark.skipif(not (vllm_env_dir("cpu") / "ragkit-ready.txt").is_file(),
                                reason="needs vLLM's CPU build: `ragkit serve` sets it up once")
QS = ["What is the capital of France? Answer in one word.", "Who wrote Romeo and Juliet? Answer with the name only.",
      "What is 2 + 3? Answer with a number."]


@pytest.mark.slow
@needs_vllm
def test_served_answers_match_local_and_cache_under_the_served_identity(tmp_path):
    "Served greedy answers carry log-probs and usage, agree with the local reader in the same precision, and are cached apart."
    with vllm_server("qwen2.5-coder-0.5b-instruct") as spec:
        assert "logprobs checked" in check_reader(spec, needs=("logprobs",))
        with pytest.raises(ValueError, match="serves \\['qwen2.5-coder-0.5b-instruct'\\], not 'nope'"):
            check_reader(spec.replace("openai:qwen2.5-coder-0.5b-instruct", "openai:nope"))
        served = build_reader(spec, cache=tmp_path / "lm.sqlite")
        got = served.generate(QS, max_new_tokens=8)
        again = served.generate(QS, max_new_tokens=8)
    local = build_reader("qwen2.5-coder-0.5b-instruct", dtype="bfloat16").generate(QS, max_new_tokens=8)
    assert served.identity.startswith("openai:qwen2.5-coder-0.5b-instruct#") and served.identity.endswith("-bfloat16")
    assert all(c.logprobs and c.prompt_tokens > 0 and not c.cached for c in got) and all(c.cached for c in again)
    assert "Paris" in got[0].text and "5" in got[2].text
    same = sum(g.text.strip() == l.text.strip() for g, l in zip(got, local))
    assert same >= 2, [(g.text, l.text) for g, l in zip(got, local)]
    assert max(abs(g.mean_prob - l.mean_prob) for g, l in zip(got, local) if g.text.strip() == l.text.strip()) < 0.1
