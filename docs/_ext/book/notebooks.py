"""Every page with code downloads as a reader's notebook: a setup cell that installs this JAX
and the `chapter2` wheel from `_wheels/`, the page's prose as the site renders it, and its
visible code with its outputs. The checks behind the marks stay behind; the executed
notebook, every cell and output, is kept beside the pages (OUTPUTS) for drift builds."""

import base64
import contextlib
import importlib.metadata
from pathlib import Path
from urllib.parse import urljoin, urlparse

import nbformat
from docutils import nodes
from sphinx.util import logging

from book import SERIAL, build_folder
from book.cache import opened
from chapter2.claims.registry import VERDICT_MIME

WHEELS = "_wheels"
# The branch the publishing workflow (book.yml) pushes the reader's notebooks to, from which
# Colab opens them: it opens notebooks kept on GitHub, not ones served by a site.
NOTEBOOKS_BRANCH = "notebooks"
COLAB = "https://colab.research.google.com/github/{repository}/blob/{branch}/{page}.ipynb"
OUTPUTS = "outputs"  # the build's executed notebooks, beside the HTML folder
SETUP_TAG = "setup"  # the reader's notebook's first cell, which installs what a reader lacks
SETUP = """\
# Setup: this notebook ran with JAX {jax} and needs the book's chapter2 package. It installs
# what is missing (JAX only if you have none) and never replaces a JAX you have.
import base64, importlib, importlib.metadata, importlib.util, pathlib, subprocess, sys, tempfile


def _version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


_needed = [] if _version("jax") else ["jax=={jax}"]
if importlib.util.find_spec("chapter2") is None:
{chapter2}
if _needed:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", *_needed])
    importlib.invalidate_caches()
if _version("jax") != "{jax}":
    print(f"This notebook ran with JAX {jax}; you have JAX {{_version('jax')}}, so some "
          "outputs may differ (the book's version notes say what changed).")
"""
# How the setup cell finds chapter2: from the site that publishes this build (its wheel is
# always the site's current one); without a site, the build's wheel travels inside the cell;
# without either, the cell says what to install.
EMBEDDED = """\
    _wheel = pathlib.Path(tempfile.mkdtemp()) / "{wheel}"
    _wheel.write_bytes(base64.b64decode("{data}"))
    _needed.append(str(_wheel))"""
FROM_SITE = """\
    _needed.append("chapter2 @ {site}/{wheels}/{wheel}")"""
NOWHERE = """\
    print("Install the book's chapter2 package (its wheel, or its repository) to run this.")"""


def wheel_name() -> str:
    """The file name of the chapter2 wheel, for the installed version."""
    return f"chapter2-{importlib.metadata.version('chapter2')}-py3-none-any.whl"


def wheel_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """`{book-wheel}`text``: a link to the chapter2 wheel the site publishes, titled `text`."""
    link = nodes.reference(rawtext, text, refuri=f"{WHEELS}/{wheel_name()}", classes=["wheel"])
    return [link], []


def setup_cell(site: str, wheel: Path | None = None) -> nbformat.NotebookNode:
    """The first cell of a downloaded notebook: chapter2 comes from the `site`, or, where
    the build has none, from `wheel`, the build's wheel, inside the cell."""
    if site:
        chapter2 = FROM_SITE.format(site=site.rstrip("/"), wheels=WHEELS, wheel=wheel_name())
    elif wheel is not None and wheel.is_file():
        data = base64.b64encode(wheel.read_bytes()).decode()
        chapter2 = EMBEDDED.format(wheel=wheel.name, data=data)
    else:
        chapter2 = NOWHERE
    source = SETUP.format(jax=importlib.metadata.version("jax"), chapter2=chapter2)
    return nbformat.v4.new_code_cell(source, metadata={"tags": [SETUP_TAG]})


def executed_notebook(build: Path, cache_path: str, docname: str) -> nbformat.NotebookNode | None:
    """The page's notebook with its last execution's outputs (None: a page without code)."""
    written = build / "jupyter_execute" / f"{docname}.ipynb"
    if not written.exists():
        return None
    notebook = nbformat.read(written, as_version=4)
    with (
        opened(cache_path) as cache,
        contextlib.suppress(KeyError),  # not cached: the page failed; the build reports it
    ):
        _, notebook = cache.merge_match_into_notebook(notebook)
    return notebook


def uncached(app, env, added, changed, removed) -> list[str]:
    """`env-get-outdated`: a page whose outputs left the cache is read (executed) again."""
    stale = []
    with opened(app.config.nb_execution_cache_path) as cache:
        for docname in sorted(env.found_docs - added - changed - removed):
            written = build_folder(app) / "jupyter_execute" / f"{docname}.ipynb"
            if not written.exists():
                continue
            try:
                cache.match_cache_notebook(nbformat.read(written, as_version=4))
            except KeyError:
                stale.append(docname)
    return stale


def _is_cell(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Element) and node.get("nb_element") == "cell_code"


def _shows_code(cell: nodes.Element) -> bool:
    """Whether a cell shows its code (hidden behind a toggle counts: it runs first)."""
    return any(
        isinstance(n, nodes.Element) and n.get("nb_element") == "cell_code_source"
        for n in cell.findall()
    )


def _checks(cell: nbformat.NotebookNode) -> bool:
    """Whether an executed cell checks a statement (its output is a verdict: the mark)."""
    return any(VERDICT_MIME in output.get("data", {}) for output in cell.get("outputs", []))


def _prose_html(builder, page, chunks: list[list[nodes.Node]], page_url: str) -> list[str]:
    """Each chunk of prose as the page's translator writes it (the page's transforms are done;
    applying them again would add a second title to a warning); its links absolute where the
    site's address is known, its anchors left to the site."""
    html = []
    for chunk in chunks:
        part = nodes.document(page.settings, page.reporter)
        part.extend(chunk)
        for node in part.findall(nodes.Element):
            node["ids"] = []
        for link in part.findall(nodes.reference):
            if page_url and link.get("refuri") and not urlparse(link["refuri"]).scheme:
                link["refuri"] = urljoin(page_url, link["refuri"])
        translator = builder.create_translator(part, builder)
        with logging.suppress_logging():  # the page gave its warnings; a figure has no anchor
            part.walkabout(translator)
        html.append(_one_html_block("".join(translator.fragment)))
    return html


def _one_html_block(html: str) -> str:
    """HTML that Markdown keeps whole: a blank line ends an HTML block in CommonMark, so one
    inside a <pre> would turn the rest of the code into Markdown; an empty span holds it."""
    return "\n".join(
        line if line.strip() else "<span></span>" for line in html.strip().splitlines()
    )


def reader_notebook(builder, doctree, executed, site: str, pagename: str, wheel=None):
    """The page as a reader runs it: its prose (rendered), headings and visible code cells
    with their outputs, in the page's order. None where the page shows no code."""
    page_url = urljoin(site.rstrip("/") + "/", f"{pagename}.html") if site else ""
    cells, prose, chunks = [], [], []  # a chunk of prose: its place in cells, then its nodes

    def flush() -> None:
        shown = nodes.container("", *prose)
        if shown.astext().strip() or any(True for _ in shown.findall(nodes.image)):
            chunks.append(list(prose))
            cells.append(nbformat.v4.new_markdown_cell())
        prose.clear()

    def walk(node: nodes.Element, depth: int) -> None:
        for child in node.children:
            ran = executed.cells[child["cell_index"]] if _is_cell(child) else None
            if ran is not None and _checks(ran):
                continue  # the mark of the statement above: the site's, not the notebook's
            if ran is not None and _shows_code(child):
                flush()
                cells.append(nbformat.v4.new_code_cell(ran.source, outputs=ran.get("outputs", [])))
            elif isinstance(child, nodes.section):
                walk(child, depth + 1)
            elif isinstance(child, nodes.title):
                flush()
                cells.append(nbformat.v4.new_markdown_cell(f"{'#' * depth} {child.astext()}"))
            elif not _is_cell(child) and any(True for _ in child.findall(_is_cell)):
                walk(child, depth)
            else:
                prose.append(child)

    walk(doctree, 0)
    flush()
    if not any(cell.cell_type == "code" for cell in cells):
        return None
    empty = [cell for cell in cells if cell.cell_type == "markdown" and not cell.source]
    for cell, html in zip(empty, _prose_html(builder, doctree, chunks, page_url), strict=True):
        cell.source = html
    notebook = nbformat.v4.new_notebook(cells=[setup_cell(site, wheel), *cells])
    notebook.metadata = {
        k: executed.metadata[k] for k in ("kernelspec", "language_info") if k in executed.metadata
    }
    return notebook


class ResolvedPages:
    """Each page as resolved, before writing it added to it (an admonition's title, for one):
    what the reader's notebook is made of. One page at a time (the book writes serially)."""

    def __init__(self) -> None:
        self.resolved: dict[str, nodes.document] = {}

    def keep(self, app, doctree, docname) -> None:
        """`doctree-resolved`, after every other handler: a copy of the page."""
        if app.builder.format == "html":
            self.resolved[docname] = doctree.deepcopy()

    def offer_notebook(self, app, pagename, templatename, context, doctree) -> None:
        """`html-page-context` (before the theme's buttons): keep the executed notebook beside
        the pages, and publish the reader's."""
        page = self.resolved.pop(pagename, None)
        build = build_folder(app)
        executed = executed_notebook(build, app.config.nb_execution_cache_path, pagename)
        if executed is None or doctree is None or page is None:
            return
        kept = build / OUTPUTS / f"{pagename}.ipynb"
        kept.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(executed, kept)
        app.builder.post_process_images(page)  # its images where the page's are
        page.settings = doctree.settings  # with the writer's settings, as the page was written
        wheel = Path(app.outdir) / WHEELS / wheel_name()  # nox -s docs builds it first
        site = app.config.html_baseurl
        notebook = reader_notebook(app.builder, page, executed, site, pagename, wheel)
        published = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
        if notebook is None:
            published.unlink(missing_ok=True)
            return
        published.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, published)
        context["ipynb_source"] = f"{pagename}.ipynb"


def reader_buttons(app, pagename, templatename, context, doctree) -> None:
    """`html-page-context` (after the theme's buttons): the download menu offers the reader's
    notebook, not the page's source, whose cells check the book; where the notebooks are
    published to a repository (`book_notebooks_repository`), a button opens it in Colab."""
    buttons = context.get("header_buttons", [])
    for group in buttons:
        if group.get("label") == "download-buttons":
            group["buttons"] = [
                b for b in group["buttons"] if b.get("label") != "download-source-button"
            ]
    repository = app.config.book_notebooks_repository
    if repository and context.get("ipynb_source") == f"{pagename}.ipynb":
        url = COLAB.format(repository=repository, branch=NOTEBOOKS_BRANCH, page=pagename)
        colab = {
            "type": "link",
            "text": "Colab",
            "tooltip": "Open this page's notebook in Colab",
            "icon": "_static/images/logo_colab.png",
            "url": url,
            "label": "colab-button",
        }
        buttons.append(
            {
                "type": "group",
                "tooltip": "Run this page",
                "icon": "fas fa-rocket",
                "buttons": [colab],
                "label": "launch-buttons",
            }
        )


def setup(app):
    app.add_config_value("book_notebooks_repository", "", "html", types=[str])
    app.add_role("book-wheel", wheel_role)
    app.connect("env-get-outdated", uncached)
    pages = ResolvedPages()
    app.connect("doctree-resolved", pages.keep, priority=900)
    app.connect("html-page-context", pages.offer_notebook)  # before the theme's (501)
    app.connect("html-page-context", reader_buttons, priority=600)
    return SERIAL
