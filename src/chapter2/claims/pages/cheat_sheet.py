"""Claims of the page `cheat-sheet`: every API it lists exists in the installed JAX."""

import jax
import jax.numpy

from chapter2.cheat_sheet import APIS, resolves
from chapter2.claims.registry import Observation, claim, counted
from chapter2.compiles import jax_log_records


@claim("cheat-sheet-apis-exist", rests_on=("closed-jaxpr-merged",))
def _apis_exist() -> Observation:
    names = [name for _, where, _ in APIS for name in where.split()]
    missing = [n for n in names if not resolves(n)]
    lacking = f"missing: {', '.join(missing)}" if missing else "every one found"
    return Observation(
        expected={"missing": []},
        observed={"missing": missing, "names looked up": len(names)},
        said=f"The {counted(len(names), 'name')} that the table's rows use, XLA flags aside, "
        f"looked up in the installed JAX {jax.__version__}: {lacking}.",
    )


def _compile_something_new() -> None:
    jax.jit(lambda v: v * 3 + 1)(jax.numpy.ones(3))


def _compilations_logged(run) -> int:
    """How many compilations JAX logs while `run()` runs."""
    with jax_log_records() as records:
        run()
    return sum(r.getMessage().startswith("Compiling") for r in records)


def _bare_call() -> None:
    jax.log_compiles(True)
    _compile_something_new()


def _with_block() -> None:
    with jax.log_compiles(True):
        _compile_something_new()


def _option_set() -> None:
    jax.config.update("jax_log_compiles", True)
    _compile_something_new()


@claim("log-compiles-context-manager")
def _log_compiles() -> Observation:
    saved = jax.config.jax_log_compiles
    try:
        logged = [_compilations_logged(run) for run in (_bare_call, _with_block, _option_set)]
    finally:
        jax.config.update("jax_log_compiles", saved)
    return Observation(
        expected={"logged after a bare call, in a with block, with the option": [0, 1, 1]},
        observed={"logged after a bare call, in a with block, with the option": logged},
        said="A fresh jitted `v * 3 + 1` each time: after a bare `jax.log_compiles(True)` call, "
        f"JAX logged {counted(logged[0], 'compilation')}; inside `with jax.log_compiles(True)`, "
        f"{counted(logged[1], 'compilation')}; with `jax_log_compiles` set, "
        f"{counted(logged[2], 'compilation')}.",
    )
