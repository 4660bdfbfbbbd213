"""A reader's machine: a downloaded notebook installs what it needs and runs top to bottom.

The built site is served over HTTP; an empty virtual environment gets only pip, nbclient and
ipykernel; the exercises notebook (with the reference solutions in the answer cells) and a
chapter page's notebook are downloaded from the site and executed there. Their setup cell
installs JAX and the book's wheel from the site (BOOK_SITE stands in for html_baseurl).
"""

import os
import subprocess
import sys
import urllib.request
import venv
from pathlib import Path

import nbformat
import pytest
from conftest import HTML

pytestmark = pytest.mark.slow

ANSWERS = {  # the exercise whose answer cell a reference solution fills, by its first line
    "# Your answer: define primitive_histogram": (
        "from chapter2.solutions import primitive_histogram"
    ),
    "# Your answer: predicted_compiles": "from chapter2.solutions import predicted_compiles",
    "# Your answer: define fusion_report": "from chapter2.solutions import fusion_report, h2",
    "# Your answer: define safe_pairwise_distance": (
        "from chapter2.solutions import safe_pairwise_distance"
    ),
}


@pytest.fixture(scope="module")
def reader_python(tmp_path_factory) -> Path:
    """An empty virtual environment with only pip, nbclient and ipykernel."""
    folder = tmp_path_factory.mktemp("reader") / "venv"
    venv.create(folder, with_pip=True)
    python = folder / "bin" / "python"
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "nbclient", "ipykernel"], check=True, timeout=600
    )
    return python


def run_notebook(python: Path, notebook: Path, site: str) -> nbformat.NotebookNode:
    """Execute the notebook with the reader's Python, as `jupyter execute` does there."""
    script = (
        "import sys, nbformat\nfrom nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(nb, timeout=900, kernel_name='python3', allow_errors=True).execute()\n"
        "nbformat.write(nb, sys.argv[1])\n"
    )
    env = {**os.environ, "BOOK_SITE": site, "MPLBACKEND": "Agg"}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = f"{python.parent}:{env['PATH']}"
    subprocess.run([python, "-c", script, notebook], check=True, env=env, timeout=1500)
    return nbformat.read(notebook, as_version=4)


def download(site: str, name: str, folder: Path) -> Path:
    path = folder / f"{name}.ipynb"
    with urllib.request.urlopen(f"{site}/_sources/{name}.ipynb") as response:
        path.write_bytes(response.read())
    return path


def errors(notebook) -> list[str]:
    return [
        f"{o['ename']}: {o['evalue']}"
        for cell in notebook.cells
        for o in cell.get("outputs", [])
        if o.output_type == "error"
    ]


def test_the_wheel_is_published_beside_the_pages():
    wheels = list((HTML / "_wheels").glob("chapter2-*-py3-none-any.whl"))
    assert len(wheels) == 1
    assert "jax==" in (HTML / "_sources" / "jaxprs.ipynb").read_text()


def test_without_a_site_the_setup_cell_says_what_to_install():
    """A book built without html_baseurl: a notebook that lacks JAX names what to install."""
    setup = nbformat.read(HTML / "_sources" / "jaxprs.ipynb", as_version=4).cells[0].source
    assert 'os.environ.get("BOOK_SITE", "")' in setup, "this build has a base URL"
    forced = setup.replace("if _needs_install():", "if True:")  # as on a machine without JAX
    env = {k: v for k, v in os.environ.items() if k != "BOOK_SITE"}
    done = subprocess.run(
        [sys.executable, "-c", forced], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 1
    assert "RuntimeError: This page needs jax==" in done.stderr


def test_downloaded_notebooks_run_on_a_readers_machine(served, reader_python, tmp_path):
    exercises = download(served, "exercises", tmp_path)
    notebook = nbformat.read(exercises, as_version=4)
    filled = 0
    for cell in notebook.cells:
        for first, answer in ANSWERS.items():
            if cell.cell_type == "code" and cell.source.startswith(first):
                cell.source, filled = answer, filled + 1
    assert filled == len(ANSWERS)
    nbformat.write(notebook, exercises)
    done = run_notebook(reader_python, exercises, served)
    assert errors(done) == []
    checks = [
        "".join(o.get("text", "") or o.get("data", {}).get("text/plain", ""))
        for cell in done.cells
        if cell.source.startswith("# Self-check")
        for o in cell.get("outputs", [])
    ]
    assert len(checks) == len(ANSWERS)
    assert all(", passed: " in check for check in checks), checks

    chapter = run_notebook(reader_python, download(served, "jaxprs", tmp_path), served)
    assert errors(chapter) == []
    assert len(chapter.cells) > 10
