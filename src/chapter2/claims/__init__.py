"""The claims registry: every version-sensitive statement of the book, with its check."""

# Importing a section's module registers its claims.
from chapter2.claims import jaxprs, layout, profiling, xla  # noqa: F401
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
