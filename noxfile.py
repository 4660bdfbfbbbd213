"""Entry points of the book: `nox -l` lists them."""

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).parent
# Where the book and its execution cache are built; BOOK_BUILD_DIR moves both (conf.py reads it).
BUILD = Path(os.environ.get("BOOK_BUILD_DIR", ROOT / "docs" / "_build")).resolve()
SPHINX = ["sphinx-build", "-W", "--keep-going", "-b", "html", "docs", str(BUILD / "html")]
LINTED = ["src", "tests", "noxfile.py", "docs/conf.py", "docs/_ext"]
NO_PYTHON = (
    "No Python >= 3.12 was found (JAX 0.12 needs it). Install one, for example "
    "`apt-get install python3.12`, `pyenv install 3.12` or `uv python install 3.12`, "
    "and make it reachable as `python3.12` or `python3.13` on PATH"
)

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "docs", "tests"]
nox.options.stop_on_first_error = True


def _is_modern(executable: str) -> bool:
    check = "import sys; sys.exit(sys.version_info < (3, 12))"
    return subprocess.run([executable, "-c", check], capture_output=True).returncode == 0


def find_python() -> str | None:
    """The first Python >= 3.12 here: this one, one on PATH, or one pyenv installed."""
    candidates = [sys.executable]
    candidates += [shutil.which(f"python3.{minor}") for minor in (13, 12, 14)]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += sorted(glob.glob(str(pyenv / "versions" / "3.1[2-9]*" / "bin" / "python3")))
    return next((c for c in candidates if c and _is_modern(c)), None)


PYTHON = find_python()


def _install(session: nox.Session, extras: str) -> None:
    if PYTHON is None:
        session.error(NO_PYTHON)
    session.install("-e", f".[{extras}]")


@nox.session(python=PYTHON or False)
def docs(session: nox.Session) -> None:
    """Build the book: every page executed, warnings are errors; arguments go to sphinx-build."""
    _install(session, "baseline,docs")
    env = {"BOOK_BUILD_DIR": str(BUILD)}
    try:
        session.run(*SPHINX, *session.posargs, env=env)
    except nox.command.CommandFailed:
        failed = BUILD / "html" / "failed-pages.txt"  # written by docs/_ext/book/failures.py
        if failed.exists():
            print(failed.read_text(), flush=True)
        session.error("the book did not build cleanly: see the pages and warnings above")
    session.log(f"Open {BUILD / 'html' / 'index.html'} in a browser.")


@nox.session(python=PYTHON or False)
def tests(session: nox.Session) -> None:
    """Run pytest: the engine, the claims and the built site (build it first with docs)."""
    _install(session, "baseline,docs,test")
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON or False)
def serve(session: nox.Session) -> None:
    """Rebuild the book live while you edit pages (sphinx-autobuild on port 8000)."""
    _install(session, "baseline,docs,dev")
    session.run(
        "sphinx-autobuild",
        *SPHINX[1:],
        "--watch",
        "src",
        *session.posargs,
        env={"BOOK_BUILD_DIR": str(BUILD)},
    )


@nox.session(python=PYTHON or False)
def lint(session: nox.Session) -> None:
    """Check style with ruff: lint rules and formatting, without changing files."""
    if PYTHON is None:
        session.error(NO_PYTHON)
    session.install("ruff")
    session.run("ruff", "check", *LINTED)
    session.run("ruff", "format", "--check", *LINTED)
