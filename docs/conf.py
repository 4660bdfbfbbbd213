"""Sphinx configuration of the book: MyST-NB pages executed against the installed JAX."""

import shutil
from pathlib import Path

from chapter2.fingerprint import code_fingerprint

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

project = "Optimizing JAX Code for Performance"
author = "The chapter2 authors"
copyright = "2026, the chapter2 authors"

extensions = ["myst_nb", "sphinx_design"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist", "substitution"]
myst_heading_anchors = 3
smartquotes = False  # keep -- and quotes as typed: flags and code-like text must stay exact

# Execution: every page runs; results are cached by code content. myst-nb keys its cache
# on a page's own cells only, so the cache folder is named after a fingerprint of the
# engine, the examples and the installed JAX: change any of them and every page runs again.
FINGERPRINT = code_fingerprint(ROOT / "src" / "chapter2", ROOT / "examples")
CACHES = DOCS / "_build" / ".jupyter_cache"
nb_execution_mode = "cache"
nb_execution_cache_path = str(CACHES / FINGERPRINT)
nb_execution_timeout = 300  # seconds per cell: a hung cell fails instead of hanging the build
nb_execution_raise_on_error = True  # a failing cell fails the build ...
nb_execution_show_tb = True  # ... and the console shows its traceback
nb_merge_streams = True
nb_render_markdown_format = "myst"  # Markdown that cells output may use roles such as {ref}

for stale in CACHES.glob("*"):
    if stale.name != FINGERPRINT:
        shutil.rmtree(stale, ignore_errors=True)

html_theme = "sphinx_book_theme"
html_title = project
html_theme_options = {
    "use_download_button": True,
    "show_toc_level": 2,
    "home_page_in_toc": True,
}
html_last_updated_fmt = ""
