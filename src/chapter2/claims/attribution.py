"""A failing cell names the drifted claim that explains it: an IPython extension that the
book's kernel provisioner loads in a page's kernel (docs/_ext/book/kernels.py; CHAPTER2_PAGE
names the page). The cell's error becomes a `ClaimDrift`, the original chained beneath; if
every claim holds, it stays."""

import os

from chapter2.claims import ClaimDrift, evaluate_all, show_in_notebook

PAGE_VARIABLE = "CHAPTER2_PAGE"


def explain(page: str, error: BaseException) -> ClaimDrift | None:
    """A ClaimDrift naming the drifted claims of `page`, or None when every claim holds."""
    drifted = [v for v in evaluate_all(page) if v.drifted]
    if not drifted:
        return None
    for verdict in drifted:
        show_in_notebook(verdict)
    return ClaimDrift(drifted, cell_error=error)


def _show(shell, etype, value, tb, tb_offset=None):
    page = os.environ.get(PAGE_VARIABLE)
    drift = None if page is None or isinstance(value, ClaimDrift) else explain(page, value)
    if drift is None:
        return shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    drift.__cause__ = value
    return shell.showtraceback((ClaimDrift, drift, tb), tb_offset=tb_offset)


def load_ipython_extension(ipython) -> None:
    ipython.set_custom_exc((Exception,), _show)
