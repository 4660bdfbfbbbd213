"""The drift report: what changed when the book was checked and built under another JAX.

    python -m chapter2.claims.drift CLAIMS_JSON FAILED_PAGES_JSON --out FOLDER
        [--baseline JSON] [--notebooks BASELINE_SOURCES THIS_SOURCES]

reads the verdicts of `python -m chapter2.claims --json` and the failing cells of a build
(`failed-pages.json`, written beside the HTML), and writes `report.json` and `report.md` to
FOLDER. A change is an asserted claim that does not hold, or a claim whose check could not
run; claims about the machine are listed apart, as observations, never as drift, and so are
claims whose subject does not exist under that JAX ("cannot check").

Changed claims are grouped by cause: a claim that rests on another drifted claim joins its
cause. Every failing cell names the claims its error names; with --notebooks (the executed
notebooks of the baseline's build and of this one), every output that changed once measured
parts are masked (`chapter2.outputs`) is listed and attributed to the drifted claim it shows,
or to none: read the prose around it. With --baseline (the baseline JAX's recorded verdicts,
data/matrix/jax-<baseline>.json), each changed claim is shown beside the baseline's recorded
values. Exits 1 when anything changed.
"""

import argparse
import json
import re
import sys
from pathlib import Path

from chapter2.claims.registry import Observation, Status, claims_named
from chapter2.outputs import compare_builds


def changed_claims(verdicts: list[dict]) -> list[dict]:
    """The claims that drifted: asserted ones that do not hold, or checks that could not run."""
    return [v for v in verdicts if v["status"] == Status.DRIFTED]


def observations(verdicts: list[dict]) -> list[dict]:
    """The claims the machine decides, with what this machine did."""
    return [
        v
        for v in verdicts
        if v["kind"] == "observed" and v["status"] in (Status.AS_SPECIFIED, Status.DIFFERS_HERE)
    ]


def unchecked(verdicts: list[dict]) -> list[dict]:
    """The claims whose subject does not exist under this JAX, with the reason."""
    return [v for v in verdicts if v["status"] == Status.CANNOT_CHECK]


def attributed(failures: list[dict], drifted: set[str]) -> list[dict]:
    """Each failing cell with the drifted claims its error names (empty: no claim explains it)."""
    return [
        {**f, "claims": [c for c in claims_named(f["error"]) if c in drifted]} for f in failures
    ]


def against_baseline(drifted: list[dict], baseline: dict | None) -> list[dict]:
    """Each drifted claim with what the baseline recorded for it (status and observed values),
    or None where the baseline did not record it."""
    recorded = {v["id"]: v for v in (baseline or {}).get("claims", [])}
    return [
        {
            **claim,
            "baseline": (
                {k: recorded[claim["id"]][k] for k in ("status", "observed")}
                if claim["id"] in recorded
                else None
            ),
        }
        for claim in drifted
    ]


def causes(drifted: list[dict]) -> list[list[dict]]:
    """The drifted claims grouped by cause: a claim that rests on another drifted claim
    (`rests_on`, followed to the end) joins that claim's cause; the claim at its root, first,
    names it."""
    by_id = {c["id"]: c for c in drifted}

    def root(claim_id: str, seen: tuple[str, ...] = ()) -> str:
        basis = [b for b in by_id[claim_id].get("rests_on", []) if b in by_id and b not in seen]
        return root(basis[0], (*seen, claim_id)) if basis else claim_id

    groups: dict[str, list[dict]] = {}
    for claim in drifted:
        groups.setdefault(root(claim["id"]), []).append(claim)
    return [sorted(group, key=lambda c: c["id"] != name) for name, group in groups.items()]


def _strings(value) -> list[str]:
    """The texts of a value that a printout can show: a string, the strings of a list, the
    keys of a dict (kernel names, say)."""
    values = (
        value if isinstance(value, list) else list(value) if isinstance(value, dict) else [value]
    )
    return [v for v in values if isinstance(v, str) and len(v) >= 4]


def explaining_claims(change: dict, drifted: list[dict]) -> list[str]:
    """The drifted claims an output change shows: those whose differing observed value its
    changed lines print now, or whose expected value they no longer print; else the first
    drifted claim its section verifies after it."""
    lines = change["diff"].splitlines()
    removed = "\n".join(line[1:] for line in lines if line.startswith("-"))
    added = "\n".join(line[1:] for line in lines if line.startswith("+"))
    shown = []
    for claim in drifted:
        for name in Observation(claim["expected"] or {}, claim["observed"] or {}).differences:
            now = _strings((claim["observed"] or {}).get(name))
            was = _strings((claim["expected"] or {}).get(name))
            if any(v in added and v not in removed for v in now) or any(
                v in removed and v not in added for v in was
            ):
                shown.append(claim["id"])
                break
    ids = {c["id"] for c in drifted}
    return shown or [c for c in change.get("checked_after", []) if c in ids][:1]


def build_report(
    claims_report: dict,
    failures: list[dict],
    baseline: dict | None = None,
    outputs: list[dict] | None = None,
) -> dict:
    """Everything the Markdown report says, as data. `outputs`: the changed outputs of
    `chapter2.outputs.compare_builds`, or None when they were not compared."""
    drifted = against_baseline(changed_claims(claims_report["claims"]), baseline)
    cells = attributed(failures, {c["id"] for c in drifted})
    failed = {(c["page"], c["cell"]) for c in failures}  # their outputs are the error's
    changes = [
        {**c, "claims": explaining_claims(c, drifted)}
        for c in outputs or []
        if (c["page"], c["cell"]) not in failed
    ]
    grouped = []
    for group in causes(drifted):
        ids = {c["id"] for c in group}
        grouped.append(
            {
                "name": group[0]["id"],
                "claims": group,
                "failing_cells": [c for c in cells if ids & set(c["claims"])],
                "changed_outputs": [c for c in changes if ids & set(c["claims"])],
            }
        )
    return {
        "jax": claims_report["jax"],
        "jaxlib": claims_report["jaxlib"],
        "python": claims_report["python"],
        "recorded": claims_report["recorded"],
        "claims_checked": len(claims_report["claims"]),
        "changed_claims": drifted,
        "causes": grouped,
        "modules_not_loaded": claims_report["modules_not_loaded"],
        "failing_cells": cells,
        "unexplained_cells": [c for c in cells if not c["claims"]],
        "outputs_compared": outputs is not None,
        "changed_outputs": changes,
        "unexplained_outputs": [c for c in changes if not c["claims"]],
        "environment_dependent": observations(claims_report["claims"]),
        "cannot_check": unchecked(claims_report["claims"]),
        "baseline": (
            {k: baseline[k] for k in ("jax", "recorded")} if baseline is not None else None
        ),
    }


def _differences(claim: dict) -> list[str]:
    """Each value that differs, with what the book expects of it and, when recorded, what the
    baseline gave (a multi-line value fenced)."""
    lines = []
    recorded = (claim.get("baseline") or {}).get("observed") or {}
    for name in Observation(claim["expected"], claim["observed"]).differences:
        gave = str(claim["observed"].get(name, "(nothing)"))
        said = f"- {name}: the book expects `{claim['expected'][name]}`"
        if name in recorded:
            said += f", the baseline gave `{recorded[name]}`"
        said += ", this JAX gave"
        lines += [f"{said}:", "", *_fenced(gave), ""] if "\n" in gave else [f"{said} `{gave}`"]
    return lines


def _fenced(text: str, language: str = "text") -> list[str]:
    """A block of code or output, fenced so that Markdown keeps it whole (a list around an
    indented printout breaks)."""
    fence = "````" if "```" in text else "```"
    return [f"{fence}{language}", *text.splitlines(), fence]


def _said(label: str, text: str) -> list[str]:
    """A labelled value: inline when it is one line, fenced below its label otherwise."""
    if "\n" not in text:
        return [f"- {label}: {text}"]
    return [f"- {label}:", "", *_fenced(text), ""]


def counted(n: int, noun: str) -> str:
    """`n` and its noun, singular or plural: 1 failing cell, 2 failing cells."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _short(value, limit: int = 70) -> str:
    """A value on one line, cut at `limit` characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cause_sentence(cause: dict) -> str:
    """What changed, in one sentence: the root claim's differing values, the claims that go
    with it, and what it broke on the pages."""
    root = cause["claims"][0]
    if root["expected"] is None:
        said = f"its check could not run: {_short(root['evidence'], 120)}"
    else:
        said = "; ".join(
            f"{name}: the book expects `{_short(root['expected'][name])}`, this JAX gave "
            f"`{_short((root['observed'] or {}).get(name, '(nothing)'))}`"
            for name in Observation(root["expected"], root["observed"] or {}).differences
        )
    others = [c["id"] for c in cause["claims"][1:]]
    with_it = f" With it: {', '.join(others)}." if others else ""
    counts = (
        f" {counted(len(cause['failing_cells']), 'failing cell')}, "
        f"{counted(len(cause['changed_outputs']), 'changed output')}."
    )
    return f"**{root['id']}** (page `{root['section']}`): {said}.{with_it}{counts}"


def _claim_block(claim: dict) -> list[str]:
    recorded = (claim.get("baseline") or {}).get("status")
    return [
        f"#### {claim['id']} (page `{claim['section']}`, {claim['kind']})",
        "",
        *_said("the book says", claim["statement"]),
        *([f"- the baseline recorded: {recorded}"] if recorded not in (None, "holds") else []),
        *(
            _said("the check could not run", claim["evidence"])
            if claim["expected"] is None
            else [*_said("this JAX did", claim["evidence"]), *_differences(claim)]
        ),
        "",
    ]


def _first_line(source: str) -> str:
    line = source.strip().splitlines()[0] if source.strip() else ""
    return _short(line, 50).replace("`", "'")


def _cell_block(cell: dict) -> list[str]:
    head = f"#### page `{cell['page']}`: `{_first_line(cell['cell'])}`"
    if re.fullmatch(r"""verify\(["'][\w-]+["']\)""", cell["cell"].strip()):
        return [head, "", "Its claim's check fails with the drift shown above.", ""]
    error = "\n".join(
        line for line in cell["error"].splitlines() if not line.startswith("  expected {")
    )
    return [head, "", *_fenced(cell["cell"], "python"), "", "error:", "", *_fenced(error), ""]


def _output_block(change: dict) -> list[str]:
    source = change["cell"].splitlines()
    shown = "\n".join(source[:6] + (["# ..."] if len(source) > 6 else []))
    return [
        f"#### page `{change['page']}`, code cell {change['cell_index'] + 1} "
        f"(`{_first_line(change['cell'])}`), {change['output']}",
        "",
        *_fenced(shown, "python"),
        "",
        *_fenced(change["diff"] or "(whitespace only)", "diff"),
        "",
    ]


def _listed(items: list[dict], block, shown: dict, where: str) -> list[str]:
    """Each item in full the first time, then a line that says where it is shown."""
    out = []
    for item in items:
        key = (item["page"], item["cell"], item.get("output"))
        if key in shown:
            out += [f"- page `{item['page']}`: shown under {shown[key]}", ""]
        else:
            shown[key] = where
            out += block(item)
    return out


def to_markdown(report: dict) -> str:
    """The report as a maintainer reads it: one sentence per cause first, then each cause with
    its claims, failing cells and changed outputs, then what no claim explains."""
    causes_ = report["causes"]

    def explained(items: list, unexplained: list) -> str:
        if not items:
            return ""
        if not unexplained:
            return ", each explained by a claim"
        return f", {len(unexplained)} explained by no claim"

    outputs_said = (
        f"; {counted(len(report['changed_outputs']), 'output')} changed"
        + explained(report["changed_outputs"], report["unexplained_outputs"])
        if report.get("outputs_compared")
        else "; outputs not compared (no baseline build)"
    )
    out = [
        f"# Drift report: JAX {report['jax']} (jaxlib {report['jaxlib']}, "
        f"Python {report['python']})",
        "",
        f"Recorded {report['recorded']}. {len(report['changed_claims'])} of "
        f"{report['claims_checked']} claims changed, in {counted(len(causes_), 'cause')}"
        + (
            f" (against the baseline's recorded results: JAX {report['baseline']['jax']}, "
            f"recorded {report['baseline']['recorded']})"
            if report.get("baseline")
            else ""
        )
        + f"; {counted(len(report['failing_cells']), 'cell')} failed"
        + explained(report["failing_cells"], report["unexplained_cells"])
        + f"{outputs_said}.",
        "",
        "## What changed",
        "",
    ]
    if not causes_:
        out += ["No claim changed: every claim of the book holds.", ""]
    out += [f"{n}. {cause_sentence(c)}" for n, c in enumerate(causes_, 1)]
    unexplained = len(report["unexplained_cells"]) + len(report.get("unexplained_outputs", []))
    if unexplained:
        parts = [
            counted(len(items), what)
            for items, what in (
                (report["unexplained_cells"], "failing cell"),
                (report.get("unexplained_outputs", []), "changed output"),
            )
            if items
        ]
        out.append(
            f"{'' if not causes_ else f'{len(causes_) + 1}. '}No claim explains "
            f'{" and ".join(parts)}: read the prose around them (under "Explained by no '
            'claim" below).'
        )
    if sum(len(c["failing_cells"]) for c in causes_) > len(report["failing_cells"]):
        out += ["", "A cell that several causes explain is counted under each."]
    shown: dict = {}
    for n, cause in enumerate(causes_, 1):
        where = f"cause {n}"
        out += ["", f"## Cause {n}: {cause['name']}", "", "### Claims", ""]
        for claim in cause["claims"]:
            out += _claim_block(claim)
        if cause["failing_cells"]:
            out += ["### Failing cells", ""]
            out += _listed(cause["failing_cells"], _cell_block, shown, where)
        if cause["changed_outputs"]:
            out += ["### Changed outputs", ""]
            out += _listed(cause["changed_outputs"], _output_block, shown, where)
    for module, error in report["modules_not_loaded"].items():
        out.append(f"- claims module `{module}` could not be loaded: {error}")
    out += ["", "## Explained by no claim: read the prose around them", ""]
    if not unexplained:
        out.append("Nothing: every failing cell and changed output has its claim.")
    if report["unexplained_cells"]:
        out += ["### Failing cells", ""]
        out += [line for cell in report["unexplained_cells"] for line in _cell_block(cell)]
    if report.get("unexplained_outputs"):
        out += ["### Changed outputs", ""]
        out += [line for c in report["unexplained_outputs"] for line in _output_block(c)]
    out += ["", "## Depends on the machine (observed, never drift)", ""]
    for claim in report["environment_dependent"]:
        out.append(f"- **{claim['id']}** ({claim['status']}): {claim['evidence']}")
    out += ["", "## Cannot be checked on this release (neither holds nor drifts)", ""]
    if not report["cannot_check"]:
        out.append("None: every claim's subject exists in this JAX.")
    for claim in report["cannot_check"]:
        out.append(f"- **{claim['id']}**: {claim['evidence']}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chapter2.claims.drift", description=__doc__)
    parser.add_argument("claims", type=Path, help="JSON of python -m chapter2.claims --json")
    parser.add_argument("failures", type=Path, help="failed-pages.json of the build")
    parser.add_argument("--out", type=Path, required=True, help="folder for report.md/.json")
    parser.add_argument("--baseline", type=Path, help="the baseline JAX's recorded verdicts")
    parser.add_argument(
        "--notebooks",
        type=Path,
        nargs=2,
        metavar=("BASELINE", "THIS"),
        help="the executed notebooks (html/_sources) of the baseline's build and of this one",
    )
    args = parser.parse_args(argv)
    build = json.loads(args.failures.read_text()) if args.failures.exists() else {}
    failures = build.get("failing_cells", [])
    baseline = json.loads(args.baseline.read_text()) if args.baseline else None
    outputs = compare_builds(*args.notebooks) if args.notebooks else None
    report = build_report(json.loads(args.claims.read_text()), failures, baseline, outputs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "report.md").write_text(to_markdown(report))
    print(to_markdown(report))
    changed = (
        report["changed_claims"]
        or report["failing_cells"]
        or report["changed_outputs"]
        or report["modules_not_loaded"]
    )
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
