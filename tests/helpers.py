"""What the tests share besides conftest.py: throwaway books built with the real configuration
and layer, the versioned site made of two of them, and a folder served over HTTP."""

import functools
import json
import os
import shutil
import subprocess
import sys
import warnings
from io import StringIO
from pathlib import Path

from book import build as book_build
from conftest import ROOT
from sphinx.testing.util import SphinxTestApp
from static_host import serving  # noqa: F401 - the one test server (tools/ is on the path)

from chapter2.records import ClaimsReport, SitePlan, VerdictRecord
from chapter2.releases import baseline_jax

BASELINE = baseline_jax()  # the release the book is written against, read from the pin

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

# A throwaway book's own tests find its build in its docs/_build, not where this book's went;
# CI=true makes Sphinx draw progress on one line with carriage returns: ask for lines.
OUTER_ENV = {k: v for k, v in os.environ.items() if k != "BOOK_BUILD_DIR"} | {"NO_COLOR": "1"}


def make_book(tmp_path: Path, pages: dict[str, list[str]]) -> Path:
    """A book at tmp_path/docs with the real configuration (and the references' inventories)
    and one page per entry of `pages`."""
    docs = tmp_path / "docs"
    docs.mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "conf.py", docs / "conf.py")
    shutil.copytree(ROOT / "docs" / "_static", docs / "_static")
    shutil.copytree(ROOT / "data" / "inventories", tmp_path / "data" / "inventories")
    toctree = "\n".join(pages)
    (docs / "index.md").write_text(f"# Tiny book\n\n```{{toctree}}\n:numbered:\n{toctree}\n```\n")
    for name, cells in pages.items():
        body = "\n".join(f"```{{code-cell}} ipython3\n{cell}\n```\n" for cell in cells)
        (docs / f"{name}.md").write_text(f"{FRONT_MATTER}\n# Page {name}\n\n{body}")
    return docs


@functools.cache
def book_extensions() -> tuple[str, ...]:
    """The extensions docs/conf.py lists, read in a process of its own: importing conf.py sets
    variables for the build."""
    read = "import json, runpy, sys; print(json.dumps(runpy.run_path(sys.argv[1])['extensions']))"
    command = [sys.executable, "-c", read, str(ROOT / "docs" / "conf.py")]
    return tuple(json.loads(subprocess.run(command, capture_output=True, check=True).stdout))


def throwaway_extensions(code_links: bool = False) -> list[str]:
    """The book's extensions a throwaway build loads: without link-preview tags
    (sphinxext-opengraph imports matplotlib, 0.8 s a build, for cards the book does not draw;
    only the book's own site is tested for them) and, unless asked, without code links
    (sphinx-codeautolink adds two seconds to each build, and few tests look at them)."""
    left_out = {"sphinxext.opengraph", *(() if code_links else ("sphinx_codeautolink",))}
    return [name for name in book_extensions() if name not in left_out]


def build(
    docs: Path,
    *extra: str,
    html: Path | None = None,
    code_links: bool = False,
    also: tuple[Path, ...] = (),
    **env: str,
) -> subprocess.CompletedProcess:
    """The book's own build command (`python -m book build`, as nox runs it) on `docs`, into
    `html` (by default docs/_build/html), with `throwaway_extensions(code_links)`. `also`:
    extension modules of a test's own, added after the book's."""
    kept = [*throwaway_extensions(code_links), *(module.stem for module in also)]
    paths = [*(str(module.parent) for module in also), OUTER_ENV.get("PYTHONPATH", "")]
    return subprocess.run(
        book_build.command(
            docs, html or docs / "_build" / "html", "-D", f"extensions={','.join(kept)}", *extra
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream, in the order a reader sees it
        text=True,
        env={**OUTER_ENV, "PYTHONPATH": os.pathsep.join(p for p in paths if p), **env},
        timeout=600,
        check=False,
    )


def build_in_process(docs: Path, **env: str) -> str:
    """A build of `docs` that executes no kernel, in this process (`sphinx.testing`), with the
    book's configuration, `throwaway_extensions()` and the options its build command gives Sphinx
    (nitpicky); `env`, the variables conf.py reads, set while it runs. Returns what Sphinx
    warned. A page with code cells needs `build`: its kernel would share this process's JAX."""
    outer = {name: os.environ.get(name) for name in [*env, "BOOK_BUILD_DIR"]}
    os.environ.update(env)
    os.environ.pop("BOOK_BUILD_DIR", None)  # the throwaway book's build stays in its folder
    warned = StringIO()
    try:
        with warnings.catch_warnings():  # the themes' pending deprecations: Sphinx shows them
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            app = SphinxTestApp(
                "html",
                srcdir=docs,
                builddir=docs / "_build",
                confoverrides={"extensions": throwaway_extensions(), "nitpicky": True},
                status=StringIO(),
                warning=warned,
            )
            try:
                app.build()
            finally:
                app.cleanup()
    finally:
        for name, value in outer.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return warned.getvalue()


def last_lines(result: subprocess.CompletedProcess, n: int) -> str:
    return "\n".join(result.stdout.strip().splitlines()[-n:])


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


def _claims_report(jax: str, status: str) -> ClaimsReport:
    """What `python -m chapter2.claims --json` writes for the throwaway book's one claim."""
    observed = {"1 + 1": 3 if status == "drifted" else 2}
    sum_ = VerdictRecord(
        id="demo-sum",
        page="page",
        label="claim-demo-sum",
        kind="asserted",
        status=status,
        jax=jax,
        jaxlib=jax,
        statement="1 + 1 makes 2.",
        expected={"1 + 1": 2},
        observed=observed,
        evidence=f"1 + 1: {observed['1 + 1']}",
    )
    return ClaimsReport(jax, jax, "3.12.1", "2026-12-01", [sum_])


def make_site(tmp_path: Path) -> Path:
    """A site of a throwaway book as `nox -s site -- 0.10.2` assembles it: the baseline build
    and a build that plays JAX 0.10.2 (its claim drifts), each with its drift-report page."""
    from book.site import main

    baseline = make_book(tmp_path / "baseline", {"page": [], "drift-report": []})
    (baseline / "page.md").write_text(f"{FRONT_MATTER}\n{SITE_PAGE}")
    (baseline / "drift-report.md").write_text("# Drift\n\n```{drift-report}\n```\n")
    older = tmp_path / "older" / "docs"
    shutil.copytree(baseline, older)
    plan = tmp_path / "site-plan.json"
    builds = {BASELINE: baseline / "_build/html", "0.10.2": older / "_build/html"}
    SitePlan(BASELINE, builds).dump(plan)
    versions = {"BOOK_SITE_PLAN": str(plan)}
    assert build(baseline, **versions).returncode == 0
    _claims_report("0.10.2", "drifted").dump(tmp_path / "claims.json")
    env = {
        **versions,
        "DEMO_OLDER_JAX": "1",
        "BOOK_DRIFT_CLAIMS": str(tmp_path / "claims.json"),
        "BOOK_DRIFT_BASELINE": str(baseline / "_build/outputs"),
    }
    build(older, **env)
    site = tmp_path / "site"
    main([str(site), str(plan)])
    return site
