"""Every executed page downloads as a notebook with its outputs (merged back from the cache)
and a setup cell that installs this JAX and the `chapter2` wheel from `_wheels/`; the cells
that check the book's statements stay behind."""

import contextlib
import importlib.metadata
import re
from pathlib import Path

import nbformat
from docutils import nodes

from book.cache import opened
from chapter2.claims.registry import CLAIM_LABEL

WHEELS = "_wheels"
SETUP = """\
# Setup (in the downloaded notebook only): this page needs JAX {jax} and the book's
# chapter2 package; they are installed here when missing.
import importlib, importlib.metadata, importlib.util, os, subprocess, sys


def _needs_install():
    try:
        version = importlib.metadata.version("jax")
    except importlib.metadata.PackageNotFoundError:
        return True
    needed = ["chapter2", "myst_nb"]
    return version != "{jax}" or not all(importlib.util.find_spec(m) for m in needed)


if _needs_install():
    site = os.environ.get("BOOK_SITE", "{site}").rstrip("/")
    if not site:
        raise RuntimeError(
            "This page needs jax=={jax} and the book's chapter2 package: "
            "pip install 'jax=={jax}' and, in the book's repository, pip install '.[notebook]'."
        )
    wheel = f"chapter2[notebook] @ {{site}}/{wheels}/{wheel}"
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "jax=={jax}", wheel])
    importlib.invalidate_caches()
"""


def wheel_name() -> str:
    """The file name of the chapter2 wheel, for the installed version."""
    return f"chapter2-{importlib.metadata.version('chapter2')}-py3-none-any.whl"


def wheel_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """`{book-wheel}`text``: a link to the chapter2 wheel the site publishes, titled `text`."""
    link = nodes.reference(rawtext, text, refuri=f"{WHEELS}/{wheel_name()}", classes=["wheel"])
    return [link], []


def setup_cell(site: str) -> nbformat.NotebookNode:
    """The first cell of a downloaded notebook."""
    source = SETUP.format(
        jax=importlib.metadata.version("jax"), site=site, wheels=WHEELS, wheel=wheel_name()
    )
    return nbformat.v4.new_code_cell(source, metadata={"tags": ["setup"]})


CHECK_CELL = re.compile(r'verify\("[\w-]+"\)')  # a cell that checks a statement: its mark
CHECK_IMPORT = "from chapter2.claims import verify"


def for_readers(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook without the book's checks: their cells, their import, their labels."""
    notebook.cells = [
        cell
        for cell in notebook.cells
        if not (cell.cell_type == "code" and CHECK_CELL.fullmatch(cell.source.strip()))
    ]
    for cell in notebook.cells:
        if cell.cell_type == "code":
            lines = cell.source.splitlines(keepends=True)
            cell.source = "".join(line for line in lines if line.rstrip() != CHECK_IMPORT)
        else:
            cell.source = CLAIM_LABEL.sub("", cell.source)
    return notebook


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
            written = Path(app.outdir).parent / "jupyter_execute" / f"{docname}.ipynb"
            if not written.exists():
                continue
            try:
                cache.match_cache_notebook(nbformat.read(written, as_version=4))
            except KeyError:
                stale.append(docname)
    return stale


def offer_notebook(app, pagename, templatename, context, doctree) -> None:
    """`html-page-context` (before the theme's buttons): publish the executed notebook."""
    notebook = executed_notebook(
        Path(app.outdir).parent, app.config.nb_execution_cache_path, pagename
    )
    if notebook is None:
        return
    notebook = for_readers(notebook)
    notebook.cells.insert(0, setup_cell(app.config.html_baseurl))
    published = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    published.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, published)
    context["ipynb_source"] = f"{pagename}.ipynb"
