"""The build's contract, proven on a throwaway book that uses the real docs/conf.py."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FRONT_MATTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""

pytestmark = pytest.mark.slow


def make_book(tmp_path: Path, cells: list[str]) -> Path:
    """A book at tmp_path/docs with the real conf.py and one page made of `cells`."""
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(ROOT / "docs" / "conf.py", docs)
    (docs / "index.md").write_text("# Tiny book\n\n```{toctree}\npage\n```\n")
    body = "\n".join(f"```{{code-cell}} ipython3\n{cell}\n```\n" for cell in cells)
    (docs / "page.md").write_text(f"{FRONT_MATTER}\n# Page\n\n{body}")
    return docs


def build(docs: Path, **env: str) -> subprocess.CompletedProcess:
    sphinx = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html"]
    return subprocess.run(
        [*sphinx, str(docs), str(docs / "_build" / "html")],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=600,
    )


def test_a_failing_cell_fails_the_build_naming_page_and_cell(tmp_path):
    docs = make_book(tmp_path, ["x = 1", 'assert x == 2, "x should be two"'])
    result = build(docs)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "page.md" in output  # the page
    assert 'assert x == 2, "x should be two"' in output  # the cell
    assert "AssertionError" in output and "x should be two" in output  # the traceback


def test_a_drifted_claim_fails_the_build_naming_the_claim(tmp_path):
    cell = (
        "from chapter2.claims.registry import Observation, claim, verify\n"
        'claim("demo-drift", "0.0", "note-demo", "1 + 1 makes 3.")'
        '(lambda: Observation(False, "1 + 1 gave 2"))\n'
        'verify("demo-drift")'
    )
    result = build(make_book(tmp_path, [cell]))
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "page.md" in output and 'verify("demo-drift")' in output
    assert "ClaimDrift" in output and "'demo-drift'" in output
    assert "the book says: 1 + 1 makes 3." in output and "1 + 1 gave 2" in output


def test_cache_skips_unchanged_pages_and_follows_the_engine(tmp_path):
    log = tmp_path / "executions.log"
    engine = tmp_path / "src" / "chapter2"
    engine.mkdir(parents=True)
    (engine / "helper.py").write_text("VALUE = 1\n")
    cell = "import os\nwith open(os.environ['EXECUTION_LOG'], 'a') as fh:\n    fh.write('ran\\n')"
    docs = make_book(tmp_path, [cell])

    def executions() -> int:
        result = build(docs, EXECUTION_LOG=str(log))
        assert result.returncode == 0, result.stdout + result.stderr
        return log.read_text().count("ran")

    assert executions() == 1
    assert executions() == 1  # nothing changed: nothing executes
    page = docs / "page.md"
    page.write_text(page.read_text().replace("# Page", "# Page\n\nSome new prose."))
    assert executions() == 1  # a prose edit executes nothing
    (engine / "helper.py").write_text("VALUE = 2\n")
    assert executions() == 2  # a changed engine module executes the page again
