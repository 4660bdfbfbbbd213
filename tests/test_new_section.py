"""A new section takes the places CONTRIBUTING.md's checklist names, and no other: the
checklist is followed on a copy of the repository (tracked files and new ones not ignored)."""

import re
import shutil
import subprocess
import sys

import pytest
from book import build as book_build
from conftest import HTML, ROOT
from helpers import FRONT_MATTER, OUTER_ENV

pytestmark = pytest.mark.slow  # it builds a copy of the repository

NEW_PAGE = """# Checked sums

Adding ones is exact in float32 up to 2**24:

```{code-cell} ipython3
import jax.numpy as jnp

from chapter2.claims import verify

print(jnp.ones(1000).sum())
```

(claim-sum-of-ones)=
So `jnp.ones(1000).sum()` is exactly 1000.

```{code-cell} ipython3
:tags: [remove-input]
verify("sum-of-ones")
```
"""
NEW_CLAIMS = '''"""Claims of the page `checked-sums`."""

import jax.numpy as jnp

from chapter2.claims.registry import Observation, claim


@claim("sum-of-ones", checks="That `jnp.ones(1000).sum()` returns 1000.0 exactly.")
def _sum_of_ones() -> Observation:
    total = float(jnp.ones(1000).sum())
    return Observation(
        expected={"sum": 1000.0},
        observed={"sum": total},
        said=f"Summed jnp.ones(1000): {total:g}.",
    )
'''
NEW_TESTS = '''"""The claims of the page `checked-sums` fail when JAX behaves otherwise."""

import jax.numpy as jnp


def sums_off_by_one(mp):
    """A jnp.ones that makes one element too many."""
    real = jnp.ones
    mp.setattr(jnp, "ones", lambda n, *a, **k: real(n + 1, *a, **k))


BREAKERS = {"sum-of-ones": sums_off_by_one}
'''


def checklist() -> list[str]:
    """The files CONTRIBUTING.md's "Adding a section" says to write, for the page checked-sums."""
    text = (ROOT / "CONTRIBUTING.md").read_text().split("## Adding a section", 1)[1]
    steps = re.findall(r"^\d+\. \*\*[^*]+\*\*, `([^`]+)`", text.split("\n## ", 1)[0], re.M)
    return [s.replace("<page>", "checked-sums").replace("<module>", "checked_sums") for s in steps]


def copy_of_the_repository(repo):
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    # The pages already executed stay executed: their outputs, and the roofs in their keys.
    if (HTML.parent / ".jupyter_cache").is_dir():
        shutil.copytree(HTML.parent / ".jupyter_cache", repo / "docs/_build/.jupyter_cache")
    for kept in ("roofs.json", "roofs.method.json"):  # the roofs, and the code that measured them
        if (HTML.parent / kept).is_file():
            shutil.copy2(HTML.parent / kept, repo / "docs/_build" / kept)


def section_number(html: str) -> list[int]:
    number = re.search(r'<h1><span class="section-number">([\d.]+)\. </span>', html)[1]
    return [int(n) for n in number.split(".")]


def test_a_new_section_takes_the_places_contributing_names(tmp_path):
    written = {
        "docs/checked-sums.md": FRONT_MATTER + "\n" + NEW_PAGE,
        "src/chapter2/claims/pages/checked_sums.py": NEW_CLAIMS,
        "tests/breakers/checked_sums.py": NEW_TESTS,
    }
    assert sorted(checklist()) == sorted([*written, "docs/index.md"])
    repo = tmp_path / "repo"
    copy_of_the_repository(repo)
    for name, text in written.items():
        (repo / name).write_text(text)
    index = repo / "docs/index.md"
    place = "pairwise-distances\n"
    index.write_text(index.read_text().replace(place, place + "checked-sums\n", 1))
    env = {**OUTER_ENV, "PYTHONPATH": str(repo / "src")}

    html = repo / "docs/_build/html"
    done = subprocess.run(
        book_build.command("docs", html),
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    if (HTML.parent / ".jupyter_cache").is_dir():  # a new section executes no other page
        assert "Executed 1 of the" in done.stdout, done.stdout[-3000:]
    page = (html / "checked-sums.html").read_text()
    before = section_number((html / "pairwise-distances.html").read_text())
    assert section_number(page) == [*before[:-1], before[-1] + 1]
    assert "Checked sums" in page
    assert "claim-mark claim-holds" in page
    assert 'href="checked-sums.html"' in (html / "pairwise-distances.html").read_text()
    assert "checked-sums.html#claim-sum-of-ones" in (html / "claims-matrix.html").read_text()

    tested = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/test_claims.py",
            "-v",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            "-k",
            "sum-of-ones or checked-sums",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert tested.returncode == 0, tested.stdout[-3000:]
    for test in (
        "test_claim_holds_on_this_jax[sum-of-ones]",
        "test_claim_is_stated_on_its_home_page_then_verified_out_of_sight[sum-of-ones]",
        "test_every_claim_can_fail[sum-of-ones]",
        "test_can_fail_data_names_only_claims_of_its_page[checked-sums]",
    ):
        assert f"{test} PASSED" in tested.stdout, tested.stdout[-2000:]
