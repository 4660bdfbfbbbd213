"""The claim x release matrix: from which JAX release each claim of the book holds.

    python -m chapter2.claims.matrix FOLDER

reads every `jax-<version>.json` that `python -m chapter2.claims --json` wrote into FOLDER,
one per JAX release, and writes `matrix.json` and `matrix.md` beside them: the status of
every claim under every release, and, for each claim JAX decides, the release from which it
holds without a break up to the newest. A claim the machine decides gets no such release:
its cells say what the machine did under each one.
"""

import json
import sys
from pathlib import Path

from chapter2.claims.registry import Kind, Status


def release_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def since(statuses: dict[str, str], releases: list[str]) -> str | None:
    """The oldest release from which the claim holds in every later release, or None."""
    first = None
    for release in reversed(releases):  # newest first
        if statuses.get(release) != Status.HOLDS:
            break
        first = release
    return first


def build_matrix(runs: list[dict]) -> dict:
    """Statuses per claim and release, and since when each asserted claim holds."""
    runs = sorted(runs, key=lambda run: release_key(run["jax"]))
    releases = [run["jax"] for run in runs]
    claims: dict[str, dict] = {}
    for run in runs:
        for verdict in run["claims"]:
            entry = claims.setdefault(
                verdict["id"],
                {"section": verdict["section"], "kind": verdict["kind"], "status": {}},
            )
            entry["status"][run["jax"]] = verdict["status"]
            entry["statement"] = verdict["statement"]
            if verdict["status"] == Status.CANNOT_CHECK:
                entry.setdefault("reasons", {})[run["jax"]] = verdict["evidence"]
    for entry in claims.values():
        entry["since"] = (
            since(entry["status"], releases) if entry["kind"] == Kind.ASSERTED else None
        )
    return {
        "releases": [
            {"jax": r["jax"], "python": r["python"], "recorded": r["recorded"]} for r in runs
        ],
        "claims": claims,
    }


LEGEND = (
    "✓ holds (a fact of the machine: behaved as described); ≠ a fact of the machine that "
    "behaved otherwise; ✗ found otherwise, or the check failed; ○ its subject does not exist "
    'there; · not measured. "Since X": holds in X and every later release measured, not in '
    'the one measured before. "X or earlier": holds in the oldest release measured.'
)


def since_text(entry: dict, releases: list[str]) -> str:
    """How the matrix states since when a claim holds."""
    if entry["kind"] == Kind.OBSERVED:
        return "machine"
    if entry["since"] is None:
        return "none measured"
    if releases and entry["since"] == releases[0]:
        return f"{entry['since']} or earlier"
    return entry["since"]


def to_markdown(matrix: dict) -> str:
    releases = [r["jax"] for r in matrix["releases"]]
    recorded = sorted({r["recorded"] for r in matrix["releases"]})
    out = [
        "# Claims of the book under each JAX release",
        "",
        f"Recorded {', '.join(recorded)}, one process per release "
        f"(`python -m chapter2.claims`). {LEGEND}",
        "",
        "| claim | page | since | " + " | ".join(releases) + " |",
        "|---|---|---|" + "---|" * len(releases),
    ]
    for claim_id, entry in matrix["claims"].items():
        statuses = [entry["status"].get(r) for r in releases]
        cells = [Status(status).symbol if status else "·" for status in statuses]
        row = [claim_id, entry["section"], since_text(entry, releases), *cells]
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    folder = Path((argv or sys.argv[1:])[0])
    runs = [json.loads(p.read_text()) for p in sorted(folder.glob("jax-*.json"))]
    matrix = build_matrix(runs)
    (folder / "matrix.json").write_text(json.dumps(matrix, indent=2, ensure_ascii=False) + "\n")
    (folder / "matrix.md").write_text(to_markdown(matrix))
    print(to_markdown(matrix))
    return 0


if __name__ == "__main__":
    sys.exit(main())
