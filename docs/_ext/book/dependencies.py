"""The files each page's outputs depend on (its engine imports, the claims and probes it
names, the recorded runs' files it reads), hashed into a hidden last cell at `source-read`:
a change re-executes only those pages."""

import ast
import functools
import hashlib
import os
from pathlib import Path

from myst_nb.core.read import read_myst_markdown_notebook

from book import SERIAL, roofs
from chapter2.claims.registry import module_code
from chapter2.fresh import PACKAGE as PROBES


def module_path(src: Path, module: str) -> Path | None:
    """The file of a `chapter2` module under `src`, or None."""
    base = src.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


@functools.cache  # each text is parsed once in the process, however often it is read
def _parse(code: str) -> ast.Module:
    try:
        return ast.parse(code)
    except SyntaxError:  # a cell that is not Python (a %magic, say) depends on nothing
        return ast.Module(body=[], type_ignores=[])


@functools.cache
def imported_modules(code: str) -> frozenset[str]:
    """The `chapter2` modules a piece of code imports (`from chapter2 import x` counts x)."""
    found = set()
    for node in ast.walk(_parse(code)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("chapter2")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("chapter2"):
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return frozenset(found)


@functools.cache
def strings(code: str) -> frozenset[str]:
    """Every string constant of a piece of code."""
    return frozenset(
        n.value
        for n in ast.walk(_parse(code))
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )


def claim_modules(src: Path) -> dict[str, str]:
    """Claim id -> the claims module that defines it."""
    return {
        claim_id: f"chapter2.claims.pages.{path.stem}"
        for path in sorted((src / "chapter2" / "claims" / "pages").glob("*.py"))
        for claim_id in registered(path.read_text())
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


@functools.cache
def code_cells(page_text: str) -> tuple[str, ...]:
    """The Python of a page's code cells, options taken off, as myst-nb reads the page for
    execution (so that no cell it runs is missing from the page's key)."""
    notebook = read_myst_markdown_notebook(page_text)
    return tuple(cell.source for cell in notebook.cells if cell.cell_type == "code")


def page_dependencies(src: Path, page_text: str) -> set[Path]:
    """The engine files a page's outputs depend on."""
    modules: set[str] = set()
    owners = claim_modules(src)
    for code in code_cells(page_text):
        named = strings(code)  # a claim id (`verify("id")`) or a probe (`run_probe("name")`)
        modules |= imported_modules(code) | {owners[s] for s in named if s in owners}
        probes = {f"{PROBES}.{s}" for s in named if s.isidentifier()}
        modules |= {p for p in probes if module_path(src, p)}
    return closure(src, modules)


def recorded_files(folder: Path, page_text: str) -> set[Path]:
    """The files of the recorded runs under `folder` that a page's code names, by file name
    (`RECORD / "gpu-numbers.json"`, `"../data/backends/run/vendor-figures.json"`), and every
    file of a run it names by its folder (`recorded_run(BACKENDS, "tpu-v5e-jax-0.10.2")`)."""
    names = {Path(s).name for code in code_cells(page_text) for s in strings(code)}
    return {path for path in folder.glob("*/*") if path.name in names or path.parent.name in names}


def claims_verified(src: Path, page_text: str) -> set[str]:
    """The claim ids a page's code names."""
    owners = claim_modules(src)
    return {s for code in code_cells(page_text) for s in strings(code) if s in owners}


def registered(text: str) -> dict[str, str]:
    """Claim id -> the function of a claims module's code that `@claim("id")` registers."""
    return {
        d.args[0].value: node.name
        for node in _parse(text).body
        for d in getattr(node, "decorator_list", [])
        if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "claim" and d.args
        if isinstance(d.args[0], ast.Constant)
    }


def checks_of(text: str, ids: set[str]) -> list[str]:
    """The functions of a claims module registered as the claims `ids`."""
    return [name for claim_id, name in registered(text).items() if claim_id in ids]


def digest(paths: set[Path], root: Path, claim_ids: set[str], measured: str = "") -> str:
    """One hash of the files' names (relative to `root`) and contents, and of what the build
    `measured` for the page; of a claims module, only the code the checks of `claim_ids` read,
    so that editing another claim changes nothing."""
    sha = hashlib.sha256(measured.encode())
    for path in sorted(paths):
        sha.update(path.relative_to(root).as_posix().encode())
        text = path.read_text()
        if path.parent.match("chapter2/claims/pages"):
            text = module_code(text, checks_of(text, claim_ids))
        sha.update(text.encode())
    return sha.hexdigest()[:16]


def with_hash(page_text: str, value: str) -> str:
    """The page with a last code cell, hidden, whose comment holds `value`."""
    cell = f"```{{code-cell}} ipython3\n:tags: [remove-cell]\n# engine files: {value}\n```\n"
    return f"{page_text.rstrip()}\n\n{cell}"


def note_page_dependencies(app, docname: str, source: list[str]) -> None:
    """`source-read`: record the page's engine dependencies and fold them into its cache key."""
    src = Path(app.config.book_engine_src)
    if not src.is_dir() or "```{code-cell}" not in source[0]:
        return
    files = page_dependencies(src, source[0])
    measuring = closure(src, {f"{PROBES}.roofs"})
    measured = roofs.measured(app, measuring) if roofs.places_programs(files) else ""
    if app.config.book_backends:
        files |= recorded_files(Path(app.config.book_backends), source[0])
    for path in sorted(files):
        app.env.note_dependency(str(path))
    root = Path(os.path.commonpath([src, *files]))  # a page's files named from where they meet
    source[0] = with_hash(source[0], digest(files, root, claims_verified(src, source[0]), measured))


def setup(app):
    app.add_config_value("book_engine_src", "", "env", types=[str])
    app.connect("source-read", note_page_dependencies)
    return SERIAL
