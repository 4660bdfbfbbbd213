"""Every executed page can be downloaded as a notebook, with its outputs, and run elsewhere.

sphinx-book-theme offers the `.ipynb` download only when a launch URL is configured. myst-nb
writes each page to `<build>/jupyter_execute/<page>.ipynb`, but in cache mode without the
outputs it took from the cache. This merges the cached outputs back in, puts a setup cell in
front (it installs the JAX the book was built with and the book's `chapter2` wheel when they
are missing), publishes the notebook beside the page's source in `_sources/` and tells the
theme, so its download button offers it. The wheel itself is built into `_wheels/` of the
site, the same wheel `pip install .` gives.
"""

import contextlib
import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from book.cache import opened

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


def setup_cell(site: str) -> nbformat.NotebookNode:
    """The first cell of a downloaded notebook."""
    source = SETUP.format(
        jax=importlib.metadata.version("jax"), site=site, wheels=WHEELS, wheel=wheel_name()
    )
    return nbformat.v4.new_code_cell(source, metadata={"tags": ["setup"]})


def executed_notebook(app, docname: str) -> nbformat.NotebookNode | None:
    """The page's notebook with the outputs of its last execution, or None for a page
    without code."""
    written = Path(app.outdir).parent / "jupyter_execute" / f"{docname}.ipynb"
    if not written.exists():
        return None
    notebook = nbformat.read(written, as_version=4)
    with (
        opened(app.config.nb_execution_cache_path) as cache,
        contextlib.suppress(KeyError),  # not cached: the page failed; the build reports it
    ):
        _, notebook = cache.merge_match_into_notebook(notebook)
    return notebook


def uncached(app, env, added, changed, removed) -> list[str]:
    """`env-get-outdated`: a page whose executed outputs are gone from the cache (a cache
    folder deleted, or a new one for another JAX) is read, and so executed, again; otherwise
    it would keep its HTML but publish a notebook without outputs."""
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
    notebook = executed_notebook(app, pagename)
    if notebook is None:
        return
    notebook.cells.insert(0, setup_cell(app.config.html_baseurl))
    published = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    published.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, published)
    context["ipynb_source"] = f"{pagename}.ipynb"


def _newest_source(root: Path) -> float:
    files = [p for part in ("src", "docs/_ext", "pyproject.toml") for p in _files(root / part)]
    return max(p.stat().st_mtime for p in files)


def _files(path: Path) -> list[Path]:
    return [path] if path.is_file() else list(path.rglob("*.py"))


def publish_wheel(app, exception) -> None:
    """`build-finished`: build the chapter2 wheel into `_wheels/` when it is missing or older
    than the project's sources (uv when present, else pip). A book outside the project (no
    pyproject.toml beside the engine) has no wheel to publish."""
    root = Path(app.config.book_engine_src).parent
    if exception is not None or app.builder.format != "html":
        return
    if not (root / "pyproject.toml").is_file():
        return
    target = Path(app.outdir) / WHEELS
    wheel = target / wheel_name()
    if wheel.exists() and wheel.stat().st_mtime >= _newest_source(root):
        return
    uv = shutil.which("uv")
    command = (
        [uv, "build", "--wheel", "--out-dir", str(target), str(root)]
        if uv
        else [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(target), str(root)]
    )
    subprocess.run(command, check=True, capture_output=True)
