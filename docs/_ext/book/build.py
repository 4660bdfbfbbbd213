"""`python -m book.build SOURCE OUTDIR [sphinx-build options]`: the one build command.

Sphinx with the book's options (nitpicky, warnings as errors, one page at a time, so no timing
shares the machine); a failed build ends with its problems (book.failures).
"""

import subprocess
import sys
import time
from pathlib import Path

from book.failures import write_report

OPTIONS = ["-n", "-W", "--keep-going", "-b", "html"]


def command(source: Path | str, outdir: Path | str, *extra: str) -> list[str]:
    """The sphinx-build command line for the book."""
    doctrees = Path(outdir).parent / "doctrees"  # beside the pages, never published with them
    options = [*OPTIONS, "--doctree-dir", str(doctrees), *extra]
    return [sys.executable, "-m", "sphinx", *options, str(source), str(outdir)]


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    source, outdir, *extra = args
    started = time.time()
    done = subprocess.run(command(source, outdir, *extra), check=False)
    said = write_report(Path(outdir).parent, started)
    if said is not None:
        print(f"\n{said}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
