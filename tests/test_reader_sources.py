"""Issue 53, item 3: every way to name a reader works. `RAGKIT_READER`, settings.ini's `reader`, `-p reader` and a
notebook's default go through one parser and one check before the kernel (a spec the check refuses fails in a second,
naming the variable or file that set it), and every record of the run (params.json, run.json with its settings block,
the executed notebook, results.json) holds only the redacted spec, whatever the source. The served reader is the
package's FakeOpenAIServer; the URL carries a letters-only path segment and a short query value, which the credential
check lets through and the stored form masks, so finding either in the run folder would be a leak."""
import json, os
from pathlib import Path

import pytest

from ragkit.config import load_settings
from ragkit.lm.openai import FakeOpenAIServer
from ragkit.notebooks import project_root
from ragkit.runner import run_notebook
from toy import toy_project

ROOT = project_root(Path(__file__).parent)
TENANT, KEY = "tenantzq", "k3yq7x"  # a path segment no API prefix and a short query value: the fake key in the URL

READER_NB = '''import json, os, pathlib
from ragkit.config import load_settings
from ragkit.lm.backends import build_reader, parse_reader
lm = build_reader(reader, cache="toy")
c = lm.generate(["Capital of France?"])[0]
pathlib.Path(out_dir, "results.json").write_text(json.dumps({"reader": reader, "answer": c.text,
    "identity": lm.identity, "parsed": str(parse_reader(reader)), "kernel settings": load_settings().to_dict(),
    "kernel env": {k: v for k, v in os.environ.items() if k.startswith("RAGKIT_") and k != "RAGKIT_READER_SPECS"}}))'''


@pytest.fixture
def env(tmp_path, monkeypatch):
    "Outputs and caches (the LM cache and servers.json) under tmp_path, for the runner and its kernel."
    vals = {"RAGKIT_OUTPUTS_DIR": str(tmp_path / "outputs"), "RAGKIT_CACHE_DIR": str(tmp_path / "cache")}
    for k, v in vals.items(): monkeypatch.setenv(k, v)
    return vals


def spec_of(srv: FakeOpenAIServer) -> tuple[str, str]:
    "(the spec as given, with the fake key in its URL; the spec as every record must hold it)."
    port = srv.base_url.split(":")[2].split("/")[0]
    base = f"openai:m@http://127.0.0.1:{port}"
    return f"{base}/{TENANT}/v1?sub={KEY}", f"{base}/***/v1?sub=***"


def leaks(folder: Path) -> dict:
    "Every file under `folder` (subfolders too) that holds the fake key or the path segment."
    return {str(p.relative_to(folder)): s for p in folder.rglob("*") if p.is_file()
            for s in (TENANT, KEY) if s in p.read_text(errors="replace")}


def set_reader(source: str, spec: str, tmp_path: Path, monkeypatch) -> str:
    "Name the reader by `source` (the environment or a settings file); what an error must name as its origin."
    if source == "env":
        monkeypatch.setenv("RAGKIT_READER", spec)
        return "$RAGKIT_READER"
    ini = tmp_path / "settings.ini"
    ini.write_text(f"[ragkit]\nreader = {spec}\n")
    monkeypatch.setenv("RAGKIT_SETTINGS", str(ini))
    monkeypatch.delenv("RAGKIT_READER", raising=False)
    return f"`reader` in {ini}"


@pytest.mark.parametrize("source", ["env", "ini"])
def test_a_server_spec_from_the_settings_runs_and_every_record_holds_it_redacted(source, tmp_path, env, monkeypatch):
    "RAGKIT_READER or settings.ini's reader names a server: the run reads through it; no file of the run has its URL."
    d = toy_project(tmp_path / "proj", 'reader = ""\nout_dir = ""', READER_NB)
    with FakeOpenAIServer(default="Paris", models=["m"]) as srv:
        given, stored = spec_of(srv)
        set_reader(source, given, tmp_path, monkeypatch)
        out = run_notebook("t", "smoke", settings=load_settings(), root=d, progress=False)
        sent = [r.path for r in srv.requests]
    assert any(TENANT in p and KEY in p for p in sent), sent  # the server was reached at the URL given
    run, res = json.loads((out / "run.json").read_text()), json.loads((out / "results.json").read_text())
    assert run["status"] == "ok" and (res["answer"], res["identity"]) == ("Paris", "openai:m")
    assert run["settings"]["reader"] == stored and run["reader"]["reader"] == stored and res["parsed"] == stored
    assert run["params"]["reader"] == "" and json.loads((out / "params.json").read_text())["reader"] == ""
    assert res["kernel settings"]["reader"] == stored and res["kernel env"]["RAGKIT_READER"] == stored  # the kernel's
    assert not leaks(out), leaks(out)


def test_a_server_spec_from_a_parameter_still_wins_over_the_settings(tmp_path, env, monkeypatch):
    "-p reader names the server while RAGKIT_READER names a local model: the parameter is read, and stored redacted."
    d = toy_project(tmp_path / "proj", 'reader = ""\nout_dir = ""', READER_NB)
    monkeypatch.setenv("RAGKIT_READER", "smollm2-135m-instruct")
    with FakeOpenAIServer(default="Paris", models=["m"]) as srv:
        given, stored = spec_of(srv)
        out = run_notebook("t", "smoke", {"reader": given}, settings=load_settings(), root=d, progress=False)
    run = json.loads((out / "run.json").read_text())
    assert run["reader"]["reader"] == stored and run["params"]["reader"] == stored
    assert run["settings"]["reader"] == "smollm2-135m-instruct" and not leaks(out), leaks(out)


@pytest.mark.parametrize("source", ["env", "ini"])
def test_a_spec_the_check_refuses_fails_before_the_kernel_naming_where_it_was_set(source, tmp_path, env, monkeypatch,
                                                                                 capsys):
    "A password in the URL's user info, from either source: refused in a second, no folder made, the key never shown."
    from ragkit.cli import main
    d = toy_project(tmp_path / "proj", 'reader = ""\nout_dir = ""', READER_NB)
    where = set_reader(source, f"openai:m@http://bob:{KEY}@127.0.0.1:9/v1", tmp_path, monkeypatch)
    monkeypatch.chdir(d)
    assert main(["run", "t"]) == 2
    err = capsys.readouterr().err
    assert f"the reader set by {where} cannot serve this run: " in err and "carries a credential" in err, err
    assert KEY not in err and not (tmp_path / "outputs").exists()


def test_a_server_that_is_down_is_refused_naming_ragkit_reader(tmp_path, env, monkeypatch, capsys):
    "A server spec in RAGKIT_READER that nothing answers: the check, not the kernel, says so, and names the variable."
    from ragkit.cli import main
    d = toy_project(tmp_path / "proj", 'reader = ""\nout_dir = ""', READER_NB)
    monkeypatch.setenv("RAGKIT_READER", "openai:m@http://127.0.0.1:9/v1")
    monkeypatch.chdir(d)
    assert main(["run", "t"]) == 2
    err = capsys.readouterr().err
    assert "t: the reader set by $RAGKIT_READER cannot serve this run: cannot reach http://127.0.0.1:9/v1" in err, err
    assert not (tmp_path / "outputs").exists()


def test_ragkit_reader_runs_a_paper_notebook_end_to_end(tmp_path, monkeypatch, capsys, private_cache):
    "80_papers.witqa on the demo, its reader named only by RAGKIT_READER (a server spec): ok; no record has the URL."
    from ragkit.cli import main
    cache = private_cache
    out = tmp_path / "run"
    with FakeOpenAIServer(default="Paris", models=["m"]) as srv:
        given, stored = spec_of(srv)
        monkeypatch.setenv("RAGKIT_READER", given)
        code = main(["run", "80_papers.witqa", "--out", str(out), "--quiet", "-p", "datasets", "demo",
                     "-p", "limit", "2"])
        sent = len(srv.requests)
    assert code in (0, None), capsys.readouterr().err[-3000:]
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "ok" and run["settings"]["reader"] == stored and run["reader"]["reader"] == stored
    assert sent > 2  # the check's requests and the notebook's answers
    assert not leaks(out), leaks(out)


def test_a_paper_notebooks_reader_rule_names_where_an_empty_reader_was_set():
    "80's READER_RULE checks settings.reader for its empty default, and the error names $RAGKIT_READER and its fix."
    from ragkit.notebooks import find_notebook, resolve_parameters
    s = load_settings(env={**os.environ, "RAGKIT_READER": f"openai:m@http://bob:{KEY}@127.0.0.1:9/v1"})
    with pytest.raises(ValueError, match=r"80_papers.witqa: parameter 'reader' from \$RAGKIT_READER: .*carries a "
                                         r"credential.*to fix it, set \$RAGKIT_READER to an allowed value, or unset it"
                       ) as e:
        resolve_parameters(find_notebook("80_papers.witqa", ROOT), "smoke", root=ROOT, here=True, settings=s)
    assert KEY not in str(e.value)
