"""What each page's outputs depend on in the engine, so that a change re-executes only them.

myst-nb's cache is keyed on a page's own cells. This reads a page's code cells for the
`chapter2` modules it imports, the claims it verifies and the examples it runs, follows the
engine's own imports from there, and hashes those files. The hash goes into the cell
metadata of the page's first code cell (`:deps-hash:`, an option myst-nb keeps), so the
cache key changes with the page's dependencies; `env.note_dependency` makes Sphinx read the
page again when one of them changes.
"""

import ast
import hashlib
import re
from pathlib import Path

_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.M | re.S)
_VERIFY = re.compile(r"""(?:verify|glue)\(\s*["']([\w-]+)["']|^\s*["']([\w-]+)["'],\s*$""", re.M)
_EXAMPLE = re.compile(r"""run_example\(\s*["'](\w+)["']""")
_CLAIM = re.compile(r"""^@claim\(\s*["']([\w-]+)["']""", re.M)


def module_path(src: Path, module: str) -> Path | None:
    """The file of a `chapter2` module under `src`, or None."""
    base = src.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def imported_modules(code: str) -> set[str]:
    """The `chapter2` modules a piece of code imports (`from chapter2 import x` counts x)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("chapter2")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("chapter2"):
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def claim_modules(src: Path) -> dict[str, str]:
    """Claim id -> the claims module that defines it."""
    return {
        claim_id: f"chapter2.claims.{path.stem}"
        for path in sorted((src / "chapter2" / "claims").glob("*.py"))
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


def cell_code(cell: str) -> str:
    """A code cell's Python: without its `:option:` lines or its `---` YAML block."""
    lines = cell.splitlines()
    if lines and lines[0] == "---":
        lines = lines[lines.index("---", 1) + 1 :]
    while lines and re.match(r"^:[\w-]+:", lines[0]):
        lines = lines[1:]
    return "\n".join(lines)


def page_dependencies(src: Path, page_text: str) -> set[Path]:
    """The engine files a page's outputs depend on."""
    cells = [cell_code(cell) for cell in _CELL.findall(page_text)]
    code = "\n".join(cells)
    modules = set().union(*(imported_modules(cell) for cell in cells))
    owners = claim_modules(src)
    for groups in _VERIFY.findall(code):
        claim_id = next(g for g in groups if g)
        if claim_id in owners:
            modules.add(owners[claim_id])
    modules |= {f"chapter2.examples.{name}" for name in _EXAMPLE.findall(code)}
    return closure(src, modules)


def digest(paths: set[Path], root: Path) -> str:
    """One hash of the files' names (relative to `root`) and contents."""
    sha = hashlib.sha256()
    for path in sorted(paths):
        sha.update(path.relative_to(root).as_posix().encode())
        sha.update(path.read_bytes())
    return sha.hexdigest()[:16]


def with_hash(page_text: str, value: str) -> str:
    """The page with `:deps-hash: value` added to the options of its first code cell."""
    found = re.search(r"^```\{code-cell\}[^\n]*\n", page_text, re.M)
    if found is None:
        return page_text
    return page_text[: found.end()] + f":deps-hash: {value}\n" + page_text[found.end() :]


def note_page_dependencies(app, docname: str, source: list[str]) -> None:
    """`source-read`: record the page's engine dependencies and fold them into its cache key."""
    src = Path(app.config.book_engine_src)
    if not src.is_dir() or "```{code-cell}" not in source[0]:
        return
    files = page_dependencies(src, source[0])
    for path in sorted(files):
        app.env.note_dependency(str(path))
    source[0] = with_hash(source[0], digest(files, src))
