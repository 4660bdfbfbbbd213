"""What the programs in examples/ share: naming a function on the command line, building
its arguments from Python expressions, and failing with one clear line instead of a
traceback."""

import argparse
import pkgutil
import sys
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np


class UsageError(Exception):
    """Bad input on the command line: reported in one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, whose errors are one line (no usage block) with exit status 2."""

    def error(self, message: str):
        raise UsageError(message)


def load_function(spec: str) -> Callable:
    """The function named by `module:function`, the module importable from the current
    folder (as `python -m` finds it; a script's own folder is what Python adds)."""
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        msg = f"expected MODULE:FUNCTION, got {spec!r}"
        raise UsageError(msg)
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        found = pkgutil.resolve_name(spec)
    except ImportError as err:
        msg = f"cannot import module {module_name!r}: {err}"
        raise UsageError(msg) from err
    except AttributeError:
        found = None
    if not callable(found):
        msg = f"module {module_name!r} has no function {name!r}"
        raise UsageError(msg)
    return found


def arguments(expression: str) -> tuple:
    """The arguments an expression such as `jnp.ones((3, 4)), 2.0` stands for, evaluated with
    jax, jnp and np in scope; a single value is one argument."""
    try:
        value = eval(expression, {"jax": jax, "jnp": jnp, "np": np})
    except Exception as err:
        msg = f"cannot evaluate the arguments {expression!r}: {type(err).__name__}: {err}"
        raise UsageError(msg) from err
    return value if isinstance(value, tuple) else (value,)


def lowered(target: str, args: tuple):
    """`MODULE:FUNCTION` jitted and lowered for `args`, or a one-line error saying why not."""
    function = load_function(target)
    try:
        return jax.jit(function).lower(*args)
    except Exception as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        msg = f"cannot jit {target} for these arguments: {type(err).__name__}: {first}"
        raise UsageError(msg) from err


def positive(text: str) -> int:
    """An argparse type: a positive integer, or a one-line error."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        msg = f"a size must be a positive integer, got {text!r}"
        raise UsageError(msg)
    return value


def run(main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> int:
    """Run a program's `main`, turning a UsageError into one line on stderr and status 2."""
    try:
        return main(argv)
    except UsageError as err:
        sys.stderr.write(f"error: {err}\n")
        return 2
