"""How long the book takes to build, against the floor of running its code as plain scripts.

    python tools/build_benchmark.py [--out FILE]

In one run: (a) the floor (each page's code as a plain script, in sequence), (b) a clean
build, rebuilds after (c) nothing, (d) a prose edit, (e) a code edit, (f) an engine change:
wall time and pages executed, in a temporary folder. Exits 1 when a target is missed.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from book import book_commit
from book import build as book_build
from book.dependencies import page_dependencies
from book.record import read_record
from book.roofs import probe_seconds
from record_backend import notebook_pages, page_script, run_script

from chapter2.environment import cpu_model

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

EDITED_PAGE = DOCS / "fusion.md"
EDITED_MODULE = ROOT / "src" / "chapter2" / "timing.py"

# The runs, named as the report and MAINTAINING.md show them, and the edits of (d)-(f).
FLOOR, CLEAN = "(a) floor: plain scripts", "(b) clean build"
NOTHING, PROSE = "(c) nothing changed", "(d) prose edit of fusion"
CODE, MODULE = "(e) code edit in fusion", "(f) change to chapter2/timing.py"
EDITS = [
    (PROSE, EDITED_PAGE, lambda t: t.replace("# Operator fusion\n", "# Operator fusion\n\nNew.\n")),
    (CODE, EDITED_PAGE, lambda t: t.replace("computation(x, y):\n", "computation(x, y):  # !\n")),
    (MODULE, EDITED_MODULE, lambda t: t + "\n# a benchmark edit\n"),
]
FLOOR_RATIO = 1.45  # the most a clean build may take, in floors (MAINTAINING.md, build speed)
OVERHEAD = 15  # seconds: the most a clean build may spend outside its pages' execution
PROBE = "roofs' probe, counted as the pages' work"  # the seconds it took, in the report


def floor(scratch: Path) -> tuple[float, list[str]]:
    """Every page's code as a plain script, one interpreter per page, in sequence."""
    start = time.perf_counter()
    for page in notebook_pages():
        script = scratch / f"{page.stem}.py"
        script.write_text(page_script(page))
        status, output, _ = run_script(script, DOCS, dict(os.environ))
        if status != 0:
            msg = f"{page.name} failed as a script:\n{output[-3000:]}"
            raise RuntimeError(msg)
    return time.perf_counter() - start, [p.stem for p in notebook_pages()]


def build(build_dir: Path) -> tuple[float, list[str]]:
    """One build of the book; the pages it executed, from its record."""
    command = book_build.command(DOCS, build_dir / "html")
    started, start = time.time(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stdout[-3000:] + done.stderr[-3000:])
    return seconds, book_build.pages_run(build_dir, started)[0]


def edited(path: Path, change):
    """Apply `change` to the file's text; return a function that restores it."""
    original = path.read_text()
    if change(original) == original:
        msg = f"the benchmark's edit no longer applies to {path.name}: update EDITS"
        raise ValueError(msg)
    path.write_text(change(original))
    return lambda: path.write_text(original)


def measure() -> tuple[dict, dict, float]:
    """Every run, in order, in a temporary folder: name -> (seconds, pages executed); the
    clean build's record, and the seconds its roofs' probe took."""
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        results = {FLOOR: floor(scratch), CLEAN: build(scratch / "build")}
        clean = read_record(scratch / "build")  # before a rebuild writes another
        probe = probe_seconds(scratch / "build")
        results[NOTHING] = build(scratch / "build")
        for name, path, change in EDITS:
            restore = edited(path, change)
            try:
                results[name] = build(scratch / "build")
            finally:
                restore()
            build(scratch / "build")  # back to the unedited book before the next edit
    return results, clean, probe


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "docs" / "_build" / "benchmarks" / "build.json"
    )
    args = parser.parse_args(argv)
    results, clean, probe = measure()
    users = sorted(
        p.stem
        for p in notebook_pages()
        if EDITED_MODULE in page_dependencies(ROOT / "src", p.read_text())
    )
    ratio = round(results[CLEAN][0] / results[FLOOR][0], 2)
    # The pages' work: executing them, and measuring the roofs they are placed under.
    executing = sum(found.seconds or 0 for found in clean.pages.values()) + probe
    overhead = round(results[CLEAN][0] - executing, 1)
    overhead_met = overhead <= OVERHEAD
    executed = {name: pages for name, (_, pages) in results.items()}
    targets = {
        CLEAN: (f"at most {FLOOR_RATIO} x the floor", ratio <= FLOOR_RATIO),
        NOTHING: ("no page, at most 3 s", executed[NOTHING] == [] and results[NOTHING][0] <= 3),
        PROSE: ("no page, at most 10 s", executed[PROSE] == [] and results[PROSE][0] <= 10),
        CODE: ("fusion only", executed[CODE] == ["fusion"]),
        MODULE: ("the pages importing it", executed[MODULE] == users),
    }
    runs = {
        name: {"seconds": round(s, 1), "executed": pages} for name, (s, pages) in results.items()
    }
    for name, (target, met) in targets.items():
        runs[name] |= {"target": target, "met": met}
    report = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "commit": book_commit(ROOT),  # the book's, "+" where its files had changed
        "recorded": time.strftime("%Y-%m-%d"),
        "pages importing timing.py": users,
        "runs": runs,
        "clean build / floor": ratio,
        "clean build, seconds outside the pages' execution": {
            "seconds": overhead,
            PROBE: probe,
            "target": f"at most {OVERHEAD} s",
            "met": overhead_met,
        },
        "clean build, seconds per page": {
            page: round(found.seconds, 1)
            for page, found in clean.pages.items()
            if found.seconds is not None
        },
        "clean build, timed comparisons": {
            page: [
                {"a": asdict(c.a), "b": asdict(c.b), "verdict": c.verdict}
                for c in found.comparisons
            ]
            for page, found in clean.pages.items()
            if found.comparisons
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(markdown(report))
    return 0 if all(met for _, met in targets.values()) and overhead_met else 1


def markdown(report: dict) -> str:
    """The report as MAINTAINING.md shows it: a table of the runs and the ratio."""
    everything = len(report["runs"][FLOOR]["executed"])
    lines = ["| run | seconds | pages executed | target |", "|---|---|---|---|"]
    for name, run in report["runs"].items():
        executed = run["executed"]
        whole = len(executed) == everything
        executed = f"all {everything}" if whole else ", ".join(executed) or "none"
        met = "met" if run.get("met") else "**missed**"
        target = f"{run['target']}: {met}" if "target" in run else ""
        lines.append(f"| {name} | {run['seconds']} | {executed} | {target} |")
    overhead = report["clean build, seconds outside the pages' execution"]
    met = "met" if overhead["met"] else "**missed**"
    at = f", at {report['commit']}" if report["commit"] else ""  # "": not a git checkout
    return "\n".join(lines) + (
        f"\n\nClean build / floor: {report['clean build / floor']}. The clean build spent "
        f"{overhead['seconds']} s outside its pages' execution and the roofs' probe "
        f"({overhead[PROBE]} s; {overhead['target']}: {met}; "
        f"{report['cores']} cores, {report['cpu']}{at}, recorded {report['recorded']})."
    )


def site_markdown(site: dict, report: dict) -> str:
    """The versioned site's wall time (nox -s site records it), beside the clean build's
    where both were recorded the same day."""
    clean = report["runs"][CLEAN]["seconds"]
    others = " ".join(site["versions"][1:])
    beside = f", {site['seconds'] / clean:.1f} times the clean build above"
    return (
        f"The versioned site (`nox -s site -- {others}`: the baseline and a drift build per "
        f"release, claims and reports included) took {site['seconds']} s"
        f"{beside if site['recorded'] == report['recorded'] else ''} ({site['cores']} cores, "
        f"recorded {site['recorded']})."
    )


if __name__ == "__main__":
    sys.exit(main())
