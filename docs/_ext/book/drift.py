"""The drift report under another JAX: drifted claims grouped by cause (`rests_on`), each
failing cell and changed output given to the claim that explains it, or to none."""

import sys
from dataclasses import replace
from pathlib import Path

import jinja2

from book.markdown import Inline, as_markdown, escape, quoted, with_code
from chapter2.claims.registry import ClaimDrift, counted
from chapter2.records import (
    AtBaseline,
    BaselineClaims,
    ChangedOutput,
    ClaimsReport,
    DriftReport,
    FailingCell,
    RootCause,
    Status,
    VerdictRecord,
    compared,
)


def with_status(verdicts: list[VerdictRecord], *statuses: Status) -> list[VerdictRecord]:
    return [v for v in verdicts if v.status in statuses]


def causes(drifted: list[VerdictRecord]) -> list[list[VerdictRecord]]:
    """The drifted claims grouped by cause: the root of each `rests_on` chain first."""
    by_id = {c.id: c for c in drifted}

    def root(claim_id: str, seen: tuple[str, ...] = ()) -> str:
        basis = [b for b in by_id[claim_id].rests_on if b in by_id and b not in seen]
        return root(basis[0], (*seen, claim_id)) if basis else claim_id

    groups: dict[str, list[VerdictRecord]] = {}
    for claim in drifted:
        groups.setdefault(root(claim.id), []).append(claim)
    return [sorted(group, key=lambda c: c.id != name) for name, group in groups.items()]


def build_report(
    claims_report: ClaimsReport,
    failures: list[FailingCell],
    baseline: ClaimsReport | None = None,
    commit: str | None = None,
    outputs: list[ChangedOutput] | None = None,
) -> DriftReport:
    """The report as data: the claims as this build's pages showed them, against the
    baseline's (`outputs`: None when no baseline build was compared; `commit`: the book's)."""
    verdicts = claims_report.claims
    recorded = {  # the baseline's status and observed values of each claim, if recorded
        v.id: AtBaseline(v.status, v.observed) for v in (baseline.claims if baseline else [])
    }
    drifted = [
        replace(claim, baseline=recorded.get(claim.id))
        for claim in with_status(verdicts, Status.DRIFTED)
    ]
    ids = {c.id for c in drifted}  # each failing cell with the drifted claims it shows
    cells = [replace(f, claim_ids=[c for c in f.claim_ids if c in ids]) for f in failures]
    failed = {(c.page, c.cell) for c in failures}  # their outputs are the error's
    changes = [
        # a changed output goes to the first drifted claim its section checks after it
        replace(c, claim_ids=[claim for claim in c.checked_after if claim in ids][:1])
        for c in outputs or []
        if (c.page, c.cell) not in failed
    ]
    grouped = []
    for group in causes(drifted):
        ids = {c.id for c in group}
        grouped.append(
            RootCause(
                name=group[0].id,
                claims=group,
                failing_cells=[c for c in cells if ids & set(c.claim_ids)],
                changed_outputs=[c for c in changes if ids & set(c.claim_ids)],
            )
        )
    return DriftReport(
        jax=claims_report.jax,
        jaxlib=claims_report.jaxlib,
        python=claims_report.python,
        recorded=claims_report.recorded,
        commit=commit,  # the book's, so the page says which it checked
        claims_checked=len(verdicts),
        claim_ids=sorted(v.id for v in verdicts),
        changed_claims=drifted,
        causes=grouped,
        modules_not_loaded=claims_report.modules_not_loaded,
        failing_cells=cells,
        unexplained_cells=[c for c in cells if not c.claim_ids],
        outputs_compared=outputs is not None,
        changed_outputs=changes,
        unexplained_outputs=[c for c in changes if not c.claim_ids],
        environment_dependent=with_status(verdicts, Status.AS_SPECIFIED, Status.DIFFERS_HERE),
        cannot_check=with_status(verdicts, Status.CANNOT_CHECK),
        baseline=BaselineClaims(baseline.jax, baseline.recorded) if baseline else None,
    )


def _differences(claim: VerdictRecord) -> list[str]:
    """Each differing value: what the book expects, the baseline gave and this JAX gave."""
    lines = []
    recorded = (claim.baseline and claim.baseline.observed) or {}
    for value in (c for c in compared(claim.expected, claim.observed) if c.differs):
        name, gave = value.name, str(value.observed)
        said = f"- {name}: the book expects `{value.expected}`"
        if name in recorded:
            said += f", the baseline gave `{recorded[name]}`"
        said += ", this JAX gave"
        lines += [f"{said}:", "", *_fenced(gave), ""] if "\n" in gave else [f"{said} `{gave}`"]
    return lines


def _fenced(text: str, language: str = "text") -> list[str]:
    """A block of code or output, fenced so that Markdown keeps it whole."""
    fence = "````" if "```" in text else "```"
    return [f"{fence}{language}", *text.splitlines(), fence]


def _said(label: str, text: str) -> list[str]:
    """A labelled value: inline when it is one line, fenced below its label otherwise."""
    if "\n" not in text:
        return [f"- {label}: {with_code(text)}"]
    return [f"- {label}:", "", *_fenced(text), ""]


def _short(value, limit: int = 70) -> str:
    """A value on one line, cut at `limit` characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cause_pieces(cause: RootCause) -> list[Inline]:
    """A cause in one sentence: its root claim's values, the claims with it, what it broke."""
    root = cause.claims[0]
    out: list[Inline] = [("strong", root.id), ("text", " (page "), ("code", root.page)]
    out.append(("text", "): "))
    if root.expected is None:
        out += [("text", "its check could not run: "), *quoted(_short(root.evidence, 120))]
    differing = [c for c in compared(root.expected, root.observed) if c.differs]
    for n, value in enumerate(differing):
        out += [("text", f"{'; ' if n else ''}{value.name}: the book expects ")]
        out += [("code", _short(value.expected)), ("text", ", this JAX gave ")]
        out += [("code", _short(value.observed))]
    others = [c.id for c in cause.claims[1:]]
    with_it = f" With it: {', '.join(others)}." if others else ""
    counts = (
        f" {counted(len(cause.failing_cells), 'failing cell')}, "
        f"{counted(len(cause.changed_outputs), 'changed output')}."
    )
    return [*out, ("text", f".{with_it}{counts}")]


def summary(report: DriftReport, claims_now: int, now: set[str] | None = None) -> str:
    """A report in a few sentences, saying which book it describes (`claims_now`: the claims
    the book states now; `now`, their ids, to name those the report did not check)."""
    checked = report.claims_checked
    recorded = report.claim_ids is not None  # None in a report written before they were kept
    unchecked = sorted(now - set(report.claim_ids)) if now and recorded else []
    made = (
        f"Recorded {report.recorded} "
        + (
            f"from the book at commit {report.commit}"
            if report.commit
            else "from a book whose commit it does not record"
        )
        + f", {counted(checked, 'claim')} checked"
        + ("" if checked == claims_now else f" (the book now states {claims_now})")
        + (f"; it did not check {', '.join(unchecked)}" if unchecked else "")
    )
    if not report.anything_changed:
        return f"{made}: every claim holds, every cell ran, no output changed."
    lost = [
        counted(len(report.unexplained_cells), "failing cell"),
        counted(len(report.unexplained_outputs), "changed output"),
    ]
    return (
        f"{made}: {counted(len(report.changed_claims), 'claim')} "
        f"changed, in {counted(len(report.causes), 'cause')}; "
        f"{counted(len(report.failing_cells), 'failing cell')}; "
        f"{counted(len(report.changed_outputs), 'changed output')}; of them "
        f"{' and '.join(lost)} explained by no claim (listed in the full report)."
        + (f" {COUNTED_UNDER_EACH}" if report.shared else "")
    )


COUNTED_UNDER_EACH = "A cell or output that several causes explain is counted under each."


def _first_line(source: str) -> str:
    line = source.strip().splitlines()[0] if source.strip() else ""
    return _short(line, 50).replace("`", "'")


def _said_of(claim: VerdictRecord, label: str, field: str = "statement") -> str:
    return "\n".join(_said(label, getattr(claim, field)))


def _head_of(source: str) -> str:
    """A cell's first six lines, and a mark where it goes on."""
    lines = source.splitlines()
    return "\n".join(lines[:6] + (["# ..."] if len(lines) > 6 else []))


TEMPLATE = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
)
TEMPLATE.filters.update(
    counted=counted,
    said=_said_of,
    differences=_differences,
    fenced=lambda text, language="text": "\n".join(_fenced(text, language)),
    first_line=_first_line,
    head_of=_head_of,
    escape_md=escape,
    with_code=with_code,
)


def _once(causes_: list[RootCause]) -> tuple[list, list]:
    """Each cause's failing cells and changed outputs as (where it is shown, item): "" the
    first time an item appears, in full, then the cause that shows it."""
    shown: dict = {}

    def listed(items: list, where: str) -> list[tuple[str, FailingCell | ChangedOutput]]:
        out = []
        for item in items:
            key = (item.page, item.cell, getattr(item, "output", None))
            out.append((shown.get(key, ""), item))
            shown.setdefault(key, where)
        return out

    cells, outputs = [], []
    for n, cause in enumerate(causes_, 1):
        cells.append(listed(cause.failing_cells, f"cause {n}"))
        outputs.append(listed(cause.changed_outputs, f"cause {n}"))
    return cells, outputs


def to_markdown(report: DriftReport) -> str:
    """The report for a maintainer, as Markdown (templates/drift_report.md.jinja): a sentence
    per cause, each cause in full, the rest."""
    causes_, cells, outputs = report.causes, report.failing_cells, report.changed_outputs
    lost = {"cell": report.unexplained_cells, "output": report.unexplained_outputs}

    def explained(items: list, kind: str) -> str:
        if not items:
            return ""
        return (
            f", {len(lost[kind])} explained by no claim"
            if lost[kind]
            else ", each explained by a claim"
        )

    baseline = report.baseline
    shown_cells, shown_outputs = _once(causes_)
    view = {
        "against": (
            f" (against the baseline's recorded results: JAX {baseline.jax}, recorded "
            f"{baseline.recorded})"
            if baseline
            else ""
        ),
        "cells_explained": explained(cells, "cell"),
        "compared": (
            f"; {counted(len(outputs), 'output')} changed{explained(outputs, 'output')}"
            if report.outputs_compared
            else "; outputs not compared (no baseline build)"
        ),
        "causes": [as_markdown(cause_pieces(c)) for c in causes_],
        "unexplained": [
            counted(len(v), f"failing {k}" if k == "cell" else "changed output")
            for k, v in lost.items()
            if v
        ],
        "unexplained_number": f"{len(causes_) + 1}. " if causes_ else "",
        "shared": COUNTED_UNDER_EACH if report.shared else "",
        "cells": shown_cells,
        "outputs": shown_outputs,
    }
    return TEMPLATE.get_template("drift_report.md.jinja").render(
        r=report, view=view, drift_error=ClaimDrift.__name__
    )


def main(argv: list[str] | None = None) -> int:
    """`python -m book drift REPORT.json`: exits 1 (naming REPORT's .md) when it changed."""
    [path] = sys.argv[1:] if argv is None else argv
    if DriftReport.load(path).anything_changed:
        print(f"the book drifted: see {Path(path).with_suffix('.md')}", file=sys.stderr)
        return 1
    return 0
