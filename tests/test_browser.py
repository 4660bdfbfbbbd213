"""The built book in a real browser: headless Chromium driven by Playwright, as a reader uses it.

The site is served on localhost from the build folder. Every request that leaves it is
blocked and recorded, so the book is tested offline. Where no Chromium is installed the tests
are skipped, except under CI (CI=true), where that is a failure: `.ci/run` installs it.
"""

import contextlib
import http.server
import os
import re
import shutil
import threading
from functools import partial
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("BOOK_BUILD_DIR", ROOT / "docs" / "_build")) / "html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PAGES = sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
NOTEBOOK_PAGES = [p for p in PAGES if "```{code-cell}" in (ROOT / "docs" / f"{p}.md").read_text()]
# axe-core rules exempted from the serious/critical check, each with its reason: none. (The
# moderate "region" rule, content outside landmarks in sphinx-book-theme, is not asserted.)
EXEMPT: dict[str, str] = {}

if CHROMIUM is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the browser tests: install Debian's chromium")
    pytestmark = pytest.mark.skip(reason="no Chromium on this machine (apt-get install chromium)")


def toctree_order() -> list[str]:
    """The pages in reading order: the home page, then every toctree entry of index.md."""
    entries = re.findall(
        r"```\{toctree\}\n(.*?)```", (ROOT / "docs" / "index.md").read_text(), re.S
    )
    names = [line for block in entries for line in block.splitlines() if line and ":" not in line]
    return ["index", *names]


@pytest.fixture(scope="module")
def site():
    """The book served on a free localhost port."""
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book in {HTML}: run `nox -s docs` first")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = partial(Quiet, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield chromium
        chromium.close()


@contextlib.contextmanager
def reader(browser, site, width=1280, **options):
    """A page of a fresh context; requests leaving the site are blocked and recorded."""
    context = browser.new_context(viewport={"width": width, "height": 900}, **options)
    page = context.new_page()
    page.outside, page.errors, page.failed = [], [], []

    def route(request_route):
        if request_route.request.url.startswith(site):
            request_route.continue_()
        else:
            page.outside.append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("requestfailed", lambda r: page.failed.append(r.url))
    try:
        yield page
    finally:
        context.close()


@pytest.mark.parametrize("name", PAGES)
def test_page_loads_offline_without_errors(browser, site, name):
    with reader(browser, site) as page:
        page.goto(f"{site}/{name}.html", wait_until="networkidle")
        assert page.outside == [], f"{name} asks a third party for {page.outside}"
        assert page.errors == [] and page.failed == []


def test_math_is_rendered_offline(browser, site):
    with reader(browser, site) as page:
        page.goto(f"{site}/pairwise-distances.html", wait_until="networkidle")
        page.wait_for_selector("mjx-container", timeout=10_000)
        assert page.locator("mjx-container").count() > 5 and page.outside == []


def test_a_reader_walks_the_book_forwards_and_back(browser, site):
    order = toctree_order()
    with reader(browser, site) as page:
        page.goto(f"{site}/index.html")
        seen = ["index"]
        for direction in ("a.right-next", "a.left-prev"):
            while page.locator(direction).count():
                with page.expect_navigation():
                    page.locator(direction).first.click()
                seen.append(Path(page.url.split("#")[0]).stem)
        assert seen[: len(order)] == order
        assert seen[len(order) - 1 :] == order[::-1]


def test_search_finds_the_fusion_section(browser, site):
    with reader(browser, site) as page:
        page.goto(f"{site}/search.html?q=fusion")
        page.wait_for_selector("#search-results li a", timeout=15_000)
        links = page.locator("#search-results li a").evaluate_all("els => els.map(e => e.href)")
        assert any(link.split("#")[0].endswith("/fusion.html") for link in links)


@pytest.mark.parametrize(("name", "inside"), [("quiz", ".claim-verdict"), ("exercises", "pre")])
def test_answers_stay_hidden_until_opened(browser, site, name, inside):
    with reader(browser, site) as page:
        page.goto(f"{site}/{name}.html")
        dropdown = page.locator("details.sd-dropdown").first
        content = dropdown.locator(inside).first
        assert not content.is_visible()
        dropdown.locator(":scope > summary").click()
        content.wait_for(state="visible")
        if inside == ".claim-verdict":
            assert "Checked" in content.inner_text()


def test_copy_buttons_copy_the_code_only(browser, site):
    with reader(browser, site, permissions=["clipboard-read", "clipboard-write"]) as page:
        page.goto(f"{site}/recompilation.html")
        cell = page.locator("div.cell").filter(has=page.locator("div.output.stream")).first
        source = cell.locator("div.cell_input pre").inner_text()
        cell.locator("div.cell_input").hover()
        cell.locator("div.cell_input button.copybtn").click()
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied.strip() == source.strip()
        assert (
            cell.locator("div.output").count() and not cell.locator("div.output .copybtn").count()
        )


CORNER_ALPHA = """i => {
    const c = document.createElement('canvas');
    c.width = c.height = 1;
    const g = c.getContext('2d');
    g.drawImage(i, 0, 0);
    return g.getImageData(0, 0, 1, 1).data[3];
}"""


@pytest.mark.parametrize("dark", [False, True])
def test_figures_load_with_caption_and_alt_and_stay_readable(browser, site, dark):
    pages = [p for p in PAGES if "<figure" in (HTML / f"{p}.html").read_text()]
    with reader(browser, site, color_scheme="dark" if dark else "light") as page:
        for name in pages:
            page.goto(f"{site}/{name}.html", wait_until="networkidle")
            if dark:
                page.evaluate("document.documentElement.dataset.theme = 'dark'")
            for figure in page.locator("figure").all():
                image = figure.locator("img")
                assert image.evaluate("i => i.complete && i.naturalWidth > 0"), name
                assert (
                    len(image.get_attribute("alt") or "") > 20
                    and figure.locator("figcaption").count()
                )
                # Figures are drawn on an opaque white ground, so they stay readable on dark pages.
                corner = image.evaluate(CORNER_ALPHA)
                assert corner == 255, f"{name}: a figure with a transparent ground"


def test_the_dark_mode_switch_works(browser, site):
    with reader(browser, site, color_scheme="light") as page:
        page.goto(f"{site}/fusion.html", wait_until="networkidle")
        assert page.evaluate("document.documentElement.dataset.theme") == "light"
        page.locator("button.theme-switch-button:visible").first.click()
        page.locator("button.theme-change-button[data-mode='dark']:visible").click()
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        page.reload(wait_until="networkidle")  # the choice is remembered
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"


@pytest.mark.parametrize("name", PAGES)
def test_nothing_scrolls_sideways_at_phone_width(browser, site, name):
    with reader(browser, site, width=390) as page:
        page.goto(f"{site}/{name}.html", wait_until="networkidle")
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{name} scrolls {overflow} px sideways at 390 px"


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("name", PAGES)
def test_no_serious_accessibility_violation(browser, site, name, theme):
    from axe_playwright_python.sync_playwright import Axe

    with reader(browser, site, color_scheme=theme) as page:
        page.goto(f"{site}/{name}.html", wait_until="networkidle")
        page.evaluate(f"document.documentElement.dataset.theme = '{theme}'")
        results = Axe().run(page)
        bad = [
            f"{v['id']} ({v['impact']}, {len(v['nodes'])} elements)"
            for v in results.response["violations"]
            if v["impact"] in ("serious", "critical") and v["id"] not in EXEMPT
        ]
        assert bad == [], f"{name} in {theme} mode: {bad}"


def test_a_downloaded_notebook_runs_top_to_bottom(browser, site, tmp_path):
    with reader(browser, site) as page:
        page.goto(f"{site}/jaxprs.html")
        link = page.locator("a[href$='jaxprs.ipynb']").first
        assert link.count() == 1, "the page offers no .ipynb download"
        with page.expect_download() as download:
            link.evaluate("a => { a.setAttribute('download', ''); a.click(); }")
        path = tmp_path / "jaxprs.ipynb"
        download.value.save_as(path)
    notebook = nbformat.read(path, as_version=4)
    assert any(cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
    NotebookClient(notebook, timeout=300, kernel_name="python3").execute()
    assert not [o for c in notebook.cells for o in c.get("outputs", []) if o.output_type == "error"]


def test_every_executed_page_offers_its_notebook():
    missing = [p for p in NOTEBOOK_PAGES if not (HTML / "_sources" / f"{p}.ipynb").exists()]
    assert missing == []
