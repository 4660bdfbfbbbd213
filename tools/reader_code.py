"""Run the code a reader sees, page by page, as a reader would: in a fresh environment that
holds only JAX, IPython and the book's wheel, installed from the served site.

    python tools/reader_code.py HTML OUT [PAGE ...]

serves the built book (HTML), makes an environment in OUT/venv, and runs the code cells of
each chapter page's published notebook (its visible code, book.notebooks), setup cell
aside, in order, as one plain script; OUT/reader-code.json says how each ran. Exit status 1
when a page failed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import venv
from importlib.metadata import version
from pathlib import Path

import nbformat
from book.notebooks import SETUP_TAG
from record_backend import run_script  # tools/, beside this file
from static_host import serving

CHAPTER_PAGES = [  # the chapter's pages and Going further's, in reading order (docs/index.md)
    *("profiling", "jaxprs", "xla-compilation", "memory-layout", "recompilation", "fusion"),
    *("async-dispatch", "pairwise-distances", "training-step", "cpu-case-study", "numpy-to-jax"),
]


def visible_script(notebook: nbformat.NotebookNode) -> str:
    """The code cells of a reader's notebook, its setup cell aside, in order, as one script."""
    cells = [
        cell.source
        for cell in notebook.cells
        if cell.cell_type == "code" and SETUP_TAG not in cell.metadata.get("tags", [])
    ]
    return "\n\n".join(cells) + "\n"


def reader_environment(folder: Path, site: str, wheel: str, *more: str) -> Path:
    """A new environment, with pip, holding JAX at this build's version, IPython, the book's
    wheel from the site and `more`; uv makes it when it is on PATH, else venv and pip. Its
    Python."""
    jax = f"jax=={version('jax')}"
    wanted = [jax, f"jaxlib=={version('jaxlib')}", "ipython", f"{site}/_wheels/{wheel}", *more]
    uv = shutil.which("uv")
    if uv:
        subprocess.run([uv, "venv", "-q", "--seed", "-p", sys.executable, str(folder)], check=True)
        python = folder / "bin" / "python"
        subprocess.run([uv, "pip", "install", "-q", "-p", str(python), *wanted], check=True)
    else:
        venv.create(folder, with_pip=True)
        python = folder / "bin" / "python"
        subprocess.run([python, "-m", "pip", "install", "-q", *wanted], check=True)
    return python


def run_page(python: Path, html: Path, page: str, scripts: Path, timeout: float) -> dict:
    """One page's published code as a script in the reader's environment: how it ended."""
    script = scripts / f"{page}.py"
    published = nbformat.read(html / "_sources" / f"{page}.ipynb", as_version=4)
    script.write_text(visible_script(published))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"JAX_PLATFORMS": "cpu"}  # run_script adds MPLBACKEND
    status, output, seconds = run_script(script, scripts, env, timeout, python)
    return {"page": page, "status": status, "seconds": round(seconds, 1), "tail": output[-1500:]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path, help="the built book (docs/_build/html)")
    parser.add_argument("out", type=Path, help="a new folder for the environment and report")
    parser.add_argument("pages", nargs="*", default=CHAPTER_PAGES)
    parser.add_argument("--timeout", type=float, default=600, help="seconds per page")
    args = parser.parse_args(argv)
    [wheel] = [p.name for p in (args.html / "_wheels").glob("chapter2-*.whl")]
    (args.out / "scripts").mkdir(parents=True, exist_ok=True)
    with serving(args.html) as site:
        python = reader_environment(args.out / "venv", site, wheel)
        scripts = args.out / "scripts"
        ran = [run_page(python, args.html, page, scripts, args.timeout) for page in args.pages]
    (args.out / "reader-code.json").write_text(json.dumps(ran, indent=2) + "\n")
    for result in ran:
        print(f"{result['page']:20s} {result['status']!s:8s} {result['seconds']:7.1f} s")
    failed = [r for r in ran if r["status"] != 0]
    for result in failed:
        print(f"\n{result['page']} failed:\n{result['tail']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
