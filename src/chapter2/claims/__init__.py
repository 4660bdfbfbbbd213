"""The claims registry: every version-sensitive statement of the book, with its check."""

from chapter2.claims import profiling  # noqa: F401  (registers the claims of section 2.1)
from chapter2.claims.registry import (
    REGISTRY,
    Claim,
    ClaimDrift,
    Observation,
    Verdict,
    evaluate,
    verify,
)

__all__ = ["REGISTRY", "Claim", "ClaimDrift", "Observation", "Verdict", "evaluate", "verify"]
