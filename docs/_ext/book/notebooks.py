"""Every executed page can be downloaded as a notebook, with its outputs.

sphinx-book-theme offers the `.ipynb` download only when a launch URL is configured. myst-nb
writes each page to `<build>/jupyter_execute/<page>.ipynb`, but in cache mode without the
outputs it took from the cache. This merges the cached outputs back in, publishes the
notebook beside the page's source in `_sources/` and tells the theme, so its download button
offers it.
"""

import contextlib
from pathlib import Path

import nbformat
from jupyter_cache import get_cache


def offer_notebook(app, pagename, templatename, context, doctree) -> None:
    """`html-page-context` (before the theme's buttons): publish the executed notebook."""
    written = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not written.exists():
        return
    notebook = nbformat.read(written, as_version=4)
    cache = get_cache(app.config.nb_execution_cache_path)
    with contextlib.suppress(KeyError):  # not cached: the page failed; the build reports it
        _, notebook = cache.merge_match_into_notebook(notebook)
    published = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    published.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, published)
    context["ipynb_source"] = f"{pagename}.ipynb"
