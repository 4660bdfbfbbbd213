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
    "verify_each",
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


def _show(verdict: Verdict) -> None:
    """Display a verdict in the running notebook, if any: a drifted one stays on its page (a
    build that lets cells fail shows it in place) while the cell fails."""
    try:
        from IPython import get_ipython  # noqa: PLC0415
        from IPython.display import display  # noqa: PLC0415
    except ImportError:
        return
    if get_ipython() is not None:
        display(verdict)


def verify(claim_id: str) -> Verdict:
    """Run the check of `claim_id`; raise `ClaimDrift` when it drifted (after displaying the
    verdict, in a notebook). A page calls it right after stating the claim."""
    verdict = evaluate(claim_id)
    if verdict.drifted:
        _show(verdict)
        raise ClaimDrift(drift_message(verdict))
    return verdict


def verify_each(claim_ids: list[str], each=None) -> list[Verdict]:
    """Run the check of every claim of `claim_ids`, passing each verdict to `each` (a page's
    glue, say) first; then raise one `ClaimDrift` naming every claim that drifted (a cell that
    checks several claims names them all, not the first alone)."""
    verdicts = [evaluate(claim_id) for claim_id in claim_ids]
    for verdict in verdicts if each else ():
        each(verdict)
    drifted = [drift_message(v) for v in verdicts if v.drifted]
    if drifted:
        raise ClaimDrift("\n".join(drifted))
    return verdicts


def evaluate_all(page: str | None = None) -> list[Verdict]:
    """The verdict of every claim (of one page, if given), page by page."""
    chosen = [c for c in claims().values() if page in (None, c.page)]
    return [run_check(c) for c in sorted(chosen, key=lambda c: c.page)]
