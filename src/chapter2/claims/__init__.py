"""Every statement the book makes about JAX, with its check: `chapter2.claims.pages` has a
module per page, imported one at a time so that one failing under some JAX is reported."""

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
    run_check,
)

_LOAD_ERRORS: dict[str, str] = {}


def page_modules() -> list[str]:
    """The claims modules, one per page, by module name."""
    return sorted(m.name for m in pkgutil.iter_modules(pages.__path__))


def claims(page: str | None = None) -> dict[str, Claim]:
    """Every registered claim, importing each page's module once (only `page`'s, if given:
    a failing cell's kernel loads no other page's checks)."""
    names = set(page_modules()) - set(_LOAD_ERRORS)
    for name in sorted(names if page is None else names & {page.replace("-", "_")}):
        try:
            importlib.import_module(f"{pages.__name__}.{name}")
        except Exception as err:
            _LOAD_ERRORS[name] = f"{type(err).__name__}: {err}"
    return REGISTRY


def load_errors() -> dict[str, str]:
    """Claims modules that could not be imported here, with the reason."""
    claims()
    return dict(_LOAD_ERRORS)


def evaluate(claim_id: str) -> Verdict:
    """Run the check of `claim_id` and return its verdict, whatever it is. Every page's checks
    are loaded first unless it is loaded already (a page that loaded its own, `claims(page)`,
    imports no other page's module)."""
    found = REGISTRY if claim_id in REGISTRY else claims()
    if claim_id not in found:
        msg = f"no claim {claim_id!r}; modules that failed to load: {_LOAD_ERRORS}"
        raise KeyError(msg)
    return run_check(found[claim_id])


def show_in_notebook(verdict: Verdict) -> None:
    """Display a verdict in the running notebook, if any."""
    try:
        from IPython import get_ipython  # noqa: PLC0415
        from IPython.display import display  # noqa: PLC0415
    except ImportError:
        return
    if get_ipython() is not None:
        display(verdict)


def verify(claim_id: str) -> Verdict:
    """Run the check of `claim_id`; raise `ClaimDrift` (after showing it) when it drifted."""
    verdict = evaluate(claim_id)
    if verdict.drifted:
        show_in_notebook(verdict)
        raise ClaimDrift([verdict])
    return verdict


def evaluate_all(page: str | None = None) -> list[Verdict]:
    """The verdict of every claim (of one page, if given), page by page."""
    chosen = [c for c in claims(page).values() if page in (None, c.page)]
    return [run_check(c) for c in sorted(chosen, key=lambda c: c.page)]
