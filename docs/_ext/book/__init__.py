"""The book's Sphinx layer: numbering, claim verdicts, failure reports, page kernels,
notebook downloads, a book that needs no network, and the versioned site.

`chapter2` computes and returns data; this package turns it into pages. It is installed with
the project (pyproject.toml ships it beside `chapter2`), which also declares its entry points:
the mime renderers for myst-nb (verdicts, timing comparisons, alt text) and the IPC kernel
provisioner for Jupyter. conf.py enables it with `extensions = ["book"]`.
"""

import hashlib
from pathlib import Path

from book import (
    backends,
    balance,
    dependencies,
    failures,
    glyphs,
    kernels,
    notebooks,
    numbering,
    offline,
    site,
    verdicts,
)


def layer_hash(package: Path = Path(__file__).parent) -> str:
    """A hash of this package's code: a config value of its own, so that a change to the
    layer makes Sphinx read every page again (their executed outputs stay cached)."""
    digest = hashlib.sha256()
    for path in sorted(package.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def setup(app):
    app.add_config_value("book_layer_hash", layer_hash(), "env", types=[str])
    app.add_config_value("book_chapter", 2, "env", types=[int])
    app.add_config_value("book_claims_matrix", "", "env", types=[str])
    app.connect("env-get-updated", numbering.strip_chapter, priority=100)
    app.connect("env-get-updated", numbering.prefix_chapter, priority=900)
    app.connect("env-before-read-docs", numbering.note_read)
    app.connect("env-get-updated", numbering.rewrite_after_toctree_change)
    app.add_config_value("book_engine_src", "", "env", types=[str])
    app.add_config_value("book_balance", True, "", types=[bool])
    app.connect("source-read", kernels.note_page)
    app.connect("source-read", dependencies.note_page_dependencies)

    app.add_directive("claims-matrix", verdicts.ClaimsMatrix)
    app.add_directive("version-note", verdicts.VersionNote)
    app.add_node(verdicts.claims_matrix)
    app.add_node(verdicts.note_release)
    app.connect("env-before-read-docs", verdicts.init_env)
    app.connect("env-before-read-docs", balance.balance)
    app.connect("env-purge-doc", verdicts.purge)
    app.connect("env-merge-info", verdicts.merge)
    app.connect("env-get-updated", verdicts.rewrite_tables)
    app.connect("doctree-resolved", verdicts.fill_pages)

    app.connect("builder-inited", failures.start)
    app.connect("builder-inited", kernels.share_timing_lock)
    app.connect("env-get-outdated", failures.recheck)
    app.connect("env-get-outdated", notebooks.uncached)
    app.connect("build-finished", failures.finish)
    app.connect("html-page-context", notebooks.offer_notebook)  # before the theme's (501)
    app.connect("build-finished", notebooks.publish_wheel)
    app.connect("build-finished", offline.copy_mathjax)
    app.add_config_value("book_site_versions", [], "html", types=[list])
    app.add_config_value("book_drift_claims", "", "html", types=[str])
    app.add_config_value("book_drift_report", "", "", types=[str])
    app.add_config_value("book_drift_reports", "", "", types=[str])
    app.add_directive("drift-report", site.DriftReport)
    app.add_config_value("book_backends", "", "env", types=[str])
    app.add_directive("backend-note", backends.BackendNote)
    app.add_directive("backend-runs", backends.BackendRuns)
    app.connect("doctree-read", backends.mark_runs_on_cpu)
    app.connect("doctree-resolved", site.banner)
    app.connect("doctree-resolved", site.drop_drift_tracebacks)
    app.add_post_transform(glyphs.EmojiAsWords)
    app.add_css_file("book.css")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
