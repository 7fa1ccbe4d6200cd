"""Open the built site in a real browser, as a reader would: every page, at a desktop width (1400 px) and a phone's (400 px).

Fails (exit 1) on a console error, a failed request, an image that did not load, a MathJax error, a formula left raw
(`$$`, or `$...$` around TeX), a page wider than the window (it would scroll sideways) and a search that finds nothing.
The site is served over HTTP on 127.0.0.1 (as `python -m http.server` serves it to a reader), so its search page, which
a browser refuses from file://, is checked too: a query must list results with their snippets. Saves screenshots of the
landing page and a paper run's verdict at both widths under --out (`make site`: _site/screenshots/; `make screenshots`:
the committed outputs/site/). Runs with the site environment's playwright driving the system Chromium (the Debian
package; playwright's own browser download is never used):

    .venv-site/bin/python scripts/site_browser.py [--site _site] [--out _site/screenshots] [--chromium /usr/bin/chromium]
"""
from __future__ import annotations
import argparse, functools, shutil, sys, threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

WIDTHS = {"desktop": 1400, "phone": 400}
SHOTS = {"landing": "index.html", "paper-verdict": "papers/64_papers.eor.method.html",  # pages whose screenshots are kept
         "evidence": "papers/70_papers.sure.evidence.html"}
RAW = r"/\$\$|\$[^$\n]{0,80}?(\\[A-Za-z]+|[_^]\{?)[^$\n]{0,80}?\$/"  # the site check's rule (ragkit.site.raw_math), in JavaScript


class _Quiet(SimpleHTTPRequestHandler):
    "The site's files, served without a log line per request."
    def log_message(self, *a): pass


class _Server(ThreadingHTTPServer):
    "The site's server: a browser that closes a page mid-transfer is no error."
    daemon_threads = True
    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def serve(site: Path) -> ThreadingHTTPServer:
    "Serve `site` on a free port of 127.0.0.1 from a background thread (stop it with .shutdown())."
    httpd = _Server(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def searched(browser, base: str, query: str = "LoRE") -> list[str]:
    "Search the site for `query` as a reader would; what went wrong (no result, or results without snippets)."
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{base}/search.html?q={query}", wait_until="load")
    try: page.wait_for_selector("#search-results li", timeout=15000)
    except Exception: return [f"search.html?q={query}: no result listed"]
    found = page.eval_on_selector_all("#search-results li", "els => els.map(e => e.textContent.trim())")
    page.close()
    if not any(len(t) > len(query) + 40 for t in found): return [f"search.html?q={query}: results without snippets"]
    return []


def visit(browser, url: str, width: int, shot: Path | None) -> list[str]:
    "Load one page at `width`; what went wrong on it."
    page, problems = browser.new_page(viewport={"width": width, "height": 900}), []
    # a missing file is named by its HTTP line below (the console's says only "404"; the favicon's is no problem)
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" and not m.text.startswith("Failed to load resource") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    page.goto(url, wait_until="load")
    page.wait_for_timeout(800)  # MathJax typesets after load
    broken = page.eval_on_selector_all("img", "els => els.filter(e => !e.complete || e.naturalWidth === 0).map(e => e.src)")
    problems += [f"image did not load: {src}" for src in broken]
    raw = page.evaluate("() => { const m = (document.querySelector('main') || document.body).cloneNode(true);"  # the text a reader sees,
                        " m.querySelectorAll('pre, code, script, style, .math, mjx-container, table, .cell_output')"  # code, math
                        ".forEach(e => e.remove());"  # and data (tables, cell outputs) aside
                        f" return (m.textContent.match({RAW}g) || []).slice(0, 3); }}")
    problems += [f"formula left raw: {t}" for t in raw]
    problems += [f"MathJax error: {t}" for t in page.eval_on_selector_all("mjx-merror", "els => els.map(e => e.textContent)")]
    wide = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    if wide > 1: problems.append(f"wider than the window by {wide} px (it scrolls sideways)")
    if shot:
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=False)
        page.evaluate("() => document.querySelectorAll('details.claims').forEach(d => d.open = true)")  # claims unfolded
        rows = page.query_selector(".scoreboard table, .stack table")  # and the first claim or question table's rows
        if rows:
            rows.scroll_into_view_if_needed(timeout=5000); page.wait_for_timeout(100)
            page.screenshot(path=str(shot.with_name(shot.name.replace(".png", "-rows.png"))), full_page=False)
    page.close()
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, default=Path("_site"))
    ap.add_argument("--out", type=Path, default=Path("_site/screenshots"))
    ap.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser") or "")
    a = ap.parse_args(argv)
    if not a.chromium: print("site_browser: no chromium on PATH (apt-get install chromium)", file=sys.stderr); return 2
    from playwright.sync_api import sync_playwright
    pages = sorted(p for p in a.site.rglob("*.html") if "_static" not in p.relative_to(a.site).parts and p.name != "genindex.html")
    shots = {v: k for k, v in SHOTS.items()}
    bad = []
    httpd = serve(a.site)
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=a.chromium, args=["--no-sandbox"])
        for f in pages:
            rel = f.relative_to(a.site).as_posix()
            for label, width in WIDTHS.items():
                shot = a.out / f"{shots[rel]}-{label}.png" if rel in shots else None
                bad += [f"{rel} at {width} px: {g}" for g in visit(browser, f"{base}/{rel}", width, shot)]
        if (a.site / "search.html").is_file(): bad += searched(browser, base)  # a search page must find
        browser.close()
    httpd.shutdown()
    print(f"site_browser: {len(pages)} pages at {', '.join(f'{w} px' for w in WIDTHS.values())}: "
          f"{'ok' if not bad else f'{len(bad)} problem(s)'}; screenshots under {a.out}")
    for b in bad: print(f"site_browser: {b}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
