"""The drift report: what changed when the book was checked and built under another JAX.

    python -m chapter2.claims.drift CLAIMS_JSON FAILED_PAGES_JSON --out FOLDER [--baseline JSON]

reads the verdicts of `python -m chapter2.claims --json` and the failing pages of a build
(`failed-pages.json`, written beside the HTML), and writes `report.json` and `report.md` to
FOLDER. A change is an asserted claim that does not hold, or a claim whose check could not
run; claims about the machine are listed apart, as observations, never as drift, and so
are claims whose subject does not exist under that JAX ("cannot check"). Every
failing cell names the claims its error names, or says that no claim explains it. With
--baseline (the baseline JAX's recorded verdicts, data/matrix/jax-<baseline>.json), each
claim that drifts here is shown with the status the baseline recorded and, for each value
that differs, the baseline's value beside this JAX's. Exits 1 when anything changed.
"""

import argparse
import json
import sys
from pathlib import Path

from chapter2.claims.registry import Observation, Status, claims_named


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


def build_report(claims_report: dict, failures: list[dict], baseline: dict | None = None) -> dict:
    """Everything the Markdown report says, as data."""
    drifted = against_baseline(changed_claims(claims_report["claims"]), baseline)
    cells = attributed(failures, {c["id"] for c in drifted})
    return {
        "jax": claims_report["jax"],
        "jaxlib": claims_report["jaxlib"],
        "python": claims_report["python"],
        "recorded": claims_report["recorded"],
        "claims_checked": len(claims_report["claims"]),
        "changed_claims": drifted,
        "modules_not_loaded": claims_report["modules_not_loaded"],
        "failing_cells": cells,
        "unexplained_cells": [c for c in cells if not c["claims"]],
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


def to_markdown(report: dict) -> str:
    """The report as a maintainer reads it: what to rewrite, without opening a traceback."""
    out = [
        f"# Drift report: JAX {report['jax']} (jaxlib {report['jaxlib']}, "
        f"Python {report['python']})",
        "",
        f"Recorded {report['recorded']}. {report['claims_checked']} claims checked"
        + (
            f" against the baseline's recorded results (JAX {report['baseline']['jax']}, "
            f"recorded {report['baseline']['recorded']})"
            if report.get("baseline")
            else ""
        )
        + f"; {len(report['changed_claims'])} changed; {len(report['failing_cells'])} failing "
        f"cells, {len(report['unexplained_cells'])} of them explained by no claim.",
        "",
        "## Claims that changed",
        "",
    ]
    if not report["changed_claims"]:
        out.append("None: every claim of the book holds.")
    for claim in report["changed_claims"]:
        out += [
            f"### {claim['id']} (page `{claim['section']}`, {claim['kind']})",
            "",
            *_said("the book says", claim["statement"]),
            *(
                [f"- the baseline recorded: {claim['baseline']['status']}"]
                if claim.get("baseline")
                else []
            ),
            *(
                _said("the check could not run", claim["evidence"])
                if claim["expected"] is None
                else [*_said("this JAX did", claim["evidence"]), *_differences(claim)]
            ),
            "",
        ]
    for module, error in report["modules_not_loaded"].items():
        out.append(f"- claims module `{module}` could not be loaded: {error}")
    out += ["", "## Failing cells", ""]
    if not report["failing_cells"]:
        out.append("None: every page executed.")
    for cell in report["failing_cells"]:
        explained = (
            "explained by " + ", ".join(f"**{c}**" for c in cell["claims"])
            if cell["claims"]
            else "**explained by no claim**: a fact of the book that is not yet a claim"
        )
        out += [f"### page `{cell['page']}`, {explained}", "", *_fenced(cell["cell"], "python")]
        out += ["", "error:", "", *_fenced(cell["error"]), ""]
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
    args = parser.parse_args(argv)
    build = json.loads(args.failures.read_text()) if args.failures.exists() else {}
    failures = build.get("failing_cells", [])
    baseline = json.loads(args.baseline.read_text()) if args.baseline else None
    report = build_report(json.loads(args.claims.read_text()), failures, baseline)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "report.md").write_text(to_markdown(report))
    print(to_markdown(report))
    changed = report["changed_claims"] or report["failing_cells"] or report["modules_not_loaded"]
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
