"""Links into the references of JAX, NumPy and SciPy: from the committed inventories alone,
on every name of a reader's code that a reference documents, and on the prose's full names."""

import ast
import functools
import json
import posixpath
import re
import subprocess
import sys
import zlib

import inventory  # tools/ is on pytest's pythonpath
import pytest
from book.links import names_its_target
from bs4 import BeautifulSoup
from conftest import DOCS, HTML, ROOT, toctree
from sphinx.util.inventory import InventoryFile

INVENTORIES = ROOT / "data" / "inventories"
READER_PAGES = ["index", *toctree()]
LIBRARIES = ("jax", "numpy", "scipy")

# What the pages' code names that no reference links to, and why.
UNLINKED = {
    "jax.config.update": "JAX's reference documents jax.config, not its methods",
    "jax.config.jax_enable_x64": "an option: JAX lists options on one page, not in its inventory",
    "jax.config.jax_default_device.platform": "an option, read as an attribute of jax.config",
    "jax.explain_cache_misses": "an option's context manager, absent from JAX's reference",
    "jax.experimental.layout.Format": "jax.experimental.layout has no page in JAX's reference",
    "jax.experimental.layout.Layout.AUTO": "jax.experimental.layout has no page in JAX's reference",
    "jax.numpy.pi": "JAX's reference lists no constants of jax.numpy",
    "jax.numpy.inf": "JAX's reference lists no constants of jax.numpy",
    "numpy.int32": "NumPy documents its sized integer types on one page, not each as an object",
    "jax.profiler.ProfileData.from_file": "JAX's reference does not document ProfileData",
    "jax.profiler.ProfileOptions": "absent from the inventory made from JAX's main branch",
    "jax.ad_checkpoint.print_saved_residuals": (
        "JAX's reference does not document it; its gradient checkpointing page calls it"
    ),
    "jax.numpy.bfloat16": "JAX's reference documents the type as jax.dtypes.bfloat16 alone",
    "jax.checkpoint_policies.dots_with_no_batch_dims_saveable": (
        "jax.checkpoint_policies is a namespace object, not a module: sphinx-codeautolink does "
        "not follow a name through it, though the reference documents the policy"
    ),
    "numpy.abs": "NumPy documents the function as numpy.absolute, abs being its alias",
    "jax.extend.core.ClosedJaxpr": (
        "in this JAX the same class as jax.extend.core.Jaxpr, whose page its code link would open"
    ),
}


def addresses(domain: str) -> dict[str, str]:
    """Every name of a domain (`py`: objects, `std`: pages) in the committed inventories, and
    its address, as intersphinx reads them."""
    found = {}
    for source in sorted(INVENTORIES.glob("*.json")):
        base = json.loads(source.read_text())["addresses"]
        with source.with_suffix(".inv").open("rb") as stream:
            inventory = InventoryFile.load(stream, base, posixpath.join)
        for kind, items in inventory.items():
            if kind.startswith(f"{domain}:"):
                found |= {name: item.uri for name, item in items.items()}
    return found


ADDRESSES = addresses("py")


@functools.cache
def page_html(page: str) -> BeautifulSoup:
    """A built page, parsed once per process (read only)."""
    return BeautifulSoup((HTML / f"{page}.html").read_text(), "html.parser")


def imported_names(tree: ast.AST) -> dict[str, str]:
    """The names a cell's imports of the three libraries bind, with what they stand for."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in LIBRARIES:
                    top = alias.name.split(".")[0]
                    bound[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in LIBRARIES:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def dotted_names(tree: ast.AST, bound: dict[str, str]) -> set[str]:
    """The full names of the libraries that the code reaches through its imports (the
    longest chain of attributes, as `jnp.linalg.norm` stands for jax.numpy.linalg.norm)."""
    chains = set()
    for node in ast.walk(tree):
        parts, root = [], node
        while isinstance(root, ast.Attribute):
            parts.append(root.attr)
            root = root.value
        if isinstance(root, ast.Name) and root.id in bound:
            chains.add(".".join([bound[root.id], *reversed(parts)]))
    return {c for c in chains if not any(o.startswith(f"{c}.") for o in chains)}


@functools.cache
def code_of(page: str) -> list[ast.Module]:
    """The page's visible code cells, parsed, as the reader sees them."""
    return [ast.parse(pre.get_text()) for pre in page_html(page).select("div.cell_input pre")]


def names_in_code(page: str) -> set[str]:
    bound, names = {}, set()
    for tree in code_of(page):
        bound |= imported_names(tree)
        names |= dotted_names(tree, bound)
    return names


def test_a_cells_code_reaches_the_libraries_through_imports_a_reader_sees():
    """sphinx-codeautolink follows the imports it sees: none may hide in a removed cell."""
    usual = {"jax", "jnp", "lax", "np", "numpy", "scipy"}
    hidden = {}
    for page in READER_PAGES:
        bound, used = {}, set()
        for tree in code_of(page):
            bound |= imported_names(tree)
            used |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in usual}
        if used - set(bound):
            hidden[page] = sorted(used - set(bound))
    assert hidden == {}


@pytest.mark.parametrize("page", READER_PAGES)
def test_every_name_of_a_readers_code_that_a_reference_documents_links_to_it(page):
    links = {a["href"] for a in page_html(page).select("div.cell_input a[href]")}
    documented = {n for n in names_in_code(page) if n in ADDRESSES and n not in UNLINKED}
    assert {name: ADDRESSES[name] for name in documented if ADDRESSES[name] not in links} == {}


def test_the_names_left_unlinked_are_listed_with_their_reasons():
    named = {n for page in READER_PAGES for n in names_in_code(page)}
    unlinked = {n for n in named if n not in ADDRESSES or n in UNLINKED}
    assert sorted(unlinked) == sorted(UNLINKED)


@pytest.mark.parametrize("page", READER_PAGES)
def test_a_link_in_code_names_what_it_opens(page):
    """No variable links to the type of its value, no alias to another name's page."""
    links = page_html(page).select("div.cell_input a[href]")
    wrong = {
        a.get_text(): a["href"]
        for a in links
        if not names_its_target(a["href"], a.decode_contents())
    }
    assert wrong == {}


def test_every_link_into_a_reference_is_one_its_inventory_holds():
    bases = [json.loads(p.read_text())["addresses"] for p in INVENTORIES.glob("*.json")]
    known = {*ADDRESSES.values(), *addresses("std").values()}
    stray = {}
    for path in sorted(HTML.glob("*.html")):
        hrefs = {a["href"] for a in BeautifulSoup(path.read_text(), "html.parser").find_all("a")}
        found = [h for h in hrefs if h.startswith(tuple(bases)) and h not in known]
        if found:
            stray[path.name] = sorted(found)
    assert stray == {}


CODE_SPAN = re.compile(r"(?<![`}\w])`(?P<code>[^`\n]+)`(?!`)")
A_CALL = re.compile(r"(?P<name>[\w.]+)(?P<call>\((?:[^()]|\([^()]*\))*\))?")  # f(...), no more
ANOTHER_NAME = re.compile(r"\b(jax|jnp|lax|np|numpy|scipy)\.|\w\(")  # a name or call inside


def plain_names_in_prose(markdown: str) -> list[str]:
    """The inline code of the prose (outside code cells, fences and headings) that is a
    documented full name, or one call of it that names nothing else, written as plain code
    instead of a role (a link on a whole call would open one name for all it names)."""
    prose = re.sub(r"^```.*?^```[ \t]*$", "", markdown, flags=re.S | re.M)
    prose = re.sub(r"^#.*$", "", prose, flags=re.M)
    found = []
    for span in CODE_SPAN.finditer(prose):
        call = A_CALL.fullmatch(span["code"])
        if not call or ANOTHER_NAME.search(call["call"] or ""):
            continue
        if call["name"] in ADDRESSES and call["name"].split(".")[0] in LIBRARIES:
            found.append(span["code"])
    return found


def test_the_prose_names_documented_objects_through_roles():
    """A full name in the prose's code is a role ({py:obj}`jax.jit`) that intersphinx links."""
    plain = {p: plain_names_in_prose((DOCS / f"{p}.md").read_text()) for p in READER_PAGES}
    assert {page: names for page, names in plain.items() if names} == {}


def test_plain_code_in_prose_is_found_and_roles_are_not():
    markdown = (
        "## Heading with `jax.jit`\n\n"
        "Call `jax.jit(f)` or `jax.block_until_ready`; {py:obj}`jax.jit` is linked, and\n"
        "`jax.jit(f).lower(x)`, `jax.jit(lambda x: jnp.sum(x))`, `jax.jit(partial(f))`,\n"
        "`jnp.sum`, `jax.no_such_name`\n"
        "stay plain.\n\n```{code-cell} ipython3\nx = `jax.jit`\n```\n"
    )
    assert plain_names_in_prose(markdown) == ["jax.jit(f)", "jax.block_until_ready"]


def test_the_build_reads_committed_inventories_and_no_network():
    read = "import json, runpy, sys; print(json.dumps(runpy.run_path(sys.argv[1])[sys.argv[2]]))"
    conf = [sys.executable, "-c", read, str(DOCS / "conf.py"), "intersphinx_mapping"]
    # conf.py sets environment variables for the build: read it in a process of its own
    mapping = json.loads(subprocess.run(conf, capture_output=True, check=True).stdout)
    assert set(mapping) == set(LIBRARIES)
    for address, path in mapping.values():
        assert address.startswith("https://")
        assert (ROOT / path).is_file()
        assert (ROOT / path).is_relative_to(INVENTORIES)


def test_one_command_fetches_an_inventory_and_where_its_classes_are_defined(tmp_path):
    lines = [
        "jax.jit py:function 1 _autosummary/jax.jit.html#$ -",
        "chapter2.claims.Kind py:class 1 api.html#$ -",  # defined in chapter2.records
        "chapter2.records.Status py:class 1 api.html#$ -",  # where it is defined
        "jax.NoSuchClass py:class 1 api.html#$ -",  # documented, not in the installed release
        "profiling std:doc -1 profiling.html Profiling",
    ]
    published = tmp_path / "objects.inv"
    published.write_bytes(
        b"# Sphinx inventory version 2\n# Project: JAX\n# Version: \n"
        b"# The remainder of this file is compressed using zlib.\n"
        + zlib.compress("".join(f"{line}\n" for line in lines).encode())
    )
    out = tmp_path / "inventories"
    assert inventory.main(["jax", "--url", published.as_uri(), "--out", str(out)]) == 0
    assert (out / "jax.inv").read_bytes() == published.read_bytes()
    source = json.loads((out / "jax.json").read_text())
    assert source["addresses"] == "https://docs.jax.dev/en/latest/"
    assert source["defined_in"] == {"chapter2.records.Kind": "chapter2.claims.Kind"}
    with (out / "jax.inv").open("rb") as stream:
        read = InventoryFile.load(stream, source["addresses"], posixpath.join)
    assert read["std:doc"]["profiling"].uri == "https://docs.jax.dev/en/latest/profiling.html"
