"""The stand-in-GPU run of tools/pages_as_scripts.py (`nox -s scripts` runs every page; the
scheduled workflow runs it weekly), tried here on a page that pins the CPU, one that does not,
and a throwaway page that stops."""

import pytest
from conftest import DOCS
from pages_as_scripts import problems_of  # tools/ is on pytest's pythonpath

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("page", ["cpu-case-study", "jaxprs"])
def test_a_page_runs_to_the_end_as_a_script_with_a_gpu_as_default_device(page, tmp_path):
    assert problems_of(DOCS / f"{page}.md", tmp_path) == []


def test_a_page_that_stops_is_named_with_its_error(tmp_path):
    page = tmp_path / "broken.md"
    page.write_text("# Broken\n\n```{code-cell} ipython3\nraise ValueError('the end')\n```\n")
    [problem] = problems_of(page, tmp_path)
    assert problem.startswith("broken.md stopped (1)")
    assert "ValueError: the end" in problem
