"""How long the book takes to build, against the floor of running its code as plain scripts.

    python tools/build_benchmark.py [--jobs N] [--out data/benchmarks/build.json]

Measures, in one run on this machine: (a) the floor, every page's code cells run as one
plain Python script per page, one interpreter each, in sequence; (b) a clean build with an
empty cache; (c) a rebuild with nothing changed; (d) a rebuild after a prose edit of one
page; (e) after a code edit in one page; (f) after a change to one chapter2 module. For each:
wall time and the pages executed. Every file it edits is restored; the builds go to a
temporary folder, so the book's own build and cache are not touched.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

from book.dependencies import _CELL, cell_code, page_dependencies  # noqa: E402

EDITED_PAGE = DOCS / "fusion.md"
EDITED_MODULE = ROOT / "src" / "chapter2" / "timing.py"


def notebook_pages() -> list[Path]:
    return sorted(p for p in DOCS.glob("*.md") if "```{code-cell}" in p.read_text())


def floor(scratch: Path) -> tuple[float, int]:
    """Every page's code as a plain script, one interpreter per page, in sequence."""
    env = {**os.environ, "MPLBACKEND": "Agg"}
    start = time.perf_counter()
    pages = notebook_pages()
    for page in pages:
        script = scratch / f"{page.stem}.py"
        script.write_text("\n\n".join(cell_code(c) for c in _CELL.findall(page.read_text())))
        subprocess.run(
            [sys.executable, str(script)], cwd=DOCS, env=env, check=True, capture_output=True
        )
    return time.perf_counter() - start, len(pages)


def build(build_dir: Path, jobs: int) -> tuple[float, list[str]]:
    """One sphinx-build; the pages it executed, from myst-nb's log."""
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-n",
        "-W",
        "--keep-going",
        "-b",
        "html",
        "-j",
        str(jobs),
        str(DOCS),
        str(build_dir / "html"),
    ]
    start = time.perf_counter()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, "BOOK_BUILD_DIR": str(build_dir)},
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
    path.write_text(change(original))
    return lambda: path.write_text(original)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "benchmarks" / "build.json")
    args = parser.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        results["(a) floor: plain scripts"] = floor(scratch)
        build_dir = scratch / "build"
        results["(b) clean build"] = build(build_dir, args.jobs)
        results["(c) nothing changed"] = build(build_dir, args.jobs)
        steps = [
            (
                "(d) prose edit of fusion",
                EDITED_PAGE,
                lambda t: t.replace(
                    "# Operator fusion\n", "# Operator fusion\n\nA new sentence.\n"
                ),
            ),
            (
                "(e) code edit in fusion",
                EDITED_PAGE,
                lambda t: t.replace(
                    "def simple_computation(x, y):\n", "def simple_computation(x, y):  # edited\n"
                ),
            ),
            (
                "(f) change to chapter2/timing.py",
                EDITED_MODULE,
                lambda t: t + "\n# a benchmark edit\n",
            ),
        ]
        for name, path, change in steps:
            restore = edited(path, change)
            try:
                results[name] = build(build_dir, args.jobs)
            finally:
                restore()
            build(build_dir, args.jobs)  # back to the unedited book before the next step
    users = sorted(
        p.stem
        for p in notebook_pages()
        if EDITED_MODULE in page_dependencies(ROOT / "src", p.read_text())
    )
    floor_seconds = results["(a) floor: plain scripts"][0]
    report = {
        "jobs": args.jobs,
        "cores": os.cpu_count(),
        "recorded": time.strftime("%Y-%m-%d"),
        "pages importing timing.py": users,
        "runs": {
            name: {
                "seconds": round(seconds, 1),
                "executed": executed if isinstance(executed, list) else executed,
            }
            for name, (seconds, executed) in results.items()
        },
        "clean build / floor": round(results["(b) clean build"][0] / floor_seconds, 2),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{'run':36s}{'seconds':>9s}  pages executed")
    for name, run in report["runs"].items():
        executed = run["executed"]
        shown = executed if isinstance(executed, int) else f"{len(executed)} {executed}"
        print(f"{name:36s}{run['seconds']:>9.1f}  {shown}")
    print(
        f"clean build / floor: {report['clean build / floor']}  (jobs={args.jobs}, "
        f"{os.cpu_count()} cores); pages importing timing.py: {users}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
