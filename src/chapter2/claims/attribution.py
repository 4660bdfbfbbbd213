"""A failing cell names the claim that explains it: an IPython extension for page kernels.

The build loads it into the kernel of every page (`--ext=chapter2.claims.attribution`) and
names the page in the CHAPTER2_PAGE variable; `%load_ext chapter2.claims.attribution` does the
same in a notebook of your own. When a cell raises, the claims of that page are checked: if
one drifted, the cell's error becomes a `ClaimDrift` that names it (what the book says, what
JAX did), with the original error chained beneath. A cell that fails while every claim holds
keeps its own error: no claim explains it.
"""

import os

from chapter2.claims import ClaimDrift, drift_message, evaluate_all

PAGE_VARIABLE = "CHAPTER2_PAGE"


def explain(page: str, error: BaseException) -> ClaimDrift | None:
    """A ClaimDrift naming the drifted claims of `page`, or None when every claim holds."""
    drifted = [v for v in evaluate_all(page) if v.drifted]
    if not drifted:
        return None
    found = "\n".join(drift_message(v) for v in drifted)
    return ClaimDrift(f"{found}\n  this cell failed with {type(error).__name__}: {error}")


def _show(shell, etype, value, tb, tb_offset=None):
    page = os.environ.get(PAGE_VARIABLE)
    drift = None if page is None or isinstance(value, ClaimDrift) else explain(page, value)
    if drift is None:
        return shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    drift.__cause__ = value
    return shell.showtraceback((ClaimDrift, drift, tb), tb_offset=tb_offset)


def load_ipython_extension(ipython) -> None:
    ipython.set_custom_exc((Exception,), _show)
