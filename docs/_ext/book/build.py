"""`python -m book.build SOURCE OUTDIR [sphinx-build options]`: the one build command.

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


def arguments(source: Path | str, outdir: Path | str, *extra: str) -> list[str]:
    """sphinx-build's arguments for the book."""
    doctrees = Path(outdir).parent / "doctrees"  # beside the pages, never published with them
    return [*OPTIONS, "--doctree-dir", str(doctrees), *extra, str(source), str(outdir)]


def command(source: Path | str, outdir: Path | str, *extra: str) -> list[str]:
    """This build command, run by this interpreter (for tools and tests)."""
    return [sys.executable, "-m", "book.build", str(source), str(outdir), *extra]


def pages_run(build: Path, since: float) -> tuple[list[str], int]:
    """The pages with code that the build started at `since` (a `time.time()`) executed
    itself, and how many pages have code."""
    pages = read_record(build).get("pages", {})
    with_code = {
        name: page["executed_at"] for name, page in pages.items() if page.get("executed_at")
    }
    return sorted(name for name, when in with_code.items() if when >= since), len(with_code)


def executed_pages(build: Path, since: float) -> str:
    """How many pages with code the build that started at `since` executed itself."""
    ran, with_code = pages_run(build, since)
    return f"Executed {len(ran)} of the {with_code} pages with code; the cache served the rest."


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    source, outdir, *extra = args
    started = time.time()
    status = build_main(arguments(source, outdir, *extra))  # Sphinx in this process
    print(executed_pages(Path(outdir).parent, started), flush=True)
    said = write_report(Path(outdir).parent, started)
    if said is not None:
        print(f"\n{said}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
