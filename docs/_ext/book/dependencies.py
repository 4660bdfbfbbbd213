"""What each page's outputs depend on in the engine, so that a change re-executes only them.

myst-nb's cache is keyed on a page's own cells. This reads a page's code cells (as myst-nb
reads them) and parses their Python: the `chapter2` modules they import, the claims they
name (any string that is a claim id: `verify("id")`, or a list of ids a loop verifies) and
the probes they run (`run_probe("name")`). It follows the engine's own imports from there
and hashes those files. The hash goes into the metadata of the page's first code cell
(`deps-hash`, an option myst-nb keeps), so the cache key changes with the page's
dependencies; `env.note_dependency` makes Sphinx read the page again when one changes.
"""

import ast
import hashlib
import re
from pathlib import Path

from myst_nb.core.read import read_myst_markdown_notebook

from chapter2.fresh import PACKAGE as PROBES

_CLAIM = re.compile(r"""^@claim\(\s*["']([\w-]+)["']""", re.M)
_FIRST_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(---\n)?", re.M)


def module_path(src: Path, module: str) -> Path | None:
    """The file of a `chapter2` module under `src`, or None."""
    base = src.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def _parse(code: str) -> ast.Module:
    try:
        return ast.parse(code)
    except SyntaxError:  # a cell that is not Python (a %magic, say) depends on nothing
        return ast.Module(body=[], type_ignores=[])


def imported_modules(code: str) -> set[str]:
    """The `chapter2` modules a piece of code imports (`from chapter2 import x` counts x)."""
    found = set()
    for node in ast.walk(_parse(code)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("chapter2")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("chapter2"):
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def probes_run(code: str) -> set[str]:
    """The probes a piece of code runs: the first argument of each `run_probe("name")`."""
    found = set()
    for node in ast.walk(_parse(code)):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == "run_probe"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.add(f"{PROBES}.{node.args[0].value}")
    return found


def strings(code: str) -> set[str]:
    """Every string constant of a piece of code."""
    return {
        n.value
        for n in ast.walk(_parse(code))
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def claim_modules(src: Path) -> dict[str, str]:
    """Claim id -> the claims module that defines it."""
    return {
        claim_id: f"chapter2.claims.pages.{path.stem}"
        for path in sorted((src / "chapter2" / "claims" / "pages").glob("*.py"))
        for claim_id in _CLAIM.findall(path.read_text())
    }


def closure(src: Path, modules: set[str]) -> set[Path]:
    """The files of `modules`, of the packages that hold them and of what they import."""
    files: set[Path] = set()
    todo = set(modules)
    while todo:
        module = todo.pop()
        parts = module.split(".")
        for cut in range(1, len(parts) + 1):
            path = module_path(src, ".".join(parts[:cut]))
            if path is not None and path not in files:
                files.add(path)
                todo |= imported_modules(path.read_text())
    return files


def code_cells(page_text: str) -> list[str]:
    """The Python of a page's code cells, as myst-nb reads them (options taken off)."""
    notebook = read_myst_markdown_notebook(page_text)
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def page_dependencies(src: Path, page_text: str) -> set[Path]:
    """The engine files a page's outputs depend on."""
    modules: set[str] = set()
    owners = claim_modules(src)
    for code in code_cells(page_text):
        modules |= imported_modules(code) | probes_run(code)
        modules |= {owners[s] for s in strings(code) if s in owners}
    return closure(src, modules)


def digest(paths: set[Path], root: Path) -> str:
    """One hash of the files' names (relative to `root`) and contents."""
    sha = hashlib.sha256()
    for path in sorted(paths):
        sha.update(path.relative_to(root).as_posix().encode())
        sha.update(path.read_bytes())
    return sha.hexdigest()[:16]


def with_hash(page_text: str, value: str) -> str:
    """The page with `deps-hash: value` among the options of its first code cell, written the
    way that cell writes its options (`:key: value` lines, or a `---` YAML block)."""
    found = _FIRST_CELL.search(page_text)
    if found is None:
        return page_text
    option = f"deps-hash: {value}\n" if found[1] else f":deps-hash: {value}\n"
    return page_text[: found.end()] + option + page_text[found.end() :]


def note_page_dependencies(app, docname: str, source: list[str]) -> None:
    """`source-read`: record the page's engine dependencies and fold them into its cache key."""
    src = Path(app.config.book_engine_src)
    if not src.is_dir() or "```{code-cell}" not in source[0]:
        return
    files = page_dependencies(src, source[0])
    for path in sorted(files):
        app.env.note_dependency(str(path))
    source[0] = with_hash(source[0], digest(files, src))
