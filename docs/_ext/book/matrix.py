"""The claim x release matrix: `python -m book matrix FOLDER` reads each
`jax-<version>.json` there and writes `matrix.json` (the page claims-matrix shows it): each
claim's status per release and, if asserted, the release from which it holds to the newest.
"""

import json
import sys
from pathlib import Path

from chapter2.records import ClaimsReport, Kind, Status
from chapter2.releases import release_key


def since(statuses: dict[str, str], releases: list[str]) -> str | None:
    """The oldest release from which the claim holds in every later release, or None."""
    first = None
    for release in reversed(releases):  # newest first
        if statuses.get(release) != Status.HOLDS:
            break
        first = release
    return first


def build_matrix(runs: list[ClaimsReport]) -> dict:
    """Statuses per claim and release, and since when each asserted claim holds."""
    runs = sorted(runs, key=lambda run: release_key(run.jax))
    releases = [run.jax for run in runs]
    claims: dict[str, dict] = {}
    for run in runs:
        for verdict in run.claims:
            entry = claims.setdefault(
                verdict.id, {"page": verdict.page, "kind": str(verdict.kind), "status": {}}
            )
            entry["status"][run.jax] = str(verdict.status)
            if verdict.status is Status.CANNOT_CHECK:
                entry.setdefault("reasons", {})[run.jax] = verdict.evidence
    for entry in claims.values():
        entry["since"] = (
            since(entry["status"], releases) if entry["kind"] == Kind.ASSERTED else None
        )
    return {
        "releases": [  # the machine each ran on, where its record keeps it (never filled in)
            {"jax": r.jax, "python": r.python, "recorded": r.recorded}
            | ({"machine": r.machine} if r.machine else {})
            for r in runs
        ],
        "claims": claims,
    }


NOT_MEASURED = "·"  # a release, or a backend, without a verdict for the claim
_SYMBOLS = [Status.HOLDS, Status.DIFFERS_HERE, Status.DRIFTED, Status.CANNOT_CHECK]
# The release columns' marks, a line each, as the matrix's legend lists them.
LEGEND = [
    *(f"{s.symbol} {s.meaning}" for s in _SYMBOLS),
    f"{NOT_MEASURED} not measured",
    f"for a fact of the machine (since: machine), {Status.HOLDS.symbol} means it behaved as "
    "described",
    '"Since X": holds in X and every later release measured, not in the one before; '
    '"X or earlier": holds in the oldest',
]
LINKED = f"a linked {Status.DRIFTED.symbol} opens the page as that release built it, in this site"


def since_text(entry: dict, releases: list[str]) -> str:
    """How the matrix states since when a claim holds."""
    if entry["kind"] == Kind.OBSERVED:
        return "machine"
    if entry["since"] is None:
        return "none measured"
    if releases and entry["since"] == releases[0]:
        return f"{entry['since']} or earlier"
    return entry["since"]


def main(argv: list[str] | None = None) -> int:
    [folder] = map(Path, sys.argv[1:] if argv is None else argv)
    runs = [ClaimsReport.load(p) for p in sorted(folder.glob("jax-*.json"))]
    matrix = build_matrix(runs)
    (folder / "matrix.json").write_text(json.dumps(matrix, indent=2, ensure_ascii=False) + "\n")
    releases = ", ".join(r["jax"] for r in matrix["releases"])
    print(f"{folder / 'matrix.json'}: {len(matrix['claims'])} claims under {releases}")
    return 0
