"""The claim x release matrix: since which JAX release each claim of the book holds.

    python -m chapter2.claims.matrix FOLDER

reads every `jax-<version>.json` that `python -m chapter2.claims --json` wrote into FOLDER,
one per JAX release, and writes `matrix.json` and `matrix.md` beside them: the status of
every claim under every release, and the release from which each one holds without a break
up to the newest. A claim the machine decides counts as holding when its check could run.
"""

import json
import sys
from pathlib import Path

from chapter2.claims.registry import Status


def release_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def since(statuses: dict[str, str], releases: list[str]) -> str | None:
    """The oldest release from which the claim stands in every later release, or None."""
    first = None
    for release in reversed(releases):  # newest first
        if release in statuses and Status(statuses[release]).stands:
            first = release
        else:
            break
    return first


def build_matrix(runs: list[dict]) -> dict:
    """Statuses per claim and release, and since when each claim holds."""
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
    for entry in claims.values():
        entry["since"] = since(entry["status"], releases)
    return {
        "releases": [
            {"jax": r["jax"], "python": r["python"], "recorded": r["recorded"]} for r in runs
        ],
        "claims": claims,
    }


SHORT = {"holds": "✓", "drifted": "✗", "as specified": "✓ (machine)", "differs here": "≠ (machine)"}


def to_markdown(matrix: dict) -> str:
    releases = [r["jax"] for r in matrix["releases"]]
    recorded = sorted({r["recorded"] for r in matrix["releases"]})
    out = [
        "# Claims of the book under each JAX release",
        "",
        f"Recorded {', '.join(recorded)}, one process per release (`python -m chapter2.claims`). "
        "✓ holds, ✗ drifted (or its API does not exist), (machine): a fact the machine decides.",
        "",
        "| claim | page | since | " + " | ".join(releases) + " |",
        "|---|---|---|" + "---|" * len(releases),
    ]
    for claim_id, entry in matrix["claims"].items():
        cells = [SHORT.get(entry["status"].get(r, ""), "–") for r in releases]
        row = [claim_id, entry["section"], entry["since"] or "never", *cells]
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    folder = Path((argv or sys.argv[1:])[0])
    runs = [json.loads(p.read_text()) for p in sorted(folder.glob("jax-*.json"))]
    matrix = build_matrix(runs)
    (folder / "matrix.json").write_text(json.dumps(matrix, indent=2) + "\n")
    (folder / "matrix.md").write_text(to_markdown(matrix))
    print(to_markdown(matrix))
    return 0


if __name__ == "__main__":
    sys.exit(main())
