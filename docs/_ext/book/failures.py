"""A build that reports every failing page: page, cell and error line, in its last lines.

Pages execute with `nb_execution_raise_on_error = False`, so a failing cell does not stop
the build: myst-nb logs a warning (an error under -W) and goes on to the next page. This
module listens for those warnings, and when the build finishes it prints one entry per
failing page and writes them beside the HTML: `failed-pages.txt` as printed, which
`nox -s docs` prints again as its last lines, and `failed-pages.json` for tools.
"""

import json
import logging
import re
from pathlib import Path

from sphinx.util import logging as sphinx_logging

logger = sphinx_logging.getLogger(__name__)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CELL = re.compile(r"-{18}\n(?P<cell>.*?)\n-{18}\n(?P<traceback>.*)", re.S)
_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Drift|Exit|Interrupt)\b.*$", re.M)


def parse_failure(docname: str, message: str) -> dict:
    """Page, failing cell and error of myst-nb's "Executing notebook failed" message."""
    text = _ANSI.sub("", message)
    found = _CELL.search(text)
    cell, traceback = (found["cell"], found["traceback"]) if found else ("", text)
    headers = list(_ERROR_LINE.finditer(traceback))
    if headers:  # the last exception, with the indented lines of its message
        tail = traceback[headers[-1].start() :].splitlines()
        error = [tail[0], *(line for line in tail[1:] if line.startswith("  "))]
    else:
        error = [line for line in traceback.splitlines() if line.strip()][-1:]
    return {"page": docname, "cell": cell.strip(), "error": "\n".join(error).strip()}


class _Collector(logging.Handler):
    def __init__(self, app):
        super().__init__(logging.WARNING)
        self.app = app

    def emit(self, record):
        message = record.getMessage()
        if not message.startswith("Executing notebook failed"):
            return
        location = getattr(record, "location", None) or ""
        docname = location[0] if isinstance(location, tuple) else str(location)
        docname = self.app.env.path2doc(docname.split(":")[0]) or docname
        self.app.env.book_failures[docname] = parse_failure(docname, message)


def summary(failures: list[dict]) -> str:
    """The failing pages as the build's last lines say them."""
    lines = [f"{len(failures)} page(s) failed to execute:"]
    for failure in failures:
        cell = "\n".join("      " + line for line in failure["cell"].splitlines()[-6:])
        error = "\n".join("      " + line for line in failure["error"].splitlines())
        lines += [f"  page {failure['page']}", "    cell:", cell, "    error:", error]
    return "\n".join(lines)


def report_files(app) -> list[Path]:
    return [Path(app.outdir) / f"failed-pages.{suffix}" for suffix in ("txt", "json")]


def start(app) -> None:
    """`builder-inited`: listen for failed executions."""
    if not hasattr(app.env, "book_failures"):
        app.env.book_failures = {}
    app.env.book_failures.clear()
    logging.getLogger("sphinx").addHandler(_Collector(app))
    for path in report_files(app):
        path.unlink(missing_ok=True)


def merge(app, env, docnames, other) -> None:
    env.book_failures.update(getattr(other, "book_failures", {}))


def finish(app, exception) -> None:
    """`build-finished`: name every failing page, its cell and its error, last."""
    failures = sorted(app.env.book_failures.values(), key=lambda f: f["page"])
    if failures:
        text, data = report_files(app)
        text.write_text(summary(failures) + "\n")
        data.write_text(json.dumps(failures, indent=2) + "\n")
        logger.info("\n" + summary(failures))
