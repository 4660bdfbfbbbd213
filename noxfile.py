"""Entry points of the book: `nox -l` lists them. MAINTAINING.md says what each is for."""

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nox
from packaging.requirements import Requirement

ROOT = Path(__file__).parent

# Where every session writes (the book, its caches, drift builds, claims, benchmarks);
# BOOK_BUILD_DIR moves it all. `nox -s record` copies what is kept into data/.
BUILD = Path(os.environ.get("BOOK_BUILD_DIR", ROOT / "docs" / "_build")).resolve()


def book_build(html: Path) -> list[str]:
    """The book's build command (`python -m book build`) on docs/, into the folder `html`."""
    return ["python", "-m", "book", "build", "docs", str(html)]


# The pinned toolchain every session installs; `nox -s toolchain` tries the newest instead.
CONSTRAINTS = ["-c", str(ROOT / "constraints.txt")]
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
# The JAX release the book is written against: the pin of the `baseline` extra, which
# `chapter2.releases.baseline_jax` reads the same way (tests/test_environment.py).
BASELINE_JAX = next(
    spec.version
    for pin in map(Requirement, PYPROJECT["project"]["optional-dependencies"]["baseline"])
    if pin.name == "jax"
    for spec in pin.specifier
)
PYTEST = ["pytest", "-n", "auto", "--dist", "worksteal"]  # every core
# The docs session's environment: the tests run in it too (one install, one bytecode compile).
DOCS_PYTHON = ROOT / ".nox" / "docs" / "bin" / "python"
LINTED = ["src", "tests", "tools", "examples", "noxfile.py", "docs/conf.py", "docs/_ext"]
# The JAX releases of the claims matrix, one per minor line, oldest first.
RELEASES = ["0.4.38", "0.5.3", "0.6.2", "0.7.2", "0.8.3", "0.9.2", "0.10.2", "0.11.2", "0.12.0.1"]
# The releases the published site holds beside the baseline, each in a folder of its own.
SITE_RELEASES = ["0.11.2", "0.10.2"]
# The Lighthouse (an npm package) that `nox -s lighthouse` runs.
LIGHTHOUSE = "12.2.3"

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "docs", "tests"]
nox.options.stop_on_first_error = True
nox.options.reuse_venv = "yes"  # a prose edit rebuilds the book, not its environment


def find_python() -> str | None:
    """A Python >= 3.12 (JAX 0.12 needs it): this one, a pyenv version, or one on PATH. Only a
    command on PATH is asked its version (a pyenv shim may name one that is not installed)."""
    if sys.version_info >= (3, 12):
        return sys.executable
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    for found in sorted(pyenv.glob("versions/3.1[2-9]*/bin/python3")):
        return str(found)
    ask = "import sys; sys.exit(sys.version_info < (3, 12))"
    for candidate in filter(None, (shutil.which(f"python3.{m}") for m in (13, 12, 14))):
        if subprocess.run([candidate, "-c", ask], capture_output=True, check=False).returncode == 0:
            return candidate
    return None


PYTHON = find_python()


def _install(session: nox.Session, needs: str, *packages: str, upgrade: bool = False) -> None:
    """The book with `needs` (its extras and dependency groups, comma-separated) and
    `packages`, pinned (newest with `upgrade`), as bytecode."""
    if PYTHON is None:
        session.error("No Python >= 3.12 found: install one (`uv python install 3.12`, say)")
    pins = ["--upgrade"] if upgrade else CONSTRAINTS
    extras = [n for n in needs.split(",") if n in PYPROJECT["project"]["optional-dependencies"]]
    groups = [n for n in needs.split(",") if n not in extras]
    layer = ["-e", "docs/_ext"] if "docs" in groups else []  # the Sphinx layer, its own package
    book = [
        "-e",
        f".[{','.join(extras)}]",
        *layer,
        *nox.project.dependency_groups(PYPROJECT, *groups),
    ]
    session.install(*pins, *book, *packages, env={"UV_COMPILE_BYTECODE": "1"})


def _jax(release: str) -> list[str]:
    """JAX and jaxlib at `release` ("latest": the newest)."""
    return ["jax", "jaxlib"] if release == "latest" else [f"jax=={release}", f"jaxlib=={release}"]


def _jax_version(session: nox.Session) -> str:
    """The JAX release installed in this session's environment, from its package metadata."""
    where = [str(p) for p in Path(session.virtualenv.location).glob("lib/python*/site-packages")]
    return next(importlib.metadata.distributions(name="jax", path=where)).version


def _claims(session: nox.Session) -> tuple[Path, str]:
    """Every claim checked under this session's JAX, into BUILD/claims/jax-<version>.json:
    that file and the version."""
    version = _jax_version(session)
    out = BUILD / "claims" / f"jax-{version}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    session.run("python", "-m", "chapter2.claims", "--json", str(out), success_codes=[0, 1])
    return out, version


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build the book: every page executed, warnings are errors; arguments go to sphinx-build.
    Its environment holds the test tools too: `nox -s tests` runs there."""
    _install(session, "baseline,docs,test")
    # The reader's wheel, which a downloaded notebook installs from the site, or carries
    # where the build has no site (book.notebooks): made before the pages are, each time (it
    # takes about a second, and the same sources give the same bytes).
    wheels = BUILD / "html" / "_wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    session.run("uv", "build", "-q", "--wheel", "--out-dir", str(wheels), ".", external=True)
    try:
        session.run(*book_build(BUILD / "html"), *session.posargs)
    except nox.command.CommandFailed:
        session.error("the book did not build cleanly: the problems are listed above")
    session.log(f"Open {BUILD / 'html' / 'index.html'} in a browser.")


@nox.session(python=False)
def tests(session: nox.Session) -> None:
    """Run pytest on every core (`-- -n 0`: in one process) in the environment of `docs`,
    after it built the book."""
    if not DOCS_PYTHON.exists():
        session.error("build the book first (nox -s docs): the tests run in its environment")
    session.run(str(DOCS_PYTHON), "-m", *PYTEST, *session.posargs, external=True)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """Check style with ruff: lint rules and formatting, without changing files."""
    session.install(*CONSTRAINTS, *nox.project.dependency_groups(PYPROJECT, "dev"))
    session.run("ruff", "check", *LINTED)
    session.run("ruff", "format", "--check", *LINTED)


@nox.session(python=PYTHON)
def drift(session: nox.Session) -> None:
    """`nox -s drift -- 0.11.2` (or latest), after docs: the book under another JAX, reported."""
    if len(session.posargs) != 1:
        session.error("usage: nox -s drift -- <jax release, or latest>")
    baseline = BUILD / "outputs"  # the baseline's executed notebooks (book.notebooks)
    if not baseline.is_dir():
        session.error("build the baseline book first (nox -s docs): its outputs are compared")
    _install(session, "docs", *_jax(session.posargs[0]))
    claims, version = _claims(session)
    build = BUILD / f"drift-{version}"
    env = {"BOOK_DRIFT_CLAIMS": str(claims), "BOOK_DRIFT_BASELINE": str(baseline)}
    session.run(*book_build(build / "html"), env=env, success_codes=[0, 1])
    session.run("python", "-m", "book", "drift", str(build / "report.json"))  # 1: it drifted


def site_plan(versions: list[str], build: Path) -> tuple[Path, dict[str, str]]:
    """The site's plan, written as `chapter2.records.SitePlan` reads it (each build in
    docs/conf.py, the assembly in book.site): the baseline, `versions[0]`, in build/html,
    each other release in build/drift-<release>/html. The file, and each release's folder."""
    builds = {v: str(build / (f"drift-{v}/html" if i else "html")) for i, v in enumerate(versions)}
    plan = build / "site-plan.json"
    plan.parent.mkdir(parents=True, exist_ok=True)
    plan.write_text(json.dumps({"baseline": versions[0], "builds": builds}, indent=2) + "\n")
    return plan, builds


@nox.session(python=False)
def site(session: nox.Session) -> None:
    """The published site: the baseline at its root and a drift build per release of
    SITE_RELEASES (or of those given: `nox -s site -- 0.10.2`) in a folder of its own."""
    started = time.perf_counter()
    versions = [BASELINE_JAX, *(session.posargs or SITE_RELEASES)]
    plan, builds = site_plan(versions, BUILD)
    env = {"BOOK_SITE_PLAN": str(plan)}
    session.run("nox", "-s", "docs", env=env, external=True)
    for release in versions[1:]:  # a drift build fails when something changed: go on
        begun = time.time()
        session.run(
            "nox", "-s", "drift", "--", release, env=env, external=True, success_codes=[0, 1]
        )
        page = Path(builds[release]) / "index.html"  # 1 is also nox's own failure: check
        if not page.is_file() or page.stat().st_mtime < begun:
            session.error(f"the drift build of JAX {release} wrote no site: see its log above")
    assemble = [str(DOCS_PYTHON), "-m", "book", "site", str(BUILD / "site"), str(plan)]
    session.run(*assemble, external=True)
    timing = {"versions": versions, "seconds": round(time.perf_counter() - started, 1)}
    timing |= {"cores": os.cpu_count(), "recorded": time.strftime("%Y-%m-%d")}
    (BUILD / "benchmarks").mkdir(parents=True, exist_ok=True)
    (BUILD / "benchmarks" / "site.json").write_text(json.dumps(timing, indent=2) + "\n")
    session.log(f"The site is in {BUILD / 'site'}: python -m http.server -d {BUILD / 'site'}")


@nox.session(python=PYTHON)
def matrix(session: nox.Session) -> None:
    """Check every claim under each release of RELEASES (or those given), into BUILD/claims/."""
    session.install(*CONSTRAINTS, "-e", ".")
    for release in session.posargs or RELEASES:
        session.install(*CONSTRAINTS, *_jax(release))
        session.install(*_jax(release), "optax")  # an optax that runs there, if one does
        _claims(session)


@nox.session(python=False)
def record(session: nox.Session) -> None:
    """Copy the claims, drift reports and benchmarks from BUILD into data/."""
    kept = []
    for claims in sorted((BUILD / "claims").glob("jax-*.json")):
        kept.append(shutil.copy(claims, ROOT / "data" / "matrix" / claims.name))
    for report in sorted(BUILD.glob("drift-*/report.json")):  # drift-<version>: see drift
        folder = ROOT / "data" / "drift" / f"jax-{report.parent.name.removeprefix('drift-')}"
        folder.mkdir(parents=True, exist_ok=True)
        kept += [shutil.copy(report.with_suffix(s), folder) for s in (".json", ".md")]
    for benchmark in sorted((BUILD / "benchmarks").glob("*.json")):
        kept.append(shutil.copy(benchmark, ROOT / "data" / "benchmarks" / benchmark.name))
    session.log("Recorded: " + ", ".join(str(Path(k).relative_to(ROOT)) for k in kept))


@nox.session(python=PYTHON)
def benchmark(session: nox.Session) -> None:
    """Time clean and incremental builds against the floor, into BUILD/benchmarks/build.json."""
    _install(session, "baseline,docs")
    session.run("python", "tools/build_benchmark.py", "--out", str(BUILD / "benchmarks/build.json"))


@nox.session(python=False)
def lighthouse(session: nox.Session) -> None:
    """After docs: Lighthouse's mobile run, in Debian's Chromium, over every reader page (or
    those given), each page 3 times, into BUILD/benchmarks/lighthouse.json."""
    if not (BUILD / "html" / "index.html").exists() or not DOCS_PYTHON.exists():
        session.error("build the book first (nox -s docs): Lighthouse reads its pages")
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium")
    if chromium is None:
        session.error("Lighthouse drives Debian's Chromium: apt-get install chromium")
    tool = BUILD / "lighthouse"
    npm = ["npm", "install", "--prefix", str(tool), "--no-audit", "--no-fund", "--loglevel=error"]
    session.run(*npm, f"lighthouse@{LIGHTHOUSE}", external=True)
    out = BUILD / "benchmarks" / "lighthouse.json"
    run = ["tools/lighthouse.py", str(BUILD / "html"), str(out)]
    run += ["--lighthouse", str(tool / "node_modules" / ".bin" / "lighthouse")]
    session.run(
        str(DOCS_PYTHON), *run, *session.posargs, env={"CHROME_PATH": chromium}, external=True
    )


@nox.session(python=PYTHON)
def reader(session: nox.Session) -> None:
    """After docs: each chapter page's visible code, run as a reader would, in a new
    environment holding JAX, IPython and the wheel from the served site (pages may be given)."""
    _install(session, "baseline,docs")
    if not (BUILD / "html" / "_wheels").is_dir():
        session.error("build the book first (nox -s docs): its site serves the wheel")
    out = BUILD / "reader"
    shutil.rmtree(out, ignore_errors=True)
    session.run("python", "tools/reader_code.py", str(BUILD / "html"), str(out), *session.posargs)


@nox.session(python=PYTHON)
def scripts(session: nox.Session) -> None:
    """Every page's code as a plain script with a stand-in GPU (or the pages given): each runs
    to the end, and its verdicts are judged on the device its page names."""
    _install(session, "baseline,docs")
    session.run("python", "tools/pages_as_scripts.py", *session.posargs)


@nox.session(python=PYTHON)
def standin_gpu(session: nox.Session) -> None:
    """Build the book as a machine whose default device is a GPU would (a stand-in GPU)."""
    _install(session, "baseline,docs")
    build = BUILD / "standin-gpu"
    startup = build / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "tools" / "stand_in_device.py", startup / "00-stand-in-gpu.py")
    env = {"IPYTHONDIR": str(build / "ipython")}
    env["JAX_PLATFORMS"] = "cpu"  # as tests/test_pages_as_scripts.py runs each page
    session.run(*book_build(build / "html"), env=env)


@nox.session(python=PYTHON)
def toolchain(session: nox.Session) -> None:
    """Build and test with the newest toolchain, not the pinned one, into BUILD/toolchain/."""
    _install(session, "baseline,docs,test", upgrade=True)
    folder = BUILD / "toolchain"
    folder.mkdir(parents=True, exist_ok=True)
    versions = session.run("uv", "pip", "freeze", "-p", "python", silent=True, external=True)
    (folder / "versions.txt").write_text(versions)
    session.run(*book_build(folder / "html"), success_codes=[0, 1])
    env = {"BOOK_BUILD_DIR": str(folder)}  # where the tests find the book (tests/conftest.py)
    session.run(*PYTEST, f"--junitxml={folder / 'pytest.xml'}", env=env)
