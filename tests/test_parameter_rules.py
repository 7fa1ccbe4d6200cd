"Issue 40: every bad parameter value fails before the kernel, in one line naming the parameter, the value, what is allowed and the fix."
import pytest
from ragkit.notebooks import find_notebook, resolve_parameters
from ragkit.runner import run_notebook

# (notebook, parameter, value, words the one line must hold): the cases, each of which used to fail 10 s to 518 s in
CASES = [
    ("64_papers.eor.method", "train_frac", 1.5, ["1.5", "must be in (0, 1]"]),
    ("64_papers.eor.method", "train_frac", 0, ["must be in (0, 1]"]),
    ("80_papers.witqa", "train_frac", 1.0, ["must be in (0, 1)"]),
    ("70_papers.sure", "n_grid", "a,b", ["'a', 'b'", "whole numbers"]),
    ("70_papers.sure", "n_grid", "0,5", ["'0'", "each at least 1"]),
    ("62_papers.eor.runs", "se_corpus", "bogus", ["'bogus'", "task:corpus"]),
    ("62_papers.eor.runs", "se_corpus", "nq:no-such-corpus", ["unknown corpus 'no-such-corpus'"]),
    ("62_papers.eor.runs", "source_split", 0.7, ["must be in [0, 0.5]"]),
    ("80_papers.witqa", "limits", "bogus", ["'bogus'", "task:n"]),
    ("70_papers.sure", "limits", "squad:3", ["'squad' is not one of this run's tasks"]),
    ("64_papers.eor.method", "metrics", "em,bogus", ["'bogus'", "em, f1, bertscore"]),
    ("90_benchmark", "eor_metrics", "rouge", ["'rouge'", "em, f1, bertscore"]),
    ("40_papers.lore", "compare_readers", "paper-2b", ["'paper-2b'", "paper-1.5b"]),
    ("70_papers.sure", "embedder", "no-such-encoder", ["unknown model 'no-such-encoder'"]),
    ("80_papers.witqa", "retrieved", "no-such-file.jsonl", ["no retrieved-passages file"]),
]


@pytest.mark.parametrize("nb,name,value,words", CASES, ids=[f"{c[0][:2]}-{c[1]}-{c[2]}" for c in CASES])
def test_a_bad_value_fails_in_one_line_before_the_kernel(nb, name, value, words):
    with pytest.raises(ValueError) as e:
        resolve_parameters(find_notebook(nb), "smoke", {name: value}, here=True)
    msg = str(e.value)
    assert "\n" not in msg, msg
    for w in [f"{nb}: parameter {name!r} from -p on the command line", f"to fix it, pass an allowed value (-p {name} VALUE)", *words]:
        assert w in msg, f"{w!r} not in {msg!r}"


def test_good_values_pass():
    "The rules accept what the notebooks accept."
    ok = dict(train_frac=1.0, metrics="em,f1", grid="")
    assert resolve_parameters(find_notebook("64_papers.eor.method"), "smoke", ok, here=True)["train_frac"] == 1.0
    assert resolve_parameters(find_notebook("70_papers.sure"), "smoke", dict(n_grid="1,5", limits="demo:1"), here=True)["n_grid"] == "1,5"
    resolve_parameters(find_notebook("62_papers.eor.runs"), "smoke", dict(se_corpus="demo:demo"), here=True)


def test_device_this_machine_lacks_fails_before_the_kernel_even_with_a_server_reader():
    "-p device cuda on a machine without a GPU, with a server reader: the embedder still takes the device."
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available(): pytest.skip("this machine has a GPU")
    with pytest.raises(ValueError, match="parameter 'device' .*sees no CUDA GPU here.*the embedder still runs there"):
        resolve_parameters(find_notebook("40_papers.lore"), "smoke", dict(device="cuda", reader="openai:m@http://127.0.0.1:9/v1"), here=True)


def test_a_reader_spec_with_a_credential_is_refused_without_repeating_it():
    with pytest.raises(ValueError) as e:
        resolve_parameters(find_notebook("90_benchmark"), "smoke", dict(reader="openai:m@http://u:s3cr3t@127.0.0.1:9/v1"), here=True)
    assert "credential" in str(e.value) and "s3cr3t" not in str(e.value)


def test_datasets_without_their_data_fail_before_the_kernel(monkeypatch):
    "90 -p datasets squad with no data directory used to fail 10 s into the kernel."
    monkeypatch.setenv("RAGKIT_DATA_DIR", "")
    with pytest.raises(ValueError, match=r"parameter 'datasets' = 'squad' from -p on the command line: no data for squad here"):
        resolve_parameters(find_notebook("90_benchmark"), "smoke", dict(datasets="squad"), here=True)
    assert resolve_parameters(find_notebook("90_benchmark"), "smoke", dict(datasets="squad"))["datasets"] == "squad"  # a record's check: by value


def test_no_run_folder_is_made_for_a_bad_value(tmp_path):
    "The runner checks before it touches the run folder."
    out = tmp_path / "run"
    with pytest.raises(ValueError, match="train_frac"):
        run_notebook("64_papers.eor.method", params=dict(train_frac=1.5), out=out, progress=False)
    assert not out.exists()


def test_every_parameter_says_what_it_accepts():
    "Issue 55: `ragkit list NB --profile P` names, for every parameter of every notebook, what it accepts."
    from ragkit.notebooks import list_lines, notebook_rules, project_root, rule_text
    for nb in sorted((project_root() / "nbs").glob("[0-9]*.ipynb")):
        for k, rule in (notebook_rules(nb) or {}).items():
            assert rule_text(rule).strip(), f"{nb.stem}: the rule of {k!r} says nothing of what it accepts"
    lines = list_lines(find_notebook("80_papers.witqa"), "paper")
    assert lines[0].startswith("80_papers.witqa under profile paper"), lines[0]


@pytest.mark.parametrize("nb,value,near", [("40_papers.lore", "sqaud", "squad"), ("80_papers.witqa", "popqq", "popqa")])
def test_a_misspelt_dataset_suggests_only_what_the_notebook_reads(nb, value, near):
    "Issue 55: the suggestion for a misspelt dataset is one the notebook accepts."
    with pytest.raises(ValueError, match=f"did you mean {near}\\?") as e:
        resolve_parameters(find_notebook(nb), "smoke", {"datasets": value})
    from ragkit.notebooks import notebook_rules
    listed = e.value.args[0].split("choose from ", 1)[1].removesuffix(", or 'auto'").split(", ")
    assert set(listed) == set(notebook_rules(find_notebook(nb))["datasets"].allowed), listed  # its own tasks only


def test_a_notebook_without_its_own_tasks_takes_every_task():
    "A notebook whose `datasets` rule is the shared one (no task list of its own) still takes auto and any task."
    for v in ("auto", "demo,squad"):
        assert resolve_parameters(find_notebook("06_data.cards"), "smoke", {"datasets": v})["datasets"] == v
