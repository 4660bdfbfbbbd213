"""The drift report and the release matrix, on made-up verdicts."""

from dataclasses import replace

from book import drift, matrix
from book.markdown import as_markdown

from chapter2.records import (
    AtBaseline,
    ChangedOutput,
    ClaimsMatrix,
    ClaimsReport,
    FailingCell,
    Kind,
    Machine,
    Status,
    VerdictRecord,
)


def verdict(claim_id, status, kind="asserted", expected=None, observed=None, evidence="..."):
    return VerdictRecord(
        id=claim_id,
        page="demo",
        label=f"claim-{claim_id}",
        kind=Kind(kind),
        status=Status(status),
        jax="0.10.2",
        jaxlib="0.10.2",
        statement=f"{claim_id} is so.",
        expected=expected,
        observed=observed,
        evidence=evidence,
    )


def claims_report(*verdicts, jax="0.10.2"):
    return ClaimsReport(jax, jax, "3.11.7", "2026-11-30", list(verdicts))


REPORT = claims_report(
    verdict("fine", "holds", expected={"x": 1}, observed={"x": 1}),
    verdict("merged", "drifted", expected={"type": "Jaxpr"}, observed={"type": "ClosedJaxpr"}),
    verdict("gone", "drifted", evidence="`jax.extend.core.X` does not exist in this JAX"),
    verdict("cpu-bug", "differs here", kind="observed", evidence="closure version wrong: False"),
    verdict("no-ynn", "cannot check", kind="observed", evidence="no YNN fusion in this JAX"),
)


def failing(page, cell, error, claims=(), error_type=""):
    return FailingCell(page, f"docs/{page}.md", 1, cell, error, list(claims), False, error_type)


FAILURES = [
    failing(
        "jaxprs",
        "print(closed.jaxpr is closed)",
        "ClaimDrift: claim 'merged' (page jaxprs) drifted on JAX 0.10.2.\n  the book says: ...",
        ["merged", "fine"],  # the verdicts the cell shows
        "ClaimDrift",
    ),
    failing("fusion", "1 / 0", "ZeroDivisionError: division by zero", [], "ZeroDivisionError"),
]


def test_changes_are_the_drifted_claims_and_the_machine_is_apart():
    report = drift.build_report(REPORT, FAILURES)
    assert [c.id for c in report.changed_claims] == ["merged", "gone"]
    assert [c.id for c in report.environment_dependent] == ["cpu-bug"]
    assert [c.id for c in report.cannot_check] == ["no-ynn"]


def test_every_failing_cell_is_attributed_or_said_to_be_unexplained():
    report = drift.build_report(REPORT, FAILURES)
    assert [c.claim_ids for c in report.failing_cells] == [["merged"], []]
    assert [c.page for c in report.unexplained_cells] == ["fusion"]


def test_markdown_says_what_to_rewrite_without_a_traceback():
    text = drift.to_markdown(drift.build_report(REPORT, FAILURES))
    assert "# Drift report: JAX 0.10.2" in text
    assert "#### merged (page `demo`, asserted)" in text
    assert "- type: the book expects `Jaxpr`, this JAX gave `ClosedJaxpr`" in text
    assert "- the check could not run: `jax.extend.core.X` does not exist in this JAX" in text
    merged = text.split("## Cause 1: merged")[1].split("## Cause 2")[0]
    assert "#### page `jaxprs`" in merged
    assert "It fails with the drift shown above." in merged
    assert "```python" not in merged  # the drift says it all
    unexplained = text.split("## Explained by no claim")[1]
    assert "#### page `fusion`" in unexplained
    assert "```python\n1 / 0\n```" in unexplained
    assert "- **cpu-bug** (differs here): closure version wrong: False" in text
    cannot = text.split("## Cannot be checked on this release")[1]
    assert "- **no-ynn**: no YNN fusion in this JAX" in cannot


def test_a_multi_line_printout_is_fenced_not_indented_into_a_list():
    printout = "Array([[1., 1.],\n       [1., 1.]], dtype=float32)"
    claims = claims_report(
        verdict(
            "repr",
            "drifted",
            expected={"1 MiB": "Array(shape=(2, 2), dtype=float32)"},
            observed={"1 MiB": printout},
            evidence=f"1 MiB: {printout}",
        )
    )
    text = drift.to_markdown(drift.build_report(claims, []))
    assert f"- this JAX did:\n\n```text\n1 MiB: {printout}\n```" in text


def test_a_report_changed_when_a_claim_drifted_or_a_cell_failed_and_not_otherwise():
    assert drift.build_report(REPORT, FAILURES).anything_changed
    fine = claims_report(verdict("fine", "holds", expected={}, observed={}))
    assert not drift.build_report(fine, []).anything_changed
    assert drift.build_report(fine, FAILURES).anything_changed
    unloaded = replace(fine, modules_not_loaded={"fusion": "ImportError: x"})
    assert drift.build_report(unloaded, []).anything_changed  # its claims went unchecked


def test_matrix_finds_since_when_each_claim_holds():
    runs = [
        claims_report(verdict("a", "drifted"), verdict("b", "holds"), jax="0.10.2"),
        claims_report(verdict("a", "holds"), verdict("b", "drifted"), jax="0.11.2"),
        claims_report(verdict("a", "holds"), verdict("b", "holds"), jax="0.12.0.1"),
        claims_report(verdict("a", "holds"), verdict("b", "holds"), jax="0.9.2"),
    ]
    built = ClaimsMatrix(runs)
    assert built.releases == ["0.9.2", "0.10.2", "0.11.2", "0.12.0.1"]
    assert built.claims["a"].since == "0.11.2"  # 0.10.2 broke the run
    assert built.claims["b"].since == "0.12.0.1"
    assert built.claims["a"].status == dict(
        zip(
            ["0.10.2", "0.11.2", "0.12.0.1", "0.9.2"],
            ["drifted", "holds", "holds", "holds"],
            strict=True,
        )
    )


def test_the_oldest_release_reads_or_earlier_and_cannot_check_does_not_hold():
    runs = [
        claims_report(verdict("c", "cannot check"), verdict("d", "holds"), jax="0.9.2"),
        claims_report(verdict("c", "holds"), verdict("d", "holds"), jax="0.10.2"),
    ]
    built = ClaimsMatrix(runs)
    assert built.claims["c"].since == "0.10.2"
    releases = ["0.9.2", "0.10.2"]
    assert built.claims["c"].status == {"0.9.2": "cannot check", "0.10.2": "holds"}
    assert matrix.since_text(built.claims["c"], releases) == "0.10.2"
    assert matrix.since_text(built.claims["d"], releases) == "0.9.2 or earlier"


def test_an_observed_claim_has_no_since_release():
    runs = [
        claims_report(verdict("m", "differs here", kind="observed"), jax="0.11.2"),
        claims_report(verdict("m", "as specified", kind="observed"), jax="0.12.0.1"),
    ]
    built = ClaimsMatrix(runs)
    assert built.claims["m"].since is None
    assert matrix.since_text(built.claims["m"], ["0.11.2", "0.12.0.1"]) == "machine"


def test_a_change_is_shown_beside_the_baselines_recorded_result():
    baseline = claims_report(
        verdict("merged", "holds", expected={"type": "Jaxpr"}, observed={"type": "Jaxpr"}),
        jax="0.12.0.1",
    )
    report = drift.build_report(REPORT, FAILURES, baseline)
    merged = next(c for c in report.changed_claims if c.id == "merged")
    assert merged.baseline == AtBaseline(Status.HOLDS, {"type": "Jaxpr"})
    gone = next(c for c in report.changed_claims if c.id == "gone")
    assert gone.baseline is None  # the baseline did not record it
    text = drift.to_markdown(report)
    assert "against the baseline's recorded results: JAX 0.12.0.1, recorded 2026-11-30" in text
    assert "- the baseline recorded:" not in text  # it held there: nothing to say
    assert (
        "- type: the book expects `Jaxpr`, the baseline gave `Jaxpr`, this JAX gave `ClosedJaxpr`"
        in text
    )


def _drifted(claim_id, rests_on=(), differs=("x", 1, 2)):
    name, expected, observed = differs
    drifted = verdict(claim_id, "drifted", expected={name: expected}, observed={name: observed})
    return replace(drifted, rests_on=list(rests_on))


def test_claims_that_rest_on_a_drifted_claim_form_its_cause():
    claims = claims_report(
        _drifted("traffic", rests_on=["barrier"]),
        _drifted("barrier", differs=("with the barrier", 2, 1)),
        _drifted("repr"),
        _drifted("memory", rests_on=["traffic"]),  # through traffic, to barrier
        _drifted("alone", rests_on=["holds-here"]),  # its basis did not drift
    )
    report = drift.build_report(claims, [])
    assert [[c.id for c in cause.claims] for cause in report.causes] == [
        ["barrier", "traffic", "memory"],
        ["repr"],
        ["alone"],
    ]
    text = drift.to_markdown(report)
    assert "in 3 causes" in text
    first = text.split("## What changed")[1].splitlines()[2]
    assert first.startswith("1. **barrier** (page `demo`): with the barrier: the book expects `2`")
    assert "With it: traffic, memory." in first


def test_a_cell_that_several_causes_explain_is_shown_once_and_named_under_each():
    claims = claims_report(_drifted("a"), _drifted("b"))
    quiz = failing(
        "quiz",
        "verify_each(['a', 'b'])",
        "ClaimDrift: claim 'a' (page demo) drifted on JAX 0.10.2.\n"
        "claim 'b' (page demo) drifted on JAX 0.10.2.",
        ["a", "b"],
        "ClaimDrift",
    )
    report = drift.build_report(claims, [quiz])
    assert [len(cause.failing_cells) for cause in report.causes] == [1, 1]
    text = drift.to_markdown(report)
    assert text.count("#### page `quiz`") == 1
    assert "- page `quiz`: shown under cause 1" in text.split("## Cause 2: b")[1]
    lost = failing("fusion", "1 / 0", "ZeroDivisionError")
    beside_one_unexplained = drift.build_report(claims, [quiz, lost])  # 2 failing, 2 under causes
    said = drift.summary(beside_one_unexplained, 2)
    assert "of them 1 failing cell and 0 changed outputs explained by no claim" in said
    for shown in (said, drift.to_markdown(beside_one_unexplained)):  # said the same way in both
        assert "A cell or output that several causes explain is counted under each." in shown
    assert "counted under each" not in drift.summary(drift.build_report(REPORT, FAILURES), 5)


def test_a_changed_output_goes_to_the_nearest_drifted_claim_its_section_checks_after_it():
    claims = claims_report(_drifted("merged"), _drifted("other"), verdict("kept", "holds"))
    change = ChangedOutput(
        page="jaxprs",
        cell_index=4,
        cell="print(type(closed).__name__)",
        output="stdout",
        diff="-Jaxpr\n+ClosedJaxpr",
        checked_after=["kept", "other", "merged"],  # a claim that holds explains nothing
    )
    unchecked = replace(change, diff="-3\n+4", checked_after=["kept"])
    report = drift.build_report(claims, [], outputs=[change, unchecked])
    assert [c.claim_ids for c in report.changed_outputs] == [["other"], []]
    assert report.unexplained_outputs == [report.changed_outputs[1]]


def test_a_cell_that_shows_a_drift_but_fails_otherwise_keeps_its_code_and_error():
    cell = replace(FAILURES[0], error="NameError: name 'closed' is not defined")
    text = drift.to_markdown(drift.build_report(REPORT, [replace(cell, error_type="NameError")]))
    merged = text.split("## Cause 1: merged")[1].split("## Cause 2")[0]
    assert "```python\nprint(closed.jaxpr is closed)\n```" in merged
    assert "NameError: name 'closed' is not defined" in merged


def test_what_jax_said_shows_in_the_report_as_it_said_it():
    """Markdown would read `<lambda>` as HTML and `a*b*c` as emphasis; code quoted in
    backticks stays code."""
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser

    said = "jit(<lambda>) traced a*b*c with `jnp.ones`"
    claims = claims_report(
        verdict("odd", "drifted", expected={"n": 1}, observed={"n": 2}, evidence=said),
        verdict("gone", "cannot check", kind="observed", evidence=said),
    )
    text = drift.to_markdown(drift.build_report(claims, []))
    shown = publish_doctree(text, parser=Parser()).astext()
    assert shown.count("jit(<lambda>) traced a*b*c with jnp.ones") == 2, shown


def test_a_cause_shows_what_jax_gave_as_it_is_in_the_file_and_on_the_page():
    claims = claims_report(
        verdict(
            "ynn",
            "drifted",
            expected={"is a __ynn_fusion": True, "kinds": ["kCustom"]},
            observed={"is a __ynn_fusion": False, "kinds": ["k`Loop"]},
        )
    )
    [cause] = drift.build_report(claims, []).causes
    pieces = drift.cause_pieces(cause)
    assert ("code", "['k`Loop']") in pieces  # a value is code on the page, backtick and all
    text = as_markdown(pieces)
    assert r"is a \_\_ynn\_fusion: the book expects `True`" in text  # not bold in Markdown
    assert "this JAX gave `` ['k`Loop'] ``" in text
    assert "".join(t for _, t in pieces) == (
        "ynn (page demo): is a __ynn_fusion: the book expects True, this JAX gave False; kinds: "
        "the book expects ['kCustom'], this JAX gave ['k`Loop']. 0 failing cells, 0 changed "
        "outputs."
    )


def test_a_report_names_its_commit_and_what_it_did_not_check():
    """A report cannot lag the book unseen: it keeps the book's commit and the claims it
    checked, and its summary names the claims the book states now that it did not check."""
    report = drift.build_report(REPORT, [], commit="abc1234")
    assert report.commit == "abc1234"
    assert report.claim_ids == ["cpu-bug", "fine", "gone", "merged", "no-ynn"]
    now = {"fine", "merged", "gone", "cpu-bug", "no-ynn", "added-since"}
    said = drift.summary(report, len(now), now)
    assert "from the book at commit abc1234, 5 claims checked (the book now states 6)" in said
    assert "it did not check added-since" in said
    assert "did not check" not in drift.summary(report, 5, now - {"added-since"})
    older = replace(report, commit=None, claim_ids=None)  # as reports before December 2026
    said = drift.summary(older, 6, now)
    assert "from a book whose commit it does not record" in said
    assert "did not check" not in said  # it did not record what it checked


def test_the_matrix_reads_its_releases_in_order_and_never_fills_in_a_machine(tmp_path):
    older = claims_report(verdict("fine", "holds"), jax="0.9.2")
    newer = replace(claims_report(verdict("fine", "holds"), jax="0.10.2"), machine=Machine("X", 2))
    for run in (newer, older):
        run.dump(tmp_path / f"jax-{run.jax}.json")
    read = ClaimsMatrix.read(tmp_path)
    assert read.releases == ["0.9.2", "0.10.2"]  # by release, not by name
    assert [r.machine for r in read.reports] == [None, Machine("X", 2)]
    assert read.report_of("0.10.2") == newer
    assert read.report_of("0.11.2") is None
    assert ClaimsMatrix.read(tmp_path / "none").releases == []


def test_python_m_book_runs_each_command_and_names_them_when_asked_otherwise(tmp_path, capsys):
    from book.__main__ import main

    changed, fine = tmp_path / "changed.json", tmp_path / "fine.json"
    drift.build_report(REPORT, FAILURES).dump(changed)
    report = claims_report(verdict("fine", "holds", expected={}, observed={}))
    drift.build_report(report, []).dump(fine)
    assert main(["drift", str(changed)]) == 1  # the drift command's own exit status
    assert main(["drift", str(fine)]) == 0
    assert main(["nothing"]) == main([]) == 2
    assert "build SOURCE OUTDIR" in capsys.readouterr().err


def test_a_failing_cells_changed_output_is_its_error_not_a_change_of_its_own():
    """A cell that failed prints its error where the baseline printed a result: the report
    lists it as a failing cell, not also as a changed output; another cell's change stays."""

    def changed(page, cell):
        return ChangedOutput(page, 0, cell, "stdout", "-1\n+2", ["merged"])

    outputs = [changed("fusion", "1 / 0"), changed("jaxprs", "print(1)")]
    report = drift.build_report(REPORT, FAILURES, outputs=outputs)
    assert [(c.page, c.cell) for c in report.changed_outputs] == [("jaxprs", "print(1)")]
    assert report.changed_outputs[0].claim_ids == ["merged"]
