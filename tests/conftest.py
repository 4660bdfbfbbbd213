"""What the tests share: where the book lives, where it was built, and its pages in order."""

import os
import re
from pathlib import Path

from chapter2.fresh import jax_settings

# The tests hold the book to JAX's defaults, as its build does (book.defaults): JAX reads its
# configuration variables when it is imported, so they go first.
for _name in jax_settings(os.environ):
    del os.environ[_name]

import jax  # noqa: E402
import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# The built book: `nox -s docs` builds into BOOK_BUILD_DIR when set (see noxfile.py).
HTML = Path(os.environ.get("BOOK_BUILD_DIR", DOCS / "_build")) / "html"
PAGES = sorted(p.stem for p in DOCS.glob("*.md"))
NOTEBOOK_PAGES = [p for p in PAGES if "```{code-cell}" in (DOCS / f"{p}.md").read_text()]


def toctree(name: str | None = None) -> list[str]:
    """The entries of index.md's toctrees, in order; of the one captioned `name` if given."""
    found = []
    for block in re.findall(r"```\{toctree\}\n(.*?)```", (DOCS / "index.md").read_text(), re.S):
        options = dict(re.findall(r"^:(\w+):\s*(.*)$", block, re.M))
        if name is None or options.get("caption") == name:
            found += [line for line in block.splitlines() if line and not line.startswith(":")]
    return found


READING_ORDER = ["index", *toctree()]
CHAPTER = toctree("The chapter")


@pytest.fixture(autouse=True, scope="session")
def _backends_created_first():
    """JAX creates its backends once per process and reads some options only then
    (jax_cpu_enable_async_dispatch): create them before any test changes one, or a breaker
    that turns async dispatch off would leave its whole worker synchronous."""
    jax.devices()


@pytest.fixture(scope="session")
def served():
    """The built book served over HTTP, as a reader's browser or pip reaches it."""
    from helpers import serving

    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book in {HTML}: run `nox -s docs` first")
    with serving(HTML) as url:
        yield url


def pytest_collection_modifyitems(items):
    """The modules of throwaway builds run first, each whole. A worker takes over only tests
    not yet started: a long build left for last kept one core busy while the other idled."""
    items.sort(key=lambda item: item.getparent(pytest.Module).get_closest_marker("slow") is None)
