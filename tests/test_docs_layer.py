"""The book's Sphinx layer (docs/_ext/book): rendering verdicts, reporting failures, caches."""

import ast
import re
from dataclasses import asdict, replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from book import cache, dependencies, failures, layer_hash, markdown, mathml, record, verdicts
from book import matrix as book_matrix
from conftest import DOCS, ROOT, directives, myst_tokens
from docutils import nodes
from docutils.core import publish_doctree
from docutils.utils.math import MathError
from helpers import BASELINE
from myst_parser.parsers.docutils_ import Parser
from sphinx.directives.code import LiteralInclude
from sphinx.util.nodes import split_explicit_title

from chapter2.claims.registry import Status
from chapter2.records import (
    BuildRecord,
    ClaimsMatrix,
    ClaimsReport,
    ComparisonRecord,
    FailingCell,
    PageRecord,
    Problem,
    Statement,
    TimingRecord,
    VerdictRecord,
)

VERDICT = VerdictRecord(
    id="demo",
    page="demo-page",
    label="claim-demo",
    kind="observed",
    status="differs here",
    jax=BASELINE,
    jaxlib="0.12.0",
    expected={"files written": ["<host>.xplane.pb"], "ready": True},
    observed={"files written": ["<host>.xplane.pb"], "ready": False, "a*b": 2},
    evidence="files written: ['<host>.xplane.pb']; a*b: 2",
    check_source="@claim('demo', 'x')\ndef _demo():\n    return 1\n",
)


def test_escape_keeps_markup_characters_visible():
    assert markdown.escape("a*b <host> x_y [1] {z} $5") == r"a\*b \<host\> x\_y \[1\] \{z\} \$5"
    assert markdown.escape("plain words, dots.") == "plain words, dots."


def test_code_in_words_stays_code_and_only_the_words_are_escaped():
    said = "after `r[0, 0].item()`, 2 * 3 <ms> and `v * scale`."
    assert markdown.with_code(said) == r"after `r[0, 0].item()`, 2 \* 3 \<ms\> and `v * scale`."


SAID = "Wrote a trace of `f` to a folder: 1 file, <host>.xplane.pb, and 2 a*b."


def test_a_verdict_is_a_compact_mark_whose_panel_says_in_words_what_was_run():
    text = verdicts.verdict_markdown(replace(VERDICT, said=SAID), boxed=False)
    assert text.startswith(
        f"````{{dropdown}} ≠ not seen on this book's machine (JAX {BASELINE})\n"
        ":class-container: claim-mark claim-differs-here\n"
    )
    assert r"Wrote a trace of `f` to a folder: 1 file, \<host\>.xplane.pb, and 2 a\*b." in text
    assert '<a href="checks.html#check-demo">How this is checked</a>' in text
    for machinery in ("(as expected)", "the book describes", "@claim", "demo-page", "- ready"):
        assert machinery not in text


def test_a_mark_that_came_out_as_the_page_says_shows_its_symbol_alone():
    """Its words go to a screen reader only; a mark that needs the reader's eye keeps them."""
    for status, said in [
        ("holds", f"checked on JAX {BASELINE}"),
        ("as specified", f"seen on this book's machine (JAX {BASELINE})"),
    ]:
        text = verdicts.verdict_markdown(replace(VERDICT, status=status), boxed=False)
        assert text.startswith(f"````{{dropdown}} ✓ [{said}]{{.visually-hidden}}\n"), text
    drifted = verdicts.verdict_markdown(replace(VERDICT, status="drifted"), boxed=False)
    assert drifted.startswith(f"````{{dropdown}} ✗ not true on JAX {BASELINE}\n")


def test_a_panel_without_words_of_its_check_gives_its_values_in_words():
    text = verdicts.panel(VERDICT)
    assert text.startswith(r"a\*b: 2; files written: \[\<host\>.xplane.pb\]; ready: no.")
    drifted = verdicts.panel(replace(VERDICT, said=SAID, status="drifted"))
    assert "2 a\\*b. The book says otherwise." in drifted


def test_a_check_that_ran_the_cell_again_shows_nothing_while_it_holds():
    rerun = replace(VERDICT, said=SAID, repeats="the cell above")
    for status in ("holds", "as specified"):
        assert verdicts.only_reran(replace(rerun, status=status))
        text = verdicts.panel(replace(rerun, status=status))  # in a warning's box
        assert text.startswith("Ran the cell above again: JAX did as shown.\n")
        assert "xplane" not in text
        node = verdicts.reran_node(replace(rerun, status=status))  # nothing a reader sees
        assert (node["classes"], node["ids"], node.children) == (
            ["claim-reran"],
            ["reran-demo"],
            [],
        )
    for status in ("drifted", "differs here"):  # where the page is wrong: what JAX did
        assert not verdicts.only_reran(replace(rerun, status=status))
        assert "1 file" in verdicts.panel(replace(rerun, status=status))
    assert not verdicts.only_reran(replace(VERDICT, status="holds"))  # it checked more


def test_the_page_of_checks_lists_each_value_beside_what_the_book_expects():
    found = verdicts.findings(replace(VERDICT, observed={**VERDICT.observed, "re": r"\d+ ms"}))
    assert "files written: [<host>.xplane.pb] (as expected)" in found
    assert "ready: no (the book describes yes)" in found
    assert "a*b: 2" in found  # context: shown, not compared
    assert r"re: \d+ ms" in found  # as it was observed: no markup to take back off
    assert verdicts.findings(replace(VERDICT, observed=None)) == []


def test_the_page_of_checks_says_what_a_check_tests_and_what_its_statement_says_beyond_it():
    said = {"checks": "That `f` compiles once.", "unchecked": "Why it matters."}
    assert verdicts.coverage(replace(VERDICT, **said)) == [
        ("Checked", "That `f` compiles once."),
        ("Not checked", "Why it matters."),
    ]
    whole = verdicts.coverage(replace(VERDICT, checks="That `f` compiles once.", unchecked=""))
    assert whole == [("Checked", "That `f` compiles once."), ("Not checked", verdicts.NOTHING_MORE)]
    assert verdicts.coverage(VERDICT) == [("Checked", verdicts.NOT_SAID)]  # a claim that lacks it
    paragraph = verdicts._words("Not checked", "That `f` compiles once.")
    assert paragraph.astext() == "Not checked: That f compiles once."
    assert [type(n).__name__ for n in paragraph.children] == ["strong", "Text", "literal", "Text"]
    assert paragraph["classes"] == ["claim-not-checked"]


def test_a_warning_on_its_own_page_is_a_box_with_the_same_panel():
    boxed = verdicts.verdict_markdown(replace(VERDICT, status="holds"), boxed=True)
    assert boxed.startswith("`````{container} claim-verdict claim-holds\n")
    assert f"**✓ checked on JAX {BASELINE}**\n" in boxed
    assert "````{dropdown} What was run" in boxed
    assert verdicts.panel(replace(VERDICT, status="holds")) in boxed


def test_only_a_warning_on_its_own_page_is_a_box():
    warning = replace(VERDICT, warning=True)
    assert verdicts.is_boxed(warning, VERDICT.page)
    assert not verdicts.is_boxed(warning, "another-page")  # a mark where another page cites it
    assert not verdicts.is_boxed(replace(VERDICT, warning=False), VERDICT.page)


def test_a_warning_sphinx_is_told_to_suppress_is_not_recorded_as_a_problem():
    app = SimpleNamespace(config=SimpleNamespace(suppress_warnings=["myst.header", "ref"]))
    shown = record.ProblemLog(app).shown
    assert not shown(SimpleNamespace(type="myst", subtype="header"))
    assert not shown(SimpleNamespace(type="ref", subtype="python"))  # a type covers its subtypes
    assert shown(SimpleNamespace(type="myst", subtype="xref_missing"))
    assert shown(SimpleNamespace())  # a warning of no type


def test_the_pages_the_last_record_names_are_read_again(tmp_path):
    """A page with a failing cell or a problem in the last build's record is outdated, and
    only a page that still exists; without a record nothing is."""
    app = SimpleNamespace(outdir=str(tmp_path / "html"))
    env = SimpleNamespace(found_docs={"failed", "warned", "clean"})
    collector = record.BookCollector()
    assert collector.get_outdated_docs(app, env, set(), set(), set()) == []
    cell = FailingCell("failed", "docs/failed.md", 3, "1/0", "ZeroDivisionError: x", [])
    gone = replace(cell, page="removed")
    problems = [Problem("docs/warned.md", 4, "warned", "a warning"), Problem("x.py", 0, None, "")]
    pages = {
        "failed": PageRecord(failing_cells=[cell]),
        "removed": PageRecord(failing_cells=[gone]),
    }
    BuildRecord("0", "0", "3", "today", pages, problems).dump(tmp_path / record.RECORD)
    assert collector.get_outdated_docs(app, env, set(), set(), set()) == ["failed", "warned"]


def written_notebooks(build: Path, pages: list[str], cached: list[str]) -> str:
    """A build folder's executed notebooks, one cell each, as myst-nb writes them, those of
    `cached` also in its execution cache: the cache's folder."""
    import nbformat

    (build / "jupyter_execute").mkdir()
    cache_path = str(build / ".jupyter_cache")
    for page in pages:
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"'{page}'")])
        written = build / "jupyter_execute" / f"{page}.ipynb"
        nbformat.write(notebook, written)
        if page in cached:
            with cache.opened(cache_path) as held:
                held.cache_notebook_file(str(written), check_validity=False)
    return cache_path


def test_a_page_with_a_failing_cell_leaves_the_execution_cache(tmp_path):
    """After a build, the cached run of a page with a failing cell is removed, so that the
    next build runs it again; another page's stays."""
    cache_path = written_notebooks(tmp_path, ["failed", "clean"], cached=["failed", "clean"])
    cell = FailingCell("failed", "docs/failed.md", 3, "1/0", "ZeroDivisionError: x", [])
    pages = {"failed": PageRecord(failing_cells=[cell]), "clean": PageRecord()}
    domain = SimpleNamespace(pages=pages)
    app = SimpleNamespace(
        outdir=str(tmp_path / "html"),
        config=SimpleNamespace(nb_execution_cache_path=cache_path),
        env=SimpleNamespace(get_domain=lambda name: domain),
    )
    failures.forget_failed_pages(app, None)
    with cache.opened(cache_path) as held:
        left = [Path(r.uri).stem for r in held.list_cache_records()]
    assert left == ["clean"]


def test_a_drift_builds_banner_counts_what_its_page_recorded(tmp_path):
    """Under another JAX each page opens, after its title, with a banner: the release, the
    baseline, how many of the claims the page shows drifted, its failing cells, and a link
    to the drift report (on every page but the report's own). The baseline has none."""
    from book import drift_page

    claims = tmp_path / "claims.json"
    ClaimsReport("0.11.2", "0.11.2", "3.12", "today", []).dump(claims)
    drifted = replace(VERDICT, status="drifted")
    cell = FailingCell("p", "docs/p.md", 3, "1/0", "ZeroDivisionError: x", [])
    pages = {"p": PageRecord(verdicts={"a": drifted, "b": VERDICT}, failing_cells=[cell])}
    domain = SimpleNamespace(pages=pages)
    app = SimpleNamespace(
        config=SimpleNamespace(book_drift_claims=str(claims), book_site_versions=[]),  # no site
        env=SimpleNamespace(get_domain=lambda name: domain),
        builder=SimpleNamespace(get_relative_uri=lambda here, there: f"{there}.html"),
    )

    def page(docname: str) -> nodes.section:
        section = nodes.section("", nodes.title(text="Title"), nodes.paragraph(text="First."))
        drift_page.banner(app, section, docname)  # a doctree whose first section it is
        return section

    section = page("p")
    box = section[1]
    assert "drift-banner" in box["classes"]
    assert box.astext() == (
        f"This page was built with JAX 0.11.2, not the baseline JAX {BASELINE}. Under it, "
        "1 claim of the 2 this page shows no longer holds (marked ✗). 1 cell of this page "
        "failed: what it prints, and the numbers they give the prose, are missing. What "
        "changed, cause by cause: this release's drift report."
    )
    assert next(iter(box.findall(nodes.reference)))["refuri"] == "drift-report.html"
    assert "This page shows no claim." in page("other")[1].astext()
    assert not list(page(drift_page.REPORT_PAGE)[1].findall(nodes.reference))
    app.config.book_drift_claims = ""
    assert len(page("p")) == 2  # the baseline: no banner


def test_a_claims_verdict_is_the_one_its_own_page_found_with_what_that_page_says():
    """A claim checked on several pages is judged by its own page's verdict, whichever page
    sorts first; a claim no page of its own checked keeps the first page's."""
    own = replace(VERDICT, status="holds")
    elsewhere = replace(VERDICT, status="drifted")
    said = {"demo": Statement("The demo holds.", 4)}
    pages = {
        "a-page": PageRecord(verdicts={"demo": elsewhere, "lone": replace(VERDICT, id="lone")}),
        "demo-page": PageRecord(statements=said, verdicts={"demo": own}),
        "z-page": PageRecord(verdicts={"lone": replace(VERDICT, id="lone", status="holds")}),
    }
    home = record.home_verdicts(pages)
    assert home["demo"].status == Status.HOLDS
    assert home["demo"].statement == "The demo holds."
    assert home["lone"].status == VERDICT.status
    assert home["lone"].statement == ""


def test_the_failure_report_is_written_from_this_builds_record_only(tmp_path):
    """The build's closing report: the problems of the record this build wrote, also in its
    file; none and no file where there was none; and a record older than the build, left by
    an earlier one, is not taken for this build's."""
    import time

    report = tmp_path / failures.REPORT
    assert failures.write_report(tmp_path, time.time()) == (
        "The build stopped before it recorded its problems."
    )
    problem = Problem("docs/p.md", 4, "p", "a warning\nits second line")
    BuildRecord("0", "0", "3", "today", {}, [problem]).dump(tmp_path / record.RECORD)
    said = failures.write_report(tmp_path, time.time() - 60)
    assert said == "1 problem failed the build:\n  docs/p.md:4: a warning\n    its second line"
    assert report.read_text() == said + "\n"
    assert failures.write_report(tmp_path, time.time() + 60).startswith("The build stopped")
    BuildRecord("0", "0", "3", "today", {}, []).dump(tmp_path / record.RECORD)
    assert failures.write_report(tmp_path, time.time() - 60) is None
    assert not report.exists()


def test_a_drift_build_reads_its_report_page_in_every_build_and_the_baseline_does_not():
    from book import drift_page

    env = SimpleNamespace(found_docs={"drift-report", "p"})
    drift_build = SimpleNamespace(config=SimpleNamespace(book_drift_claims="claims.json"))
    baseline = SimpleNamespace(config=SimpleNamespace(book_drift_claims=""))
    assert drift_page.read_report_again(drift_build, env, set(), set(), set()) == ["drift-report"]
    assert drift_page.read_report_again(baseline, env, set(), set(), set()) == []
    env.found_docs = {"p"}  # a book without the page
    assert drift_page.read_report_again(drift_build, env, set(), set(), set()) == []


def test_a_page_whose_run_left_the_execution_cache_is_executed_again(tmp_path):
    """A page written by an earlier build whose run is no longer cached is read again; a
    cached one, a new or changed one (Sphinx reads those anyway) and a page never written
    are not named."""
    from book import notebooks

    pages = ["cached", "evicted", "changed"]
    cache_path = written_notebooks(tmp_path, pages, cached=["cached", "changed"])
    app = SimpleNamespace(
        outdir=str(tmp_path / "html"),
        config=SimpleNamespace(nb_execution_cache_path=cache_path),
    )
    env = SimpleNamespace(found_docs={"cached", "evicted", "changed", "never-run"})
    assert notebooks.uncached(app, env, set(), set(), set()) == ["evicted"]
    assert notebooks.uncached(app, env, set(), {"evicted"}, set()) == []


def test_a_check_with_nothing_to_check_gives_its_reason():
    unchecked = replace(VERDICT, status="cannot check", expected=None, observed=None)
    text = verdicts.verdict_markdown(replace(unchecked, evidence="no YNN fusion"), boxed=False)
    assert f"{{dropdown}} ○ cannot be checked on JAX {BASELINE}" in text
    assert "no YNN fusion" in text


def test_a_fact_of_another_backend_says_so_in_its_mark():
    """Built where the default device is a GPU, a fact of the CPU alone is not checked: the
    mark says why, not that this JAX could not check it."""
    elsewhere = replace(VERDICT, status="cannot check", expected=None, observed=None)
    elsewhere = replace(
        elsewhere, only_on=["cpu", "why"], platform="gpu", evidence="a fact of the CPU"
    )
    text = verdicts.verdict_markdown(elsewhere, boxed=False)
    assert text.startswith("````{dropdown} ○ a fact of the CPU, not checked on GPU\n")
    at_home = verdicts.verdict_markdown(replace(elsewhere, platform="cpu"), boxed=False)
    assert at_home.startswith(f"````{{dropdown}} ○ cannot be checked on JAX {BASELINE}\n")


def test_values_read_as_words():
    assert verdicts.words([True, False, None, [1, "a"]]) == "[yes, no, none, [1, a]]"
    assert verdicts.words({"x": 1.5, "b": 2}) == "{b: 2, x: 1.5}"  # as the cache keeps it


@pytest.mark.parametrize("status", list(Status))
def test_every_status_has_a_symbol_words_and_a_colour_class(status):
    assert status.symbol
    assert "JAX 9.9" in status.words("9.9")
    assert verdicts.status_class(status) in (DOCS / "_static" / "book.css").read_text()


def test_a_statement_is_the_paragraph_or_the_warning_under_its_label_as_read():
    page = (
        "# P\n\n(claim-a)=\nThe fusion page shows\n`one` fusion, *two* bytes.\n\nNext.\n\n"
        "(claim-b)=\n:::{warning}\nNot *this*\n\nbut that.\n:::\nAfter.\n\n(other)=\nNot a claim.\n"
    )
    settings = {"myst_enable_extensions": ["colon_fence"], "report_level": 4}
    doctree = publish_doctree(page, parser=Parser(), settings_overrides=settings)
    assert record.statements(doctree) == {
        "a": Statement("The fusion page shows one fusion, two bytes.", 4),
        "b": Statement("Not this but that.", 10),
    }


def test_a_warnings_location_names_its_file_line_and_page_in_every_form_sphinx_gives(tmp_path):
    docs = tmp_path / "docs"
    env = SimpleNamespace(
        doc2path=lambda name: docs / f"{name}.md",
        path2doc=lambda path: Path(path).stem if Path(path).parent == docs else None,
    )
    log = record.ProblemLog(SimpleNamespace(env=env, srcdir=docs))
    fusion = str(docs / "fusion.md")
    node = nodes.paragraph()
    node.source, node.line = fusion, 5
    for location, where in [
        (f"{fusion}:12", ("docs/fusion.md", 12, "fusion")),  # docutils' report
        (f"{fusion}:", ("docs/fusion.md", 0, "fusion")),  # docutils' report without a line
        ("fusion", ("docs/fusion.md", 0, "fusion")),  # a page's name
        (("fusion", 7), ("docs/fusion.md", 7, "fusion")),  # Sphinx's, before its stream
        (node, ("docs/fusion.md", 5, "fusion")),
        ("<unknown>:3", ("", 3, None)),  # no file
    ]:
        assert log.where(SimpleNamespace(location=location)) == where, location


def test_a_notebooks_failing_cells_are_found_each_after_the_first_marked_so():
    import nbformat

    def cell(source, *outputs):
        return nbformat.v4.new_code_cell(source, outputs=list(outputs))

    def error(name):
        return nbformat.v4.new_output("error", ename=name, evalue="x", traceback=[])

    notebook = nbformat.v4.new_notebook(
        cells=[cell("ok = 1"), cell("1 / 0", error("ZeroDivisionError")), cell("y", error("E"))],
        metadata={"source_map": [3, 7, 9]},
    )
    failing, _, _ = record.notebook_facts(notebook, "p", "docs/p.md")
    assert [(f.line, f.error_type, f.after_a_failure) for f in failing] == [
        (7, "ZeroDivisionError", False),
        (9, "E", True),
    ]


def test_a_notebooks_timed_comparisons_are_recorded_glued_or_shown():
    import nbformat
    from myst_nb.ext.glue import GLUE_PREFIX

    from chapter2.timing import COMPARISON_MIME

    side = TimingRecord("fused", 1.0, 0.9, 1.1, 0.95, 1.05, 7)
    made = ComparisonRecord("fused ran 1.2 × faster", "faster", 1.2, side, side)

    def shown(kind):
        return nbformat.v4.new_output("display_data", data={kind: asdict(made)})

    cells = [nbformat.v4.new_code_cell("c", outputs=[shown(COMPARISON_MIME)])]
    cells += [nbformat.v4.new_code_cell("g", outputs=[shown(GLUE_PREFIX + COMPARISON_MIME)])]
    cells += [nbformat.v4.new_code_cell("x", outputs=[shown("application/x+" + COMPARISON_MIME)])]
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={"source_map": [1, 2, 3]})
    _, comparisons, _ = record.notebook_facts(notebook, "p", "docs/p.md")
    assert comparisons == [made, made]  # the third only ends with its kind


def test_a_warning_sphinx_logs_once_is_recorded_once_and_others_each_time(tmp_path):
    import logging

    app = SimpleNamespace(config=SimpleNamespace(suppress_warnings=[]), env=None)
    log = record.ProblemLog(app)
    for once in (True, True, False, False):
        warning = logging.LogRecord("sphinx", logging.WARNING, "", 0, "a warning", None, None)
        warning.once = once
        log.emit(warning)
    assert len(log.problems) == 3


def test_the_pages_a_build_executed_are_those_its_record_says_ran_after_it_started(tmp_path):
    from book import build

    assert build.pages_run(tmp_path, 100.0) == ([], 0)
    pages = {
        "ran": PageRecord(executed_at=150.0),
        "cached": PageRecord(executed_at=50.0),
        "no-code": PageRecord(),
    }
    BuildRecord("0", "0", "3", "today", pages, []).dump(tmp_path / record.RECORD)
    assert build.pages_run(tmp_path, 100.0) == (["ran"], 2)


def test_a_failing_cell_says_its_error_then_its_last_lines():
    cell = "x = 1\n\ny = 2\nassert x == 2"
    failure = FailingCell("p", "docs/p.md", 1, cell, "AssertionError: ", [])
    lines = record.failure_lines(failure)
    assert lines == ["AssertionError: ", "    | y = 2", "    | assert x == 2"]
    later = record.failure_lines(replace(failure, after_a_failure=True))
    assert later[0] == failures.AFTER_A_FAILURE


def made_up_record() -> BuildRecord:
    """A record as a build writes it: a drifted claim's cell, a later failing cell, a
    warning after them on the same page, one on another page and one of no page."""
    drift = (
        "ClaimDrift: claim 'fused' (page fusion) drifted on JAX 0.4.38.\n"
        "  its check:     src/chapter2/claims/pages/fusion.py:40"
    )
    fusion_md = ("fusion", "docs/fusion.md")
    cells = [
        FailingCell(*fusion_md, 120, 'verify_each(["fused", "kept"])', drift, ["fused", "kept"]),
        FailingCell(
            *fusion_md,
            130,
            "print(fused)",
            "NameError: name 'fused' is not defined",
            [],
            after_a_failure=True,
        ),
    ]
    fusion = PageRecord(
        path="docs/fusion.md",
        failing_cells=cells,
        statements={"fused": Statement("XLA fuses the three.", 118)},
        verdicts={
            "fused": replace(VERDICT, id="fused", page="fusion", status="drifted"),
            "kept": replace(VERDICT, id="kept", page="fusion", status="holds"),
        },
    )
    index = PageRecord(path="docs/index.md")
    problems = [
        Problem("docs/fusion.md", 140, "fusion", "undefined label: 'x'"),
        Problem("docs/index.md", 7, "index", "Unknown directive type: 'nope'"),
        Problem("", 0, None, "a warning of no page"),
    ]
    return BuildRecord("", "", "", "", {"fusion": fusion, "index": index}, problems)


def test_the_summary_counts_every_problem_and_marks_what_follows_a_failure():
    lines = failures.problems_summary(made_up_record()).splitlines()
    assert lines[0] == "5 problems failed the build:"
    assert lines[1] == "  (no page): a warning of no page"
    assert (
        lines[2]
        == "  docs/fusion.md:120: ClaimDrift: claim 'fused' (page fusion) drifted on JAX 0.4.38."
    )
    assert lines[3] == "        its check:     src/chapter2/claims/pages/fusion.py:40"
    assert lines[4] == "        the book says (docs/fusion.md:118): XLA fuses the three."
    assert lines[5] == '        | verify_each(["fused", "kept"])'
    knock_ons = [i for i, line in enumerate(lines) if line.endswith(failures.AFTER_A_FAILURE)]
    assert [lines[i].split(": ")[0] for i in knock_ons] == [
        "  docs/fusion.md:130",
        "  docs/fusion.md:140",
    ]
    assert lines[knock_ons[0] + 1] == "      NameError: name 'fused' is not defined"
    assert lines[knock_ons[1] + 1] == "    undefined label: 'x'"
    assert lines[-1] == "  docs/index.md:7: Unknown directive type: 'nope'"


def test_a_warning_after_a_pages_first_failing_cell_is_marked_and_one_before_it_is_not():
    record = made_up_record()  # failing cells at lines 120 and 130 of docs/fusion.md
    between = Problem("docs/fusion.md", 125, "fusion", "between the two")
    before = Problem("docs/fusion.md", 110, "fusion", "before them")
    lines = failures.problems_summary(replace(record, problems=[before, between])).splitlines()
    marked = [lines[i + 1].strip() for i, line in enumerate(lines) if "after a failing" in line]
    assert "between the two" in marked
    assert "before them" not in marked


def matrix_app(versions=()):
    """A stand-in for Sphinx's application, as the matrix's page reads it."""
    env = SimpleNamespace(
        toc_secnumbers={},
        found_docs=set(),
        titles={},
        get_domain=lambda name: SimpleNamespace(anonlabels={}),
    )
    builder = SimpleNamespace(get_relative_uri=lambda here, there: f"{there}.html")
    config = SimpleNamespace(book_site_versions=list(versions))
    return SimpleNamespace(env=env, builder=builder, config=config)


def test_a_runs_differences_list_a_claim_its_host_cpu_gave_otherwise_and_no_other():
    """Below the matrix, each run's section lists a claim the device gave as this build did
    only where that machine's CPU, under the same JAX, did not."""
    from chapter2.claims import claims
    from chapter2.claims.backends import cause_there, host_status
    from chapter2.runs import recorded_run

    tpu = recorded_run(ROOT / "data" / "backends", "tpu-v5e-jax-0.10.2")
    recorded = ClaimsMatrix.read(ROOT / "data" / "matrix").report_of(BASELINE).by_id
    home = {claim_id: recorded[claim_id] for claim_id in claims() if claim_id in recorded}
    [section] = book_matrix._differences(matrix_app(), "claims-matrix", home, [tpu])
    said = " ".join(section.astext().split())
    for claim_id, data in home.items():
        there = cause_there(claims()[claim_id], tpu, data.status)
        host = host_status(claims()[claim_id], tpu)
        listed = f"{claim_id}: {there.status.symbol} as in this build, where that machine's CPU"
        alike = there.cause is None and there.status == data.status
        assert (listed in said) == (alike and host is not None and host != there.status)
    assert "optimization-barrier-splits-fusion: ✓ as in this build" in said
    # a claim the device did not record is not listed, whatever its host CPU gave
    claim_id = "optimization-barrier-splits-fusion"
    unrecorded = replace(tpu, verdicts={k: v for k, v in tpu.verdicts.items() if k != claim_id})
    [section] = book_matrix._differences(matrix_app(), "claims-matrix", home, [unrecorded])
    assert claim_id not in section.astext()


def test_a_drifted_mark_links_the_page_as_that_release_ran_it_only_where_the_site_holds_it():
    home = {k: replace(VERDICT, id=k, page="p", status="holds", jax=BASELINE) for k in "cd"}
    releases = ("0.10.2", "0.11.2", BASELINE)
    matrix = measured(releases, c=("drifted", "drifted", "holds"), d=("holds",) * 3)
    app = matrix_app(versions=[BASELINE, "0.11.2"])
    table = book_matrix._matrix_table(app, "claims-matrix", matrix, home, [])
    titled = [r.get("reftitle") for r in table.findall(nodes.reference) if r.get("reftitle")]
    assert titled == ["JAX 0.11.2"]
    app.config.book_site_versions = []  # a book without a versioned site links no release
    table = book_matrix._matrix_table(app, "claims-matrix", matrix, home, [])
    assert not [r for r in table.findall(nodes.reference) if r.get("reftitle")]


def test_a_statement_without_a_line_is_named_by_its_page_alone():
    record = made_up_record()
    record.pages["fusion"].statements["fused"] = Statement("XLA fuses the three.", None)
    said = failures.problems_summary(record).splitlines()
    assert "        the book says (docs/fusion.md): XLA fuses the three." in said


def test_a_record_without_problems_has_no_summary():
    record = made_up_record()
    record.pages["fusion"].failing_cells = []
    assert failures.problems_summary(replace(record, problems=[])) is None


def test_cache_folder_is_per_jax_and_prunes_only_its_own_stale_folders(tmp_path, monkeypatch):
    caches = tmp_path / "caches"
    first = cache.cache_folder(caches)
    first.mkdir(parents=True)
    other_jax = caches / "jax-0.4.38-0123456789abcdef"
    other_jax.mkdir()
    monkeypatch.setattr(cache.sys, "version_info", (3, 99, 0))
    second = cache.cache_folder(caches)  # another Python: another cache for this JAX
    assert second != first
    assert second.name.startswith(first.name[: first.name.rindex("-")])
    assert not first.exists()
    assert other_jax.exists()
    monkeypatch.setattr(cache, "version", lambda name: "9.9")
    assert cache.cache_folder(caches).name.startswith("jax-9.9-")


def test_page_dependencies_follow_imports_claims_and_probes(tmp_path):
    from book import dependencies

    engine = tmp_path / "chapter2"
    (engine / "claims" / "pages").mkdir(parents=True)
    (engine / "probes").mkdir()
    for path, text in {
        "__init__.py": "",
        "hlo.py": "import re\n",
        "timing.py": "from chapter2.hlo import count_fusions\n",
        "unused.py": "",
        "claims/__init__.py": "from chapter2.claims.registry import claim\n",
        "claims/registry.py": "",
        "claims/pages/__init__.py": "",
        "claims/pages/fusion.py": '@claim("fused")\ndef f():\n    """Fused."""\n',
        "claims/pages/quiz.py": '@claim("asked")\ndef f():\n    """Asked."""\n',
        "probes/__init__.py": "",
        "probes/probe.py": "from chapter2 import timing\n",
    }.items():
        (engine / path).write_text(text)
    page = (
        "```{code-cell} ipython3\n:tags: [hide-input]\nfrom chapter2.claims import verify\n```\n"
        '```{code-cell} ipython3\nrun_probe("probe")\nverify("fused")\n```\n'
        "```{code-cell} ipython3\n---\ntags: [remove-cell]\n---\n"
        'for claim_id in ["asked", "not-a-claim, with a comma"]:\n    verify(claim_id)\n```\n'
    )
    found = {
        p.relative_to(engine).as_posix() for p in dependencies.page_dependencies(tmp_path, page)
    }
    assert found == {
        "__init__.py",
        "claims/__init__.py",
        "claims/registry.py",
        "claims/pages/__init__.py",
        "claims/pages/fusion.py",
        "claims/pages/quiz.py",
        "probes/__init__.py",
        "probes/probe.py",
        "timing.py",
        "hlo.py",
    }


def test_a_page_depends_on_the_recorded_files_its_code_names(tmp_path):
    run = tmp_path / "backends" / "h200-jax-0.11.2"
    run.mkdir(parents=True)
    for name in ("gpu-numbers.json", "vendor-figures.json"):
        (run / name).write_text("{}")
    page = (
        "```{code-cell} ipython3\n"
        'numbers = json.loads((RECORD / "gpu-numbers.json").read_text())\n```\n'
    )
    found = dependencies.recorded_files(tmp_path / "backends", page)
    assert found == {run / "gpu-numbers.json"}
    assert (
        dependencies.recorded_files(tmp_path / "backends", "```{code-cell} ipython3\n1\n```")
        == set()
    )
    key = dependencies.digest(found, tmp_path, set())
    (run / "gpu-numbers.json").write_text('{"re-recorded": true}')
    assert dependencies.digest(found, tmp_path, set()) != key  # the page executes again


def test_a_page_that_names_a_run_depends_on_all_its_files(tmp_path):
    backends = tmp_path / "backends"
    for name in ("tpu-v5e-jax-0.10.2", "h200-jax-0.11.2"):
        (backends / name).mkdir(parents=True)
        for file in ("run.json", "numbers.json"):
            (backends / name / file).write_text("{}")
    page = (
        '```{code-cell} ipython3\ntpu = recorded_run("../data/backends", "tpu-v5e-jax-0.10.2")\n'
        'tpu.value("roofs/stream")\n```\n'
    )
    found = dependencies.recorded_files(backends, page)
    assert found == {backends / "tpu-v5e-jax-0.10.2" / f for f in ("run.json", "numbers.json")}
    key = dependencies.digest(found, tmp_path, set())
    (backends / "tpu-v5e-jax-0.10.2" / "numbers.json").write_text('{"re-recorded": true}')
    assert dependencies.digest(found, tmp_path, set()) != key  # the page executes again


def test_editing_a_claim_changes_the_key_of_the_pages_that_verify_it_alone(tmp_path):
    pages = tmp_path / "chapter2" / "claims" / "pages"
    pages.mkdir(parents=True)
    module = pages / "demo.py"
    module.write_text(
        "LIMIT = 3\n\n\ndef _shared():\n    return LIMIT\n\n\n"
        '@claim("first")\ndef _first():\n    return _shared()\n\n\n'
        '@claim("second")\ndef _second():\n    return 2\n'
    )
    verifying = {c: f'```{{code-cell}} ipython3\nverify("{c}")\n```\n' for c in ("first", "second")}

    def keys() -> dict[str, str]:
        return {
            c: dependencies.digest(
                dependencies.page_dependencies(tmp_path, page),
                tmp_path,
                dependencies.claims_verified(tmp_path, page),
            )
            for c, page in verifying.items()
        }

    before = keys()
    module.write_text(module.read_text().replace("return 2", "return 3"))
    after = keys()
    assert (after["first"], after["second"] != before["second"]) == (before["first"], True)
    module.write_text(module.read_text().replace("LIMIT = 3", "LIMIT = 4"))
    assert (keys()["first"] != after["first"], keys()["second"]) == (True, after["second"])


def test_the_dependency_hash_is_a_hidden_last_cell_that_moves_no_line():
    page = "# Title\n\n```{code-cell} ipython3\n:tags: [hide-input]\nimport jax\n```\n"
    hashed = dependencies.with_hash(page, "abc")
    assert hashed.startswith(page.rstrip())
    assert dependencies.code_cells(hashed) == ("import jax", "# engine files: abc")
    assert dependencies.with_hash(page, "abd") != hashed


def test_the_cache_key_finds_every_registered_claim_in_its_module():
    """A page's key takes each claim's module from the code's `@claim("id")` decorators; a
    claim registered another way would leave its pages' keys, and its verdicts go stale."""
    from chapter2.claims import claims

    registered = {claim_id: c.check.__module__ for claim_id, c in claims().items()}
    assert dependencies.claim_modules(ROOT / "src") == registered


def test_the_helpers_page_shows_or_links_every_engine_module_the_pages_and_checks_use():
    src = ROOT / "src"
    used = set()
    for page in (ROOT / "docs").glob("*.md"):
        used |= dependencies.page_dependencies(src, page.read_text())
    claims = src / "chapter2" / "claims"  # the build's own: the page of checks shows them
    engine = {
        path.relative_to(src).as_posix()
        for path in used
        if path.name != "__init__.py"
        and not path.is_relative_to(claims)
        and path.name not in ("cannot_check.py", "records.py")  # the build's own, too
    }
    helpers = (DOCS / "helpers.md").read_text()
    included = [d.arguments[0] for d in directives(helpers, "literalinclude", LiteralInclude)]
    downloads = [
        split_explicit_title(role.content)[2]  # `title <target>`, as Sphinx splits it
        for token in myst_tokens(helpers)
        for role in token.children or []
        if role.type == "myst_role" and role.meta["name"] == "download"
    ]
    targets = [(DOCS / target).resolve() for target in included + downloads]  # from docs/
    shown = {path.relative_to(src).as_posix() for path in targets if path.is_relative_to(src)}
    assert engine, "no engine module found"
    assert engine <= shown, (
        f"neither shown nor linked on the helpers page: {sorted(engine - shown)}"
    )


def test_the_layer_hash_follows_the_layers_code(tmp_path):
    """conf-level value `book_layer_hash`: a change to any module of the layer changes it, so
    Sphinx reads every page again (tests/test_build.py shows the rebuild)."""
    layer = tmp_path / "book"
    layer.mkdir()
    for path in (ROOT / "docs" / "_ext" / "book").glob("*.py"):
        (layer / path.name).write_bytes(path.read_bytes())
    before = layer_hash(layer)
    assert before == layer_hash()
    notes = layer / "recorded_notes.py"
    notes.write_text(notes.read_text() + "\n# an edit\n")
    assert layer_hash(layer) != before


def test_the_layer_hash_follows_the_records_sphinx_keeps(tmp_path, monkeypatch):
    """A field added to a record kept in Sphinx's pickled environment (a PageRecord) reads
    every page again, so no kept record lacks it."""
    import book

    copy = tmp_path / "records.py"
    copy.write_bytes(Path(book.records.__file__).read_bytes())
    monkeypatch.setattr(book.records, "__file__", str(copy))
    before = layer_hash()
    copy.write_text(copy.read_text() + "\n# a field added\n")
    assert layer_hash() != before


def test_a_backend_note_fills_in_what_the_run_recorded_and_names_it():
    from book.markdown import with_recorded

    from chapter2.runs import recorded_run

    run = recorded_run(ROOT / "data" / "backends", "h200-jax-0.11.2")
    text = with_recorded(
        "On an {{device}} with JAX {{jax}}, {{softmax-kernel-boundary/softmax by hand|len}} fusion "
        "({{softmax-kernel-boundary/softmax by hand|join}}), v3 {{distances N=1000 M=1500 d=64/v3/"
        "max_abs_err_highest|.2g}}.",
        run.value,
    )
    assert text == "On an NVIDIA H200 with JAX 0.11.2, 1 fusion (kCustom), v3 2.1e-06."
    with pytest.raises(KeyError, match="holds no 'no-such-check/value'"):
        with_recorded("{{no-such-check/value}}", run.value)


def test_a_release_note_fills_in_what_the_matrix_recorded_under_that_release():
    from book.markdown import with_recorded
    from book.recorded_notes import release_note_problem

    recorded = ClaimsMatrix.read(ROOT / "data" / "matrix").report_of("0.10.2")
    claim = "jit-matches-eager-reported-program"
    text = with_recorded(
        f"JAX {{{{jax}}}}, {{{{recorded}}}}: {{{{{claim}/last row, jit|,.0f}}}}, "
        f"YNNPACK {{{{{claim}/jit's program is a __ynn_fusion|on}}}}.",
        recorded.value,
    )
    wrong = recorded.by_id[claim].observed["last row, jit"]
    assert text == f"JAX 0.10.2, {recorded.recorded}: {wrong:,.0f}, YNNPACK on."
    assert wrong != 32768**2  # the release got it wrong
    assert release_note_problem(recorded, claim, "0.10.2", "drifted") is None
    assert "recorded 'drifted'" in release_note_problem(recorded, claim, "0.10.2", "holds")
    missing = release_note_problem(recorded, "no-such-claim", "0.10.2", "holds")
    assert "holds no 'no-such-claim' under JAX 0.10.2" in missing
    assert ":status:" in release_note_problem(recorded, claim, "0.10.2", None)
    unrecorded = release_note_problem(None, claim, "0.1.0", "holds")  # no record of that release
    assert f"holds no {claim!r} under JAX 0.1.0" in unrecorded


def test_a_backend_note_says_whether_the_release_or_the_backend_made_the_difference(tmp_path):
    from book.recorded_notes import release_or_backend

    def record(release, status):
        claims = [replace(VERDICT, id="c", status=status)]
        ClaimsReport(release, release, "3.12", "today", claims).dump(
            tmp_path / f"jax-{release}.json"
        )

    record("0.11.2", "holds")
    record(BASELINE, "holds")
    assert release_or_backend(ClaimsMatrix.read(tmp_path), "c", "0.11.2", BASELINE) is None
    record("0.11.2", "drifted")
    said = release_or_backend(ClaimsMatrix.read(tmp_path), "c", "0.11.2", BASELINE)
    assert said.endswith("(holds): the release and the backend both differ")
    said = release_or_backend(ClaimsMatrix.read(tmp_path), "other", "0.11.2", BASELINE)
    assert "is not measured" in said


def test_a_matrix_record_changed_or_added_changes_the_config_and_is_read_anew(tmp_path):
    from book.matrix import claims_matrix, matrix_digest

    config = SimpleNamespace(book_matrix=str(tmp_path))

    def digest() -> str:
        matrix_digest(None, config)  # as `config-inited` calls it
        return config.book_matrix_digest

    run = ClaimsReport("0.9.2", "0.9.2", "3.12", "today", [VERDICT])
    run.dump(tmp_path / "jax-0.9.2.json")
    first = digest()
    assert digest() == first  # nothing changed: no page is read again
    assert claims_matrix(config).releases == ["0.9.2"]
    replace(run, recorded="tomorrow").dump(tmp_path / "jax-0.9.2.json")
    second = digest()
    assert second != first
    assert claims_matrix(config).report_of("0.9.2").recorded == "tomorrow"
    replace(run, jax="0.10.2").dump(tmp_path / "jax-0.10.2.json")
    assert digest() not in (first, second)
    assert claims_matrix(config).releases == ["0.9.2", "0.10.2"]


def measured(releases: tuple[str, ...], **statuses: tuple[str, ...]) -> ClaimsMatrix:
    """A claims matrix of made-up runs: each claim's status under each release (a claim named
    "machine" is observed, the others asserted)."""
    kinds = {"machine": "observed"}
    return ClaimsMatrix(
        [
            ClaimsReport(
                release,
                release,
                "3.12",
                "today",
                [
                    replace(VERDICT, id=c, kind=kinds.get(c, "asserted"), status=s[i])
                    for c, s in statuses.items()
                    if s[i] is not None  # None: not measured under that release
                ],
            )
            for i, release in enumerate(releases)
        ]
    )


def test_a_version_note_on_a_change_says_what_the_release_before_did_and_stands_apart():
    from docutils import nodes

    matrix = measured(
        ("0.9.2", "0.10.2", "0.11.2"),
        always=("holds", "holds", "holds"),
        changed=("drifted", "drifted", "holds"),
        machine=("differs here", "holds", "holds"),
    )
    assert matrix.claims["machine"].since is None  # observed: a fact of the machine
    assert book_matrix.release_before(["always", "machine"], matrix) is None
    assert book_matrix.release_before(["always", "changed"], matrix) == "0.10.2"

    def placed(part: str, before: str | None) -> book_matrix.note_release:
        note = book_matrix.note_release(claims=["changed"], before=before)
        nodes.section("", nodes.section("", note, ids=["operator-fusion"]), ids=[part])
        return note

    changed, every = book_matrix.CHANGED, "version-notes-every-release"
    problem = book_matrix._note_problem
    assert problem(placed(changed, "did otherwise."), "0.10.2") is None
    assert "belongs under" in problem(placed(every, "did."), "0.10.2")
    assert ":before:" in problem(placed(changed, None), "0.10.2")
    assert "is not under" in problem(placed(changed, None), None)
    assert "has no :before:" in problem(placed(every, "did."), None)


def test_a_note_says_from_which_release_its_claims_hold_and_where_they_cannot_be_checked():
    matrix = measured(
        ("0.8.3", "0.9.2", "0.10.2"),
        always=("holds", "holds", "holds"),
        changed=("drifted", "drifted", "holds"),
        new=("cannot check", "holds", "holds"),
        regressed=("holds", "drifted", "holds"),
        lapsed=("holds", "cannot check", "holds"),
    )
    text = book_matrix.note_release_text
    assert text(["always"], matrix, {}) == "Holds in every release measured, 0.8.3 to 0.10.2."
    assert text(["lapsed"], matrix, {}) == (
        "Holds from JAX 0.10.2 and in 0.8.3; cannot be checked in 0.9.2."
    )
    assert text(["changed"], matrix, {}) == "Holds from JAX 0.10.2."
    assert text(["new"], matrix, {}) == (
        "Holds from JAX 0.9.2, the first release where it can be checked."
    )
    assert text(["regressed"], matrix, {}) == "Holds from JAX 0.10.2 and in 0.8.3; not in 0.9.2."
    assert text(["always", "changed", "new"], matrix, {}) == (
        "Holds as a whole from JAX 0.10.2; part of it holds from JAX 0.9.2, the first release "
        "where it can be checked; part of it holds in every release measured, 0.8.3 to 0.10.2."
    )


def test_a_release_that_did_not_measure_a_claim_says_nothing_of_it():
    """A partial run of the matrix, or a claims module that failed to load under one release,
    leaves a gap: the claim holds since the oldest release of its run of holds, gaps aside,
    and a note on a change is measured against the newest release that checked it."""
    matrix = measured(
        ("0.8.3", "0.9.2", "0.10.2", "0.11.2"),
        gap=("holds", None, "holds", "holds"),
        fixed=("drifted", None, "holds", "holds"),
        regressed=("holds", "drifted", None, "holds"),
        unrecorded_now=("holds", "holds", "holds", None),  # a partial run left out the newest
        mixed=("holds", "cannot check", "drifted", "holds"),
    )
    assert matrix.claims["gap"].since == "0.8.3"
    assert book_matrix.release_before(["gap"], matrix) is None
    text = book_matrix.note_release_text
    assert text(["gap"], matrix, {}) == "Holds in every release measured, 0.8.3 to 0.11.2."
    assert book_matrix.release_before(["fixed"], matrix) == "0.8.3"  # not 0.9.2: no record
    assert text(["fixed"], matrix, {}) == "Holds from JAX 0.10.2."
    assert book_matrix.release_before(["regressed"], matrix) == "0.9.2"
    assert text(["regressed"], matrix, {}) == "Holds from JAX 0.11.2 and in 0.8.3; not in 0.9.2."
    assert text(["mixed"], matrix, {}) == (
        "Holds from JAX 0.11.2 and in 0.8.3; not in 0.10.2; cannot be checked in 0.9.2."
    )
    said = text(["unrecorded_now"], matrix, {})
    assert said == "Holds in every release measured, 0.8.3 to 0.10.2."


LAYER = sorted((DOCS / "_ext" / "book").glob("*.py"))


def _assigned(tree: ast.Module) -> list[ast.expr]:
    """Every target an assignment or a `del` of the module writes."""
    targets = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.Delete):
            targets += node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets.append(node.target)
    return targets


def _root(node: ast.expr) -> str:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return getattr(node, "id", "")


def test_the_layer_keeps_its_state_in_its_own_objects_not_on_sphinxs():
    """Per-page data lives in the `book` domain's pages; what one build needs, in objects a
    module's setup makes (the collector, the problem log, book.links.WrittenPages). Nothing
    is set as an attribute of `app` or `env`, nor as a key of a domain's data, nor set or
    deleted in the build's environment variables (a page kernel's come from
    book.kernels.KERNEL_ENV)."""
    found = [
        f"{path.name}:{target.lineno}"
        for path in LAYER
        for target in _assigned(ast.parse(path.read_text()))
        if (isinstance(target, ast.Attribute) and _root(target) in {"app", "env"})
        or (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Attribute)
            and target.value.attr in {"data", "environ"}
        )
    ]
    assert found == []


def test_a_build_puts_the_kernel_provisioner_back_and_leaves_no_page_variables():
    """A second build in the same process starts from jupyter_client's own default
    provisioner, and from no page's or roofs' variables."""
    from book import kernels
    from jupyter_client.provisioning import KernelProvisionerFactory

    factory = KernelProvisionerFactory.instance()
    before = factory.default_provisioner_name
    page_kernels = kernels.PageKernels()
    page_kernels.use(None)
    assert factory.default_provisioner_name == kernels.PROVISIONER
    kernels.name_the_page(None, "page", [""])
    assert kernels.KERNEL_ENV != {}
    page_kernels.put_back(None, None)
    assert factory.default_provisioner_name == before != kernels.PROVISIONER
    assert kernels.KERNEL_ENV == {}


def test_each_module_of_the_layer_connects_its_own_handlers_in_its_setup():
    registered = {}
    for path in LAYER:
        tree = ast.parse(path.read_text())
        for function in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
            for call in ast.walk(function):
                method = getattr(getattr(call, "func", None), "attr", "")
                if isinstance(call, ast.Call) and method.startswith(("connect", "add_")):
                    registered.setdefault(function.name, set()).add(path.stem)
    assert set(registered) == {"setup"}
    from book import MODULES

    assert set(MODULES) <= registered["setup"]
    assert registered["setup"] - set(MODULES) == {"__init__", "cache", "roofs"}


def patterns(paths) -> list[str]:
    """The regular expressions the files at `paths` write out for `re`."""
    return [
        node.args[0].value
        for path in paths
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and getattr(node.func, "value", None) is not None
        and getattr(node.func.value, "id", None) == "re"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ]


def test_no_regular_expression_reads_which_claims_code_names_or_a_page_shows():
    """Claim ids come from the verdicts a notebook holds (book.outputs.shown_verdicts) or from
    parsed code (book.dependencies.registered), never from a pattern over text; a test looks
    a claim's mark up by its id, and reads the ids a page names from the build's record, never
    out of a page."""
    layer = patterns([*(DOCS / "_ext" / "book").glob("*.py"), *(ROOT / "tools").glob("*.py")])
    assert len(layer) > 5  # the walk finds the layer's patterns
    assert [p for p in layer if re.search(r"claim|verify|\[a-z0-9\]\+\(\?:-", p)] == []
    tests = patterns((ROOT / "tests").glob("*.py"))
    assert len(tests) > 5  # the walk finds the tests' patterns (none reads a page's HTML)
    assert [p for p in tests if re.search(r"(claim|check)-\(|[{]version-note", p)] == []


def test_the_roofs_are_measured_once_and_again_only_when_their_method_changes(
    tmp_path, monkeypatch
):
    import os
    import time
    from types import SimpleNamespace

    from book import roofs

    from chapter2.fresh import jax_settings

    measured = []

    def probe(name, env=None, base=None):
        measured.append((name, env, jax_settings(base)))
        time.sleep(0.3)  # a probe takes time: the build keeps how long
        return f'{{"peak": {len(measured)}}}'

    monkeypatch.setattr(roofs, "run_probe", probe)
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=4")  # the shell's
    app = SimpleNamespace(outdir=str(tmp_path / "b" / "html"))  # the roofs go in b/
    method = tmp_path / "roofline.py"
    method.write_text("")
    assert roofs.measured(app, {method}) == '{"peak": 1}'
    os.utime(method)  # touched, or checked out again: the same code
    assert roofs.measured(app, {method}) == '{"peak": 1}'
    assert measured == [("roofs", {"JAX_PLATFORMS": "cpu"}, [])]  # on JAX's defaults
    method.write_text("# changed")
    assert roofs.measured(app, {method}) == '{"peak": 2}'
    assert 0.3 <= roofs.probe_seconds(tmp_path / "b") < 5  # the pages' work, for the benchmark
    assert roofs.probe_seconds(tmp_path / "none") == 0.0


def test_pages_that_place_programs_are_read_again_when_the_roofs_are_gone(tmp_path):
    from types import SimpleNamespace

    from book import roofs

    app = SimpleNamespace(outdir=str(tmp_path / "html"))
    env = SimpleNamespace(
        found_docs={"placing", "other"},
        dependencies={
            "placing": {str(tmp_path / "src" / "chapter2" / "roofline.py")},
            "other": {str(tmp_path / "src" / "chapter2" / "timing.py")},
            "removed": {str(tmp_path / "src" / "chapter2" / "roofline.py")},
        },
    )
    assert roofs.measure_again(app, env, set(), set(), set()) == ["placing"]
    (tmp_path / "roofs.json").write_text("{}")
    assert roofs.measure_again(app, env, set(), set(), set()) == []


@pytest.mark.parametrize(
    ("installed", "site", "wheel", "installs", "said"),
    [
        ({"jax": "0.9.2"}, "", True, ["<the wheel>"], "you have JAX 0.9.2"),
        ({}, "", True, ["jax==<baseline>", "<the wheel>"], "you have JAX None"),
        ({"jax": "0.9.2"}, "https://example.org/b", True, ["chapter2 @ https://example.org/b"], ""),
        ({"jax": "<baseline>"}, "", False, [], "Install the book's chapter2 package"),
    ],
)
def test_a_notebooks_setup_installs_what_is_missing_and_keeps_a_readers_jax(
    monkeypatch, tmp_path, capsys, installed, site, wheel, installs, said
):
    """The setup cell, run where chapter2 is missing and JAX is as `installed`: it installs
    chapter2 (from the site, or the wheel inside it), JAX only when there is none, and says
    when the reader's JAX is not the one the notebook ran with."""
    import importlib.metadata
    import importlib.util
    import subprocess
    from pathlib import Path

    from book.notebooks import setup_cell

    baseline = importlib.metadata.version("jax")
    built = tmp_path / "chapter2-0.1.0-py3-none-any.whl"
    built.write_bytes(b"the wheel's bytes")
    source = setup_cell(site, built if wheel else None).source
    installed = {k: v.replace("<baseline>", baseline) for k, v in installed.items()}
    pip: list[list[str]] = []
    real_find = importlib.util.find_spec

    def version(name):
        if name not in installed:
            raise importlib.metadata.PackageNotFoundError(name)
        return installed[name]

    monkeypatch.setattr(importlib.metadata, "version", version)
    monkeypatch.setattr(subprocess, "check_call", lambda args: pip.append(args[5:]))
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "chapter2" else real_find(n, *a)
    )
    exec(source, {})  # the cell a reader runs
    asked = [
        "<the wheel>" if Path(a).is_file() and Path(a).read_bytes() == b"the wheel's bytes" else a
        for a in (pip[0] if pip else [])
    ]
    expected = [i.replace("<baseline>", baseline) for i in installs]
    assert [a.split("/_wheels/")[0] for a in asked] == expected
    assert said in capsys.readouterr().out


def test_a_page_with_a_notebook_opens_it_in_colab_from_the_notebooks_branch():
    """With a repository named, the page that offers a notebook gets a Colab button on the
    branch the publishing workflows push; a page without one, or a build without a
    repository, gets none; the download menu never offers the page's source."""
    from types import SimpleNamespace

    from book import notebooks

    def buttons(repository: str, offered: bool) -> list[dict]:
        download = {"label": "download-source-button"}
        context = {"header_buttons": [{"label": "download-buttons", "buttons": [download]}]}
        if offered:
            context["ipynb_source"] = "page.ipynb"
        app = SimpleNamespace(config=SimpleNamespace(book_notebooks_repository=repository))
        notebooks.reader_buttons(app, "page", "page.html", context, None)
        groups = context["header_buttons"]
        assert groups[0]["buttons"] == []
        return [b for group in groups[1:] for b in group["buttons"]]

    (colab,) = buttons("owner/book", offered=True)
    assert colab["url"] == (
        "https://colab.research.google.com/github/owner/book/blob/notebooks/page.ipynb"
    )
    assert buttons("owner/book", offered=False) == []
    assert buttons("", offered=True) == []


def test_math_becomes_mathml_a_displayed_formulas_parts_its_rows():
    inline = mathml.mathml(r"X \in \mathbb{R}^{N \times d}")
    assert inline.startswith('<math xmlns="http://www.w3.org/1998/Math/MathML">')
    assert "<msup>" in inline
    assert "display" not in inline
    block = mathml.mathml("a = b\n\nc = d", block=True)
    assert 'display="block"' in block
    assert block.count("<mtr>") == 2  # two parts, one table, as Sphinx's MathJax renders them
    with pytest.raises(MathError, match="notacommand"):  # the build names it: tests/test_build.py
        mathml.mathml(r"\notacommand x")


def test_a_site_plan_round_trips_and_names_its_baseline_first(tmp_path):
    from chapter2.records import SitePlan

    plan = SitePlan("0.12.0.1", {"0.11.2": tmp_path / "a", "0.12.0.1": tmp_path / "b"})
    plan.dump(tmp_path / "plan.json")
    again = SitePlan.load(tmp_path / "plan.json")
    assert again == plan
    assert again.versions == ["0.12.0.1", "0.11.2"]
    with pytest.raises(ValueError, match=r"no build of the baseline JAX 0\.12\.0\.1"):
        SitePlan("0.12.0.1", {"0.11.2": tmp_path / "a"})


def test_the_book_commit_is_the_short_hash_with_a_plus_for_changed_tracked_files(tmp_path):
    import subprocess

    from book import book_commit

    assert book_commit(tmp_path) == ""  # not a checkout

    def git(*args: str) -> str:
        command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args]
        return subprocess.run(command, cwd=tmp_path, check=True, capture_output=True, text=True)

    git("init", "-q")
    (tmp_path / "page.md").write_text("one\n")
    git("add", "page.md")
    git("commit", "-qm", "one")
    git("tag", "v1")  # a tag does not replace the hash
    head = git("rev-parse", "--short", "HEAD").stdout.strip()
    (tmp_path / "new.md").write_text("untracked\n")
    assert book_commit(tmp_path) == head
    (tmp_path / "page.md").write_text("two\n")
    assert book_commit(tmp_path) == f"{head}+"


def test_a_drifted_mark_links_to_the_page_as_that_release_built_it_from_any_build():
    from book.site import page_in_site

    versions = ["0.12.0.1", "0.11.2", "0.10.2"]  # the baseline at the root
    assert page_in_site("fusion", "0.10.2", "0.12.0.1", versions) == "jax-0.10.2/fusion.html"
    assert page_in_site("fusion", "0.10.2", "0.11.2", versions) == "../jax-0.10.2/fusion.html"
    assert page_in_site("fusion", "0.12.0.1", "0.11.2", versions) == "../fusion.html"


def test_a_claim_not_measured_under_older_releases_is_not_said_to_have_failed_there():
    older = ClaimsReport("0.11.2", "0.11.2", "3.12", "today", [])  # a partial run of the matrix
    newer = ClaimsReport(
        "0.12.0.1",
        "0.12.0.1",
        "3.12",
        "today",
        [replace(VERDICT, id="new", kind="asserted", status="holds")],
    )
    matrix = ClaimsMatrix([older, newer])
    assert matrix.claims["new"].since == "0.12.0.1"
    assert book_matrix.since_text(matrix.claims["new"], matrix.releases) == "0.12.0.1 or earlier"
    assert book_matrix.release_before(["new"], matrix) is None  # nothing older to say it did
    said = book_matrix.note_release_text(["new"], matrix, {})
    assert said == "Holds in every release measured, 0.12.0.1 to 0.12.0.1."
