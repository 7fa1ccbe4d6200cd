"""Open the built site in a real browser, as a reader would: the landing page and one paper page.

Fails (exit 1) on any console error, any failed request, any image that did not load and any formula left as raw
`$...$`; saves a screenshot of each page under outputs/site/. Runs with the site environment's playwright driving the
system Chromium (the Debian package; playwright's own browser download is never used):

    .venv-site/bin/python scripts/site_browser.py [--site _site] [--out outputs/site] [--chromium /usr/bin/chromium]
"""
from __future__ import annotations
import argparse, shutil, sys
from pathlib import Path

PAGES = {"landing": "index.html", "scoreboard-end": "index.html#the-reference-runs",  # the scoreboard, then the headline blocks
         "paper": "papers/64_papers.eor.method.html#eor-on-real-responses-tables-1-and-2-figure-6",  # a paper run: Table 1
         "paper-figure": "papers/64_papers.eor.method.html#figure-6-the-learned-retriever-weights",  # ... its figure
         "paper-verdict": "papers/64_papers.eor.method.html#what-reproduces"}  # ... and its verdict


def visit(browser, page_file: Path, shot: Path) -> list[str]:
    "Load one page from disk; what went wrong on it (console errors, failed requests, broken images, raw formulas)."
    page, problems = browser.new_page(viewport={"width": 1400, "height": 1000}), []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    path, _, anchor = str(page_file).partition("#")
    page.goto(Path(path).resolve().as_uri() + (f"#{anchor}" if anchor else ""), wait_until="load")
    page.wait_for_timeout(1500)  # MathJax typesets after load
    broken = page.eval_on_selector_all("img", "els => els.filter(e => !e.complete || e.naturalWidth === 0).map(e => e.src)")
    problems += [f"image did not load: {src}" for src in broken]
    raw = page.evaluate("() => (document.querySelector('main') || document.body).innerText.match(/\\$[^$\\n]{1,40}\\$/g) || []")
    problems += [f"formula left raw: {t}" for t in raw]
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot), full_page=False)
    page.close()
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, default=Path("_site"))
    ap.add_argument("--out", type=Path, default=Path("outputs/site"))
    ap.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser") or "")
    a = ap.parse_args(argv)
    if not a.chromium: print("site_browser: no chromium on PATH (apt-get install chromium)", file=sys.stderr); return 2
    from playwright.sync_api import sync_playwright
    bad = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=a.chromium, args=["--no-sandbox"])
        for name, rel in PAGES.items():
            got = visit(browser, a.site / rel, a.out / f"{name}.png")
            bad += [f"{rel}: {g}" for g in got]
            print(f"site_browser: {rel}: {'ok' if not got else f'{len(got)} problem(s)'}; screenshot {a.out / f'{name}.png'}")
        browser.close()
    for b in bad: print(f"site_browser: {b}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
