"""The backends a claim is asserted on, and each claim judged again, as it is now, on what a
run recorded on another backend (`chapter2.runs`), with the cause of any difference."""

from dataclasses import dataclass, replace
from enum import StrEnum

from chapter2.claims.registry import Claim, Observation, Verdict, judged
from chapter2.records import Status, VerdictRecord, Versions
from chapter2.runs import RecordedRun

YNN = ("cpu", "YNNPACK is a CPU library that only XLA's CPU backend calls")
HOST_MEMORY = (
    "cpu",
    "an accelerator's device_put copies the array into the device's own memory, whatever "
    "its layout",
)
CPU_COMPILER_TEXT = ("cpu", "the check reads what XLA's CPU compiler prints")
CPU_THREADS = ("cpu", "the threads are those of XLA's CPU client")
CPU_BACKEND = ("cpu", "it is about the CPU backend itself")


class Cause(StrEnum):
    """Why a claim reads otherwise on a recorded run than in this build."""

    DEVICE = "the device"  # the same JAX on the run's own CPU did as this build did
    RELEASE = "the release"  # the same JAX on the run's own CPU did as the device did
    CPU_ONLY = "a fact of the CPU"  # not checked there


@dataclass(frozen=True)
class There:
    """A claim judged on a recorded run: its status (None: not judged, the run recorded no
    such values), the evidence in words, and, where it reads otherwise than in this build,
    the cause and the reason."""

    status: Status | None
    evidence: str
    cause: Cause | None = None
    reason: str = ""
    partial: bool = False  # judged on the values an earlier form of its check recorded
    # It holds there only by the device's own expectation, whose values differ from what the
    # statement says (what the same check expected of the CPU beside it): the device did
    # otherwise, in the way the book says of it.
    otherwise: bool = False
    found: str = ""  # the evidence without the note of whose values it expected

    @classmethod
    def of(cls, verdict: Verdict) -> "There":
        return cls(verdict.status, verdict.evidence, found=verdict.found)


def _alike(control: VerdictRecord | None, device: VerdictRecord | None) -> bool:
    """Whether the CPU beside the device got the same values where the book's differ."""
    if not control or not device or control.observed is None or device.observed is None:
        return True  # nothing to tell them apart by: the same status says it
    names = [k for k, v in (device.expected or {}).items() if device.observed.get(k) != v]
    return all(control.observed.get(k) == device.observed.get(k) for k in names)


def _otherwise(claim: Claim, run: RecordedRun) -> bool:
    """Whether the device's own expectation of `claim` differs from what its check expected
    of the CPU beside it, the statement's values (False where that CPU did not check it)."""
    control = run.host_verdicts.get(claim.id)
    if not control or not control.expected:
        return False
    own = claim.expected_on[run.platform][0]
    return any(control.expected.get(k, v) != v for k, v in own.items())


def claim_of(verdict: VerdictRecord) -> Claim:
    """The claim a verdict's data describes (its check left out): enough to judge it again."""
    return Claim(
        verdict.id,
        verdict.page,
        None,
        verdict.kind,
        only_on=tuple(verdict.only_on) if verdict.only_on else None,
        expected_on={k: tuple(v) for k, v in verdict.expected_on.items()},
    )


def host_status(claim: Claim, run: RecordedRun, checked=None) -> Status | None:
    """The claim as the run's host CPU gave it, under the same JAX (the control beside the
    device), judged as `status_there` judges the device's; None where it has no verdict."""
    control = _judged(claim, run.host_verdicts.get(claim.id), run, "cpu", checked)
    return None if control is None else Status(control.status)


def _judged(
    claim: Claim, recorded: VerdictRecord | None, run: RecordedRun, platform: str, checked
) -> There | None:
    """`claim` judged on one recorded verdict, on `platform`, on the values the run recorded
    of those its check reads now (`checked`); None where it cannot be."""
    versions = Versions(run.jax, run.jaxlib, platform, run.device)
    if claim.only_on and platform != claim.only_on[0]:
        return There.of(judged(claim, None, versions))
    if recorded is None:
        return None
    if recorded.expected is None:  # the check could not run there: its own words
        if recorded.status is Status.CANNOT_CHECK:
            return There(Status.CANNOT_CHECK, recorded.evidence, found=recorded.evidence)
        return There.of(judged(claim, None, versions, recorded.evidence))
    statement = recorded.expected
    if recorded.expected_on.get(platform) and platform not in claim.expected_on:
        # Its values there were the device's own expectation, which the book no longer says:
        # the statement's are those the same check expected of the CPU beside it.
        control = run.host_verdicts.get(claim.id)
        if not control or control.expected is None:
            return None
        statement = control.expected
    names = [k for k in checked or statement if k in statement]
    if not names:
        return None
    expected = {k: statement[k] for k in names}
    return There.of(judged(claim, Observation(expected, recorded.observed), versions))


def _partial(recorded: VerdictRecord | None, checked: list[str] | None, source: str | None) -> bool:
    """Whether the run recorded the values of an earlier form of the check: the check reads
    values the run did not record, or its code (`source`, as this build ran it) differs from
    the code the run recorded."""
    if not recorded:
        return False
    if source is not None and (recorded.check_source or source) != source:
        return True
    if recorded.expected is None or not checked:
        return False
    return not set(checked) <= set(recorded.expected)


def status_there(
    claim: Claim, run: RecordedRun, checked: list[str] | None = None, source: str | None = None
) -> There:
    """`claim` judged as it is now on what `run` recorded (no status if its values changed
    since: `checked`, the names its check reads now; `source`, its check's code now)."""
    recorded = run.verdicts.get(claim.id)
    there = _judged(claim, recorded, run, run.platform, checked)
    if there is None:
        evidence = recorded.evidence if recorded else "not recorded on this backend"
        return There(None, evidence, found=evidence)
    return replace(there, partial=_partial(recorded, checked, source))


def cause_there(
    claim: Claim,
    run: RecordedRun,
    here: Status,
    checked: list[str] | None = None,
    source: str | None = None,
) -> There:
    """`status_there`, with why it reads otherwise than `here` (this build's status) or
    holds only by the device's own expectation: a fact of the CPU; the device (its
    expectation's reason, or the same JAX on the run's own CPU agreeing with this build); or
    the release (that CPU doing as the device did)."""
    there = status_there(claim, run, checked, source)
    if there.status is None:
        return there
    if claim.only_on and run.platform != claim.only_on[0]:
        return replace(there, cause=Cause.CPU_ONLY, reason=claim.only_on[1])
    own = claim.expected_on.get(run.platform)
    if there.status == here and own is None:
        return there
    if there.status == Status.HOLDS and own is not None:
        otherwise = _otherwise(claim, run)
        return replace(there, cause=Cause.DEVICE, reason=own[1], otherwise=otherwise)
    if there.status == Status.CANNOT_CHECK:  # its check said why it could not run there
        return replace(there, cause=Cause.DEVICE, reason=there.evidence)
    control = _judged(claim, run.host_verdicts.get(claim.id), run, "cpu", checked)
    if (
        control is not None
        and control.status == there.status
        and _alike(run.host_verdicts.get(claim.id), run.verdicts.get(claim.id))
    ):
        reason = f"JAX {run.jax} on that machine's CPU did the same"
        return replace(there, cause=Cause.RELEASE, reason=reason)
    if control is not None:
        reason = f"on that machine's CPU, JAX {run.jax} {control.status.did}"
        if control.status == there.status:
            reason += ", with other values"
        return replace(there, cause=Cause.DEVICE, reason=reason)
    return replace(there, cause=Cause.DEVICE, reason="no CPU run beside it")
