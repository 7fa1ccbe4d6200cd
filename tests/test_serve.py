"""`ragkit serve` owns its server, and a real OpenAI-compatible server end to end.

The ownership tests run `ragkit serve --build fake` (ragkit.lm.serve.fake_vllm_server: a stand-in HTTP server with a
child process, as vLLM's server has its engine) and stop it as a user would: TERM, HUP, INT, or `kill -9` of
`ragkit serve` itself; then no process of the server's group may be left and the port must be free. A second start on
a taken port is refused, naming what answers there. A few seconds each.

The vLLM test is slow and not in `make test` (a CPU start takes a minute or two, and the answers a few more); run it
with `scripts/test.sh -m slow tests/test_serve.py` after `ragkit serve` has set vLLM up once."""
import json, os, re, signal, socket, subprocess, sys, time
from pathlib import Path
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import pytest
from ragkit.lm.backends import build_reader, check_reader
from ragkit.lm.serve import _free_port, _pids, port_answers, server_record, vllm_env_dir, vllm_server

RAGKIT = [sys.executable, "-c", "import sys; from ragkit.cli import main; sys.exit(main())"]


_STARTED: list[subprocess.Popen] = []  # every `ragkit serve` a test started: stopped after it, whatever it asserted


@pytest.fixture(autouse=True)
def _stop_what_the_test_started():
    "After each test, stop any `ragkit serve` it left running (a failed assertion must not leave a server on a port)."
    yield
    while _STARTED:
        p = _STARTED.pop()
        if p.poll() is None: p.terminate(); p.communicate(timeout=60)


def start_serve(cache: Path, port: int, *args: str) -> tuple[subprocess.Popen, str]:
    "`ragkit serve smollm2-135m-instruct --build fake` on `port`, its cache in `cache`; the process and its first line."
    env = dict(os.environ, RAGKIT_CACHE_DIR=str(cache), HF_HUB_OFFLINE="1")
    p = subprocess.Popen([*RAGKIT, "serve", "smollm2-135m-instruct", "--build", "fake", "--port", str(port), *args],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    _STARTED.append(p)
    line = p.stdout.readline()
    assert "is served" in line, line + p.stdout.read()
    return p, line


def server_pid(line: str) -> int:
    "The server's pid (its process group) from `ragkit serve`'s first line."
    return int(line.split("(pid ", 1)[1].split(",")[0].split(";")[0])


def port_free(port: int) -> bool:
    "Whether a new server could listen on `port` now (as vLLM and http.server bind: SO_REUSEADDR)."
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try: s.bind(("127.0.0.1", port)); return True
        except OSError: return False


def gone(group: int, port: int, within: float = 15.0) -> bool:
    "Whether, within `within` seconds, no live process of `group` is left and `port` is free."
    end = time.time() + within
    while time.time() < end:
        if not _pids(group) and port_free(port) and not port_answers(port): return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_to_ragkit_serve_stops_its_whole_server(tmp_path, sig):
    "TERM, HUP or INT to `ragkit serve`: it stops the server's process group, says so and exits 0; nothing is left, the port is free."
    port = _free_port()
    p, line = start_serve(tmp_path, port)
    group = server_pid(line)
    assert len(_pids(group)) == 2 and port_answers(port)  # the stand-in and its "engine"
    p.send_signal(sig)
    rest = p.communicate(timeout=60)[0]
    assert p.returncode == 0 and f"stopped ({sig.name}); no server process is left and port {port} is free" in rest, rest
    assert gone(group, port, within=1.0), (_pids(group), port_free(port))


def test_kill_9_of_ragkit_serve_still_stops_the_server(tmp_path):
    "`ragkit serve` killed outright (no handler runs): the kernel sends the server TERM, and it stops with its child."
    if not Path("/proc/self/stat").is_file(): pytest.skip("the parent-death signal is Linux's (prctl PR_SET_PDEATHSIG)")
    port = _free_port()
    p, line = start_serve(tmp_path, port)
    group = server_pid(line)
    p.kill(); p.wait()
    assert gone(group, port), (_pids(group), port_free(port))


def test_a_taken_port_is_refused_naming_what_answers_and_each_start_keeps_its_log(tmp_path):
    "A start on a port the first server answers on fails before it starts anything and names the first; logs are not overwritten."
    port = _free_port()
    first, line = start_serve(tmp_path, port)
    group = server_pid(line)
    second = subprocess.run([*RAGKIT, "serve", "smollm2-135m-instruct", "--build", "fake", "--port", str(port), "--dtype", "float32"],
                            capture_output=True, text=True, env=dict(os.environ, RAGKIT_CACHE_DIR=str(tmp_path)), timeout=60)
    assert second.returncode == 1 and f"port {port} on 127.0.0.1 is taken" in second.stderr, second.stderr
    said = second.stderr  # what serves there (model, precision, the spec to read it with) and whom to stop
    assert "smollm2-135m-instruct in bfloat16 (-p reader openai:smollm2-135m-instruct#fake-bfloat16@" in said, said
    assert f"kill {first.pid}," in said and f"process group {group}" in said, said  # ragkit serve, not vLLM's pid
    assert "is served" not in second.stdout and _pids(group) and port_answers(port)  # the first one is untouched
    first.terminate(); first.communicate(timeout=60)
    assert gone(group, port)
    third, line = start_serve(tmp_path, port)
    third.terminate(); third.communicate(timeout=60)
    logs = sorted((tmp_path / "logs").glob(f"vllm-{port}-*.log"))
    assert len(logs) == 2 and all("fake_vllm_server: pid" in l.read_text() for l in logs), logs
    records = [json.loads(l.with_suffix(".json").read_text()) for l in logs]
    assert {r["pid"] for r in records} == {group, server_pid(line)} and all(r["build"] == "fake" for r in records)


def test_a_taken_port_names_the_pid_and_program_never_the_arguments(tmp_path):
    "Another server on the port, started with its key on its command line: the refusal names its pid and program only."
    port, key = _free_port(), "sk-fake-53-do-not-print"
    listen = ("import socket, sys, time; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
              "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); print('up', flush=True); time.sleep(60)")
    other = subprocess.Popen([sys.executable, "-c", listen, str(port), "--api-key", key], stdout=subprocess.PIPE,
                             text=True)
    try:
        assert other.stdout.readline().strip() == "up"
        second = subprocess.run([*RAGKIT, "serve", "smollm2-135m-instruct", "--build", "fake", "--port", str(port)],
                                capture_output=True, text=True, env=dict(os.environ, RAGKIT_CACHE_DIR=str(tmp_path)),
                                timeout=60)
    finally: other.kill(); other.wait()
    assert second.returncode == 1 and f"port {port} on 127.0.0.1 is taken" in second.stderr, second.stderr
    assert f"pid {other.pid} ({Path(os.path.realpath(sys.executable)).name})" in second.stderr, second.stderr
    said = second.stderr + second.stdout
    assert key not in said and "--api-key" not in said and "socket" not in said, said  # none of its arguments

def test_a_spec_of_another_precision_than_served_is_refused_before_the_kernel(tmp_path):
    "`ragkit run` with float32 in the spec of a bfloat16 server `ragkit serve` started: refused, the spec to give named, no run folder."
    port = _free_port()
    first, line = start_serve(tmp_path, port)
    try:
        spec = line.split("-p reader ", 1)[1].split()[0] if "-p reader " in line else first.stdout.readline().split()[-1]
        wrong = spec.replace("-bfloat16@", "-float32@")
        env = dict(os.environ, RAGKIT_CACHE_DIR=str(tmp_path), RAGKIT_OUTPUTS_DIR=str(tmp_path / "outputs"))
        run = subprocess.run([*RAGKIT, "run", "40_papers.lore", "--profile", "smoke", "-p", "reader", wrong],
                             capture_output=True, text=True, env=env, timeout=300, cwd=Path(__file__).parents[1])
    finally: first.terminate(); first.communicate(timeout=60)
    said = run.stderr + run.stdout
    assert run.returncode != 0 and "in bfloat16" in said and "(float32)" in said and f"-p reader {spec}" in said, said
    assert not (tmp_path / "outputs").exists(), list((tmp_path / "outputs").rglob("*"))  # refused before any folder


def test_the_cpu_build_binds_a_thread_to_every_core_and_records_it(tmp_path, monkeypatch):
    "The CPU build's environment: one OpenMP thread per core this process may use, bound to those cores; vLLM's caches in ragkit's."
    from ragkit.lm.serve import _server_env, core_list, cpu_cores
    monkeypatch.setenv("RAGKIT_CACHE_DIR", str(tmp_path))
    env = _server_env("cpu", 2, None)
    cores = sorted(os.sched_getaffinity(0))
    assert env["VLLM_CPU_OMP_THREADS_BIND"] == core_list(cores) and env["OMP_NUM_THREADS"] == str(len(cores))
    assert cpu_cores(1) == cores[:1] and core_list([0, 1]) == "0-1"
    assert all(env[k].startswith(str(tmp_path)) for k in ("VLLM_CACHE_ROOT", "VLLM_CONFIG_ROOT", "TORCHINDUCTOR_CACHE_DIR"))
    assert env["VLLM_USE_AOT_COMPILE"] == "0"  # the compile cache that loads on a warm start (vllm-cpu 0.32.0's AOT one fails)
    monkeypatch.setenv("VLLM_USE_AOT_COMPILE", "1")
    assert _server_env("cpu", 2, None)["VLLM_USE_AOT_COMPILE"] == "1"  # the user's own setting wins


def test_a_run_through_a_served_spec_records_the_servers_threads(tmp_path, monkeypatch):
    "check_reader's record (what `ragkit run` keeps in run.json) names the server ragkit serve started, while it runs."
    monkeypatch.setenv("RAGKIT_CACHE_DIR", str(tmp_path))
    with vllm_server("smollm2-135m-instruct", build="fake") as spec:
        rec = check_reader(spec, needs=("chat", "logprobs"), registry=tmp_path / "servers.json").record
        assert rec["launched_by_ragkit_serve"]["build"] == "fake" and "threads_bound_to" in rec["launched_by_ragkit_serve"]
        assert build_reader(spec).generate(["Say OK."], max_new_tokens=2)[0].text == "OK"


needs_vllm = pytest.mark.skipif(not (vllm_env_dir("cpu") / "ragkit-ready.txt").is_file(),
                                reason="needs vLLM's CPU build: `ragkit serve` sets it up once")
QS = ["What is the capital of France? Answer in one word.", "Who wrote Romeo and Juliet? Answer with the name only.",
      "What is 2 + 3? Answer with a number."]


@pytest.mark.slow
@needs_vllm
def test_served_answers_match_local_and_cache_under_the_served_identity(tmp_path, private_cache):
    "Served greedy answers carry log-probs and usage, agree with the local reader in the same precision, and are cached apart."
    with vllm_server("qwen2.5-coder-0.5b-instruct") as spec:
        assert "logprobs checked" in check_reader(spec, needs=("logprobs",))
        from ragkit.lm.serve import core_list, cpu_cores
        assert server_record(spec)["threads_bound_to"] == core_list(cpu_cores())  # every core computes
        with pytest.raises(ValueError, match=f"served by a start of `ragkit serve` .* -p reader {re.escape(spec)}"):  # its record
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


@pytest.mark.slow
@needs_vllm
def test_bfloat16_and_float32_of_one_model_get_different_fingerprints(tmp_path, private_cache):
    "One model served in bfloat16, then float32: their fingerprints differ (the long canary's text, in outputs/bench/server.json), so one cannot pass for the other."
    from ragkit.lm.backends import fingerprint_differs
    fps = {}
    for dtype in ("bfloat16", "float32"):
        with vllm_server("qwen2.5-coder-0.5b-instruct", dtype=dtype) as spec:
            fps[dtype] = check_reader(spec, needs=("logprobs",), registry=tmp_path / "servers.json").record["server"]
    why = fingerprint_differs(fps["bfloat16"], fps["float32"])
    assert why is not None, fps
    print(why)
