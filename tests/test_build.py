"""The build's contract, proven on throwaway books that use the real docs/conf.py and docs layer."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HTML, ROOT

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
# The throwaway books build into their own docs/_build, wherever the book's build was sent;
# CI=true makes Sphinx draw progress on one line with carriage returns: ask for lines.
OUTER_ENV = {k: v for k, v in os.environ.items() if k != "BOOK_BUILD_DIR"} | {"NO_COLOR": "1"}


def make_book(tmp_path: Path, pages: dict[str, list[str]]) -> Path:
    """A book at tmp_path/docs with the real configuration and one page per entry of `pages`."""
    docs = tmp_path / "docs"
    docs.mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "conf.py", docs)
    shutil.copytree(ROOT / "docs" / "_static", docs / "_static")
    toctree = "\n".join(pages)
    (docs / "index.md").write_text(f"# Tiny book\n\n```{{toctree}}\n:numbered:\n{toctree}\n```\n")
    for name, cells in pages.items():
        body = "\n".join(f"```{{code-cell}} ipython3\n{cell}\n```\n" for cell in cells)
        (docs / f"{name}.md").write_text(f"{FRONT_MATTER}\n# Page {name}\n\n{body}")
    return docs


def build(docs: Path, jobs: int = 1, *extra: str, **env: str) -> subprocess.CompletedProcess:
    """The book's own build command (`python -m book.build`, as nox runs it) on `docs`."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "book.build",
            str(docs),
            str(docs / "_build" / "html"),
            "-j",
            str(jobs),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream, in the order a reader sees it
        text=True,
        env={**OUTER_ENV, **env},
        timeout=600,
        check=False,
    )


def last_lines(result: subprocess.CompletedProcess, n: int) -> str:
    return "\n".join(result.stdout.strip().splitlines()[-n:])


def test_every_failing_page_is_named_at_the_end_with_its_cell_and_error(tmp_path):
    docs = make_book(
        tmp_path,
        {
            "first": ["x = 1", 'assert x == 2, "x should be two"', "print('never runs')"],
            "fine": ["print('ok')"],
            "second": ["import jax.numpy as jnp", "jnp.ones(3).no_such_method()"],
        },
    )
    result = build(docs, jobs=2)  # as nox -s docs builds: pages in parallel
    output = result.stdout
    assert result.returncode != 0
    tail = last_lines(result, 10)
    assert "2 problems failed the build" in tail
    assert "page first: a cell failed" in tail
    assert 'assert x == 2, "x should be two"' in tail
    assert "AssertionError: x should be two" in tail
    assert "page second: a cell failed" in tail
    assert "jnp.ones(3).no_such_method()" in tail
    assert "AttributeError" in tail
    assert "no_such_method" in tail
    assert "page fine" not in tail
    for crash in ("Exception occurred", "please report", "open an issue"):
        assert crash not in output
    assert "without encryption" not in output  # kernels talk over IPC
    report = json.loads((docs / "_build" / "html" / "failed-pages.json").read_text())
    assert [f["page"] for f in report["failing_cells"]] == ["first", "second"]
    assert report["warnings"] == []
    assert (docs / "_build" / "html" / "failed-pages.txt").read_text().strip() in output


BAD_EDITS = {  # page -> (its broken content, what the end of the build must say of it)
    "asserts": ("```{code-cell} ipython3\nassert 1 == 2, 'one is not two'\n```", "one is not two"),
    "syntax": ("```{code-cell} ipython3\ndef broken(:\n    pass\n```", "SyntaxError"),
    "directive": ("```{no-such-directive}\nbody\n```", "no-such-directive"),
    "reference": ("See {doc}`no-such-page`.", "no-such-page"),
    "orphan": ("Linked from nowhere.", "isn't included in any toctree"),
}


def test_every_problem_is_named_at_the_end_of_every_build_until_it_is_fixed(tmp_path):
    docs = make_book(tmp_path, {name: [] for name in BAD_EDITS if name != "orphan"})
    for name, (broken, _) in BAD_EDITS.items():
        (docs / f"{name}.md").write_text(f"{FRONT_MATTER}\n# Page {name}\n\n{broken}\n")
    for attempt in ("first build", "again, nothing changed"):
        result = build(docs, jobs=2)
        assert result.returncode != 0, attempt
        tail = last_lines(result, 15)
        assert "5 problems failed the build" in tail, (attempt, tail)
        for name, (_, said) in BAD_EDITS.items():
            line = next((ln for ln in tail.splitlines() if f"page {name}" in ln), "")
            assert line, (attempt, name, tail)
            assert said in tail[tail.index(line) :], (attempt, name, tail)
    for name in BAD_EDITS:
        (docs / f"{name}.md").write_text(f"{FRONT_MATTER}\n# Page {name}\n\nFixed.\n")
    index = docs / "index.md"
    index.write_text(index.read_text().replace("reference\n", "reference\norphan\n"))
    result = build(docs, jobs=2)
    assert result.returncode == 0, result.stdout
    assert not (docs / "_build" / "html" / "failed-pages.json").exists()


def test_a_drifted_claim_fails_the_build_naming_the_claim(tmp_path):
    cell = (
        "from chapter2.claims import Observation, claim, verify\n"
        'claim("demo-drift", page="page")'
        '(lambda: Observation({"1 + 1": 3}, {"1 + 1": 2}))\n'
        'verify("demo-drift")'
    )
    docs = make_book(tmp_path, {"page": [cell]})
    page = docs / "page.md"
    page.write_text(page.read_text() + "\n(claim-demo-drift)=\n1 + 1 makes 3.\n")
    result = build(docs)
    tail = last_lines(result, 12)
    assert result.returncode != 0
    assert "page page" in tail
    assert 'verify("demo-drift")' in tail
    assert "ClaimDrift: claim 'demo-drift' (page page) drifted" in tail
    assert "the book says: 1 + 1 makes 3." in tail
    assert "1 + 1: 2 (the book expects 3)" in tail


def test_a_cell_that_fails_before_the_check_still_names_the_drifted_claim(tmp_path):
    register = (
        "from chapter2.claims import Observation, claim\n"
        'claim("returns-dict", page="page")'
        '(lambda: Observation({"type": "dict"}, {"type": "list"}))\n'
        "costs = [{'flops': 1.0}]  # what a JAX that drifted returns"
    )
    result = build(make_book(tmp_path, {"page": [register, 'costs["flops"]']}))
    tail = last_lines(result, 12)
    assert result.returncode != 0
    assert 'costs["flops"]' in tail
    assert "ClaimDrift: claim 'returns-dict' (page page) drifted" in tail
    assert "this cell failed with TypeError: list indices must be integers" in tail


def test_a_book_built_where_the_default_device_is_a_gpu_reports_cpu_facts_or_pins_the_cpu(
    tmp_path,
):
    """Every kernel starts with tools/stand_in_gpu.py (as `nox -s standin_gpu` builds the
    book): a fact of the CPU alone is reported, not failed, on a page that runs on the default
    device, and checked on a page that pins the CPU."""
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "stand_in_gpu.py", startup / "00-stand-in-gpu.py")
    fact = 'from chapter2.claims import verify\nverify("cpu-async-dispatch-default")'
    pin = 'import jax\njax.config.update("jax_default_device", jax.devices("cpu")[0])'
    docs = make_book(tmp_path, {"anywhere": [fact], "about-the-cpu": [pin, fact]})
    result = build(docs, IPYTHONDIR=str(tmp_path / "ipython"))
    assert result.returncode == 0, last_lines(result, 40)
    anywhere = (docs / "_build" / "html" / "anywhere.html").read_text()
    assert "○ a fact of the CPU, not checked on GPU" in anywhere
    about_the_cpu = (docs / "_build" / "html" / "about-the-cpu.html").read_text()
    assert "✓ checked on JAX" in about_the_cpu
    assert "not checked on GPU" not in about_the_cpu


def test_rebuilds_execute_and_write_only_what_changed(tmp_path):
    log = tmp_path / "executions.log"
    engine = tmp_path / "src" / "chapter2"
    engine.mkdir(parents=True)
    shutil.copy(ROOT / "src" / "chapter2" / "timing.py", engine)
    shutil.copy(ROOT / "src" / "chapter2" / "layout.py", engine)
    record = "import os\nwith open(os.environ['EXECUTION_LOG'], 'a') as fh:\n    fh.write('{}\\n')"
    docs = make_book(
        tmp_path,
        {
            "timed": ["from chapter2.timing import bench", record.format("timed")],
            "laid": ["from chapter2.layout import aligned_empty", record.format("laid")],
        },
    )
    (docs / "notes.md").write_text("# Notes\n\n```{claims-matrix}\n```\n")
    index = docs / "index.md"
    index.write_text(index.read_text() + "\n```{toctree}\nnotes\n```\n")  # unnumbered

    def rebuild() -> tuple[list[str], list[str]]:
        """The pages this build executed (in the order they ran) and the pages it wrote."""
        before = len(log.read_text().split()) if log.exists() else 0
        result = build(docs, EXECUTION_LOG=str(log))
        assert result.returncode == 0, result.stdout
        written = re.findall(r"^writing output\.\.\. \[\s*\d+%\] (\S+)", result.stdout, re.M)
        return (log.read_text().split()[before:] if log.exists() else []), written

    executed, written = rebuild()
    assert sorted(executed) == ["laid", "timed"]
    assert "notes" in written
    assert rebuild() == ([], [])  # nothing changed: nothing executes, no page is written
    page = docs / "timed.md"
    page.write_text(page.read_text().replace("# Page timed", "# Page timed\n\nNew prose."))
    executed, written = rebuild()  # a prose edit executes nothing; the table is written again
    assert executed == []
    assert {"notes", "timed"} <= set(written)
    module = engine / "timing.py"
    module.write_text(module.read_text() + "\n# a change to the engine\n")
    assert rebuild()[0] == ["timed"]  # only the page that imports timing runs again
    (docs / "extra.md").write_text("# Extra\n\nA page without code.\n")
    index.write_text(
        index.read_text().replace("```{toctree}\nnotes\n", "```{toctree}\nextra\nnotes\n")
    )
    executed, written = rebuild()  # a page between laid and notes: no number changes
    assert executed == []
    assert set(written) == {"index", "extra", "laid", "notes", "timed"}
    after_laid = (docs / "_build/html/laid.html").read_text()
    assert re.search(r'class="right-next"\s+href="extra.html"', after_laid)
    # a change to the Sphinx layer (its code hash) reads and writes every page, runs none
    executions = log.read_text()
    result = build(docs, 1, "-D", "book_layer_hash=changed", EXECUTION_LOG=str(log))
    assert result.returncode == 0, result.stdout
    assert log.read_text() == executions
    written = re.findall(r"^writing output\.\.\. \[\s*\d+%\] (\S+)", result.stdout, re.M)
    assert set(written) == {"index", "extra", "laid", "notes", "timed"}


def test_a_drift_build_runs_every_cell_and_lists_every_failing_one(tmp_path):
    """With nb_execution_allow_errors (as nox -s drift builds), a page goes on past a failing
    cell, and the report lists each failing cell, not only the first."""
    cells = ["print('before')", "1 / 0", "print('after ' * 2)", "int('x')"]
    docs = make_book(tmp_path, {"page": cells})
    result = build(docs, 1, "-D", "nb_execution_allow_errors=1")
    report = json.loads((docs / "_build/html/failed-pages.json").read_text())
    assert [(f["page"], f["cell"]) for f in report["failing_cells"]] == [
        ("page", "1 / 0"),
        ("page", "int('x')"),
    ]
    assert report["failing_cells"][0]["error"] == "ZeroDivisionError: division by zero"
    assert "after after" in (docs / "_build/html/page.html").read_text()
    assert "int('x')" in last_lines(result, 12)


def test_a_page_whose_outputs_left_the_cache_is_executed_again(tmp_path):
    """With the cache folder gone and Sphinx's environment kept, the page is executed again:
    when its HTML is written again (here an HTML option changed, as the versioned site's
    switcher changes them), its published notebook keeps its outputs."""
    docs = make_book(tmp_path, {"page": ["print('from the kernel')"]})
    assert build(docs).returncode == 0
    page = docs / "page.md"
    page.write_text(page.read_text() + "\nA prose edit: read again, outputs from the cache.\n")
    assert build(docs).returncode == 0
    shutil.rmtree(docs / "_build" / ".jupyter_cache")
    assert build(docs, 1, "-D", "html_title=Rewritten").returncode == 0
    published = (docs / "_build/html/_sources/page.ipynb").read_text()
    assert "from the kernel\\n" in published


def test_a_build_under_another_build_dir_keeps_the_first_cache(tmp_path):
    docs = make_book(tmp_path, {"page": ["print('hello')"]})
    assert build(docs).returncode == 0
    first = sorted((docs / "_build" / ".jupyter_cache").iterdir())
    other = tmp_path / "elsewhere"
    assert build(docs, BOOK_BUILD_DIR=str(other)).returncode == 0
    assert sorted((docs / "_build" / ".jupyter_cache").iterdir()) == first
    assert list((other / ".jupyter_cache").iterdir())


def test_parallel_clean_builds_leave_a_sound_cache(tmp_path):
    from book.cache import opened

    pages = {f"p{i}": [f"print({i} * {i})"] for i in range(4)}
    for attempt in range(5):
        docs = make_book(tmp_path / f"try{attempt}", pages)
        result = build(docs, jobs=2)
        assert result.returncode == 0, result.stdout
        (cache,) = (docs / "_build" / ".jupyter_cache").iterdir()
        with opened(cache) as records:
            assert len(records.list_cache_records()) == len(pages)


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


@claim("sum-of-ones")
def _sum_of_ones() -> Observation:
    """jnp.ones(1000).sum() is exactly 1000."""
    return Observation(expected={"sum": 1000.0}, observed={"sum": float(jnp.ones(1000).sum())})
'''
NEW_TESTS = '''"""The claims of the page `checked-sums` fail when JAX behaves otherwise."""

import jax.numpy as jnp


def sums_off_by_one(mp):
    """A jnp.ones that makes one element too many."""
    real = jnp.ones
    mp.setattr(jnp, "ones", lambda n, *a, **k: real(n + 1, *a, **k))


BREAKERS = {"sum-of-ones": sums_off_by_one}
'''


def test_a_new_section_takes_the_four_places_the_readme_names(tmp_path):
    """The README's checklist, followed on a copy of the repository: the page, the toctree,
    the claims module and its can-fail data, and nothing else."""
    repo = tmp_path / "repo"
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    if (HTML.parent / ".jupyter_cache").is_dir():  # the pages already executed stay executed
        shutil.copytree(HTML.parent / ".jupyter_cache", repo / "docs/_build/.jupyter_cache")
    (repo / "docs/checked-sums.md").write_text(FRONT_MATTER + "\n" + NEW_PAGE)
    index = repo / "docs/index.md"
    index.write_text(
        index.read_text().replace("pairwise-distances\n", "pairwise-distances\nchecked-sums\n", 1)
    )
    (repo / "src/chapter2/claims/pages/checked_sums.py").write_text(NEW_CLAIMS)
    (repo / "tests/claims/test_checked_sums.py").write_text(NEW_TESTS)
    env = {**OUTER_ENV, "PYTHONPATH": str(repo / "src")}

    html = repo / "docs/_build/html"
    done = subprocess.run(
        [sys.executable, "-m", "book.build", "docs", str(html)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    page = (html / "checked-sums.html").read_text()
    number, title = re.search(
        r'<h1><span class="section-number">([^<]*)</span>([^<]*)', page
    ).groups()
    assert (number, title.strip()) == ("2.9. ", "Checked sums")
    assert "claim-mark claim-holds" in page
    assert "sum-of-ones" in page
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


# --- the versioned site (nox -s site), on a throwaway book built twice -------------------------

SITE_PAGE = """# A page

```{code-cell} ipython3
:tags: [remove-cell]
import os
from chapter2.claims import Observation, claim, verify
older = os.environ.get("DEMO_OLDER_JAX") == "1"  # the build that plays an older JAX
claim("demo-sum", page="page")(
    lambda: Observation({"1 + 1": 2}, {"1 + 1": 3 if older else 2})
)
```

(claim-demo-sum)=
JAX adds 1 and 1 to make 2.

```{code-cell} ipython3
:tags: [remove-input]
verify("demo-sum")
```
"""


def _claims_json(jax: str, status: str) -> dict:
    observed = {"1 + 1": 3 if status == "drifted" else 2}
    return {
        "jax": jax,
        "jaxlib": jax,
        "python": "3.12.1",
        "recorded": "2026-12-01",
        "modules_not_loaded": {},
        "claims": [
            {
                "id": "demo-sum",
                "section": "page",
                "label": "claim-demo-sum",
                "statement": "1 + 1 makes 2.",
                "kind": "asserted",
                "status": status,
                "expected": {"1 + 1": 2},
                "observed": observed,
                "evidence": f"1 + 1: {observed['1 + 1']}",
                "rests_on": [],
            }
        ],
    }


def make_site(tmp_path: Path) -> Path:
    """A site of a throwaway book as `nox -s site -- 0.10.2` assembles it: the baseline build
    and a build that plays JAX 0.10.2 (its claim drifts), each with its drift-report page."""
    from book.site import assemble

    from chapter2.claims import drift

    baseline = make_book(tmp_path / "baseline", {"page": [], "drift-report": []})
    (baseline / "page.md").write_text(f"{FRONT_MATTER}\n{SITE_PAGE}")
    (baseline / "drift-report.md").write_text("# Drift\n\n```{drift-report}\n```\n")
    older = tmp_path / "older" / "docs"
    shutil.copytree(baseline, older)
    versions = {"BOOK_SITE_VERSIONS": "0.12.0.1 0.10.2"}
    assert build(baseline, 1, **versions).returncode == 0
    claims = _claims_json("0.10.2", "drifted")
    (tmp_path / "claims.json").write_text(json.dumps(claims))
    report = drift.build_report(claims, [])
    (tmp_path / "report.json").write_text(json.dumps(report))
    env = {
        **versions,
        "DEMO_OLDER_JAX": "1",
        "BOOK_DRIFT_CLAIMS": str(tmp_path / "claims.json"),
        "BOOK_DRIFT_REPORT": str(tmp_path / "report.json"),
    }
    build(older, 1, "-D", "nb_execution_allow_errors=1", **env)
    site = tmp_path / "site"
    builds = {"0.12.0.1": baseline / "_build/html", "0.10.2": older / "_build/html"}
    assemble(site, builds, "0.12.0.1")
    return site


def test_a_site_holds_each_release_with_its_banner_verdicts_and_report(tmp_path):
    site = make_site(tmp_path)
    switcher = json.loads((site / "switcher.json").read_text())
    assert [(e["name"], e["url"]) for e in switcher] == [
        ("JAX 0.12.0.1 (baseline)", "../jax-0.12.0.1/"),
        ("JAX 0.10.2", "../jax-0.10.2/"),
    ]
    assert "url=jax-0.12.0.1/index.html" in (site / "index.html").read_text()
    baseline = (site / "jax-0.12.0.1" / "page.html").read_text()
    older = (site / "jax-0.10.2" / "page.html").read_text()
    assert "drift-banner" not in baseline
    assert "theme_switcher_version_match = '0.12.0.1'" in baseline
    assert "theme_switcher_version_match = '0.10.2'" in older
    banner = re.search(r'<div class="drift-banner[^"]*"[^>]*>(.*?)</div>', older, re.S)[1]
    text = re.sub(r"<[^>]+>", "", banner)
    assert "built with JAX 0.10.2, not the baseline JAX 0.12.0.1" in text
    assert "Under it, 1 claim of the 1 this page shows no longer holds (marked ✗)" in text
    assert 'href="drift-report.html"' in banner
    assert "claim-drifted" in older
    assert "claim-holds" in baseline
    assert "ClaimDrift" not in older  # its traceback says nothing the verdict does not
    report = (site / "jax-0.10.2" / "drift-report.html").read_text()
    assert "<strong>demo-sum</strong>" in report
    assert "this JAX gave" in report
