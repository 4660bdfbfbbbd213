"""A reader's machine: a page's visible code runs with JAX, IPython and the book's wheel from
the site, and a downloaded notebook installs what it needs and runs top to bottom.

The built site is served over HTTP; a new environment gets JAX, IPython and the wheel from
the site (tools/reader_code.py, which `nox -s reader` runs on every chapter page), then
nbclient and ipykernel; a chapter page's visible code runs there as a script, and the
exercises notebook (with the reference solutions in the answer cells) is downloaded and
executed. Its setup cell installs what the reader's environment misses.
"""

import os
import subprocess
import urllib.request
from pathlib import Path

import nbformat
import pytest
from conftest import HTML, toctree
from reader_code import (
    CHAPTER_PAGES,
    reader_environment,
    run_page,
)  # tools/ is on pytest's pythonpath

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
    "# Your answer: waits": "from chapter2.solutions import recompiles_at, waits",
}


@pytest.fixture(scope="module")
def reader_python(tmp_path_factory, served) -> Path:
    """A new environment with JAX, IPython and the wheel from the site, and nbclient and
    ipykernel to run a notebook."""
    [wheel] = [p.name for p in (HTML / "_wheels").glob("chapter2-*.whl")]
    folder = tmp_path_factory.mktemp("reader") / "venv"
    return reader_environment(folder, served, wheel, "nbclient", "ipykernel")


def test_the_reader_session_runs_the_chapter_and_going_further():
    assert [*toctree("The chapter"), *toctree("Going further")] == CHAPTER_PAGES


def test_a_pages_visible_code_runs_with_jax_and_the_wheel_alone(reader_python, tmp_path):
    """What `nox -s reader` does for every chapter page, for one: its visible cells, in
    order, as one script, in the reader's environment."""
    ran = run_page(reader_python, HTML, "cpu-case-study", tmp_path, timeout=600)
    assert ran["status"] == 0, ran["tail"]
    assert "import jax" in (tmp_path / "cpu-case-study.py").read_text()


def run_notebook(python: Path, notebook: Path) -> nbformat.NotebookNode:
    """Execute the notebook with the reader's Python, as `jupyter execute` does there."""
    script = (
        "import sys, nbformat\nfrom nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(nb, timeout=900, kernel_name='python3', allow_errors=True).execute()\n"
        "nbformat.write(nb, sys.argv[1])\n"
    )
    env = {**os.environ, "MPLBACKEND": "Agg"}
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


def test_a_downloaded_notebook_runs_on_a_readers_machine(served, reader_python, tmp_path):
    exercises = download(served, "exercises", tmp_path)
    notebook = nbformat.read(exercises, as_version=4)
    filled = 0
    for cell in notebook.cells:
        for first, answer in ANSWERS.items():
            if cell.cell_type == "code" and cell.source.startswith(first):
                cell.source, filled = answer, filled + 1
    assert filled == len(ANSWERS)
    nbformat.write(notebook, exercises)
    done = run_notebook(reader_python, exercises)
    assert errors(done) == []
    checks = [
        "".join(o.get("text", "") or o.get("data", {}).get("text/plain", ""))
        for cell in done.cells
        if cell.source.startswith("# Self-check")
        for o in cell.get("outputs", [])
    ]
    assert len(checks) == len(ANSWERS)
    assert all(", passed: " in check for check in checks), checks


def test_a_readers_script_holds_the_notebooks_code_without_its_setup_cell():
    from book.notebooks import setup_cell
    from reader_code import visible_script

    notebook = nbformat.v4.new_notebook(
        cells=[
            setup_cell("https://example.org/book"),
            nbformat.v4.new_markdown_cell("<p>Prose</p>"),
            nbformat.v4.new_code_cell("import jax"),
            nbformat.v4.new_code_cell("print(jax.__version__)"),
        ]
    )
    assert visible_script(notebook) == "import jax\n\nprint(jax.__version__)\n"
