"""A build that names every problem in its last lines, and never forgets a failing page.

Each error output of a page's cells becomes a warning at its line; the warning file becomes
the build's last lines and REPORT(_DATA), whose pages the next build reads and runs again.
"""

import contextlib
import json
import re
from pathlib import Path

from sphinx.util import logging

from book.cache import opened
from book.notebooks import executed_notebook

logger = logging.getLogger(__name__)
WARNINGS, REPORT, REPORT_DATA = "warnings.txt", "failed-pages.txt", "failed-pages.json"
# A warning runs from its "path:line: WARNING: " to the next one: its message may hold lines
# of any indentation (a docutils error quotes the directive it could not read).
_START = r"^(?:{path}(?::{line})?: )?(?:WARNING|ERROR|CRITICAL): "
_WARNING = re.compile(
    _START.format(path=r"(?P<path>[^\n]+?)", line=r"(?P<line>\d+)")
    + r"(?P<message>.*?)(?="
    + _START.format(path=r"[^\n]+?", line=r"\d+")
    + r"|\Z)",
    re.M | re.S,
)
AFTER_A_FAILURE = "(after a failing cell of this page: it may follow from it)"


def cell_failures(env, build: Path) -> list[dict]:
    """Every cell with an error output: page, line, source, error, and whether one failed before."""
    found = []
    for docname in sorted(env.found_docs):
        notebook = executed_notebook(build, env.config.nb_execution_cache_path, docname)
        lines = notebook.metadata.get("source_map", []) if notebook else []
        earlier = False
        for index, cell in enumerate(notebook.cells if notebook else []):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    found.append(
                        {
                            "page": docname,
                            "line": lines[index] if index < len(lines) else None,
                            "cell": cell.source.strip(),
                            "error": f"{output['ename']}: {output['evalue']}",
                            "after_a_failure": earlier,
                        }
                    )
                    earlier = True
    return found


def failure_text(failure: dict) -> str:
    """A failing cell's warning: the error, then the cell's last lines, indented below it."""
    head = [AFTER_A_FAILURE] if failure["after_a_failure"] else []
    first, *rest = [*head, *failure["error"].splitlines()]
    cell = [f"  | {line}" for line in failure["cell"].splitlines() if line.strip()][-2:]
    return "\n".join([first, *(f"  {line}" for line in [*rest, *cell])])


def report_cells(app, env) -> None:
    """`env-updated`: each failing cell of the book as a warning at its page and line."""
    app.book_failures = cell_failures(env, Path(app.outdir).parent)
    for failure in app.book_failures:
        logger.warning(failure_text(failure), location=(failure["page"], failure["line"]))


def forget_failed_pages(app, exception) -> None:
    """`build-finished`: a page with a failing cell leaves the cache: the next build runs it."""
    pages = {f["page"] for f in getattr(app, "book_failures", [])}
    path, build = app.config.nb_execution_cache_path, Path(app.outdir).parent
    for page in sorted(pages):
        notebook = executed_notebook(build, path, page)
        with opened(path) as cache, contextlib.suppress(KeyError):
            cache.remove_cache(cache.match_cache_notebook(notebook).pk)


def read_warnings(text: str, source: Path) -> list[dict]:
    """Sphinx's warning file as path (from `source`'s parent), line and message, in order."""
    found = []
    for match in _WARNING.finditer(text):
        path = match["path"] or ""
        if Path(path).is_absolute() and Path(path).is_relative_to(source.parent):
            path = str(Path(path).relative_to(source.parent))
        line = int(match["line"]) if match["line"] else 0
        found.append({"path": path, "line": line, "message": match["message"].strip()})
    return sorted(found, key=lambda w: (w["path"], w["line"]))


def summary(problems: list[dict]) -> str:
    """A build's problems as its last lines, each at its file and line, knock-ons marked."""
    count = len(problems)
    lines = [f"{count} problem{'s' if count != 1 else ''} failed the build:"]
    first_failure: dict[str, int] = {}
    for problem in problems:
        path, line, message = problem["path"], problem["line"], problem["message"].splitlines()
        if line > first_failure.get(path, line) and message[:1] != [AFTER_A_FAILURE]:
            message.insert(0, AFTER_A_FAILURE)
        if message and message[-1].startswith("    | "):  # a failing cell (failure_text)
            first_failure.setdefault(path, line)
        where = f"{path}:{line}" if line else path or "(no page)"
        lines.append(f"  {where}: {message[0] if message else ''}")
        lines += [f"    {text}" for text in message[1:]]
    return "\n".join(lines)


def recheck(app, env, added, changed, removed) -> list[str]:
    """`env-get-outdated`: the pages the last build's REPORT_DATA names are read again."""
    data = Path(app.outdir).parent / REPORT_DATA
    problems = json.loads(data.read_text()) if data.exists() else []
    named = {env.path2doc(str(Path(app.srcdir).parent / p["path"])) for p in problems}
    return sorted(named & env.found_docs)


def write_report(build: Path, source: Path) -> str | None:
    """A build's warnings as REPORT and REPORT_DATA in `build`, and the summary (or None)."""
    warnings = build / WARNINGS
    problems = read_warnings(warnings.read_text(), source) if warnings.exists() else []
    text, data = build / REPORT, build / REPORT_DATA
    if not problems:
        text.unlink(missing_ok=True)
        data.unlink(missing_ok=True)
        return None
    data.write_text(json.dumps(problems, indent=2) + "\n")
    text.write_text(summary(problems) + "\n")
    return summary(problems)
