"""Entry points of the book: `nox -l` lists them."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nox

ROOT = Path(__file__).parent
# Where the book and its execution cache are built; BOOK_BUILD_DIR moves both (conf.py reads it).
BUILD = Path(os.environ.get("BOOK_BUILD_DIR", ROOT / "docs" / "_build")).resolve()
# The book's sphinx-build command and options live in one place, the book's Sphinx layer:
# `python -m book.build SOURCE OUTDIR [options]` (docs/_ext/book/build.py).
BOOK_BUILD = ["python", "-m", "book.build", "docs", str(BUILD / "html")]
# The pinned toolchain (Sphinx, myst-nb, jupyter-cache, the theme, pytest, ruff, ...) that
# every session installs; `nox -s toolchain` tries the newest releases instead.
CONSTRAINTS = ["-c", str(ROOT / "constraints.txt")]
# The test command of the tests session, which the benchmark times as well: every core.
PYTEST = ["pytest", "-n", "auto", "--dist", "worksteal"]
LINTED = ["src", "tests", "tools", "examples", "noxfile.py", "docs/conf.py", "docs/_ext"]
NO_PYTHON = (
    "No Python >= 3.12 was found (JAX 0.12 needs it). Install one, for example "
    "`apt-get install python3.12`, `pyenv install 3.12` or `uv python install 3.12`, "
    "and make it reachable as `python3.12` or `python3.13` on PATH"
)

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "docs", "tests"]
nox.options.stop_on_first_error = True


def _version_of(executable: str) -> tuple[int, int] | None:
    ask = "import sys; print(*sys.version_info[:2])"
    done = subprocess.run([executable, "-c", ask], capture_output=True, text=True, check=False)
    return tuple(map(int, done.stdout.split())) if done.returncode == 0 else None


def find_python(wanted: str | None = None) -> str | None:
    """A Python `wanted` ("3.11"), or the first >= 3.12: this one, on PATH, or from pyenv."""
    candidates = [sys.executable]
    candidates += [shutil.which(f"python3.{minor}") for minor in (13, 12, 14, 11, 10)]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += sorted(str(p) for p in pyenv.glob("versions/3.1[0-9]*/bin/python3"))
    for candidate in filter(None, candidates):
        version = _version_of(candidate)
        if version and (f"{version[0]}.{version[1]}" == wanted if wanted else version >= (3, 12)):
            return candidate
    return None


PYTHON = find_python()


def _install(session: nox.Session, extras: str, *options: str) -> None:
    """The book and `extras` with the pinned toolchain (or `options` instead), compiled to
    bytecode at install time: every page kernel, test and build imports JAX and Sphinx, and
    where PYTHONDONTWRITEBYTECODE is set (as on these machines) nothing else would ever write
    their .pyc files (README, "Build speed")."""
    if PYTHON is None:
        session.error(NO_PYTHON)
    pins = options or CONSTRAINTS
    session.install(*pins, "-e", f".[{extras}]", env={"UV_COMPILE_BYTECODE": "1"})


@nox.session(python=PYTHON or False)
def docs(session: nox.Session) -> None:
    """Build the book: every page executed, warnings are errors; arguments go to sphinx-build."""
    _install(session, "baseline,docs")
    try:
        session.run(*BOOK_BUILD, *session.posargs, env={"BOOK_BUILD_DIR": str(BUILD)})
    except nox.command.CommandFailed:
        session.error("the book did not build cleanly: the problems are listed above")
    session.log(f"Open {BUILD / 'html' / 'index.html'} in a browser.")


@nox.session(python=PYTHON or False)
def tests(session: nox.Session) -> None:
    """Run pytest: the engine, the claims and the built site (build it first with docs).
    Tests run on every core (pytest-xdist); `-- -n 0` runs them in this one process."""
    _install(session, "baseline,docs,test")
    session.run(*PYTEST, *session.posargs)


@nox.session(python=PYTHON or False)
def serve(session: nox.Session) -> None:
    """Rebuild the book live while you edit pages (sphinx-autobuild on port 8000)."""
    _install(session, "baseline,docs,dev")
    session.run(
        *BOOK_BUILD,
        "--autobuild",
        "--watch",
        "src",
        *session.posargs,
        env={"BOOK_BUILD_DIR": str(BUILD)},
    )


# JAX releases of the compatibility matrix, each with a Python it supports (jax 0.11 and
# later need 3.12; jax 0.10 runs on 3.11, as the drift report of 0.10.2 shows).
# The JAX the book is written against (the baseline extra of pyproject.toml).
BASELINE_JAX = re.search(r'"jax==([\w.]+)"', (ROOT / "pyproject.toml").read_text())[1]
RELEASES = {
    "0.4.38": "3.12",
    "0.5.3": "3.12",
    "0.6.2": "3.12",
    "0.7.2": "3.12",
    "0.8.3": "3.12",
    "0.9.2": "3.12",
    "0.10.2": "3.11",
    "0.11.2": "3.12",
    "0.12.0.1": "3.12",
}


def _venv_for(session: nox.Session, name: str, python: str, *packages: str) -> Path:
    """A virtual environment .nox/<name> made by uv with `python`, holding `packages`
    (compiled to bytecode, as `_install` does)."""
    venv = ROOT / ".nox" / name
    session.run("uv", "venv", "--quiet", "--clear", "-p", python, str(venv), external=True)
    session.run(
        "uv",
        "pip",
        "install",
        "--quiet",
        "--compile-bytecode",
        *CONSTRAINTS,
        "-p",
        str(venv / "bin" / "python"),
        *packages,
        external=True,
    )
    return venv / "bin" / "python"


def _jax_packages(requirement: str) -> list[str]:
    """`jax==V` brings `jaxlib==V` with it; anything else is installed as written."""
    pinned = re.fullmatch(r"jax==([\w.]+)", requirement)
    return [requirement, f"jaxlib=={pinned[1]}"] if pinned else [requirement]


def _build_baseline(session: nox.Session, env: dict[str, str] | None = None) -> Path:
    """Build the baseline book (the pinned JAX) where `nox -s docs` builds it, sharing its
    execution cache (nothing is executed again when the pages did not change); return the
    HTML folder."""
    if PYTHON is None:
        session.error(NO_PYTHON)
    interpreter = _venv_for(session, "baseline", PYTHON, "-e", ".[baseline,docs]")
    session.run(
        str(interpreter),
        *BOOK_BUILD[1:],
        env={"BOOK_BUILD_DIR": str(BUILD), **(env or {})},
        external=True,
    )
    return BUILD / "html"


def _drift_build(
    session: nox.Session,
    requirement: str,
    python: str,
    baseline_html: Path,
    site_versions: list[str] = (),
) -> tuple[str, Path, bool]:
    """Check every claim and build the book under `requirement` in .nox/drift-<jax> (every
    cell runs, failing or not), write the drift report to data/drift/jax-<installed JAX>/,
    and build again so that the build's page drift-report holds it (only that page changes).
    Returns the installed JAX, the HTML folder and whether anything changed."""
    version = re.sub(r"^jax[=<>~!]*", "", requirement) or "latest"
    interpreter = _venv_for(
        session, f"drift-{version}", python, "-e", ".[docs]", *_jax_packages(requirement)
    )
    build = BUILD / f"drift-{version}"
    claims_json = build / "claims.json"
    build.mkdir(parents=True, exist_ok=True)
    session.run(
        str(interpreter),
        "-m",
        "chapter2.claims",
        "--json",
        str(claims_json),
        success_codes=[0, 1],
        external=True,
    )
    installed = json.loads(claims_json.read_text())["jax"]
    report = ROOT / "data" / "drift" / f"jax-{installed}"
    env = {
        "BOOK_BUILD_DIR": str(build),
        "BOOK_DRIFT_CLAIMS": str(claims_json),
        "BOOK_DRIFT_REPORT": str(report / "report.json"),
        "BOOK_SITE_VERSIONS": " ".join(site_versions),
    }
    command = [
        str(interpreter),
        *BOOK_BUILD[1:4],
        str(build / "html"),
        "-D",
        "nb_execution_allow_errors=1",  # every cell runs: all that differs is seen
    ]
    session.run(*command, env=env, success_codes=[0, 1, 2], external=True)
    session.run(
        str(interpreter),
        "-m",
        "chapter2.claims.drift",
        str(claims_json),
        str(build / "html" / "failed-pages.json"),
        "--out",
        str(report),
        "--baseline",
        str(ROOT / "data" / "matrix" / f"jax-{BASELINE_JAX}.json"),
        "--notebooks",
        str(baseline_html / "_sources"),
        str(build / "html" / "_sources"),
        success_codes=[0, 1],
        external=True,
    )
    # Again, every page written (-a): banners name failed cells, drift-report holds the report.
    session.run(*command, "-a", env=env, success_codes=[0, 1, 2], external=True)
    found = json.loads((report / "report.json").read_text())
    changed = any(found[k] for k in ("changed_claims", "failing_cells", "changed_outputs"))
    return installed, build / "html", changed or bool(found["modules_not_loaded"])


@nox.session(python=PYTHON or False)
def standin_gpu(session: nox.Session) -> None:
    """Build the whole book as a machine whose default device is a GPU reads it: every page
    kernel starts with tools/stand_in_gpu.py (an IPython startup file), into its own folder
    and cache (BUILD/standin-gpu). The computations stay on the CPU."""
    _install(session, "baseline,docs")
    build = BUILD / "standin-gpu"
    startup = build / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "tools" / "stand_in_gpu.py", startup / "00-stand-in-gpu.py")
    env = {"BOOK_BUILD_DIR": str(build), "IPYTHONDIR": str(build / "ipython")}
    env["JAX_PLATFORMS"] = "cpu"  # as tests/test_pages_as_scripts.py runs each page
    try:
        session.run("python", "-m", "book.build", "docs", str(build / "html"), env=env)
    except nox.command.CommandFailed:
        session.error("the book did not build with a stand-in GPU: the problems are listed above")
    session.log(f"Open {build / 'html' / 'index.html'} in a browser.")


@nox.session(python=False)
def drift(session: nox.Session) -> None:
    """Check every claim and build the book under another JAX, then report what changed.

    nox -s drift -- jax==0.11.2 [--python 3.12]: the environment is .nox/drift-<jax>, the
    build docs/_build/drift-<jax>, the report data/drift/jax-<version>/report.{md,json}. The
    baseline book is built first (docs/_build/html, as nox -s docs), so that every cell's
    outputs are compared with the baseline's. Fails when a claim changed, a cell failed or an
    output changed.
    """
    args = list(session.posargs)
    wanted = args.pop(args.index("--python") + 1) if "--python" in args else None
    args = [a for a in args if a != "--python"]
    if len(args) != 1:
        session.error("usage: nox -s drift -- jax==<version> [--python 3.X]")
    python = find_python(wanted)
    if python is None:
        session.error(f"no Python {wanted or '>= 3.12'} found on PATH or in pyenv")
    installed, _, changed = _drift_build(session, args[0], python, _build_baseline(session))
    if changed:
        session.error(f"the book drifted under JAX {installed}: see data/drift/jax-{installed}")


@nox.session(python=False)
def site(session: nox.Session) -> None:
    """The book as each JAX release runs it, in one site with a version switcher.

    nox -s site -- 0.10.2 0.11.2 builds the baseline book and a drift build under each
    release (as nox -s drift does, reports included) and puts them in docs/_build/site/,
    one folder per release (jax-<version>/) beside switcher.json; serve that folder. Built
    from empty caches, its wall time goes to data/benchmarks/site.json (README, "Build speed").
    """
    if not session.posargs:
        session.error("usage: nox -s site -- <release> [<release> ...]")
    started = time.perf_counter()
    folders = [BUILD, *(BUILD / f"drift-{r}" for r in session.posargs)]
    clean = not any(
        (folder / ".jupyter_cache").exists() or (folder / "html" / ".doctrees").exists()
        for folder in folders
    )
    python = find_python()
    if python is None:
        session.error(NO_PYTHON)
    versions = [BASELINE_JAX, *session.posargs]
    listed = {"BOOK_SITE_VERSIONS": " ".join(versions)}
    builds = {BASELINE_JAX: _build_baseline(session, listed)}
    for release in session.posargs:
        installed, html, _ = _drift_build(
            session, f"jax=={release}", python, builds[BASELINE_JAX], versions
        )
        builds[installed] = html
    _build_baseline(session, listed)  # its page drift-report sums up the reports just written
    site_folder = BUILD / "site"
    session.run(
        str(ROOT / ".nox" / "baseline" / "bin" / "python"),
        "-m",
        "book.site",
        str(site_folder),
        BASELINE_JAX,
        *(f"{v}={p}" for v, p in builds.items()),
        external=True,
    )
    if clean:  # the benchmark's figure: a site built from nothing
        timing = {
            "versions": list(builds),
            "seconds": round(time.perf_counter() - started, 1),
            "clean caches": clean,
            "cores": os.cpu_count(),
            "recorded": time.strftime("%Y-%m-%d"),
        }
        benchmark = ROOT / "data" / "benchmarks" / "site.json"
        benchmark.write_text(json.dumps(timing, indent=2) + "\n")
    session.log(f"The site is in {site_folder}: serve it (python -m http.server -d ...).")


@nox.session(python=False)
def matrix(session: nox.Session) -> None:
    """Evaluate every claim under each JAX release of RELEASES (data/matrix); arguments pick
    releases, e.g. nox -s matrix -- 0.10.2 0.11.2."""
    folder = ROOT / "data" / "matrix"
    folder.mkdir(parents=True, exist_ok=True)
    for release in session.posargs or RELEASES:
        python = find_python(RELEASES.get(release, "3.12"))
        if python is None:
            session.error(f"no Python {RELEASES.get(release)} for jax {release}")
        interpreter = _venv_for(
            session,
            f"matrix-{release}",
            python,
            "numpy",
            "matplotlib",
            "scipy",
            *_jax_packages(f"jax=={release}"),
        )
        session.run(
            str(interpreter),
            "-m",
            "chapter2.claims",
            "--json",
            str(folder / f"jax-{release}.json"),
            env={"PYTHONPATH": str(ROOT / "src")},
            success_codes=[0, 1],
            external=True,
        )
    session.run(
        sys.executable,
        "-m",
        "chapter2.claims.matrix",
        str(folder),
        env={"PYTHONPATH": str(ROOT / "src")},
        external=True,
    )


@nox.session(python=PYTHON or False)
def benchmark(session: nox.Session) -> None:
    """Time clean and incremental builds against the floor, and the tests session's pytest:
    nox -s benchmark -- --jobs 2."""
    _install(session, "baseline,docs,test")
    session.run(
        "python", "tools/build_benchmark.py", "--pytest", " ".join(PYTEST), *session.posargs
    )


@nox.session(python=PYTHON or False)
def lint(session: nox.Session) -> None:
    """Check style with ruff: lint rules and formatting, without changing files."""
    if PYTHON is None:
        session.error(NO_PYTHON)
    session.install(*CONSTRAINTS, "ruff")
    session.run("ruff", "check", *LINTED)
    session.run("ruff", "format", "--check", *LINTED)


@nox.session(python=PYTHON or False)
def toolchain(session: nox.Session) -> None:
    """Build the book and run the tests with the newest releases of the toolchain, not the
    pinned ones (constraints.txt): what upgrading would break. The versions used, the build's
    problems and the test results are kept in docs/_build/toolchain/."""
    _install(session, "baseline,docs,test", "--upgrade")
    folder = BUILD / "toolchain"
    folder.mkdir(parents=True, exist_ok=True)
    versions = session.run("uv", "pip", "freeze", "-p", "python", silent=True, external=True)
    (folder / "versions.txt").write_text(versions)
    env = {"BOOK_BUILD_DIR": str(folder)}
    session.run(*BOOK_BUILD[:4], str(folder / "html"), env=env, success_codes=[0, 1])
    session.run(*PYTEST, f"--junitxml={folder / 'pytest.xml'}", env=env)
