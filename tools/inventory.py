"""Make the inventory of a library's API reference that the book's intersphinx reads offline.

    python tools/inventory.py jax CLONE      # a clone of github.com/jax-ml/jax (main)
    python tools/inventory.py numpy CLONE    # github.com/numpy/numpy at the installed release
    python tools/inventory.py scipy CLONE    # github.com/scipy/scipy at the installed release

The reference's pages say what they document with Sphinx directives: `autosummary` with a
`:toctree:` (a page per name), `automodule`, `autoclass` with `:members:`, `autofunction`
and `data`. Each documented name goes in with its page; the installed library says what kind
of object it is. Each page of the documentation goes in too, under its title, so that a
book's page can link a guide (`<inv:jax:std:doc#profiling>`) and the build fails if the guide
is gone. Written to data/inventories/NAME.inv, a Sphinx inventory of version 2 (version 1
holds no pages; `python -m sphinx.ext.intersphinx data/inventories/NAME.inv` prints it as
text, to compare two), and NAME.json: where the names came from, the published reference
their addresses point into (SOURCES), and where the installed library defines the classes it
documents under other names.
"""

import argparse
import importlib.metadata
import inspect
import itertools
import json
import pkgutil
import re
import subprocess
import sys
import tomllib
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "inventories"
# JAX publishes one reference, built from main (jax-ml/jax#22709); NumPy one per minor
# release, SciPy one per release.
SOURCES = {
    "jax": {
        "project": "JAX",
        "repository": "https://github.com/jax-ml/jax",
        "pages": "docs",
        "addresses": "https://docs.jax.dev/en/latest/",
        "version": "",  # a link's title then says "(in JAX)"
    },
    "scipy": {
        "project": "SciPy",
        "repository": "https://github.com/scipy/scipy",
        "pages": "doc/source",
        "addresses": "https://docs.scipy.org/doc/scipy-{version}/",
        "version": "{version}",
    },
    "numpy": {
        "project": "NumPy",
        "repository": "https://github.com/numpy/numpy",
        "pages": "doc/source",
        "addresses": "https://numpy.org/doc/{minor}/",
        "version": "{minor}",
    },
}
DIRECTIVE = re.compile(r"^(?P<indent>\s*)\.\. (?P<name>[\w:-]+)::\s*(?P<argument>.*)$")
OPTION = re.compile(r"^\s*:(?P<name>[\w-]+):\s*(?P<value>.*)$")
MODULE_SETTERS = {"currentmodule", "module", "automodule", "py:currentmodule", "py:module"}


def directives(text: str) -> list[dict]:
    """Each directive of a page: its name, argument, options and content lines, in order."""
    lines, found, index = text.splitlines(), [], 0
    while index < len(lines):
        match = DIRECTIVE.match(lines[index])
        index += 1
        if not match:
            continue
        indent, options, content = len(match["indent"]), {}, []
        while index < len(lines):
            line = lines[index]
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            option = OPTION.match(line)
            if option and not content:
                options[option["name"]] = option["value"].strip()
            elif line.strip() and not DIRECTIVE.match(line):
                content.append(line.strip())
            elif DIRECTIVE.match(line):
                break  # a nested directive is read as a directive of its own
            index += 1
        argument = match["argument"].strip()
        found.append(
            {"name": match["name"], "argument": argument, "options": options, "content": content}
        )
    return found


def resolved(name: str):
    """The installed object called `name` (None when this JAX has none)."""
    try:
        return pkgutil.resolve_name(name)
    except (ImportError, AttributeError, ValueError):
        return None


def kind(name: str) -> str:
    """The inventory's kind for `name`, as the installed library has it."""
    found, owner = resolved(name), resolved(name.rpartition(".")[0])
    if inspect.ismodule(found):
        return "mod"
    if inspect.isclass(found):
        return "class"
    if inspect.isclass(owner):
        return "method" if callable(found) else "attribute"
    return "function" if callable(found) else "data"


def full_name(module: str, entry: str) -> str:
    """An autosummary entry as autosummary reads it: in the current module if it is there."""
    entry = entry.lstrip("~")
    if module and resolved(f"{module}.{entry}") is not None:
        return f"{module}.{entry}"
    if resolved(entry) is not None or not module:
        return entry
    return f"{module}.{entry}"


def page_entries(page: str, text: str, module: str = "") -> dict[str, tuple[str, str]]:
    """{name: (kind, address)} for what one reference page documents (`page`: its path from
    the pages' root, without suffix), and the docstring of a module it documents (SciPy's
    list their functions)."""
    here, found = page.rpartition("/")[0], {}
    for directive in directives(text):
        name, argument, options = directive["name"], directive["argument"], directive["options"]
        if name in MODULE_SETTERS:
            module = argument
        if name in {"automodule", "module", "py:module"}:
            found[argument] = ("mod", f"{page}.html")
            documented = resolved(argument) if name == "automodule" else None
            if inspect.ismodule(documented) and documented.__doc__:
                found |= page_entries(page, inspect.cleandoc(documented.__doc__), argument)
            members = [m.strip() for m in options.get("members", "").split(",") if m.strip()]
            for member in members:
                found[f"{argument}.{member}"] = (kind(f"{argument}.{member}"), f"{page}.html")
        elif name == "autosummary" and "toctree" in options:
            folder = "/".join(filter(None, [here, options["toctree"].strip("/")]))
            for entry in directive["content"]:
                full = full_name(module, entry.split()[0])  # SciPy's: "cdist -- what it does"
                found[full] = (kind(full), f"{folder}/{full}.html")
        elif name in {"autofunction", "autoclass", "autodata", "data", "function", "class"}:
            full = full_name(module, argument.split("(")[0])
            found[full] = (kind(full), f"{page}.html")
            if name == "autoclass":
                for member in options.get("members", "").split(","):
                    if member.strip():
                        method = f"{full}.{member.strip()}"
                        found[method] = (kind(method), f"{page}.html")
    return found


def inventory(pages: Path) -> dict[str, tuple[str, str]]:
    """Every name the reference documents, from every reStructuredText page under `pages`."""
    found = {}
    for path in sorted(pages.rglob("*.rst")):
        page = path.relative_to(pages).with_suffix("").as_posix()
        found |= page_entries(page, path.read_text())
    return found


def guides(pages: Path) -> dict[str, str]:
    """{page: title} for each Markdown and reStructuredText page under `pages` with a title."""
    titles = {}
    for path in sorted([*pages.rglob("*.md"), *pages.rglob("*.rst")]):
        lines = path.read_text().splitlines()
        if path.suffix == ".md":  # the first heading outside code fences
            fenced = itertools.accumulate(line.startswith(("```", "~~~")) for line in lines)
            heading = next(
                (
                    a[2:]
                    for a, f in zip(lines, fenced, strict=True)
                    if a.startswith("# ") and f % 2 == 0
                ),
                None,
            )
        else:  # the first line underlined by a line of one repeated character as long
            heading = next(
                (
                    a
                    for a, b in itertools.pairwise(lines)
                    if a.strip()
                    and len(set(b)) == 1
                    and b[0] in "=-#*~"
                    and len(b) >= len(a.rstrip())
                ),
                None,
            )
        if heading and path.stem != "README":
            titles[path.relative_to(pages).with_suffix("").as_posix()] = heading.strip()
    return titles


def inventory_lines(found: dict[str, tuple[str, str]], pages: dict[str, str]) -> list[str]:
    """Version 2's lines: `name domain:role priority address title` ('-': the name)."""
    lines = []
    for name, (kind_, address) in sorted(found.items()):
        role = {"mod": "module"}.get(kind_, kind_)
        anchor = f"module-{name}" if kind_ == "mod" else name
        lines.append(f"{name} py:{role} 1 {address}#{anchor} -")
    lines += [f"{page} std:doc -1 {page}.html {title}" for page, title in sorted(pages.items())]
    return lines


def defined_in(found: dict[str, tuple[str, str]]) -> dict[str, str]:
    """{where a documented class is defined: its documented name}, where the two differ
    (`jax._src.profiler.TraceAnnotation`: jax.profiler.TraceAnnotation). sphinx-codeautolink
    follows a class to where it is defined; its `codeautolink_inventory_map` reads this. A
    class documented under two names goes to the one that ends in its own name."""
    moved = {}
    for name, (kind_, _) in sorted(found.items()):
        cls = resolved(name) if kind_ == "class" else None
        where = f"{getattr(cls, '__module__', '')}.{getattr(cls, '__qualname__', '')}"
        standard = (
            where.split(".", maxsplit=1)[0] in sys.stdlib_module_names
        )  # ctypes.c_long: not theirs
        if cls is None or where == name or where in found or standard:
            continue
        if where not in moved or name.rsplit(".", 1)[-1] == cls.__name__:
            moved[where] = name
    return moved


def source_version(clone: Path, library: str) -> str:
    """The version the clone's sources give themselves (pyproject.toml, else version.py)."""
    project = clone / "pyproject.toml"
    if project.exists():
        found = tomllib.loads(project.read_text()).get("project", {}).get("version")
        if found:
            return found
    module = clone / library / "version.py"
    said = (
        re.search(r'^_version\s*=\s*"([^"]+)"', module.read_text(), re.M)
        if module.exists()
        else None
    )
    return said[1] if said else "unknown"


def commit_of(clone: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("library", choices=sorted(SOURCES))
    parser.add_argument("clone", type=Path, help="a clone of the library's repository")
    parser.add_argument("--commit", help="the clone's commit, where it is not a git work tree")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default: {OUT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    source = dict(SOURCES[args.library])
    version = importlib.metadata.version(args.library)
    minor = ".".join(version.split(".")[:2])
    for key in ("addresses", "version"):
        source[key] = source[key].format(minor=minor, version=version)
    found = inventory(args.clone / source["pages"])
    pages = guides(args.clone / source["pages"])
    source["commit"] = args.commit or commit_of(args.clone)
    source["source_version"] = source_version(args.clone, args.library)
    source["defined_in"] = defined_in(found)
    header = [
        "# Sphinx inventory version 2",
        f"# Project: {source['project']}",
        f"# Version: {source['version']}",
        "# The remainder of this file is compressed using zlib.",
    ]
    body = "".join(f"{line}\n" for line in inventory_lines(found, pages))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.library}.inv").write_bytes(
        "".join(f"{line}\n" for line in header).encode() + zlib.compress(body.encode())
    )
    (args.out / f"{args.library}.json").write_text(json.dumps(source, indent=2) + "\n")
    print(f"{len(found)} names, {len(pages)} pages of {source['repository']} at {source['commit']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
