"""Sphinx configuration of the book: MyST-NB pages executed against the installed JAX."""

import importlib.metadata
import json
import os
from pathlib import Path

from chapter2.records import ClaimsReport, SitePlan
from chapter2.releases import baseline_jax

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

project = "Optimizing JAX Code for Performance"
author = "The book's authors"
copyright = "2026, the book's authors"

extensions = [
    "myst_nb",
    "sphinx_design",
    "sphinx_copybutton",
    "sphinx.ext.intersphinx",
    "sphinx_codeautolink",
    "sphinxext.opengraph",
    "book",
]
exclude_patterns = ["_build", "_ext", "**.ipynb_checkpoints"]
myst_enable_extensions = ["attrs_inline", "colon_fence", "dollarmath", "deflist", "substitution"]
smartquotes = False  # keep -- and quotes as typed: flags and code-like text must stay exact
book_chapter = 2  # pages are numbered 2.1, 2.2, ... from their place in the toctree
book_matrix = str(ROOT / "data" / "matrix")  # the claims matrix: a record per release
book_backends = str(ROOT / "data" / "backends")  # runs recorded on other backends (a GPU)

# Execution: every page runs in its own kernel; results are cached by code content, in the
# build folder beside the HTML (book.cache: a build sent elsewhere, as nox -s drift sends
# its own, never touches this one's cache). The cache folder is named after Python and JAX
# (change them and every page runs again); the engine files a page uses are folded into that
# page's own key (book.dependencies), so an engine change re-executes only the pages that
# import it.
book_engine_src = str(ROOT / "src")
nb_execution_mode = "cache"
nb_execution_timeout = 300  # seconds per cell: a hung cell fails instead of hanging the build
nb_execution_allow_errors = True  # every cell runs; book.failures names each failing one
nb_render_error_lexer = "myst-ansi"  # an error shows as IPython coloured it, whatever its text
nb_merge_streams = True
nb_render_markdown_format = "myst"  # Markdown that cells output may use roles such as {ref}

# JAX's and NumPy's names link to their references: in prose through roles such as
# {py:obj}`jax.jit`, in code cells through sphinx-codeautolink (a page's cells read as one
# program, so an import holds in the cells below it). The inventories are committed, so the
# build needs no network: tools/inventory.py fetches them and names, beside each, the
# published reference it points into (MAINTAINING.md).
_REFERENCES = {
    p: json.loads(p.read_text()) for p in sorted((ROOT / "data/inventories").glob("*.json"))
}
intersphinx_mapping = {
    p.stem: (r["addresses"], str(p.with_suffix(".inv"))) for p, r in _REFERENCES.items()
}
# A class defined in a private module is linked under the name its reference documents.
codeautolink_inventory_map = {
    k: v for r in _REFERENCES.values() for k, v in r["defined_in"].items()
}
codeautolink_concat_default = True
# A cell that does not parse fails as it runs, and the build names it there: once.
suppress_warnings = ["codeautolink.parse_block"]

# Copy buttons on code, not on outputs; the >>> and $ prompts are left out of the copy.
copybutton_selector = "div:not(.output) > div.highlight pre"
copybutton_exclude = ".linenos, .gp, .go"

# Math is written as MathML while the book is built (book.mathml): browsers lay it out
# themselves, so no page loads a math script.
html_math_renderer = "mathml"

html_theme = "sphinx_book_theme"
html_title = project
html_static_path = ["_static"]
# Templates of the theme the book replaces (docs/_templates: each says why).
templates_path = ["_templates"]
html_favicon = "_static/favicon.svg"  # browsers ask every page for an icon
# Where the site is published (the publishing workflow sets BOOK_BASEURL): a downloaded
# notebook installs the book's wheel from there.
html_baseurl = os.environ.get("BOOK_BASEURL", "")
html_copy_source = False  # a page's MyST source holds the book's checks: readers get notebooks
html_use_index = False  # the book has no index entries: no empty index page to build
html_theme_options = {
    "use_download_button": True,
    "show_toc_level": 2,
    "home_page_in_toc": True,
    # One search box, the sidebar's: pydata-sphinx-theme 0.20 puts another in its header
    "navbar_persistent": [],
    # The maintainers' pages are in neither the reader's contents nor search (each is an
    # orphan with `no-search`); the overview and this footer link them.
    "extra_footer": "<p>For maintainers: "
    + " · ".join(
        f'<a href="{page}.html">{title}</a>'
        for page, title in [
            ("claims-matrix", "statements under each JAX release"),
            ("checks", "how each is checked"),
            ("drift-report", "the book under other releases"),
            ("execution-statistics", "execution statistics"),
        ]
    )
    + "</p>",
}
html_last_updated_fmt = ""
# Each page's meta description (and Open Graph tags): its opening, up to 200 characters.
ogp_site_url = html_baseurl
ogp_description_length = 200
ogp_social_cards = {"enable": False}  # no card image drawn per page
html_context = {"default_mode": "auto"}  # light or dark as the reader's system prefers

# The versioned site (nox -s site; docs/_ext/book/site.py): the JAX releases built into it,
# the baseline first. A drift build (nox -s drift) names the claims JSON of its JAX and the
# baseline build's notebooks; the baseline's recorded verdicts are committed.
book_site_versions = (
    SitePlan.load(os.environ["BOOK_SITE_PLAN"]).versions if "BOOK_SITE_PLAN" in os.environ else []
)
book_drift_claims = os.environ.get("BOOK_DRIFT_CLAIMS", "")
book_drift_baseline = os.environ.get("BOOK_DRIFT_BASELINE", "")
book_drift_baseline_claims = str(ROOT / "data" / "matrix" / f"jax-{baseline_jax()}.json")
book_drift_reports = str(ROOT / "data" / "drift")  # the committed reports: nox -s record
# The GitHub repository (owner/name) whose `notebooks` branch the publishing workflows fill
# with the baseline's reader's notebooks: each page with code then opens in Colab. A drift
# build's notebooks are another JAX's, which that branch does not hold.
book_notebooks_repository = (
    "" if book_drift_claims else os.environ.get("BOOK_NOTEBOOKS_REPOSITORY", "")
)
_drift_jax = ClaimsReport.load(book_drift_claims).jax if book_drift_claims else ""
if book_site_versions:
    html_theme_options |= {
        "switcher": {
            # at the site's root, where the baseline is; a release's build is a folder below
            "json_url": "../switcher.json" if _drift_jax else "switcher.json",
            "version_match": _drift_jax or importlib.metadata.version("jax"),
        },
        "check_switcher": False,  # the JSON exists only once the site is assembled
        "show_version_warning_banner": False,  # each page of a drift build has its own
    }
    html_sidebars = {
        "**": [
            "navbar-logo.html",
            "version-switcher",
            "icon-links.html",
            "search-button-field.html",
            "sbt-sidebar-nav.html",
        ]
    }
