"""Building the book: one sphinx-build command, which nox, the benchmark and the tests share.

    python -m book.build SOURCE OUTDIR [sphinx-build options ...]
    python -m book.build --autobuild SOURCE OUTDIR [sphinx-autobuild options ...]

builds with the book's options (every cross-reference resolved, warnings as errors, going on
past failures, one page executed at a time, so that no timing shares the machine) and, when the
build fails, prints the problems it wrote to `failed-pages.txt` (see book.failures) as its
last lines. `--autobuild` rebuilds live with sphinx-autobuild instead.
"""

import subprocess
import sys
from pathlib import Path

OPTIONS = ["-n", "-W", "--keep-going", "-b", "html"]


def command(source: Path | str, outdir: Path | str, *extra: str, autobuild=False) -> list[str]:
    """The sphinx-build (or sphinx-autobuild) command line for the book."""
    tool = "sphinx_autobuild" if autobuild else "sphinx"
    return [sys.executable, "-m", tool, *OPTIONS, *extra, str(source), str(outdir)]


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    autobuild = "--autobuild" in args
    if autobuild:
        args.remove("--autobuild")
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    source, outdir, *extra = args
    done = subprocess.run(command(source, outdir, *extra, autobuild=autobuild), check=False)
    if done.returncode != 0:
        report = Path(outdir) / "failed-pages.txt"
        print(report.read_text() if report.exists() else "The build failed: see above.")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
