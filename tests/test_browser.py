"""The built book in a real browser: headless Chromium driven by Playwright, as a reader uses it.

The site is served on localhost from the build folder. Every request that leaves it is
blocked and recorded, so the book is tested offline. The browser is Debian's Chromium, or the
one $CHROMIUM names; where none is found the tests are skipped, except under CI (CI=true),
where that is a failure: `.ci/run` installs it. Screenshots of a few pages, for review, are
written to the `screenshots` folder beside the HTML.
"""

import contextlib
import json
import os
import random
import re
import shutil
import struct
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest
from book.record import read_record
from conftest import CHAPTER, DOCS, HTML, PAGES, READING_ORDER, toctree
from helpers import BASELINE, make_site, serving
from static_host import served_size

SCREENSHOTS = HTML.parent / "screenshots"
REVIEWED = ["overview", "fusion", "pairwise-distances", "quiz"]  # pages a reviewer looks at
MATH_PAGE = "pairwise-distances"  # the page with the most math: a reviewer sees it dark too
CHROMIUM = (
    os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
)
# Pages with a cell whose `mystnb:` metadata asks for a figure.
FIGURE_PAGES = [p for p in PAGES if "\n  figure:\n" in (DOCS / f"{p}.md").read_text()]
# axe-core rules exempted from the serious/critical check, each with its reason: none. (The
# moderate "region" rule, content outside landmarks in sphinx-book-theme, is not asserted.)
EXEMPT: dict[str, str] = {}

pytestmark = [pytest.mark.browser]
if CHROMIUM is None:
    if os.environ.get("CI"):
        msg = "CI must run the browser tests: install Debian's chromium"
        raise RuntimeError(msg)
    pytestmark.append(pytest.mark.skip(reason="no Chromium here (apt-get install chromium)"))


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
def reader(browser, served, width=1280, **options):
    """A page of a fresh context; requests leaving the site are blocked and recorded."""
    context = browser.new_context(viewport={"width": width, "height": 900}, **options)
    page = context.new_page()
    page.outside, page.errors, page.failed = [], [], []

    def route(request_route):
        if request_route.request.url.startswith(served):
            request_route.continue_()
        else:
            page.outside.append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("requestfailed", lambda r: page.failed.append(f"{r.url} {r.method} {r.failure}"))
    page.on("response", lambda r: r.status >= 400 and page.failed.append(f"{r.status} {r.url}"))
    try:
        yield page
    finally:
        context.close()


def no_transitions(page) -> None:
    """The page's CSS transitions turned off, so that a computed colour is final at once.
    (Waiting for each transition's `finished` promise hung now and then: headless Chromium
    left some pending for good.)"""
    page.evaluate(
        """() => {
            if (document.getElementById('no-transitions')) return;
            const style = document.createElement('style');
            style.id = 'no-transitions';
            style.textContent = '*, *::before, *::after { transition: none !important; }';
            document.head.append(style);
        }"""
    )


def switch_theme(page, theme: str) -> None:
    """Light or dark, as the theme's switch sets it, every colour final at once."""
    no_transitions(page)
    page.evaluate(f"document.documentElement.dataset.theme = '{theme}'")


@pytest.fixture(scope="module")
def tab(browser, served):
    """A tab for the tests that go where they like, each with `visit`. One tab serves them
    all: a new context costs a renderer process (about a CPU second here), a new page in the
    same tab a fraction of that."""
    with reader(browser, served) as page:
        yield page


@pytest.fixture(scope="module")
def opened_tab(browser, served):
    """The tab only `opened` moves, so a page it loaded is still there for the next test."""
    with reader(browser, served) as page:
        yield page


def visit(tab, served, name: str):
    """`tab` showing the page `name`, with what it recorded so far forgotten."""
    tab.outside.clear(), tab.errors.clear(), tab.failed.clear()
    tab.goto(f"{served}/{name}.html", wait_until="networkidle")
    tab.name = name
    return tab


@pytest.fixture(scope="module")
def opened(opened_tab, served, request):
    """The page named by the test's parameter, loaded once for all the tests of that page;
    a test that changes its theme, width or code blocks puts them back."""
    return visit(opened_tab, served, request.param)


each_page = pytest.mark.parametrize("opened", PAGES, indirect=True)


@each_page
def test_page_loads_offline_without_errors(opened):
    assert opened.outside == [], f"{opened.name} asks a third party for {opened.outside}"
    assert opened.errors == []
    assert opened.failed == []


# What a reader's page may load, in bytes as a static host sends them (tools/static_host.py:
# script gzip-compressed, fonts as they are): CI's cheap stand-in for Lighthouse's run
# (`nox -s lighthouse`), which a phone's first view of a page depends on. No font: the text is
# in the reader's own fonts, the math in their math font, the theme's icons are SVG.
BUDGET = {"script": 450 * 1024, "font": 0}
KINDS = {".js": "script", ".mjs": "script", ".woff2": "font", ".woff": "font", ".ttf": "font"}
LOADED = "() => performance.getEntriesByType('resource').map(entry => entry.name)"


def loaded_bytes(page, served: str, folder: Path) -> dict[str, int]:
    """The bytes of script and font that the page in `page` loaded from the site `served`
    from `folder`, as the host sends them."""
    weight = dict.fromkeys(BUDGET, 0)
    for url in page.evaluate(LOADED):
        path = urlsplit(url).path.lstrip("/")
        kind = KINDS.get(Path(path).suffix)
        if kind and url.startswith(served):
            weight[kind] += served_size(folder / path)
    return weight


def over_budget(weight: dict[str, int]) -> list[str]:
    return [
        f"{kind} {n / 1024:.0f} KiB > {BUDGET[kind] / 1024:.0f}"
        for kind, n in weight.items()
        if n > BUDGET[kind]
    ]


@pytest.mark.parametrize("opened", READING_ORDER, indirect=True)
def test_a_reader_page_loads_script_and_fonts_within_the_budget(opened, served):
    assert over_budget(loaded_bytes(opened, served, HTML)) == [], opened.name


def test_the_budget_finds_a_page_that_loads_too_much_script_and_font(browser, tmp_path):
    """A page that loads more script and font than the budget allows, each as a host sends
    it: a script of random digits, which gzip shrinks little, and a font its text is in."""
    script = random.Random(0).randbytes(BUDGET["script"] + 1024)
    (tmp_path / "big.js").write_text(f"const noise = '{script.hex()}';")
    (tmp_path / "big.woff2").write_bytes(bytes(BUDGET["font"] + 1024))
    (tmp_path / "page.html").write_text(
        "<!DOCTYPE html><html lang='en'><head><title>heavy</title>"
        "<style>@font-face { font-family: heavy; src: url(big.woff2); }"
        " p { font-family: heavy, sans-serif; }</style>"
        "<script src='big.js?v=1'></script></head><body><p>heavy</p></body></html>"
    )
    with serving(tmp_path) as url, reader(browser, url) as page:
        page.goto(f"{url}/page.html", wait_until="networkidle")
        weight = loaded_bytes(page, url, tmp_path)
    assert weight["script"] == served_size(tmp_path / "big.js") > BUDGET["script"]
    assert weight["font"] == BUDGET["font"] + 1024
    assert [line.split()[0] for line in over_budget(weight)] == ["script", "font"]


# Draws a character on a canvas in the page's fonts and tells whether it came out as the box
# a browser draws for a character no installed font has (a private-use character's box).
MISSING_GLYPHS = """() => {
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 48;
    const ctx = canvas.getContext("2d", {willReadFrequently: true});
    const drawn = (ch, font) => {
        ctx.clearRect(0, 0, 48, 48);
        ctx.font = font;
        ctx.fillText(ch, 4, 36);
        return ctx.getImageData(0, 0, 48, 48).data.join(",");
    };
    const fonts = [...new Set([...document.querySelectorAll("article p, article pre")]
        .map(el => getComputedStyle(el)).map(st => `28px ${st.fontFamily}`))];
    const text = document.querySelector("article").innerText;
    const chars = [...new Set([...text])].filter(c => c.codePointAt(0) > 127 && c.trim());
    const missing = [];
    for (const font of fonts) {
        const box = drawn(String.fromCodePoint(0x10FFFD), font);
        if (box === drawn("A", font)) return ["the test cannot tell a box from a glyph"];
        for (const ch of chars) {
            const code = ch.codePointAt(0).toString(16);
            if (drawn(ch, font) === box) missing.push(`${ch} (U+${code})`);
        }
    }
    return [...new Set(missing)];
}"""


@each_page
def test_every_character_shows_in_the_fonts_a_reader_has(opened):
    """No mark, symbol or letter of the page comes out as an empty box (an emoji where no
    emoji font is installed, as in Debian's Chromium)."""
    assert opened.evaluate(MISSING_GLYPHS) == [], opened.name


# Each superscript of the page's math: whether the browser set its script above its base (as
# MathML lays it out; a browser that could not would leave the two side by side on one line).
RAISED_SCRIPTS = """() => [...document.querySelectorAll('article msup')].map(sup => {
    const [base, script] = [...sup.children].map(c => c.getBoundingClientRect());
    return script.bottom < base.bottom && script.left >= base.right - 1;
})"""
# The colour of each formula beside the colour of the paragraph it stands in.
MATH_COLOURS = """() => [...document.querySelectorAll('article p math')].map(m =>
    [getComputedStyle(m).color, getComputedStyle(m.closest('p')).color])"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_math_is_mathml_laid_out_by_the_browser_in_the_texts_colour(tab, served, theme):
    """The book's math is MathML written while it was built (book.mathml): no script typesets
    it, the browser sets each superscript above its base, and a formula takes the colour of
    its sentence in light and dark mode."""
    page = visit(tab, served, MATH_PAGE)
    switch_theme(page, theme)
    try:
        raised = page.evaluate(RAISED_SCRIPTS)
        colours = page.evaluate(MATH_COLOURS)
        scripts = page.locator("script[src]").evaluate_all("ss => ss.map(s => s.src)")
    finally:
        switch_theme(page, "light")
    assert len(raised) > 5
    assert all(raised)
    assert colours
    assert all(formula == sentence for formula, sentence in colours), colours
    assert not [s for s in scripts if re.search("math|tex-", s, re.IGNORECASE)]


# Each displayed formula, scrolled to its start: how far its first and last marks lie from its
# box's left edge, and the box's width.
FORMULA_ENDS = """() => [...document.querySelectorAll('div.math')].map(box => {
    box.scrollLeft = 0;
    const left = box.getBoundingClientRect().left;
    const marks = [...box.querySelectorAll('math *')].map(m => m.getBoundingClientRect())
        .filter(r => r.width > 0);
    return [Math.min(...marks.map(r => r.left)) - left,
            Math.max(...marks.map(r => r.right)) - left, box.clientWidth, box.tabIndex];
})"""
DISPLAY_MATH_PAGES = [p for p in PAGES if "\n$$\n" in (DOCS / f"{p}.md").read_text()]


@pytest.mark.parametrize("opened", DISPLAY_MATH_PAGES, indirect=True)
def test_a_formula_wider_than_a_phone_scrolls_from_its_start_and_takes_the_keyboard(opened):
    """At 390 px a displayed formula wider than the column scrolls on its own, every mark
    within reach: none starts left of its box (where no scrolling reaches), and the box is a
    tab stop, so a keyboard scrolls it too."""
    opened.set_viewport_size({"width": 390, "height": 900})
    try:
        ends = opened.evaluate(FORMULA_ENDS)
    finally:
        opened.set_viewport_size({"width": 1280, "height": 900})
    assert ends, opened.name
    assert [e for e in ends if e[0] < -1 or e[3] != 0] == [], opened.name
    if opened.name == "xla-compilation":  # its six stages in a row: one that does scroll
        assert max(right - width for _, right, width, _ in ends) > 0


def test_a_reader_walks_the_book_forwards_and_back(tab, served):
    """Next is clicked page by page to the end; on each page, previous leads one page back."""
    order = READING_ORDER
    page = visit(tab, served, "index")
    seen, back = ["index"], []
    while page.locator("a.right-next").count():
        with page.expect_navigation(wait_until="domcontentloaded"):
            page.locator("a.right-next").first.click()
        seen.append(Path(page.url.split("#")[0]).stem)
        back.append(Path(page.locator("a.left-prev").first.get_attribute("href")).stem)
    assert seen == order
    assert back == order[:-1]


def test_search_finds_the_fusion_section(tab, served):
    tab.goto(f"{served}/search.html?q=fusion")
    tab.wait_for_selector("#search-results li a", timeout=15_000)
    links = tab.locator("#search-results li a").evaluate_all("els => els.map(e => e.href)")
    assert any(link.split("#")[0].endswith("/fusion.html") for link in links)


def test_a_search_for_donate_lists_a_chapter_page_first_with_an_excerpt(tab, served):
    tab.goto(f"{served}/search.html?q=donate")
    tab.wait_for_selector("#search-results li p.context", timeout=15_000)
    first = tab.locator("#search-results li").first
    page = Path(first.locator("a").first.get_attribute("href").split("#")[0]).stem
    assert page in [*CHAPTER, *toctree("Going further")], page
    assert "donat" in first.locator("p.context").inner_text().lower()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_page_shows_one_search_box(browser, served, width):
    with reader(browser, served, width=width) as page:
        page.goto(f"{served}/fusion.html", wait_until="networkidle")
        shown = page.locator(".search-button__button").evaluate_all(
            "els => els.filter(e => e.checkVisibility({visibilityProperty: true})).length"
        )
    assert shown == 1


@pytest.mark.parametrize(("name", "inside"), [("quiz", "a"), ("exercises", "pre")])
def test_answers_stay_hidden_until_opened(tab, served, name, inside):
    dropdown = visit(tab, served, name).locator("details.sd-dropdown").first
    content = dropdown.locator(inside).first
    assert not content.is_visible()
    dropdown.locator(":scope > summary").click()
    content.wait_for(state="visible")
    if name == "quiz":  # an answer links the statements it rests on, where they are checked
        assert "claim-" in content.get_attribute("href")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_claim_mark_opens_from_the_keyboard_and_reads_in_both_themes(tab, served, theme):
    """Closed by default; Tab reaches it, Enter opens its panel, Enter closes it; open, the
    panel passes axe in light and dark mode."""
    page = visit(tab, served, "jaxprs")
    switch_theme(page, theme)
    try:
        mark = page.locator("details.claim-mark").first
        assert mark.get_attribute("open") is None
        panel = mark.locator(".sd-summary-content")
        assert not panel.is_visible()
        mark.locator(":scope > summary").focus()
        page.keyboard.press("Enter")
        panel.wait_for(state="visible")
        said = panel.inner_text()
        assert "How this is checked" in said  # what was run, in words, and a link to the check
        assert "as expected" not in said
        assert "@claim" not in said
        page.locator("details.claim-mark").evaluate_all("ms => ms.forEach(m => m.open = true)")
        assert serious_violations(page) == []
        mark.locator(":scope > summary").focus()
        page.keyboard.press("Enter")
        panel.wait_for(state="hidden")
    finally:
        switch_theme(page, "light")


def test_copy_buttons_copy_the_code_only(tab, served):
    tab.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=served)
    page = visit(tab, served, "recompilation")
    cell = page.locator("div.cell").filter(has=page.locator("div.output.stream")).first
    source = cell.locator("div.cell_input pre").inner_text()
    cell.locator("div.cell_input").hover()
    cell.locator("div.cell_input button.copybtn").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.strip() == source.strip()
    assert cell.locator("div.output").count()
    assert not cell.locator("div.output .copybtn").count()


CORNER_ALPHA = """i => {
    const c = document.createElement('canvas');
    c.width = c.height = 1;
    const g = c.getContext('2d');
    g.drawImage(i, 0, 0);
    return g.getImageData(0, 0, 1, 1).data[3];
}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("opened", FIGURE_PAGES, indirect=True)
def test_figures_load_with_caption_and_alt_and_stay_readable(opened, theme):
    switch_theme(opened, theme)
    try:
        figures = opened.locator("figure").all()
        for figure in figures:
            image = figure.locator("img")
            # A figure loads as the reader nears it (docs/docutils.conf), not with the page.
            assert image.get_attribute("loading") == "lazy"
            image.scroll_into_view_if_needed()
            image.evaluate("i => i.decode()")  # once loaded and decoded
            assert image.evaluate("i => i.complete && i.naturalWidth > 0"), opened.name
            assert len(image.get_attribute("alt") or "") > 20
            assert figure.locator("figcaption").count()
            # Figures are drawn on an opaque white ground, so they stay readable on dark pages.
            corner = image.evaluate(CORNER_ALPHA)
            assert corner == 255, f"{opened.name}: a figure with a transparent ground"
    finally:
        switch_theme(opened, "light")
    assert figures, f"{opened.name} shows no figure"


def test_the_dark_mode_switch_works(browser, served):
    with reader(browser, served, color_scheme="light") as page:
        page.goto(f"{served}/fusion.html", wait_until="networkidle")
        assert page.evaluate("document.documentElement.dataset.theme") == "light"
        page.locator("button.theme-switch-button:visible").first.click()
        page.locator("button.theme-change-button[data-mode='dark']:visible").click()
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        page.reload(wait_until="networkidle")  # the choice is remembered
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"


# What sticks out of the article's column, outside a box that scrolls sideways on its own.
STICKING_OUT = """() => {
    const column = document.querySelector('article').getBoundingClientRect().right + 1;
    const inScrollBox = el => {
        for (let box = el.parentElement; box && box.tagName !== 'ARTICLE'; box = box.parentElement)
            if (['auto', 'scroll'].includes(getComputedStyle(box).overflowX)
                && box.getBoundingClientRect().right <= column) return true;
        return false;
    };
    return [...document.querySelectorAll('article *')]
        .filter(el => el.getBoundingClientRect().right > column && !inScrollBox(el))
        .map(el => `${el.tagName.toLowerCase()}.${el.className}`).slice(0, 5);
}"""


@pytest.mark.parametrize("width", [390, 1280])
@each_page
def test_nothing_scrolls_sideways_outside_a_scrolling_box(opened, width):
    opened.set_viewport_size({"width": width, "height": 900})
    try:
        overflow = opened.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        sticking_out = opened.evaluate(STICKING_OUT)
    finally:
        opened.set_viewport_size({"width": 1280, "height": 900})
    assert overflow <= 0, f"{opened.name} scrolls {overflow} px sideways at {width} px"
    assert sticking_out == [], f"{opened.name} at {width} px"


# axe's colour-contrast rule measures every line of text, so a page's code blocks cost it more
# than the rest of the page (5 s of CPU for the helpers page alone). A code token's contrast
# depends only on its style and its block's ground, so the rule runs on a specimen of the page:
# each code block keeps the first visible, non-blank token of every style (colour, background,
# size, weight, block ground, visibility, in each theme audited) not met before on the page.
# The blocks are put back afterwards; every other rule runs on the page as it is.
CODE_SPECIMEN = """themes => {
    const root = document.documentElement, shown = root.dataset.theme;
    const blocks = [...document.querySelectorAll('div.highlight pre')];
    const keys = blocks.map(pre => [...pre.childNodes].map(() => []));
    for (const theme of themes) {
        root.dataset.theme = theme;
        blocks.forEach((pre, b) => {
            const block = pre.closest('div.highlight');
            const ground = [getComputedStyle(block).backgroundColor, pre.checkVisibility()];
            pre.childNodes.forEach((node, n) => {
                const style = getComputedStyle(node.nodeType === Node.ELEMENT_NODE ? node : pre);
                keys[b][n].push(style.color, style.backgroundColor, style.fontSize,
                                style.fontWeight, ...ground);
            });
        });
    }
    root.dataset.theme = shown;
    const seen = new Set(), saved = [];
    blocks.forEach((pre, b) => {
        const nodes = [...pre.childNodes];
        const kept = nodes.filter((node, n) => {
            const key = keys[b][n].join('|');
            if (!node.textContent.trim() || seen.has(key)) return false;
            seen.add(key);
            return true;
        });
        saved.push([pre, nodes]);
        pre.replaceChildren(...kept);
    });
    return () => saved.forEach(([pre, nodes]) => pre.replaceChildren(...nodes));
}"""


ARTICLE = "document.querySelector('article').innerHTML"
# The theme's rule for tab stops: a scrollable block is focusable, another is not. It applies
# the rule on load, on resize and when nodes are added, not when a dropdown opens.
TAB_STOPS_CURRENT = """() => [...document.querySelectorAll('pre, .cell_output > .output')].every(
    el => el.tabIndex === (el.scrollWidth > el.clientWidth
                           || el.scrollHeight > el.clientHeight ? 0 : -1))"""


# The rules a theme's colours decide; the themes change nothing else on these pages (no image
# or element is shown in one theme only).
COLOUR_RULES = ["color-contrast", "link-in-text-block"]


def serious_violations(page, themes: tuple[str, ...] = ()) -> list[str]:
    """axe-core's serious and critical findings on the page: the colour rules on its code
    specimen, in each of `themes` (else in the theme it shows), every other rule once, on the
    page as it is. The page is left in light mode when `themes` are given."""
    if not page.evaluate("typeof axe !== 'undefined'"):  # once per page load
        from axe_playwright_python.sync_playwright import Axe

        page.evaluate(Axe().axe_script)
    page.evaluate("window.dispatchEvent(new Event('resize'))")  # tab stops for what is open
    page.wait_for_function(TAB_STOPS_CURRENT, polling=100, timeout=5_000)
    off = ", ".join(f"'{rule}': {{enabled: false}}" for rule in COLOUR_RULES)
    rest = f"axe.run({{rules: {{{off}}}, resultTypes: ['violations']}})"
    violations = [("", v) for v in page.evaluate(rest)["violations"]]
    before = page.evaluate(ARTICLE)
    no_transitions(page)
    shown = page.evaluate("document.documentElement.dataset.theme")
    restore = page.evaluate_handle(CODE_SPECIMEN, list(themes) or [shown])
    try:
        for theme in themes or ("",):
            if theme:
                switch_theme(page, theme)
            colours = f"axe.run({{runOnly: {COLOUR_RULES}, resultTypes: ['violations']}})"
            violations += [(theme, v) for v in page.evaluate(colours)["violations"]]
    finally:
        if themes:
            switch_theme(page, "light")
        restore.evaluate("restore => restore()")
        # The theme marks scrollable blocks focusable a moment after the page resizes.
        page.wait_for_function(
            f"before => {ARTICLE} === before", arg=before, polling=100, timeout=5_000
        )
    return [
        f"{v['id']} ({v['impact']}, {len(v['nodes'])} elements{f', {t} mode' if t else ''})"
        for t, v in violations
        if v["impact"] in ("serious", "critical") and v["id"] not in EXEMPT
    ]


@each_page
def test_no_serious_accessibility_violation(opened):
    bad = serious_violations(opened, themes=("light", "dark"))
    assert bad == [], f"{opened.name}: {bad}"


@pytest.mark.parametrize("opened", ["fusion"], indirect=True)
def test_the_audit_sees_every_code_token_and_puts_the_blocks_back(opened):
    """A token style used deep in the code blocks, faint in dark mode only, is reported in
    that mode; the page is left whole."""
    before = opened.evaluate(ARTICLE)
    faint = opened.add_style_tag(
        content='html[data-theme="dark"] div.highlight .n { color: #606060 !important; }'
    )
    try:
        bad = serious_violations(opened, themes=("light", "dark"))
    finally:
        faint.evaluate("style => style.remove()")
    assert [b for b in bad if b.startswith("color-contrast") and b.endswith("dark mode)")], bad
    assert not [b for b in bad if b.endswith("light mode)")], bad
    assert opened.evaluate(ARTICLE) == before


def test_a_pages_download_link_gives_its_executed_notebook(tab, served, tmp_path):
    """The link saves the page's published notebook, outputs included; a downloaded notebook
    runs top to bottom on a reader's machine in tests/test_notebooks.py."""
    page = visit(tab, served, "jaxprs")
    link = page.locator("a[href$='jaxprs.ipynb']").first
    assert link.count() == 1, "the page offers no .ipynb download"
    with page.expect_download() as download:
        link.evaluate("a => { a.setAttribute('download', ''); a.click(); }")
    path = tmp_path / "jaxprs.ipynb"
    download.value.save_as(path)
    assert path.read_bytes() == (HTML / "_sources" / "jaxprs.ipynb").read_bytes()
    notebook = nbformat.read(path, as_version=4)
    assert any(cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize(
    ("opened", "theme"),
    [*((page, "light") for page in REVIEWED), (MATH_PAGE, "dark")],
    indirect=["opened"],
)
def test_screenshots_are_written_for_review(opened, width, theme):
    SCREENSHOTS.mkdir(exist_ok=True)
    opened.set_viewport_size({"width": width, "height": 900})
    switch_theme(opened, theme)
    # The whole page is shot at once: every figure loaded first, not only those near the top.
    opened.evaluate("document.querySelectorAll('img').forEach(i => { i.loading = 'eager'; })")
    opened.wait_for_function("[...document.images].every(i => i.complete)")
    try:
        dark = "-dark" if theme == "dark" else ""
        path = SCREENSHOTS / f"{opened.name}-{width}px{dark}.png"
        png = opened.screenshot(path=path, full_page=True)
    finally:
        switch_theme(opened, "light")
        opened.set_viewport_size({"width": 1280, "height": 900})
    # A PNG exactly as wide as the window (nothing sticks out sideways), longer than it is.
    shot_width, shot_height = struct.unpack(">II", png[16:24])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (shot_width, shot_height > 900) == (width, True)


@pytest.mark.slow
def test_a_reader_switches_versions_offline_and_sees_what_drifted(browser, tmp_path):
    """On a throwaway site as nox -s site assembles it (the baseline and a build playing JAX
    0.10.2, each release in a folder of its own, its banner and drift report counted from the
    build's one record), the version switcher leads from a page to the same page of the other
    release, which opens with its banner and shows its drifted verdict in place."""
    site = make_site(tmp_path)
    # The files first: each release in its folder, its banner and report from one record.
    switcher = json.loads((site / "switcher.json").read_text())
    assert [(e["name"], e["url"]) for e in switcher] == [
        (f"JAX {BASELINE} (baseline)", "/"),
        ("JAX 0.10.2", "/jax-0.10.2/"),
    ]
    assert (site / "index.html").exists()  # the baseline's own, at the site's root
    assert not (site / f"jax-{BASELINE}").exists()
    baseline = (site / "page.html").read_text()
    older = (site / "jax-0.10.2" / "page.html").read_text()
    assert "drift-banner" not in baseline
    assert f"theme_switcher_version_match = '{BASELINE}'" in baseline
    assert "theme_switcher_version_match = '0.10.2'" in older
    banner = re.search(r'<div class="drift-banner[^"]*"[^>]*>(.*?)</div>', older, re.S)[1]
    text = re.sub(r"<[^>]+>", "", banner)
    assert f"built with JAX 0.10.2, not the baseline JAX {BASELINE}" in text
    assert "Under it, 1 claim of the 1 this page shows no longer holds (marked ✗)" in text
    assert 'href="drift-report.html"' in banner
    assert "claim-drifted" in older
    assert "claim-holds" in baseline
    assert "most recent call last" not in older  # no traceback: the verdict says it all
    report = (site / "jax-0.10.2" / "drift-report.html").read_text()
    assert "<strong>demo-sum</strong>" in report
    assert "this JAX gave" in report
    assert '<a class="reference external" href="report.md">The full report</a>' in report
    assert "## demo-sum (page `page`, asserted)" in (site / "jax-0.10.2" / "report.md").read_text()
    # the banner and the report count from the drift build's one record
    build = tmp_path / "older" / "docs" / "_build"
    pages = read_record(build).pages
    drifted = {c for p in pages.values() for c, v in p.verdicts.items() if v.status == "drifted"}
    assert drifted == {"demo-sum"}
    reported = json.loads((build / "report.json").read_text())
    assert {c["id"] for c in reported["changed_claims"]} == drifted
    with serving(site) as url, reader(browser, url) as page:
        page.goto(f"{url}/page.html", wait_until="networkidle")
        assert page.locator("#drift-banner").count() == 0
        button = page.locator(".version-switcher__button").first
        assert button.inner_text().strip() == f"JAX {BASELINE} (baseline)"
        button.click()
        with page.expect_navigation(wait_until="networkidle"):
            page.get_by_role("option", name="JAX 0.10.2").first.click()
        assert page.url == f"{url}/jax-0.10.2/page.html"
        banner = page.locator("#drift-banner")
        assert banner.is_visible()
        assert "built with JAX 0.10.2" in banner.inner_text()
        assert page.locator(".version-switcher__button").first.inner_text().strip() == "JAX 0.10.2"
        assert page.locator(".claim-drifted").first.is_visible()
        with page.expect_navigation(wait_until="networkidle"):
            banner.get_by_role("link", name="drift report").click()
        assert page.url == f"{url}/jax-0.10.2/drift-report.html"
        assert "demo-sum" in page.locator("article").inner_text()
        assert page.outside == []
        assert page.errors == []
        # The switcher asks whether the page exists (a HEAD request), then goes there; the
        # navigation it starts may abort its own, finished, probe.
        probe = f"{url}/jax-0.10.2/page.html HEAD net::ERR_ABORTED"
        assert [f for f in page.failed if f != probe] == []
