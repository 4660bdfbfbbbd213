"""The backends a claim is asserted on, and the runs recorded on other backends
(`data/backends/`), each observation judged again by its claim as it is now."""

import json
from pathlib import Path

from chapter2.claims.registry import Claim, Kind, Observation, judged

YNN = ("cpu", "YNNPACK is a CPU library that only XLA's CPU backend calls")
HOST_MEMORY = (
    "cpu",
    (
        "an accelerator's device_put copies the array into the device's own memory, whatever "
        "its layout"
    ),
)
CPU_COMPILER_TEXT = ("cpu", "the check reads what XLA's CPU compiler prints")
CPU_THREADS = ("cpu", "the threads are those of XLA's CPU client")
CPU_BACKEND = ("cpu", "it is about the CPU backend itself")


def recorded_runs(folder: Path | str) -> list[dict]:
    """Every run recorded under `folder`, each with its verdicts by today's claim ids."""
    runs = []
    for path in sorted(Path(folder).glob("*/run.json")):
        run = json.loads(path.read_text())
        recorded = json.loads((path.parent / run["claims"]).read_text())
        renamed = run.get("renamed", {})
        run["by_id"] = {renamed.get(c["id"], c["id"]): c for c in recorded["claims"]}
        run["jaxlib"] = recorded["jaxlib"]
        run["folder"], run["path"] = path.parent.name, str(path.parent)
        runs.append(run)
    return runs


def claim_of(verdict: dict) -> Claim:
    """The claim a verdict's data describes (its check left out): enough to judge it again."""
    only_on = verdict.get("only_on")
    expected_on = {k: tuple(v) for k, v in (verdict.get("expected_on") or {}).items()}
    return Claim(
        verdict["id"],
        verdict["section"],
        None,
        Kind(verdict["kind"]),
        only_on=tuple(only_on) if only_on else None,
        expected_on=expected_on,
    )


def status_there(claim: Claim, run: dict, checked: list[str] | None = None) -> dict:
    """`claim` judged as it is now on what `run` recorded (no status if its values changed)."""
    versions = {"jax": run["jax"], "jaxlib": run["jaxlib"], "platform": run["platform"]}
    versions["device"] = run["device"]
    recorded = run["by_id"].get(claim.id)
    if claim.only_on and run["platform"] != claim.only_on[0]:
        verdict = judged(claim, None, versions)
    elif recorded is None:
        return {"status": None, "evidence": "not recorded on this backend"}
    elif recorded["expected"] is None:
        verdict = judged(claim, None, versions, recorded["evidence"])
    else:
        names = checked or list(recorded["expected"])
        if not set(names) <= set(recorded["expected"]):
            return {"status": None, "evidence": recorded["evidence"]}
        expected = {k: recorded["expected"][k] for k in names}
        verdict = judged(claim, Observation(expected, recorded["observed"]), versions)
    return {"status": str(verdict.status), "evidence": verdict.evidence}
