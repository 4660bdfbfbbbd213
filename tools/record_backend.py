"""Record the book on another backend (a GPU machine where nothing can be installed).

    python tools/record_backend.py prepare WORK   # here, in the docs environment
    python WORK/record_backend.py run OUT         # there: JAX, NumPy, Matplotlib, SciPy

`prepare` writes a new folder to take to that machine: the package's source (`src/`,
`pyproject.toml`, the commit), each page's code cells as one plain script
(`pages/<page>.py`), stand-ins for the two notebook modules the pages import (`shim/`:
`myst_nb.glue` prints what it would glue, `IPython.display.Markdown` is a string) and this
file. `run` records, into OUT: the claims as `python -m chapter2.claims --json` judges them
there (`claims.json`, and the CLI's output in `claims.log`), every page script run to its
end or its first error on the machine's default device (a page about the CPU on its CPU:
`pages.json`, with the last line each printed, and `pages.log`), and `run.json` (device,
platform, versions, date, commit), which is what `chapter2.claims.backends` reads from
`data/backends/<device>-jax-<version>/`. A stand-in is used only where the real module is
missing; no process takes GPU memory ahead (XLA_PYTHON_CLIENT_PREALLOCATE=false).
"""

import argparse
import datetime as dt
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIMS = {
    "myst_nb": '"""Stand-in: print what would be glued."""\n\n\n'
    "def glue(name, value, display=True):\n"
    '    print(f"[glue] {name} = {str(value)[:120]}")\n',
    "IPython": '"""Stand-in: no IPython runs here (Matplotlib asks)."""\n\n'
    "version_info = (0, 0, 0)\n\n\n"
    "def get_ipython():\n    return None\n",
    "IPython.display": '"""Stand-in: Markdown is text; display prints."""\n\n\n'
    "class Markdown(str):\n    pass\n\n\n"
    "def display(*objects):\n    print(*objects)\n",
}


def prepare(work: Path, pages: list[str] | None = None) -> None:
    """Write WORK: src/, pages/<page>.py, shim/ and this file."""
    from book.dependencies import code_cells  # noqa: PLC0415 (the docs environment only)

    if work.exists():
        msg = f"{work} exists: prepare writes a new folder"
        raise SystemExit(msg)
    shutil.copytree(ROOT / "src", work / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", work)  # the baseline pin, read where nothing is installed
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    (work / "commit").write_text(commit.stdout.strip() or "unknown")
    (work / "pages").mkdir()
    sources = {p.stem: p for p in sorted((ROOT / "docs").glob("*.md"))}
    unknown = sorted(set(pages or []) - set(sources))
    if unknown:
        msg = f"no such page: {', '.join(unknown)}"
        raise SystemExit(msg)
    for name, page in sources.items():
        cells = code_cells(page.read_text())
        if cells and (pages is None or name in pages):
            (work / "pages" / f"{name}.py").write_text("\n\n".join(cells) + "\n")
    for module, text in SHIMS.items():
        path = work / "shim" / Path(*module.split(".")) / "__init__.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    shutil.copy(__file__, work / "record_backend.py")


def environment(work: Path) -> dict[str, str]:
    """The environment of a page or the claims CLI: the package, a stand-in for each
    notebook module this interpreter lacks, and no GPU memory taken ahead (each page and
    each probe it starts is a process of its own)."""
    shims = work / "shims-used"
    shutil.rmtree(shims, ignore_errors=True)
    shims.mkdir()
    for top in ("myst_nb", "IPython"):
        if importlib.util.find_spec(top) is None:
            shutil.copytree(work / "shim" / top, shims / top)
    paths = [str(work / "src"), str(shims), os.environ.get("PYTHONPATH", "")]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "MPLBACKEND": "Agg",
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
    }


def run_pages(work: Path, out: Path, env: dict[str, str], timeout: float) -> list[dict]:
    """Every page script in a fresh interpreter, in a scratch folder: its exit status, time
    and last line; the whole output goes to pages.log."""
    results, log = [], []
    for script in sorted((work / "pages").glob("*.py")):
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as scratch:
            try:
                done = subprocess.run(
                    [sys.executable, str(script)],
                    cwd=scratch,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    check=False,
                )
                status, output = done.returncode, done.stdout + done.stderr
            except subprocess.TimeoutExpired:
                status, output = "timeout", f"stopped after {timeout:.0f} s"
        seconds = round(time.perf_counter() - start, 1)
        lines = output.strip().splitlines()
        results.append(
            {
                "page": script.stem,
                "rc": status,
                "seconds": seconds,
                "last": lines[-1] if lines else "",
            }
        )
        log.append(f"===== {script.stem} rc={status} {seconds} s\n{output}")
        print(script.stem, status, seconds, flush=True)
    (out / "pages.log").write_text("\n".join(log))
    return results


def run(work: Path, out: Path, claims_page: str | None = None, timeout: float = 300) -> dict:
    """Record claims and pages into OUT; return run.json's data."""
    if not (work / "src" / "chapter2").is_dir():
        msg = f"{work} is not a folder made by `prepare`: run the copy of this file there"
        raise SystemExit(msg)
    if out.exists() and any(out.iterdir()):
        msg = f"{out} is not empty: run writes a new record"
        raise SystemExit(msg)
    out.mkdir(parents=True, exist_ok=True)
    env = environment(work)
    command = [sys.executable, "-m", "chapter2.claims", "--json", str(out / "claims.json")]
    if claims_page:
        command += ["--page", claims_page]
    try:
        claims = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=1800, check=False
        )
        said, code = claims.stdout + claims.stderr, claims.returncode
    except subprocess.TimeoutExpired as stopped:
        parts = (stopped.output, stopped.stderr)  # bytes, whatever text= said
        said = "".join(
            s.decode(errors="replace") if isinstance(s, bytes) else s or "" for s in parts
        )
        code = "none: stopped after 1800 s"
    (out / "claims.log").write_text(said)
    if not (out / "claims.json").exists():
        msg = f"the claims CLI wrote nothing (exit {code}); its output is in {out / 'claims.log'}"
        raise SystemExit(msg)
    pages = run_pages(work, out, env, timeout)
    (out / "pages.json").write_text(json.dumps(pages, indent=1) + "\n")
    about = json.loads(
        subprocess.run(
            [sys.executable, "-c", _ABOUT], env=env, capture_output=True, text=True, check=True
        ).stdout
    )
    record = {
        **about,
        "recorded": dt.date.today().isoformat(),
        "claims": "claims.json",
        "pages": "pages.json",
        "made": f"tools/record_backend.py at commit {(work / 'commit').read_text()}: "
        f"{sum(p['rc'] == 0 for p in pages)} of {len(pages)} pages ran to the end",
    }
    (out / "run.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


# The default device's platform and kind, and the versions, as the claims record them.
_ABOUT = """
import json, platform
from chapter2.claims.registry import installed_versions
print(json.dumps({**installed_versions(), "python": platform.python_version()}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    ready = steps.add_parser("prepare", help="write the folder to take to the other machine")
    ready.add_argument("work", type=Path)
    ready.add_argument("--pages", nargs="+", help="only these pages (all by default)")
    there = steps.add_parser("run", help="record, on the other machine, from the folder")
    there.add_argument("out", type=Path)
    there.add_argument("--claims-page", help="only this page's claims (all by default)")
    there.add_argument("--timeout", type=float, default=300, help="seconds per page")
    args = parser.parse_args(argv)
    if args.step == "prepare":
        prepare(args.work, args.pages)
    else:
        record = run(Path(__file__).resolve().parent, args.out, args.claims_page, args.timeout)
        print(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
