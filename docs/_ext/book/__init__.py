"""The book's Sphinx layer: `chapter2` returns data, this turns it into pages. A package of
its own (docs/_ext/pyproject.toml declares its renderers and kernel provisioner)."""

import hashlib
import os
from pathlib import Path

from book import (
    backends,
    dependencies,
    failures,
    glyphs,
    links,
    notebooks,
    numbering,
    offline,
    record,
    site,
    verdicts,
)
from chapter2.claims.attribution import PAGE_VARIABLE


def layer_hash(package: Path = Path(__file__).parent) -> str:
    """A hash of this package's code: as a config value, a change re-reads every page."""
    digest = hashlib.sha256()
    for path in sorted(package.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def name_the_page(app, docname: str, source: list[str]) -> None:
    """`source-read`: the kernel started next knows its page (chapter2.claims.attribution)."""
    os.environ[PAGE_VARIABLE] = docname


def setup(app):
    app.setup_extension("book.defaults")
    app.setup_extension("book.roofs")
    app.add_config_value("book_layer_hash", layer_hash(), "env", types=[str])
    app.add_config_value("book_chapter", 2, "env", types=[int])
    app.add_config_value("book_claims_matrix", "", "env", types=[str])
    app.connect("env-get-updated", numbering.strip_chapter, priority=100)
    app.connect("env-get-updated", numbering.prefix_chapter, priority=900)
    app.connect("env-before-read-docs", numbering.note_read)
    app.connect("env-get-outdated", numbering.read_all_after_contents_change)
    app.add_config_value("book_engine_src", "", "env", types=[str])
    app.connect("source-read", name_the_page)
    app.connect("source-read", dependencies.note_page_dependencies)

    app.add_directive("claims-matrix", verdicts.ClaimsMatrix)
    app.add_directive("claim-checks", verdicts.ClaimChecks)
    app.add_node(verdicts.claim_checks)
    app.add_directive("version-note", verdicts.VersionNote)
    app.add_node(verdicts.claims_matrix)
    app.add_node(verdicts.note_release)
    app.connect("doctree-resolved", verdicts.fill_pages)

    app.add_domain(record.BookDomain)
    app.add_env_collector(record.BookCollector)
    problems = record.ProblemLog(app)
    app.connect("builder-inited", problems.attach)
    app.connect("build-finished", problems.write)
    app.connect("env-get-outdated", notebooks.uncached)
    app.connect("builder-inited", links.note_outdated_html)
    app.connect("env-get-outdated", links.read_what_is_written)
    app.connect("html-page-context", links.named_links_only, priority=600)  # after its links
    app.connect("build-finished", failures.forget_failed_pages)
    app.connect("html-page-context", notebooks.offer_notebook)  # before the theme's (501)
    app.connect("html-page-context", notebooks.reader_buttons, priority=600)
    app.add_config_value("book_notebooks_repository", "", "html", types=[str])
    app.add_role("book-wheel", notebooks.wheel_role)
    app.connect("build-finished", offline.copy_mathjax)
    app.add_config_value("book_site_versions", [], "html", types=[list])
    app.add_config_value("book_drift_claims", "", "html", types=[str])
    app.add_config_value("book_drift_baseline", "", "", types=[str])
    app.add_config_value("book_drift_baseline_claims", "", "", types=[str])
    app.connect("env-get-outdated", site.read_report_again)
    app.connect("env-before-read-docs", site.read_report_last)
    app.add_config_value("book_drift_reports", "", "", types=[str])
    app.add_directive("drift-report", site.DriftReport)
    app.add_config_value("book_backends", "", "env", types=[str])
    app.add_directive("backend-note", backends.BackendNote)
    app.add_directive("release-note", backends.ReleaseNote)
    app.connect("doctree-resolved", site.banner)
    app.add_post_transform(glyphs.EmojiAsWords)
    app.add_css_file("book.css")
    return {"version": "1", "parallel_read_safe": False}  # the book builds with -j 1
