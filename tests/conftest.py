"""What the tests share: where the book lives, where it was built, and its pages in order."""

import os
from pathlib import Path

from docutils.parsers.rst import Directive
from markdown_it.token import Token
from myst_parser.config.main import MdParserConfig
from myst_parser.mdit_to_docutils.base import DocutilsRenderer
from myst_parser.parsers.directives import DirectiveParsingResult, parse_directive_text
from myst_parser.parsers.mdit import create_md_parser
from sphinx.directives.other import TocTree

from chapter2.fresh import jax_settings

# The tests hold the book to JAX's defaults, as its build does (book.kernels): JAX reads its
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


def myst_tokens(text: str) -> list[Token]:
    """A Markdown page as myst-parser tokenizes it, with the fences and math docs/conf.py
    enables (``` and :::, $...$): a directive is a fence, a role (`{download}`) an inline
    token's child."""
    config = MdParserConfig(enable_extensions={"colon_fence", "dollarmath"})
    return create_md_parser(config, DocutilsRenderer).parse(text)


def directives(text: str, name: str, directive: type[Directive]) -> list[DirectiveParsingResult]:
    """Each `{name}` directive of a Markdown page, its arguments, options and body parsed by
    myst-parser's directive parser against the `directive` class that the build runs."""
    return [
        parse_directive_text(
            directive, token.info.removeprefix(f"{{{name}}}").strip(), token.content
        )
        for token in myst_tokens(text)
        if token.type in ("fence", "colon_fence") and token.info.split()[:1] == [f"{{{name}}}"]
    ]


def toctrees() -> list[tuple[str | None, list[str]]]:
    """index.md's toctrees in order, each (its caption or None, its entries)."""
    return [
        (parsed.options.get("caption"), [line for line in parsed.body if line.strip()])
        for parsed in directives((DOCS / "index.md").read_text(), "toctree", TocTree)
    ]


def toctree(name: str | None = None) -> list[str]:
    """The entries of index.md's toctrees, in order; of the one captioned `name` if given."""
    found = []
    for caption, entries in toctrees():
        if name is None or caption == name:
            found += entries
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
