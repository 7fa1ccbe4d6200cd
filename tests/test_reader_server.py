"""The served reader's path (issues 40 and 42): a server's identity that cannot be confused (the canary), needs derived
from the systems a notebook runs and proved before the kernel (one completion for every server reader), and reader
specs that reach no record, log or repr with more than scheme, host, port, API prefix and served name."""
import json, logging, os, subprocess
from pathlib import Path

import pytest

from ragkit.config import load_settings
from ragkit.lm.backends import build_reader, check_reader, parse_reader, server_registry
from ragkit.lm.openai import FakeOpenAIServer, OpenAILM
from ragkit.notebooks import project_root
from ragkit.runner import run_notebook
from toy import toy_project

ROOT = project_root(Path(__file__).parent)
TENANT, SUB = "tenantzq", "s3cr3t7"  # a letters-only path segment and a short query value: both passed the credential check


@pytest.fixture
def settings(tmp_path, monkeypatch):
    "Settings whose outputs and caches (the LM caches and servers.json) live under tmp_path, for the runner and its kernel."
    env = {"RAGKIT_OUTPUTS_DIR": str(tmp_path / "outputs"), "RAGKIT_CACHE_DIR": str(tmp_path / "cache")}
    for k, v in env.items(): monkeypatch.setenv(k, v)
    return load_settings(env={**os.environ, **env})


def runs_made(settings) -> list[Path]:
    "Every run folder under the outputs dir."
    return [p for p in Path(settings.outputs_dir).glob("*/*") if p.is_dir()]


def test_a_server_that_changes_its_answers_under_one_name_is_refused(tmp_path):
    "Same served name, other weights: the cached rows are never read by it; a revision files its answers apart."
    cache = tmp_path / "lm.sqlite"
    with FakeOpenAIServer(default="Paris", models=["qwen"]) as srv:
        first = build_reader(f"openai:qwen@{srv.base_url}", cache=cache)
        assert first.generate(["Capital of the UK?"])[0].text == "Paris"
        again = build_reader(f"openai:qwen@{srv.base_url}", cache=cache)  # the same server: its rows resume
        assert again.generate(["Capital of the UK?"])[0].cached
        srv.default = "London"  # restarted with new weights under the same --served-model-name
        with pytest.raises(ValueError, match="answers the canary question on /chat/completions 'London', recorded 'Paris'") as e:
            build_reader(f"openai:qwen@{srv.base_url}", cache=cache)
        assert "give them a revision (openai:<model>#<revision>@<url>)" in str(e.value) and str(server_registry(cache)) in str(e.value)
        with pytest.raises(ValueError, match="recorded 'Paris'"):  # the health check says so before the kernel too
            check_reader(f"openai:qwen@{srv.base_url}", registry=server_registry(cache))
        new = build_reader(f"openai:qwen#v2@{srv.base_url}", cache=cache)
        c = new.generate(["Capital of the UK?"])[0]
        assert (c.text, c.cached) == ("London", False)


def test_the_check_records_the_servers_fingerprint_and_the_token_source(tmp_path):
    "run.json's reader record: spec as stored, identity, vLLM's root and max_model_len, the canary, and who counted tokens."
    info = {"root": "/weights/qwen-0.5b", "max_model_len": 4096}
    with FakeOpenAIServer(default="Paris", models=["qwen"], model_info=info) as srv, \
         FakeOpenAIServer(default="Paris", models=["qwen"], logprobs=False) as bare:
        rec = check_reader(f"openai:qwen@{srv.base_url}", needs=("chat", "logprobs"), registry=tmp_path / "s.json").record
        assert (rec["server"]["root"], rec["server"]["max_model_len"], rec["tokens_from"]) == ("/weights/qwen-0.5b", 4096, "log-prob tokens")
        assert rec["server"]["canary"]["/chat/completions"] == {"text": "Paris", "logprobs": [-0.1]} and len(rec["server"]["revision"]) == 12
        rec = check_reader(f"openai:qwen@{bare.base_url}", registry=tmp_path / "s2.json").record
        assert rec["tokens_from"] == "usage.completion_tokens"


def test_90_without_logprobs_is_refused_before_the_kernel(settings):
    "90 runs LoRE, so it needs log-probs exactly as 40 does: a server without them is refused and no run folder is made."
    with FakeOpenAIServer(default="Paris", models=["qwen"], logprobs=False) as bare:
        for nb in ("90_benchmark", "40_papers.lore"):
            with pytest.raises(ValueError, match=f"{nb}: the reader cannot serve this run: .*no per-token log-probabilities"):
                run_notebook(nb, "smoke", {"reader": f"openai:qwen@{bare.base_url}"}, settings=settings, root=ROOT, progress=False)
        chat, comp = ["/v1/chat/completions"] * 4, ["/v1/completions"] * 4  # per endpoint: short, long, both again
        ask = ["/v1/models"] * 2  # the check's, then the canary's own (is it llama.cpp's server?), once per client
        assert [r.path for r in bare.requests] == [*ask, *chat, *comp,  # 90: SuRe reads on completions
                                                   *ask, *chat]
    assert runs_made(settings) == []


def test_80_with_a_base_url_without_v1_is_refused_before_a_run_folder(settings, tmp_path):
    "Issue 42 item 4: `ragkit run 80_papers.witqa -p reader openai:<model>@http://127.0.0.1:<port>` (no /v1) fails before any folder."
    with FakeOpenAIServer(default="Paris", models=["qwen"]) as srv:
        base = srv.base_url.removesuffix("/v1")
        r = subprocess.run([str(ROOT / ".venv" / "bin" / "ragkit"), "run", "80_papers.witqa", "-p", "reader", f"openai:qwen@{base}"],
                           cwd=ROOT, env={**os.environ, "RAGKIT_OUTPUTS_DIR": str(settings.outputs_dir)}, capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert f"a short completion at {base}/chat/completions failed" in r.stderr and f"try {base}/v1" in r.stderr, r.stderr[-2000:]
    assert runs_made(settings) == []


@pytest.mark.parametrize("spec, why", [("openai:m@http://127.0.0.1:8000/v1#sk-abcdef", "has a fragment"),
                                       ("openai:m@http://bob:pw@127.0.0.1:8000/v1", "carries a credential")])
def test_fragments_and_user_info_are_refused(spec, why):
    with pytest.raises(ValueError, match=why) as e: parse_reader(spec)
    assert "sk-abcdef" not in str(e.value) and "pw@" not in str(e.value)


READER_NB = '''import json, logging, pathlib, sys
logging.basicConfig(stream=sys.stderr, level=logging.DEBUG, force=True)  # httpx's and httpcore's debug lines into the notebook
from ragkit.lm.backends import build_reader, parse_reader
lm = build_reader(reader, cache="toy")
c = lm.generate(["Capital of France?"])[0]
print(repr(lm), repr(lm.lm), repr(parse_reader(reader)), lm.lm.base_url)
pathlib.Path(out_dir, "results.json").write_text(json.dumps({"reader": reader, "answer": c.text, "identity": lm.identity}))'''


def test_a_reader_spec_never_leaks_into_records_logs_or_repr(tmp_path, settings, caplog, capfd):
    "A path segment that is no API prefix and a short query value reach no params.json, run.json, results.json, notebook, overrides line, repr or log."
    d = toy_project(tmp_path / "proj", 'reader = ""\nout_dir = ""', READER_NB, profiles='[reproduce]\nnotebooks = ["t"]\n')
    caplog.set_level(logging.DEBUG)  # the runner's own process: the health check's httpx lines
    with FakeOpenAIServer(default="Paris", models=["m"]) as srv:
        port = srv.base_url.split(":")[2].split("/")[0]
        spec = f"openai:m@http://127.0.0.1:{port}/{TENANT}/v1?sub={SUB}"
        out = run_notebook("t", "smoke", {"reader": spec}, settings=settings, root=d, progress=True)
        sent = [r.path for r in srv.requests]
    assert any(TENANT in p and SUB in p for p in sent)  # the server was reached at the URL given ...
    stored = f"openai:m@http://127.0.0.1:{port}/***/v1?sub=***"
    res = json.loads((out / "results.json").read_text())
    assert (res["reader"], res["answer"], res["identity"]) == (stored, "Paris", "openai:m")  # ... while the kernel saw the stored spec
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "ok" and run["reader"]["reader"] == stored and run["overrides"] == {"reader": stored}
    texts = {p.name: p.read_text() for p in out.iterdir() if p.is_file()}
    assert {"params.json", "run.json", "results.json", "t.ipynb"} <= set(texts)
    assert "HTTP Request: POST" in texts["t.ipynb"] and "/***/v1/chat/completions" in texts["t.ipynb"]  # the kernel's httpx line, as shown
    err = capfd.readouterr().err
    assert '"reader": "' + stored + '"' in err  # the overrides line
    logs = "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP Request: POST" in logs
    texts |= {"stderr": err, "runner logs": logs, "repr": repr(parse_reader(spec)) + repr(OpenAILM("m", parse_reader(spec).base_url))}
    leaked = {name: s for name, t in texts.items() for s in (TENANT, SUB) if s in t}
    assert not leaked, leaked


def _switching(after: int):
    "A fake server's answers that change after `after` questions (the canaries aside): one backend swapped for another."
    from ragkit.lm.openai import CANARY, LONG_CANARY
    n = [0]
    def answer(prompt):
        n[0] += prompt not in (CANARY, LONG_CANARY)
        return "Paris" if n[0] <= after else "London"
    return answer


def test_a_server_that_changes_mid_run_stops_the_run_before_its_answers_mix(tmp_path):
    "Issue 53: 20 answers of one backend, then another: evaluate stops at the change; no changed answer is cached or stored."
    from ragkit.core import Example
    from ragkit.eval.evaluate import ClosedBook, evaluate
    from ragkit.lm.backends import ServerChanged
    exs = [Example(f"q{i}", f"Question {i}?", ["Paris"]) for i in range(40)]
    with FakeOpenAIServer(_switching(20), models=["qwen"]) as srv:
        lm = build_reader(f"openai:qwen@{srv.base_url}", cache=tmp_path / "lm.sqlite")
        with pytest.raises(ServerChanged, match="the server changed during the run: it answers the canary question"):
            evaluate(ClosedBook(lm), exs, out_dir=tmp_path / "runs", batch_size=8, progress=False)
    rows = [json.loads(l) for f in (tmp_path / "runs").rglob("examples.jsonl") for l in f.read_text().splitlines()]
    assert len(rows) == 16 and {r["prediction"] for r in rows} == {"Paris"}  # two batches passed the check after them
    import sqlite3
    texts = [json.loads(v)["text"] for (v,) in sqlite3.connect(tmp_path / "lm.sqlite").execute("SELECT value FROM cache")]
    assert len(texts) == 16 and set(texts) == {"Paris"}  # the batch that met the change left nothing in the cache


def test_a_second_server_with_the_same_canary_or_a_lost_registry_is_never_served_the_first_ones_answers(tmp_path):
    "Issue 53: the same short canary (text and log-probs) but another server; and the registry deleted: nothing is served."
    from ragkit.lm.openai import CANARY
    cache = tmp_path / "lm.sqlite"
    with FakeOpenAIServer({CANARY: "Paris"}, default="one", models=["qwen"]) as a, \
         FakeOpenAIServer({CANARY: "Paris"}, default="two", models=["qwen"]) as b:
        assert build_reader(f"openai:qwen@{a.base_url}", cache=cache).generate(["Q?"])[0].text == "one"
        with pytest.raises(ValueError, match="on /chat/completions long 'two', recorded 'one'"):
            build_reader(f"openai:qwen@{b.base_url}", cache=cache)
        server_registry(cache).unlink()
        with pytest.raises(ValueError, match="held back, not served.*RAGKIT_ADOPT_ANSWERS=openai:qwen"):
            build_reader(f"openai:qwen@{b.base_url}", cache=cache)
        assert not server_registry(cache).exists()  # the next server did not become the reference
        with pytest.raises(ValueError, match="held back"):  # ... and the health check before a kernel says the same
            check_reader(f"openai:qwen@{b.base_url}", registry=server_registry(cache))


def test_one_probe_per_run_the_kernel_trusts_the_check_before_it(tmp_path, settings):
    "Issue 54, item 3: a rerun whose answers are all cached asks the server only the pre-kernel check's canaries."
    nb = '''from ragkit.lm.backends import build_reader
lm = build_reader(reader, cache="toy")
print(lm.generate(["Capital of France?"])[0].text)'''
    d = toy_project(tmp_path / "proj", 'reader = ""\nout_dir = ""', nb)
    with FakeOpenAIServer(default="Paris", models=["m"]) as srv:
        spec = f"openai:m@{srv.base_url}"
        run_notebook("t", "smoke", {"reader": spec}, settings=settings, root=d, progress=False)
        first = [r.path for r in srv.requests if r.method == "POST"]
        srv.requests.clear()
        run_notebook("t", "smoke", {"reader": spec}, settings=settings, root=d, progress=False)
        again = [r.path for r in srv.requests if r.method == "POST"]
    assert len(first) == 4 + 1 + 2  # the check's four canaries; the answer; the watch's two after it (no second probe)
    assert again == ["/v1/chat/completions"] * 4  # the check's four canaries, and nothing from the kernel


def test_a_damaged_or_foreign_record_never_makes_the_next_server_the_reference(tmp_path):
    "An emptied entry is damage; an entry of another endpoint is compared there; a cache of any name is counted."
    from ragkit.lm.openai import CANARY
    cache = tmp_path / "answers.db"  # an LM cache named by a path, not <name>.sqlite
    with FakeOpenAIServer({CANARY: "Paris"}, default="one", models=["qwen"]) as a, \
         FakeOpenAIServer({CANARY: "Paris"}, default="two", models=["qwen"]) as b:
        assert build_reader(f"openai:qwen@{a.base_url}", cache=cache).generate(["Q?"])[0].text == "one"
        reg = server_registry(cache)
        rec = json.loads(reg.read_text())["openai:qwen"]
        reg.write_text(json.dumps({"openai:qwen": {"recorded": rec["recorded"]}}))
        with pytest.raises(ValueError, match="records no canary"):
            build_reader(f"openai:qwen@{b.base_url}", cache=cache)
        other = {k.replace("/chat/completions", "/completions"): v for k, v in rec["canary"].items()}
        reg.write_text(json.dumps({"openai:qwen": rec | {"canary": other}}))  # recorded on the other endpoint only
        with pytest.raises(ValueError, match="on /completions long 'two', recorded 'one'"):  # compared there
            build_reader(f"openai:qwen@{b.base_url}", cache=cache)
        reg.unlink()
        with pytest.raises(ValueError, match=r"1 answer\(s\) are cached under that identity \(answers.db"):
            build_reader(f"openai:qwen@{b.base_url}", cache=cache)


def test_a_server_that_samples_its_long_answer_is_told_it_samples(tmp_path):
    "The short fact comes out alike under sampling; the long continuation does not: both are asked twice."
    from ragkit.lm.openai import CANARY
    n = [0]
    def answer(prompt):
        n[0] += 1
        return "Paris" if prompt == CANARY else f"Once upon a time {n[0]}"
    with FakeOpenAIServer(answer, models=["qwen"]) as srv:
        with pytest.raises(ValueError, match="twice, differently .*it samples"):
            build_reader(f"openai:qwen@{srv.base_url}", cache=tmp_path / "lm.sqlite")
    assert not server_registry(tmp_path / "lm.sqlite").exists()  # nothing sampled became a reference
