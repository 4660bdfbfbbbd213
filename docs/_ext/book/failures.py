"""A build that names every problem in its last lines, and never forgets a failing page.

The build's record (book.record) holds every problem Sphinx logged and every failing cell;
its summary is the build's last lines and REPORT. The next build reads the pages it names
again (book.record.BookCollector), and a page with a failing cell leaves the execution cache
when the build ends, so that it runs again.
"""

import contextlib
from pathlib import Path
from typing import NamedTuple

from book import SERIAL, build_folder
from book.cache import opened
from book.notebooks import executed_notebook
from book.record import AFTER_A_FAILURE, RECORD, book_data, failure_lines, read_record, statement
from chapter2.records import BuildRecord, FailingCell, Status

REPORT = "failed-pages.txt"


class Reported(NamedTuple):
    """A problem as the summary lays it out: its file, its line (0 for none), its lines."""

    path: str
    line: int
    lines: list[str]


def what_the_book_says(record: BuildRecord, failure: FailingCell) -> list[str]:
    """For each drifted claim a failing cell shows: where its page says it, and what."""
    pages, said = record.pages, []
    for claim_id in failure.claim_ids:
        verdict = pages[failure.page].verdicts.get(claim_id)
        if verdict is None or verdict.status is not Status.DRIFTED:
            continue
        home = verdict.page
        found = statement(pages, home, claim_id)
        where = pages[home].path if home in pages else home
        where += f":{found.line}" if home in pages and found.line else ""
        said.append(f"  the book says ({where}): {found.text or '(nothing under its label)'}")
    return said


def problems(record: BuildRecord) -> list[Reported]:
    """Every problem of the record by file and line: what Sphinx logged, each failing cell,
    and a problem that comes after a failing cell of its page marked as perhaps following."""
    found, first_failure = [], {}
    for cell in record.failing_cells:
        first_failure.setdefault(cell.path, cell.line or 0)
        said = what_the_book_says(record, cell)
        found.append(Reported(cell.path, cell.line or 0, failure_lines(cell, said)))
    for problem in record.problems:
        after = problem.line > first_failure.get(problem.path, problem.line)
        logged = problem.message.splitlines() or [""]  # as Sphinx's logger wrote it
        found.append(Reported(problem.path, problem.line, [AFTER_A_FAILURE] * after + logged))
    return sorted(found, key=lambda p: (p.path, p.line))


def problems_summary(record: BuildRecord) -> str | None:
    """A build's problems as its last lines, each at its file and line (None: no problem)."""
    found = problems(record)
    if not found:
        return None
    count = len(found)
    lines = [f"{count} problem{'s' if count != 1 else ''} failed the build:"]
    for problem in found:
        first, *rest = problem.lines
        where = f"{problem.path}:{problem.line}" if problem.line else problem.path
        lines.append(f"  {where or '(no page)'}: {first}")
        lines += [f"    {text}" for text in rest]
    return "\n".join(lines)


def forget_failed_pages(app, exception) -> None:
    """`build-finished`: a page with a failing cell leaves the cache: the next build runs it."""
    data = book_data(app.env)
    pages = [name for name, page in data.pages.items() if page.failing_cells]
    path, build = app.config.nb_execution_cache_path, build_folder(app)
    for page in sorted(pages):
        notebook = executed_notebook(build, path, page)
        with opened(path) as cache, contextlib.suppress(KeyError):
            cache.remove_cache(cache.match_cache_notebook(notebook).pk)


def write_report(build: Path, since: float) -> str | None:
    """The summary of the record the build wrote after `since` (a time), also as REPORT."""
    report = build / REPORT
    record = read_record(build)
    fresh = record is not None and (build / RECORD).stat().st_mtime >= since
    stopped = "The build stopped before it recorded its problems."
    said = problems_summary(record) if fresh else stopped
    if said is None:
        report.unlink(missing_ok=True)
        return None
    build.mkdir(parents=True, exist_ok=True)  # a build that stopped in its configuration
    report.write_text(said + "\n")
    return said


def setup(app):
    app.setup_extension("book.record")
    app.connect("build-finished", forget_failed_pages, priority=600)  # after the record (500)
    return SERIAL
