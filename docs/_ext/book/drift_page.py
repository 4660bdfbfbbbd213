"""A drift build's page `drift-report` and banner. A drift build opens every page with a
banner that links that page, which sums up the build's report (filled when the page is
written, after every page was read) and links the whole report. In the baseline, the page
sums up the committed reports, each linking its release's build where the site holds it.
"""

import os
import shutil
from dataclasses import replace
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

from book import SERIAL, book_commit, build_folder
from book.dependencies import claim_modules, module_path
from book.drift import build_report, cause_pieces, summary, to_markdown
from book.markdown import Inline
from book.notebooks import executed_notebook
from book.outputs import compare_builds
from book.record import book_data, build_record, home_verdicts
from book.site import release_folder
from chapter2.claims.registry import Status, counted
from chapter2.records import ClaimsReport, DriftReport, PageRecord
from chapter2.releases import baseline_jax, release_key

REPORT_PAGE = "drift-report"
REPORT_FILE = "report.md"  # the whole report, beside the HTML's root (a drift build)


def claims_report(path: str) -> ClaimsReport | None:
    """The claims report at `path`, a setting of the build (None where it names none)."""
    return ClaimsReport.load(path) if path and Path(path).is_file() else None


def read_report_again(app, env, added, changed, removed) -> list[str]:
    """`env-get-outdated`: a drift build reads its page drift-report in every build."""
    drift = app.config.book_drift_claims and REPORT_PAGE in env.found_docs
    return [REPORT_PAGE] if drift else []


def drift_report(env, build: Path) -> DriftReport:
    """This drift build's report, from what its pages recorded in the build folder `build`."""
    config = env.config
    record = build_record(env, [])
    cache = config.nb_execution_cache_path
    notebooks = {page: executed_notebook(build, cache, page) for page in sorted(env.found_docs)}
    baseline = Path(config.book_drift_baseline)
    # What this build plays, and the claims modules a process of that JAX could not load;
    # its claims as the pages showed them
    release = ClaimsReport.load(config.book_drift_claims)
    shown = replace(release, claims=list(home_verdicts(record.pages).values()))
    return build_report(
        shown,
        record.failing_cells,
        claims_report(config.book_drift_baseline_claims),
        book_commit(Path(env.srcdir).parent),
        compare_builds(baseline, {p: n for p, n in notebooks.items() if n})
        if baseline.is_dir()
        else None,
    )


class ThisBuildsReport:
    """A drift build's report, made once every page is read, for its page and its files (one
    per build)."""

    def __init__(self) -> None:
        self.report: DriftReport | None = None

    def make(self, app, env) -> None:
        """`env-updated`: the report, from what the pages recorded."""
        if app.config.book_drift_claims:
            self.report = drift_report(env, build_folder(app))

    def fill(self, app, doctree, docname) -> None:
        """`doctree-resolved`: the report on its page."""
        for node in doctree.findall(this_report):
            uri = os.path.relpath(REPORT_FILE, Path(docname).parent)
            full = [nodes.reference("", "The full report", refuri=uri)]
            node.replace_self(report_section(self.report, set(self.report.claim_ids or ()), full))

    def write(self, app, exception) -> None:
        """`build-finished`: the report beside the HTML folder; its Markdown also in the HTML,
        where its page links it."""
        if exception is None and app.config.book_drift_claims:
            build = build_folder(app)
            self.report.dump(build / "report.json")
            (build / REPORT_FILE).write_text(to_markdown(self.report))
            shutil.copy(build / REPORT_FILE, Path(app.outdir) / REPORT_FILE)


def banner(app, doctree, docname) -> None:
    """`doctree-resolved`: a drift build's banner on each page, linking its report; it counts
    what the page recorded, as the report does."""
    release = claims_report(app.config.book_drift_claims)
    if release is None:
        return
    jax, baseline = release.jax, baseline_jax()
    page = book_data(app.env).pages.get(docname, PageRecord())  # read only: pages are written
    shown = list(page.verdicts.values())
    differ = [v for v in shown if v.status is Status.DRIFTED]
    if not shown:
        said = "This page shows no claim."
    elif differ:
        said = (
            f"Under it, {counted(len(differ), 'claim')} of the {len(shown)} this page shows "
            f"no longer {'holds' if len(differ) == 1 else 'hold'} (marked {Status.DRIFTED.symbol})."
        )
    else:
        said = f"Every claim this page shows holds under it ({len(shown)})."
    failed = page.failing_cells
    if failed:
        what = "what it prints" if len(failed) == 1 else "what they print"
        said += (
            f" {counted(len(failed), 'cell')} of this page failed: {what}, and the numbers "
            "they give the prose, are missing."
        )
    said = f"This page was built with JAX {jax}, not the baseline JAX {baseline}. {said}"
    text = nodes.paragraph("", said)
    if docname != REPORT_PAGE:
        uri = app.builder.get_relative_uri(docname, REPORT_PAGE)
        text += nodes.Text(" What changed, cause by cause: this release's ")
        text += nodes.reference("", "drift report", refuri=uri)
        text += nodes.Text(".")
    box = nodes.container("", text, classes=["drift-banner"], ids=["drift-banner"])
    target = next(iter(doctree.findall(nodes.section)), doctree)
    title = next(iter(target.findall(nodes.title)), None)
    target.insert(target.index(title) + 1 if title is not None else 0, box)


class this_report(nodes.General, nodes.Element):
    """Placeholder for a drift build's report, filled when its page is written."""


def inline(pieces: list[Inline]) -> list[nodes.Node]:
    """A sentence's pieces (`book.markdown.Inline`) as document nodes."""
    marked = {"code": nodes.literal, "strong": nodes.strong}
    return [marked[kind](t, t) if kind in marked else nodes.Text(t) for kind, t in pieces]


def report_section(report: DriftReport, stated: set[str], full: list[nodes.Node]) -> nodes.section:
    """A report summed up under its release (`stated`: the ids of the claims the book states
    now): a few sentences, a sentence per cause, and `full`, the links to the whole report."""
    section = nodes.section(ids=[nodes.make_id(f"jax {report.jax}")])
    section += nodes.title(text=f"JAX {report.jax}")
    section += nodes.paragraph(text=summary(report, len(stated), stated))
    if report.causes:
        causes = nodes.enumerated_list(enumtype="arabic", prefix="", suffix=".")
        for cause in report.causes:
            causes += nodes.list_item("", nodes.paragraph("", "", *inline(cause_pieces(cause))))
        section += causes
    section += nodes.paragraph("", "", *full, nodes.Text("."))
    return section


class DriftReportDirective(SphinxDirective):
    """`{drift-report}`: this build's report, or in the baseline each committed one's summary."""

    def run(self):
        config = self.env.config
        if config.book_drift_claims:
            return [this_report()]
        reports = {  # each report says its release
            path: DriftReport.load(path)
            for path in Path(config.book_drift_reports).glob("*/report.json")
        }
        if not reports:
            return [nodes.paragraph(text="No drift report has been recorded.")]
        stated = claim_modules(Path(config.book_engine_src))  # the claims the book states now
        for module in set(stated.values()):
            self.env.note_dependency(str(module_path(Path(config.book_engine_src), module)))
        found = []
        for path, report in sorted(reports.items(), key=lambda r: release_key(r[1].jax))[::-1]:
            self.env.note_dependency(str(path))
            full = [
                addnodes.download_reference(
                    "",
                    "",
                    nodes.inline(text="The full report"),
                    refdoc=self.env.docname,
                    reftarget=os.path.relpath(
                        path.with_suffix(".md"), Path(self.env.doc2path(self.env.docname)).parent
                    ),
                    refexplicit=True,
                )
            ]
            if report.jax in config.book_site_versions:  # the site holds that build
                uri = f"{release_folder(report.jax)}/{REPORT_PAGE}.html"  # from the root
                full += [nodes.Text(", and "), nodes.reference("", "in that build", refuri=uri)]
            found.append(report_section(report, set(stated), full))
        return found


def setup(app):
    app.add_config_value("book_drift_claims", "", "env", types=[str])
    app.add_config_value("book_drift_baseline", "", "env", types=[str])
    app.add_config_value("book_drift_baseline_claims", "", "env", types=[str])
    app.add_config_value("book_drift_reports", "", "env", types=[str])
    app.add_directive("drift-report", DriftReportDirective)
    app.add_node(this_report)
    app.connect("env-get-outdated", read_report_again)
    app.connect("doctree-resolved", banner)
    report = ThisBuildsReport()
    app.connect("env-updated", report.make)
    app.connect("doctree-resolved", report.fill)
    app.connect("build-finished", report.write, priority=400)  # before failed pages go
    return SERIAL
