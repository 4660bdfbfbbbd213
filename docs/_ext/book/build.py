"""`python -m book build SOURCE OUTDIR [sphinx-build options]`: the one build command.

Sphinx with the book's options (nitpicky, warnings as errors, one page at a time, so no timing
shares the machine); a failed build ends with its problems (book.failures).
"""

import sys
import time
from pathlib import Path

from sphinx.cmd.build import build_main

from book.failures import write_report
from book.record import read_record

OPTIONS = ["-n", "-W", "--keep-going", "-b", "html"]


def command(source: Path | str, outdir: Path | str, *extra: str) -> list[str]:
    """This build command, run by this interpreter (for tools and tests)."""
    return [sys.executable, "-m", "book", "build", str(source), str(outdir), *extra]


def pages_run(build: Path, since: float) -> tuple[list[str], int]:
    """The pages with code that the build started at `since` (a `time.time()`) executed
    itself, and how many pages have code."""
    record = read_record(build)
    pages = record.pages if record else {}
    with_code = {name: page.executed_at for name, page in pages.items() if page.executed_at}
    return sorted(name for name, when in with_code.items() if when >= since), len(with_code)


def main(argv: list[str] | None = None) -> int:
    source, outdir, *extra = sys.argv[1:] if argv is None else argv  # (book.__main__ checks)
    build, started = Path(outdir).parent, time.time()
    doctrees = ["--doctree-dir", str(build / "doctrees")]  # never published with the pages
    status = build_main([*OPTIONS, *doctrees, *extra, source, outdir])  # Sphinx in this process
    ran, with_code = pages_run(build, started)
    print(
        f"Executed {len(ran)} of the {with_code} pages with code; the cache served the rest.",
        flush=True,
    )
    said = write_report(build, started)
    if said is not None:
        print(f"\n{said}", flush=True)
    return status
