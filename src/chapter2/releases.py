"""The JAX releases the book knows: the one it is written against, and their order.

Nothing here imports JAX, so the noxfile and the Sphinx layer read it too.
"""

import re
import tomllib
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path

PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"  # in a source tree


def baseline_jax(pyproject: Path = PYPROJECT) -> str:
    """The JAX release the book is written against: the pin of the package's `baseline` extra,
    from the source tree's pyproject.toml or, in an installed wheel, from its metadata."""
    if pyproject.exists():
        pins = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
        pins = pins["baseline"]
    else:
        try:
            pins = [r for r in requires("chapter2") or [] if re.search(r"extra == .baseline.", r)]
        except PackageNotFoundError:
            pins = []
    for pin in pins:
        found = re.match(r"jax==([\w.]+)", pin)
        if found:
            return found.group(1)
    msg = "the chapter2 package declares no baseline jax== pin"
    raise LookupError(msg)


def release_key(version: str) -> tuple[int, ...]:
    """A JAX version as a sort key: 0.4.38 before 0.10.2."""
    return tuple(int(part) for part in version.split("."))
