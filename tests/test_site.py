"""The website: built by `make site`'s script from what is committed, offline, with Sphinx's warnings as errors; every
internal link and image resolves; every module's docstring names its page, which the build wrote; the landing page holds the
scoreboard of every committed claim; paper pages show no nbdev directive, no machine path and no raw formula; and,
where Chromium is installed, a real browser opens the landing page and a paper page without an error."""
import html, os, re, shutil, subprocess
from pathlib import Path

import pytest

import json
from ragkit.report import claim_rows
from ragkit.site import VERDICT_CLASS, check_links, paper_card, raw_math

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    "The site, built once for these tests into a temporary folder (the browser check is its own test)."
    out = tmp_path_factory.mktemp("site") / "_site"
    r = subprocess.run(["bash", "scripts/site.sh"], cwd=ROOT, env={**os.environ, "SITE_OUT": str(out), "SITE_BROWSER": "0"},
                       capture_output=True, text=True, timeout=1500)
    assert r.returncode == 0, f"make site failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    return out


def test_every_internal_link_and_image_resolves(site):
    assert (site / "index.html").is_file()
    assert check_links(site) == []


def test_module_docstrings_name_built_pages(site):
    "Each module's docstring names its lesson notebook and its page, a file the build wrote under _site/; none links a site that is not this project's."
    docs = {f: re.search(r"Lessons: `(nbs/\S+?\.ipynb)`; on the site \(`make site`\): `(\S+?\.html)`", f.read_text(encoding="utf-8"))
            for f in (ROOT / "ragkit").rglob("*.py") if f.name not in ("__init__.py", "_modidx.py")}
    assert docs and all(docs.values()), [str(f) for f, m in docs.items() if not m]
    missing = [m[2] for m in docs.values() if not (site / m[2]).is_file()] + [m[1] for m in docs.values() if not (ROOT / m[1]).is_file()]
    assert not missing, missing
    elsewhere = [str(f) for f in [*(ROOT / "ragkit").rglob("*.py"), ROOT / "pyproject.toml", ROOT / "README.md", *site.rglob("*.html")]
                 if re.search(r"ragkit\.github\.io|github\.com/ragkit", f.read_text(encoding="utf-8", errors="replace"))]
    assert not elsewhere, elsewhere


def test_landing_page_is_the_scoreboard(site):
    "A card per paper whose counts are the committed results.json files' (every claim by its Holm-adjusted direction), then one row per claim linked to its deciding questions."
    page = (site / "index.html").read_text(encoding="utf-8")
    rows = claim_rows(ROOT)
    assert len(rows) > 40 and len(re.findall(r'href="papers/[^"#]+\.evidence\.html#claim-[a-z0-9-]+"', page)) == len(rows)
    verdicts = [r for f in sorted((ROOT / "outputs" / "paper").glob("*/results.json")) for r in json.loads(f.read_text())["verdict"] or []]
    for paper in ("LoRE", "EoR", "SuRe", "WITQA", "Benchmark"):  # README's tally, under README's names, and the paper's sentence
        card = paper_card(paper, rows)
        assert (f'">{paper}</a></h3><p class="card-outcome">{card["sentence"]}</p><ul><li>{card["claims"]} claims</li>'
                f'<li>{card["with_paper_number"]} with a paper number</li>') in page, paper
        assert "".join(f'<li>{c} <span class="verdict {VERDICT_CLASS[d]}">{d}</span></li>' for d, c in card["counts"].items()) in page, paper
    for paper, arxiv in (("LoRE", "2410.10042"), ("EoR", "2405.20680"), ("SuRe", "2404.13081"), ("WITQA", "2402.13492")):
        assert re.search(rf'<h3><a href="papers/[^"]+\.html">{paper}</a></h3>.*?<a href="https://arxiv\.org/abs/{arxiv}">the paper</a>', page), paper
    assert sum(sum(paper_card(p, rows)["counts"].values()) for p in ("LoRE", "EoR", "SuRe", "WITQA", "Benchmark")) == len(verdicts)
    numbered = [r for r in verdicts if r.get("paper") is not None]
    assert sum(paper_card(p, rows)["with_paper_number"] for p in ("LoRE", "EoR", "SuRe", "WITQA", "Benchmark")) == len(numbered)


def test_every_claim_link_reaches_its_deciding_questions(site):
    "Each claim's anchor is on its run's evidence page, with the deciding questions or the reason there are none."
    page = (site / "index.html").read_text(encoding="utf-8")
    for href in set(re.findall(r'href="(papers/[^"#]+\.evidence\.html)#(claim-[a-z0-9-]+)"', page)):
        target = (site / href[0]).read_text(encoding="utf-8")
        assert f'id="{href[1]}"' in target, href


def test_no_raw_formula_and_the_verdict_first(site):
    "No page shows an untypeset formula; each reference run's page opens with its verdict."
    assert raw_math(site) == []
    for page in sorted((site / "papers").glob("[0-9]*_*.html")):
        if page.name.endswith(".evidence.html"): continue
        heads = re.findall(r"<h2>([^<]+)", page.read_text(encoding="utf-8"))
        assert [h for h in heads if h.strip() != "Contents"][:1] == ["The verdict"], (page.name, heads[:3])


def test_paper_pages_read_like_papers(site):
    "No nbdev directive, machine path, progress bar or raw formula on a reference run's page; its figures are there."
    for page in sorted((site / "papers").glob("*.html")):
        if page.name.endswith(".evidence.html"): continue  # the deciding questions: a page of rows, no figure
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"#\|\s*(export|default_exp|hide)", text), page.name
        assert not re.search(r"(/work/|/home/|/root/|/tmp/ipykernel)", text), page.name
        assert "IProgress" not in text and "it/s]" not in text, page.name
        assert "<img" in text, page.name


@pytest.mark.skipif(not shutil.which("chromium"), reason="no chromium on PATH (apt-get install chromium): the browser check needs it")
def test_a_browser_opens_it(site, tmp_path):
    "Headless Chromium opens every page at 1400 and 400 px: no console error, failed request, broken image, raw formula or sideways scroll."
    py = ROOT / ".venv-site" / "bin" / "python"
    r = subprocess.run([str(py), "scripts/site_browser.py", "--site", str(site), "--out", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(list(tmp_path.glob("*.png"))) == 12  # 3 pages at 2 widths: the top, and the first table's rows


def test_a_finished_decide_run_gets_its_own_pages(tmp_path):
    "A decide run shares its notebook's name with the reference run: its page and evidence go under decide/, verdict first, linked from the landing page."
    from ragkit.site import decide_section, evidence_pages, paper_pages
    root, src = tmp_path / "root", tmp_path / "src"
    shutil.copytree(ROOT / "nbs", root / "nbs")
    shutil.copytree(ROOT / "outputs" / "paper" / "40_papers.lore", root / "outputs" / "decide" / "40_papers.lore")  # stands in for a finished decide run
    assert decide_section(root, []) == []  # no finished decide run: nothing on the landing page
    pages = paper_pages(root, src, "decide", "decide") + evidence_pages(root, src, "decide", "decide")
    assert pages == ["40_papers.lore", "40_papers.lore.evidence"] and not (src / "papers").exists()
    page = json.loads((src / "decide" / "40_papers.lore.ipynb").read_text())
    assert "".join(page["cells"][1]["source"]).startswith("## The verdict") and "--profile decide" in "".join(page["cells"][1]["source"])
    section = "\n\n".join(decide_section(root, pages))
    anchors = set(re.findall(r"\(decide/40_papers\.lore\.evidence\.md#([^)]+)\)", section))
    evidence = (src / "decide" / "40_papers.lore.evidence.md").read_text()
    assert anchors and all(f"({a})=" in evidence for a in anchors)  # every claim link lands on its MyST target
    assert "decide/40_papers.lore\n" in section  # in the decide runs' table of contents


def test_the_quickstart_is_a_page(site):
    "README's Python block is a page of the site, linked from the landing page."
    page = (site / "quickstart.html").read_text(encoding="utf-8")
    assert re.search(r'from</span>(<span class="w"> </span>| )<span class="nn">ragkit</span>', page) and 'href="quickstart.html"' in (site / "index.html").read_text()

def test_data_shows_exactly_as_written(site, tmp_path):
    "Rows holding a formula, quotes, an entity and a tag, and a claim holding a tag, build and show as written (issue 52)."
    from ragkit.site import build_site
    root, run = tmp_path / "root", "70_papers.sure"
    shutil.copytree(ROOT / "outputs" / "paper" / run, root / "outputs" / "paper" / run)
    qid, odd = "hotpotqa/dev-distractor/5ac23ff0554299636651994d", "Is $x^2$ at Levi's \"Stadium\" &amp; <b>bold</b>?"
    for f in (root / "outputs").rglob("examples.jsonl"):
        rows = [json.loads(l) for l in f.read_text().splitlines()]
        f.write_text("".join(json.dumps(r | ({"question": odd} if r["qid"] == qid else {})) + "\n" for r in rows))
    res = json.loads((root / "outputs" / "paper" / run / "results.json").read_text())
    claim = res["verdict"][0]["claim"] = "SuRe <img src=x onerror=alert(1)> &amp; co"  # a claim is the project's prose: no formula
    (root / "outputs" / "paper" / run / "results.json").write_text(json.dumps(res))
    out = tmp_path / "site"
    build_site(root, out, ROOT / ".venv-site" / "bin" / "sphinx-build")
    shown = lambda page, start: [html.unescape(t) for t in re.findall(rf">({re.escape(start)}[^<]*)<", (out / page).read_text())]
    assert set(shown(f"papers/{run}.evidence.html", "Is ")) == {odd}  # every listing of the question, exactly
    for page in ("index.html", f"papers/{run}.html", f"papers/{run}.evidence.html"):
        assert "<img src=x" not in (out / page).read_text() and claim in "".join(shown(page, "SuRe ")), page
    assert raw_math(out) == [] and check_links(out) == []
