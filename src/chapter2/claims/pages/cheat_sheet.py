"""Claims of the page `cheat-sheet`: every API it lists exists in the installed JAX."""

import jax
import jax.numpy

from chapter2.cheat_sheet import APIS, resolves
from chapter2.claims.registry import Observation, claim, counted
from chapter2.compiles import jax_log_records


@claim(
    "cheat-sheet-apis-exist",
    rests_on=("closed-jaxpr-merged",),
    checks="That each name the table's rows use, XLA flags aside, is found in the installed "
    "JAX: a function, class, method or attribute where the row puts it, a configuration "
    "option among `jax.config`'s.",
)
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


def _compilations_logged(run) -> int | None:
    """How many compilations JAX logs while `run()` runs (None: a `with` it used could not
    take what `jax.log_compiles` returned)."""
    with jax_log_records() as records:
        try:
            run()
        except TypeError:  # "... does not support the context manager protocol"
            return None
    return sum(r.getMessage().startswith("Compiling") for r in records)


def _logged(n: int | None) -> str:
    return "nothing, the `with` raising TypeError" if n is None else counted(n, "compilation")


def _bare_call() -> None:
    jax.log_compiles(True)
    _compile_something_new()


def _with_block() -> None:
    with jax.log_compiles(True):
        _compile_something_new()


def _after_the_block() -> None:
    with jax.log_compiles(True):
        pass
    _compile_something_new()


def _option_set() -> None:
    jax.config.update("jax_log_compiles", True)
    _compile_something_new()


@claim(
    "log-compiles-context-manager",
    checks="That `jax.log_compiles(True)` returns a context manager; that a new compilation "
    "is logged inside `with jax.log_compiles(True):` and with `jax_log_compiles` set, and not "
    "after a bare call or after the `with` block.",
)
def _log_compiles() -> Observation:
    saved = jax.config.jax_log_compiles
    returned = jax.log_compiles(True)
    manager = hasattr(returned, "__enter__") and hasattr(returned, "__exit__")
    try:
        runs = (_bare_call, _with_block, _after_the_block, _option_set)
        logged = [_compilations_logged(run) for run in runs]
    finally:
        jax.config.update("jax_log_compiles", saved)
    return Observation(
        expected={
            "a bare call returns a context manager": True,
            "logged after a bare call, in a with block, with the option": [0, 1, 1],
            "logged after the with block": 0,
        },
        observed={
            "a bare call returns a context manager": manager,
            "logged after a bare call, in a with block, with the option": [
                logged[0],
                logged[1],
                logged[3],
            ],
            "logged after the with block": logged[2],
        },
        said=f"`jax.log_compiles(True)` returned {'a' if manager else 'no'} context manager. A "
        "fresh jitted `v * 3 + 1` each time: after a bare call, JAX logged "
        f"{counted(logged[0], 'compilation')}; inside `with jax.log_compiles(True)`, "
        f"{counted(logged[1], 'compilation')}; after that block, "
        f"{counted(logged[2], 'compilation')}; with `jax_log_compiles` set, "
        f"{counted(logged[3], 'compilation')}.",
    )
