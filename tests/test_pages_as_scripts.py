"""Every page's code runs to the end as a plain script, on the CPU named explicitly
(JAX_PLATFORMS=cpu), outside Jupyter: no cell leans on the notebook to get through."""

import build_benchmark  # tools/ is on pytest's pythonpath (pyproject.toml)
import pytest
from conftest import DOCS, NOTEBOOK_PAGES

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_a_page_runs_to_the_end_as_a_script_on_the_cpu(page, tmp_path):
    done = build_benchmark.run_as_script(DOCS / f"{page}.md", tmp_path, JAX_PLATFORMS="cpu")
    assert done.returncode == 0, f"{page}: {done.stderr[-2000:]}"
