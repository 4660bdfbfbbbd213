"""The stand-in-GPU run of tools/pages_as_scripts.py (`nox -s scripts` runs every page; the
scheduled workflow runs it weekly), tried here on throwaway pages: one that pins the CPU, one
that does not, one that pins it other than as CONTRIBUTING.md says, and one that stops."""

import pytest
from pages_as_scripts import PIN_CPU, problems_of  # tools/ is on pytest's pythonpath

pytestmark = pytest.mark.slow

# Two of the book's claims: one of any device, one that only a CPU can show.
CHECKS = ['verify("row-major-default")', 'verify("transfer-guard-misses-float-on-cpu")']


def page_of(folder, setup: str):
    page = folder / "page.md"
    cells = ["import jax\nfrom chapter2.claims import verify\n" + setup, *CHECKS]
    page.write_text("# Page\n\n" + "".join(f"```{{code-cell}} ipython3\n{c}\n```\n" for c in cells))
    return page


@pytest.mark.parametrize(
    ("setup", "platform"),
    [(PIN_CPU, "gpu"), ("", "gpu"), (PIN_CPU, "tpu")],
    ids=["pins the CPU", "the default device", "pins the CPU, a TPU machine"],
)
def test_a_page_runs_to_the_end_as_a_script_with_an_accelerator_as_default(
    setup, platform, tmp_path
):
    """Pinned, both claims are judged on the CPU; not pinned, on the stand-in device, where
    the CPU's fact cannot be checked."""
    assert problems_of(page_of(tmp_path, setup), tmp_path, platform) == []


def test_a_page_that_pins_the_cpu_its_own_way_is_named(tmp_path):
    setup = PIN_CPU.replace('"', "'")  # the CPU all the same, but not the line the tool reads
    assert problems_of(page_of(tmp_path, setup), tmp_path) == [
        "page.md: row-major-default was judged on the cpu",
        "page.md: transfer-guard-misses-float-on-cpu was judged on the cpu",
        "page.md: transfer-guard-misses-float-on-cpu came out 'holds'",
    ]


def test_a_page_that_stops_is_named_with_its_error(tmp_path):
    page = tmp_path / "broken.md"
    page.write_text("# Broken\n\n```{code-cell} ipython3\nraise ValueError('the end')\n```\n")
    [problem] = problems_of(page, tmp_path)
    assert problem.startswith("broken.md stopped (1)")
    assert "ValueError: the end" in problem
