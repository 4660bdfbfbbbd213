"""Record the book on another backend (a GPU machine where nothing can be installed).

    python tools/record_backend.py prepare WORK   # here, in the docs environment
    python WORK/record_backend.py run OUT         # there: JAX, NumPy, Matplotlib, SciPy

`prepare` writes src/, each page as a script, stand-ins for myst_nb and IPython and this file;
`run` records there the claims, each page's run and `run.json`: a data/backends/ folder.
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


def page_script(page: Path, prelude: str = "") -> str:
    """A page's code cells, in order, as one plain Python script, after `prelude`."""
    from book.dependencies import code_cells  # noqa: PLC0415 (the docs environment only)

    return "\n\n".join([prelude, *code_cells(page.read_text())]).lstrip() + "\n"


def run_script(
    script: Path, cwd: Path, env: dict[str, str], timeout: float | None = None, python=None
) -> tuple[int | str, str, float]:
    """A page's script in a fresh interpreter (this one, or `python`): exit status (or
    "timeout"), output, seconds."""
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [str(python or sys.executable), str(script)],
            cwd=cwd,
            env={"MPLBACKEND": "Agg", **env},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        status, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        status, output = "timeout", f"stopped after {timeout:.0f} s"
    return status, output, time.perf_counter() - start


def notebook_pages() -> list[Path]:
    """The book's pages that have code cells."""
    return sorted(p for p in (ROOT / "docs").glob("*.md") if "```{code-cell}" in p.read_text())


def prepare(work: Path, pages: list[str] | None = None) -> None:
    """Write WORK: src/, pages/<page>.py, shim/ and this file."""
    if work.exists():
        msg = f"{work} exists: prepare writes a new folder"
        raise SystemExit(msg)
    shutil.copytree(ROOT / "src", work / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", work)  # the baseline pin, read where nothing is installed
    git = ["git", "rev-parse", "--short", "HEAD"]
    commit = subprocess.run(git, cwd=ROOT, capture_output=True, text=True, check=False).stdout
    (work / "commit").write_text(commit.strip() or "unknown")
    (work / "pages").mkdir()
    sources = {p.stem: p for p in sorted((ROOT / "docs").glob("*.md"))}
    unknown = sorted(set(pages or []) - set(sources))
    if unknown:
        msg = f"no such page: {', '.join(unknown)}"
        raise SystemExit(msg)
    for page in notebook_pages():
        if pages is None or page.stem in pages:
            (work / "pages" / f"{page.stem}.py").write_text(page_script(page))
    for module, text in SHIMS.items():
        path = work / "shim" / Path(*module.split(".")) / "__init__.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    shutil.copy(__file__, work / "record_backend.py")


def environment(work: Path) -> dict[str, str]:
    """The package, a stand-in for each missing notebook module, no GPU memory taken ahead."""
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
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
    }


def run_pages(work: Path, out: Path, env: dict[str, str], timeout: float) -> list[dict]:
    """Every page script in a scratch folder: status, time and last line (all in pages.log)."""
    results, log = [], []
    for script in sorted((work / "pages").glob("*.py")):
        with tempfile.TemporaryDirectory() as scratch:
            status, output, seconds = run_script(script, Path(scratch), env, timeout)
        lines = output.strip().splitlines()
        last = lines[-1] if lines else ""
        results.append(
            {"page": script.stem, "rc": status, "seconds": round(seconds, 1), "last": last}
        )
        log.append(f"===== {script.stem} rc={status} {seconds:.1f} s\n{output}")
        print(script.stem, status, round(seconds, 1), flush=True)
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
    claims = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    code = claims.returncode
    (out / "claims.log").write_text(claims.stdout + claims.stderr)
    if not (out / "claims.json").exists():
        msg = f"the claims CLI wrote nothing (exit {code}); its output is in {out / 'claims.log'}"
        raise SystemExit(msg)
    pages = run_pages(work, out, env, timeout)
    (out / "pages.json").write_text(json.dumps(pages, indent=1) + "\n")
    claims = json.loads((out / "claims.json").read_text())
    first = claims["claims"][0]  # every verdict names the device it was reached on
    record = {
        **{k: first[k] for k in ("jax", "jaxlib", "platform", "device")},
        "python": claims["python"],
        "recorded": dt.date.today().isoformat(),
        "claims": "claims.json",
        "pages": "pages.json",
        "made": f"tools/record_backend.py at commit {(work / 'commit').read_text()}: "
        f"{sum(p['rc'] == 0 for p in pages)} of {len(pages)} pages ran to the end",
    }
    (out / "run.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


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
