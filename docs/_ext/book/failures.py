"""A build that names every problem in its last lines, and never forgets a failing page.

Pages execute with `nb_execution_raise_on_error = False`: a failing cell does not stop the
build; myst-nb records the failure in the page's execution data (succeeded, traceback). A
drift build also sets `nb_execution_allow_errors`, so a page runs every cell past a failing
one; then every cell whose outputs hold an error is listed (read from the executed notebook). Sphinx
warnings (an unknown directive, a broken reference, a page outside every toctree) fail the
build under -W. When the build finishes, this lists both, page by page, in its last lines and
beside the HTML: `failed-pages.txt` as printed (`python -m book.build` prints it again as the
very last lines) and `failed-pages.json` for tools (the drift report reads it).

With --keep-going Sphinx saves its environment even when warnings are errors, so a page that
failed would be up to date at the next build, and neither read nor reported again. Every page
named in the previous report is therefore read, executed and reported again, until it passes.
"""

import json
import logging
import re
from pathlib import Path

from docutils import nodes
from docutils.utils import get_source_line
from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.util import logging as sphinx_logging

from book.notebooks import executed_notebook

logger = sphinx_logging.getLogger(__name__)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CELL = re.compile(r"-{18}\n(?P<cell>.*?)\n-{18}\n(?P<traceback>.*)", re.S)
_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Drift|Exit|Interrupt)\b.*$", re.M)
REPORTS = ("failed-pages.txt", "failed-pages.json")


def parse_failure(docname: str, traceback: str) -> dict:
    """Page, failing cell and error of the traceback of a failed execution."""
    text = _ANSI.sub("", traceback)
    found = _CELL.search(text)
    cell, rest = (found["cell"], found["traceback"]) if found else ("", text)
    headers = list(_ERROR_LINE.finditer(rest))
    if headers:  # the last exception, with the indented lines of its message
        tail = rest[headers[-1].start() :].splitlines()
        error = [tail[0], *(line for line in tail[1:] if line.startswith("  "))]
    else:
        error = [line for line in rest.splitlines() if line.strip()][-1:]
    return {"page": docname, "cell": cell.strip(), "error": "\n".join(error).strip()}


def execution_failures(env) -> list[dict]:
    """Every page whose last execution failed, from myst-nb's own record of it."""
    failed = []
    for docname in sorted(env.found_docs):
        data = NbMetadataCollector.get_exec_data(env, docname)
        if data and not data["succeeded"]:
            failed.append(parse_failure(docname, data["traceback"] or data["error"] or ""))
    return failed


def cell_errors(app) -> list[dict]:
    """Every cell whose outputs hold an error, page by page, in a build that lets cells fail."""
    found = []
    for docname in sorted(app.env.found_docs):
        notebook = executed_notebook(app, docname)
        for cell in notebook.cells if notebook is not None else []:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    error = _ANSI.sub("", f"{output['ename']}: {output['evalue']}")
                    found.append({"page": docname, "cell": cell.source.strip(), "error": error})
    return found


def _where(env, location) -> tuple[str, str]:
    """The page and line of a warning's location: a docname, (docname, line), "path:line", or
    a document node, as Sphinx's callers give it."""
    if isinstance(location, tuple):
        return str(location[0]), str(location[1] or "")
    if isinstance(location, nodes.Node):
        source, line = get_source_line(location)
        location = f"{source}:{line or ''}" if source else ""
    text = str(location or "")
    path, line = ([*text.rsplit(":", 1), ""])[:2] if re.search(r":\d*$", text) else (text, "")
    page = path if path in env.found_docs else env.path2doc(path) if path else None
    return page or "(no page)", line


class _Warnings(logging.Handler):
    """Every warning the build logs, with its page and line (execution failures excepted:
    myst-nb's record of them is read instead)."""

    def __init__(self, app):
        super().__init__(logging.WARNING)
        self.app, self.found = app, []

    def emit(self, record):
        if getattr(record, "type", None) == "mystnb" and getattr(record, "subtype", None) == "exec":
            return
        page, line = _where(self.app.env, getattr(record, "location", None))
        warning = {
            "page": page,
            "line": line,
            "message": _ANSI.sub("", record.getMessage()).strip(),
        }
        if warning not in self.found:  # a parser may say the same thing twice
            self.found.append(warning)


def summary(failures: list[dict], warnings: list[dict]) -> str:
    """The problems of a build as its last lines say them: each failing page with the last
    lines of its failing cell and its error, then each warning with its page and line."""
    count = len(failures) + len(warnings)
    lines = [f"{count} problem{'s' if count != 1 else ''} failed the build:"]
    for failure in failures:
        cell = [line for line in failure["cell"].splitlines() if line.strip()][-2:]
        lines += [f"  page {failure['page']}: a cell failed", *(f"      | {c}" for c in cell)]
        lines += ["    " + line for line in failure["error"].splitlines()]
    for warning in warnings:
        line = f", line {warning['line']}" if warning["line"] else ""
        lines.append(f"  page {warning['page']}{line}: {warning['message']}")
    return "\n".join(lines)


def start(app) -> None:
    """`builder-inited`: remember the pages the last report named, start listening for
    warnings, and remove the last report."""
    reports = [Path(app.outdir) / name for name in REPORTS]
    last = json.loads(reports[1].read_text()) if reports[1].exists() else {}
    app.book_recheck = {
        p["page"] for kind in ("failing_cells", "warnings") for p in last.get(kind, [])
    }
    app.book_warnings = _Warnings(app)
    logging.getLogger("sphinx").addHandler(app.book_warnings)
    for path in reports:
        path.unlink(missing_ok=True)


def recheck(app, env, added, changed, removed) -> list[str]:
    """`env-get-outdated`: the pages of the last report are read again."""
    return sorted(app.book_recheck & env.found_docs)


def finish(app, exception) -> None:
    """`build-finished`: name every failing page and every warning, last."""
    logging.getLogger("sphinx").removeHandler(app.book_warnings)
    failures, warnings = execution_failures(app.env), app.book_warnings.found
    if app.config.nb_execution_allow_errors:
        failures += cell_errors(app)
    if failures or warnings:
        text, data = (Path(app.outdir) / name for name in REPORTS)
        text.write_text(summary(failures, warnings) + "\n")
        data.write_text(json.dumps({"failing_cells": failures, "warnings": warnings}, indent=2))
        logger.info("\n%s", summary(failures, warnings))
