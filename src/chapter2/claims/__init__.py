"""The claims registry: every statement the book makes about JAX, with its check.

Each page with claims has a module in `chapter2.claims.pages` named after it
(`xla_compilation` for the page `xla-compilation`). They are found and imported on first
use, one at a time, so a module that cannot be imported under some JAX is reported and the
others still load.
"""

import importlib
import pkgutil

from chapter2.claims import pages
from chapter2.claims.registry import (
    REGISTRY,
    CannotCheck,
    Claim,
    ClaimDrift,
    Kind,
    Observation,
    Status,
    Verdict,
    claim,
    drift_message,
    run_check,
)

__all__ = [
    "CannotCheck",
    "Claim",
    "ClaimDrift",
    "Kind",
    "Observation",
    "Status",
    "Verdict",
    "claim",
    "claims",
    "evaluate",
    "evaluate_all",
    "load_errors",
    "verify",
]

_LOAD_ERRORS: dict[str, str] = {}


def section_modules() -> list[str]:
    """The claims modules, one per page, by module name."""
    return sorted(m.name for m in pkgutil.iter_modules(pages.__path__))


def claims() -> dict[str, Claim]:
    """Every registered claim, importing each page's module once."""
    for name in section_modules():
        module = f"{pages.__name__}.{name}"
        if name in _LOAD_ERRORS:
            continue
        try:
            importlib.import_module(module)
        except Exception as err:
            _LOAD_ERRORS[name] = f"{type(err).__name__}: {err}"
    return REGISTRY


def load_errors() -> dict[str, str]:
    """Claims modules that could not be imported here, with the reason."""
    claims()
    return dict(_LOAD_ERRORS)


def evaluate(claim_id: str) -> Verdict:
    """Run the check of `claim_id` and return its verdict, whatever it is."""
    found = claims()
    if claim_id not in found:
        msg = f"no claim {claim_id!r}; modules that failed to load: {_LOAD_ERRORS}"
        raise KeyError(msg)
    return run_check(found[claim_id])


def verify(claim_id: str) -> Verdict:
    """Run the check of `claim_id`; raise `ClaimDrift` when it drifted. A page calls it right
    after stating the claim."""
    verdict = evaluate(claim_id)
    if verdict.drifted:
        raise ClaimDrift(drift_message(verdict))
    return verdict


def evaluate_all(page: str | None = None) -> list[Verdict]:
    """The verdict of every claim (of one page, if given), page by page."""
    chosen = [c for c in claims().values() if page in (None, c.page)]
    return [run_check(c) for c in sorted(chosen, key=lambda c: c.page)]
