"""How long the book takes to build, against the floor of running its code as plain scripts.

    python tools/build_benchmark.py [--jobs N] [--pytest "COMMAND"] [--out FILE]

Measures, in one run on this machine: (a) the floor, every page's code cells run as one
plain Python script per page, one interpreter each, in sequence; (b) a clean build with an
empty cache, with `-j 1`, with `-j N` in Sphinx's own page order (`-D book_balance=0`), and
with `-j N` as the book builds (N: --jobs, by default one per core);
(c) a rebuild with nothing changed; (d) a rebuild after a prose edit of one page; (e) after
a code edit in one page; (f) after a change to one chapter2 module ((c)-(f) with `-j N`).
For each: wall time and the pages executed. With --pytest, (g): the test suite, run by that
command against the clean build of (b). Every file it edits is restored; the builds go to a
temporary folder, so the book's own build and cache are not touched.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from book import build as book_build
from book.dependencies import code_cells, page_dependencies

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

EDITED_PAGE = DOCS / "fusion.md"
EDITED_MODULE = ROOT / "src" / "chapter2" / "timing.py"

# The runs, named as the report and README.md show them, and the edits of (d)-(f).
FLOOR, SERIAL = "(a) floor: plain scripts", "(b) clean build, -j 1"
NOTHING, PROSE = "(c) nothing changed", "(d) prose edit of fusion"
CODE, MODULE = "(e) code edit in fusion", "(f) change to chapter2/timing.py"
TESTS = "(g) pytest, without the book build"
EDITS = [
    (PROSE, EDITED_PAGE, lambda t: t.replace("# Operator fusion\n", "# Operator fusion\n\nNew.\n")),
    (CODE, EDITED_PAGE, lambda t: t.replace("computation(x, y):\n", "computation(x, y):  # !\n")),
    (MODULE, EDITED_MODULE, lambda t: t + "\n# a benchmark edit\n"),
]


def notebook_pages() -> list[Path]:
    return sorted(p for p in DOCS.glob("*.md") if "```{code-cell}" in p.read_text())


def run_as_script(
    page: Path, scratch: Path, prelude: str = "", **env: str
) -> subprocess.CompletedProcess:
    """A page's code cells, in order, as one plain Python script in a new interpreter run
    from docs/ (as the build runs the page), after `prelude`, with `env` added to the
    environment."""
    script = scratch / f"{page.stem}.py"
    script.write_text("\n\n".join([prelude, *code_cells(page.read_text())]))
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=DOCS,
        env={**os.environ, "MPLBACKEND": "Agg", **env},
        capture_output=True,
        text=True,
        check=False,
    )


def floor(scratch: Path) -> tuple[float, int]:
    """Every page's code as a plain script, one interpreter per page, in sequence."""
    start = time.perf_counter()
    pages = notebook_pages()
    for page in pages:
        run_as_script(page, scratch).check_returncode()
    return time.perf_counter() - start, len(pages)


def build(build_dir: Path, jobs: int, *extra: str) -> tuple[float, list[str]]:
    """One sphinx-build; the pages it executed, from myst-nb's log."""
    command = book_build.command(DOCS, build_dir / "html", "-j", str(jobs), *extra)
    start = time.perf_counter()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, "BOOK_BUILD_DIR": str(build_dir)},
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stdout[-3000:] + done.stderr[-3000:])
    executed = sorted(
        {
            Path(line.split(":")[0]).stem
            for line in done.stdout.splitlines() + done.stderr.splitlines()
            if "Executing notebook" in line
        }
    )
    return seconds, executed


def edited(path: Path, change):
    """Apply `change` to the file's text; return a function that restores it."""
    original = path.read_text()
    if change(original) == original:
        msg = f"the benchmark's edit no longer applies to {path.name}: update EDITS"
        raise ValueError(msg)
    path.write_text(change(original))
    return lambda: path.write_text(original)


def busy_cpu_seconds() -> float | None:
    """CPU seconds all cores have spent busy since boot (Linux's /proc/stat), else None."""
    stat = Path("/proc/stat")
    if not stat.exists():
        return None
    ticks = [int(t) for t in stat.read_text().split("\n", 1)[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # less idle, iowait


@dataclass(frozen=True)
class TestRun:
    """What the test suite did: its wall time, pytest's summary line and exit status, and
    the share of all cores' time it kept busy (None where that cannot be read)."""

    seconds: float
    summary: str
    returncode: int
    busy: float | None
    output: str

    @property
    def passed(self) -> int:
        found = re.search(r"(\d+) passed", self.summary)
        return int(found[1]) if found else 0

    @property
    def failed(self) -> bool:
        return self.returncode != 0 or " passed" not in self.summary


def run_tests(command: str, build_dir: Path) -> TestRun:
    """The test suite against the book built in `build_dir`, passing or not."""
    busy = busy_cpu_seconds()
    start = time.perf_counter()
    done = subprocess.run(
        [*shlex.split(command), "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "BOOK_BUILD_DIR": str(build_dir)},
        check=False,
    )
    seconds = time.perf_counter() - start
    if busy is not None:  # clock ticks are coarse: a short, busy run can count past 100 %
        busy = min(1.0, (busy_cpu_seconds() - busy) / (seconds * os.cpu_count()))
    lines = done.stdout.strip().splitlines()
    summary = lines[-1].strip("= ") if lines else f"no output (exit status {done.returncode})"
    output = done.stdout[-3000:] + done.stderr[-3000:]
    return TestRun(seconds, summary, done.returncode, busy, output)


def measure(jobs: int, pytest: str | None) -> tuple[dict, TestRun | None]:
    """Every build, in order, in a temporary folder: name -> (seconds, pages executed); then,
    if `pytest` is given, what `run_tests` reports of it against the clean build."""
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        results[FLOOR] = floor(scratch)
        results[SERIAL] = build(scratch / "serial", 1)
        results[f"(b) clean build, -j {jobs}, Sphinx's page order"] = build(
            scratch / "unbalanced", jobs, "-D", "book_balance=0"
        )
        results[f"(b) clean build, -j {jobs}"] = build(scratch / "build", jobs)
        results[NOTHING] = build(scratch / "build", jobs)
        for name, path, change in EDITS:
            restore = edited(path, change)
            try:
                results[name] = build(scratch / "build", jobs)
            finally:
                restore()
            build(scratch / "build", jobs)  # back to the unedited book before the next edit
        tests = run_tests(pytest, scratch / "build") if pytest else None
    return results, tests


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--pytest", help="the test command whose wall time (g) measures")
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "benchmarks" / "build.json")
    args = parser.parse_args(argv)
    clean = f"(b) clean build, -j {args.jobs}"
    results, tests = measure(args.jobs, args.pytest)
    users = sorted(
        p.stem
        for p in notebook_pages()
        if EDITED_MODULE in page_dependencies(ROOT / "src", p.read_text())
    )
    ratio = round(results[clean][0] / results[FLOOR][0], 2)
    executed = {name: pages for name, (_, pages) in results.items()}
    targets = {
        clean: ("at most 0.9 x the floor", ratio <= 0.9),
        NOTHING: ("no page, at most 3 s", executed[NOTHING] == [] and results[NOTHING][0] <= 3),
        PROSE: ("no page", executed[PROSE] == []),
        CODE: ("fusion only", executed[CODE] == ["fusion"]),
        MODULE: ("the pages importing it", executed[MODULE] == users),
    }
    runs = {
        name: {"seconds": round(s, 1), "executed": pages} for name, (s, pages) in results.items()
    }
    if tests:
        share = None if tests.busy is None else round(tests.busy, 2)
        runs[TESTS] = {"seconds": round(tests.seconds, 1), "tests": tests.passed}
        runs[TESTS] |= {"cores busy": share, "failed": tests.summary if tests.failed else None}
        targets[TESTS] = ("at most 60 s", tests.seconds <= 60 and not tests.failed)
    for name, (target, met) in targets.items():
        runs[name] |= {"target": target, "met": met}
    report = {
        "jobs": args.jobs,
        "cores": os.cpu_count(),
        "recorded": time.strftime("%Y-%m-%d"),
        "pages importing timing.py": users,
        "runs": runs,
        "clean build / floor": ratio,
        "clean build -j 1 / floor": round(results[SERIAL][0] / results[FLOOR][0], 2),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(markdown(report))
    if tests and tests.failed:
        print(
            f"\n{tests.output}\npytest failed ({tests.summary}); the build times above are "
            f"recorded in {args.out}."
        )
        return 1
    return 0


def tests_passed(run: dict) -> str:
    """The test suite's row: tests passed (or pytest's summary, when it failed), and how busy
    it kept the cores."""
    busy = run["cores busy"]
    if run.get("failed"):
        return f"no page (pytest failed: {run['failed']})"
    return f"no page ({run['tests']} tests passed" + (
        f"; cores busy {busy:.0%} of the time)" if busy is not None else ")"
    )


def markdown(report: dict) -> str:
    """The report as README.md shows it: a table of the runs and the two ratios."""
    everything = report["runs"][FLOOR]["executed"]
    lines = ["| run | seconds | pages executed | target |", "|---|---|---|---|"]
    for name, run in report["runs"].items():
        executed = run["executed"] if "executed" in run else tests_passed(run)
        if isinstance(executed, list):
            whole = len(executed) == everything
            executed = f"all {everything}" if whole else ", ".join(executed) or "none"
        target = (
            f"{run['target']}: {'met' if run['met'] else '**missed**'}" if "target" in run else ""
        )
        lines.append(f"| {name} | {run['seconds']} | {executed} | {target} |")
    return "\n".join(lines) + (
        f"\n\nClean build / floor: {report['clean build / floor']} with `-j {report['jobs']}`, "
        f"{report['clean build -j 1 / floor']} with `-j 1` ({report['cores']} cores, "
        f"recorded {report['recorded']})."
    )


def site_markdown(site: dict, report: dict) -> str:
    """The versioned site's wall time (nox -s site records it), beside the clean build's."""
    clean = report["runs"][f"(b) clean build, -j {report['jobs']}"]["seconds"]
    others = ", ".join(site["versions"][1:])
    caches = "empty caches" if site["clean caches"] else "caches of earlier builds"
    return (
        f"The versioned site (`nox -s site -- {' '.join(site['versions'][1:])}`: the baseline "
        f"and drift builds under {others}, claims and reports included) took "
        f"{site['seconds']} s from {caches}, {site['seconds'] / clean:.1f} times the clean "
        f"build above ({site['cores']} cores, recorded {site['recorded']})."
    )


if __name__ == "__main__":
    sys.exit(main())
