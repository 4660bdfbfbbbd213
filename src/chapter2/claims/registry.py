"""The registry of version-sensitive claims: what the book says JAX does, each with a check.

A check returns an `Observation` of what the installed JAX really did. `verify(id)` runs one
and raises `ClaimDrift` when the book's statement no longer holds. Claims about the machine
rather than JAX (`kind="observed"`) are reported, never asserted.
"""

import html
from collections.abc import Callable
from dataclasses import dataclass

import jax


@dataclass(frozen=True)
class Observation:
    holds: bool
    observed: str


@dataclass(frozen=True)
class Claim:
    id: str
    section: str
    label: str
    statement: str
    check: Callable[[], Observation]
    kind: str = "asserted"


@dataclass(frozen=True)
class Verdict:
    """A claim with the observation its check made; shows itself as a one-line evidence box."""

    claim: Claim
    observation: Observation

    @property
    def holds(self) -> bool:
        return self.observation.holds

    def __str__(self) -> str:
        if self.claim.kind == "observed":
            mark = "observed on this machine"
        else:
            mark = "holds" if self.holds else "DRIFTED"
        return f"[{self.claim.id}] {mark} on JAX {jax.__version__}: {self.observation.observed}"

    def _repr_html_(self) -> str:
        if self.claim.kind == "observed":
            colour = "#1565c0"
        else:
            colour = "#2e7d32" if self.holds else "#c62828"
        style = f"border-left: 4px solid {colour}; padding: 0.3em 0.8em"
        return (
            f'<p class="claim-verdict" style="{style}"><strong>Checked</strong> '
            f"{html.escape(str(self))}</p>"
        )

    __repr__ = __str__


class ClaimDrift(AssertionError):
    """The installed JAX no longer does what the book says."""


REGISTRY: dict[str, Claim] = {}


def claim(id: str, section: str, label: str, statement: str, kind: str = "asserted"):
    """Register the decorated zero-argument check as claim `id`."""

    def register(check: Callable[[], Observation]) -> Callable[[], Observation]:
        if id in REGISTRY:
            raise ValueError(f"claim {id!r} is registered twice")
        REGISTRY[id] = Claim(id, section, label, statement, check, kind)
        return check

    return register


def evaluate(claim_id: str) -> Verdict:
    """Run the check of `claim_id` and return the verdict, whatever it is."""
    entry = REGISTRY[claim_id]
    return Verdict(entry, entry.check())


def verify(claim_id: str) -> Verdict:
    """Run the check of `claim_id`; raise `ClaimDrift` if an asserted claim does not hold."""
    verdict = evaluate(claim_id)
    if verdict.claim.kind == "asserted" and not verdict.holds:
        raise ClaimDrift(
            f"claim {claim_id!r} (section {verdict.claim.section}) drifted on JAX "
            f"{jax.__version__}.\n  the book says: {verdict.claim.statement}\n"
            f"  JAX did:       {verdict.observation.observed}"
        )
    return verdict
