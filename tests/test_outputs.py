"""Output drift: masking what is measured, on outputs frozen from two real builds, and a
planted change that no claim covers reaching the drift report."""

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from book import drift, outputs
from myst_nb.ext.glue import GLUE_PREFIX

from chapter2.claims.registry import VERDICT_MIME
from chapter2.records import ClaimsReport, VerdictRecord
from chapter2.timing import COMPARISON_MIME

# The published notebooks of two pages, as the baseline book (JAX 0.12.0.1) and the drift
# build under JAX 0.11.2 executed them on the build machine (figures' bytes emptied).
FROZEN = Path(__file__).parent / "data" / "outputs"
BASELINE, OTHER = FROZEN / "jax-0.12.0.1", FROZEN / "jax-0.11.2"


def notebooks(folder: Path) -> dict[str, dict]:
    """The executed notebooks of a build's folder, by page."""
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.ipynb"))}


def test_the_frozen_builds_differ_only_in_what_is_measured():
    raw = [
        index
        for page in ("async-dispatch", "memory-layout")
        for index, (a, b) in enumerate(
            zip(
                outputs.cells_with_their_claims(notebooks(BASELINE)[page]),
                outputs.cells_with_their_claims(notebooks(OTHER)[page]),
                strict=True,
            )
        )
        if outputs.comparable_outputs(a) != outputs.comparable_outputs(b)
    ]
    assert len(raw) >= 5  # timings, comparisons and float digits differ as printed
    assert outputs.compare_builds(BASELINE, notebooks(OTHER)) == []


@pytest.mark.parametrize(
    ("before", "after"),
    [  # printed by the frozen builds, or as these pages print them
        (
            "naive timing: 18.3 ms; compilations during the call: 1",
            "naive timing: 8.9 ms; compilations during the call: 1",
        ),
        (
            "device   155 ms median (152 to 157 ms for the middle half of 7 runs)",
            "device   170 ms median (168 to 177 ms for the middle half of 7 runs)",
        ),
        (
            "overlapped           49.9 ms median (49.7 to 50.2 ms for the middle half of 7 runs)",
            "overlapped           50.6 ms median (50.1 to 51.0 ms for the middle half of 13 runs)",
        ),
        (
            "small array: Array([[-24.838047, 64.88517 ], [-14.921371, -17.488869]])",
            "small array: Array([[-24.837914, 64.885284], [-14.921448, -17.488758]])",
        ),
        ("Python    3.12.1\nJAX       0.12.0.1", "Python    3.13.0\nJAX       0.11.2"),
        (
            "plugins/profile/<timestamp>/<host>.xplane.pb           106,797 bytes",
            "plugins/profile/<timestamp>/<host>.xplane.pb           100,998 bytes",
        ),
        ("<function f at 0x7f3a2c1d9e40>", "<function f at 0x7f11aa0b3c10>"),
        ("a ran 2.0 × faster than b (30 runs each)", "a ran 2.1 × faster than b (13 runs each)"),
        (
            "Median milliseconds: fused 0.807, unfused 0.967.",
            "Median milliseconds: fused 1.85, unfused 1.80.",
        ),
    ],
)
def test_a_measured_difference_is_masked(before, after):
    assert before != after
    assert outputs.same(outputs.mask(before), outputs.mask(after))


@pytest.mark.parametrize(
    ("before", "after"),
    [  # what JAX decides: a mask that hid one of these would hide drift
        ("make_jaxpr returns: Jaxpr", "make_jaxpr returns: ClosedJaxpr"),
        ("f32[1000,1500,64]", "f32[1000,1500,32]"),
        ("h1: fusions 1, 2,097,152 bytes accessed", "h1: fusions 2, 4,194,304 bytes accessed"),
        (
            "['python', 'tf_XLAEigen', 'tf_XLAExecute']",
            "['python', 'tf_XLAEigen', 'tf_XLAPjRtCpuClient']",
        ),
        ("Array(shape=(512, 512), dtype=float32)", "Array([[1., 1., 1., ..., 1., 1., 1.]])"),
        (
            "%transpose.0 = f32[2000,2000]{0,1} transpose(%param_0.1)",
            "%copy.0 = f32[2000,2000]{1,0} copy(%param_0.1)",
        ),
        (
            "{ lambda ; a:f32[10]. let b:f32[10] = mul a 2.0:f32[] in (b,) }",
            "{ lambda ; a:f32[10]. let b:f32[10] = mul a 2.0 in (b,) }",
        ),
    ],
)
def test_what_jax_decides_is_not_masked(before, after):
    assert not outputs.same(outputs.mask(before), outputs.mask(after))


def test_a_cell_tagged_measured_is_compared_by_the_kinds_of_its_outputs():
    def cell(sentence, tags):
        glued = {"application/papermill.record/text/markdown": sentence}
        outputs_ = [{"output_type": "display_data", "data": glued, "metadata": {}}]
        return {"metadata": {"tags": tags}, "outputs": outputs_}

    faster, slower = "Fusion paid off in time here.", "The saved traffic did not show up as time."
    chosen = [
        outputs.comparable_outputs(cell(s, ["remove-cell", "measured"])) for s in (faster, slower)
    ]
    assert chosen[0] == chosen[1] == {"text/markdown": "<text/markdown>\n"}
    assert outputs.comparable_outputs(cell(faster, [])) != outputs.comparable_outputs(
        cell(slower, [])
    )


def test_a_verdict_or_a_timed_comparison_glued_or_shown_is_not_an_output_to_compare():
    def cell(kind):
        shown = {"output_type": "display_data", "data": {kind: {}}, "metadata": {}}
        return {"metadata": {}, "outputs": [shown]}

    for kind in (VERDICT_MIME, COMPARISON_MIME):
        assert outputs.comparable_outputs(cell(kind)) == {}
        assert outputs.comparable_outputs(cell(GLUE_PREFIX + kind)) == {}
    assert outputs.comparable_outputs(cell("x-" + VERDICT_MIME)) != {}  # only ends with it


MATERIALIZED = VerdictRecord(
    id="transpose-materialized",
    page="memory-layout",
    label="claim-transpose-materialized",
    kind="asserted",
    status="drifted",
    jax="0.11.2",
    jaxlib="0.11.2",
    statement="a.T is materialized.",
    expected={"a.T fused body": ["parameter", "transpose", "copy"]},
    observed={"a.T fused body": ["parameter", "copy"]},
    evidence="...",
)


def _claims(*verdicts):
    return ClaimsReport("0.11.2", "0.11.2", "3.13.0", "2026-12-01", list(verdicts))


def _planted(tmp_path: Path) -> Path:
    """The frozen 0.11.2 build with one printout changed: the fused body of a.T shows a copy
    where XLA printed a transpose (nothing measured, no claim checks this text)."""
    other = tmp_path / "other"
    shutil.copytree(OTHER, other)
    path = other / "memory-layout.ipynb"
    notebook = json.loads(path.read_text())
    cell = next(c for c in notebook["cells"] if "".join(c["source"]) == "print(fused_body(h1))")
    text = "".join(cell["outputs"][0]["text"])
    assert "transpose(" in text
    cell["outputs"][0]["text"] = text.replace("transpose(", "copy(")
    path.write_text(json.dumps(notebook))
    return other


def test_a_planted_printout_no_claim_covers_is_listed_under_no_claim(tmp_path):
    other = _planted(tmp_path)
    unchanged = outputs.compare_builds(BASELINE, notebooks(OTHER))
    assert not drift.build_report(_claims(), [], outputs=unchanged).anything_changed
    changes = outputs.compare_builds(BASELINE, notebooks(other))
    report = drift.build_report(_claims(), [], outputs=changes)
    assert report.anything_changed
    [change] = report.unexplained_outputs
    assert (change.page, change.output) == ("memory-layout", "stdout")
    assert "+ %transpose.0 = f32[2000,2000]{0,1} copy(%param_0.1)" in change.diff
    text = drift.to_markdown(report)
    assert "No claim explains 1 changed output:" in text
    unexplained = text.split("## Explained by no claim")[1]
    assert "#### page `memory-layout`, code cell 6 (`print(fused_body(h1))`), stdout" in unexplained
    assert "```diff" in unexplained


def test_a_changed_output_goes_to_the_drifted_claim_its_section_verifies(tmp_path):
    other = _planted(tmp_path)
    changes = outputs.compare_builds(BASELINE, notebooks(other))
    report = drift.build_report(_claims(MATERIALIZED), [], outputs=changes)
    [cause] = report.causes
    assert [c.cell_index for c in cause.changed_outputs] == [5]
    assert report.unexplained_outputs == []


def test_a_section_ends_at_a_heading_not_at_a_hash_line_in_a_fence():
    def cell(kind, source, verified=None):
        data = {VERDICT_MIME: replace(MATERIALIZED, id=verified).to_dict()} if verified else {}
        return {"cell_type": kind, "source": source, "metadata": {}, "outputs": [{"data": data}]}

    notebook = {
        "cells": [
            cell("code", "x = 1"),
            cell("markdown", "Prose.\n\n```\n# a comment, not a heading\n```\n"),
            cell("code", 'verify("first")', verified="first"),
            cell("markdown", "## Next section"),
            cell("code", 'verify("second")', verified="second"),
        ]
    }
    assert [c["checked_after"] for c in outputs.cells_with_their_claims(notebook)] == [
        ["first"],
        [],
        [],
    ]
