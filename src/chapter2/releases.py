"""The JAX releases the book knows: the one it is written against, and their order.

Nothing here imports JAX, so the noxfile and the Sphinx layer read it too.
"""

import tomllib
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"  # in a source tree


def baseline_jax(pyproject: Path = PYPROJECT) -> str:
    """The JAX release the book is written against: the pin of the package's `baseline` extra,
    from the source tree's pyproject.toml or, in an installed wheel, from its metadata."""
    if pyproject.exists():
        pins = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
        pins = [Requirement(pin) for pin in pins["baseline"]]
    else:
        try:
            pins = [Requirement(r) for r in requires("chapter2") or []]
        except PackageNotFoundError:
            pins = []
        pins = [p for p in pins if p.marker and p.marker.evaluate({"extra": "baseline"})]
    for pin in pins:
        if pin.name == "jax" and len(pin.specifier) == 1:
            (exact,) = pin.specifier
            if exact.operator == "==":
                return exact.version
    msg = "the chapter2 package declares no baseline jax== pin"
    raise LookupError(msg)


def release_key(version: str) -> Version:
    """A JAX version as a sort key: 0.4.38 before 0.10.2."""
    return Version(version)
