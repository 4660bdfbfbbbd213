"""The build's contract, proven on throwaway books that use the real docs/conf.py and docs layer."""

import json
import pickle
import re
import shutil
from pathlib import Path

import pytest
from book.cache import opened
from book.record import AFTER_A_FAILURE, read_record
from bs4 import BeautifulSoup
from conftest import ROOT
from helpers import BASELINE, FRONT_MATTER, build, build_in_process, last_lines, make_book

from chapter2.records import SitePlan

pytestmark = pytest.mark.slow


def test_every_failing_cell_is_named_at_the_end_at_its_file_and_line(tmp_path):
    docs = make_book(
        tmp_path,
        {
            "first": ["x = 1", 'assert x == 2, "x should be two"', "print(undefined)"],
            "fine": ["print('ok')"],
            "second": ["import jax.numpy as jnp", "jnp.ones(3).no_such_method()"],
        },
    )
    result = build(docs)
    output = result.stdout
    assert result.returncode != 0
    lines = last_lines(result, 12).splitlines()
    start = lines.index("3 problems failed the build:")
    said = lines[start + 1 :]
    first = (docs / "first.md").read_text().splitlines()
    line = first.index('assert x == 2, "x should be two"')  # 0-based: the fence is above
    assert said[0] == f"  docs/first.md:{line}: AssertionError: x should be two"
    knock_on = [s for s in said if s.startswith("  docs/first.md:") and s != said[0]]
    assert knock_on == [f"  docs/first.md:{line + 4}: " + AFTER_A_FAILURE]
    assert "NameError: name 'undefined' is not defined" in [s.strip() for s in said]
    assert any(s.startswith("  docs/second.md:") and "AttributeError" in s for s in said)
    assert "| jnp.ones(3).no_such_method()" in [s.strip() for s in said]
    assert not any("fine.md" in s for s in said)
    for crash in ("Exception occurred", "Extension error", "please report", "open an issue"):
        assert crash not in output
    assert "without encryption" not in output  # kernels talk over IPC
    (cache,) = (docs / "_build" / ".jupyter_cache").iterdir()
    with opened(cache) as records:  # a page with a failing cell is executed again next time
        assert {Path(r.uri).stem for r in records.list_cache_records()} == {"fine"}
    record = read_record(docs / "_build")  # the summary's one source: no warning file is read
    assert [cell.path for cell in record.failing_cells] == [
        "docs/first.md",
        "docs/first.md",
        "docs/second.md",
    ]
    assert not (docs / "_build" / "warnings.txt").exists()
    assert (docs / "_build" / "failed-pages.txt").read_text().strip() in output
    env = pickle.loads((docs / "_build" / "doctrees" / "environment.pickle").read_bytes())
    assert [name for name in vars(env) if name.startswith("book")] == []  # the domain holds it
    assert set(env.domaindata["book"]["pages"]) == {"index", "first", "fine", "second"}


def test_a_configuration_that_fails_to_load_is_named_and_nothing_else(tmp_path):
    docs = make_book(tmp_path, {"page": ["print('never run')"]})
    (docs / "conf.py").write_text((docs / "conf.py").read_text() + "\nraise ValueError('bad')\n")
    result = build(docs)
    assert result.returncode != 0
    assert "ValueError: bad" in result.stdout
    assert last_lines(result, 1) == "The build stopped before it recorded its problems."
    assert "FileNotFoundError" not in result.stdout


def test_a_problem_met_before_any_page_is_named_at_the_end(tmp_path):
    """Sphinx warns of a configuration value's type before it makes its environment, and
    intersphinx of an inventory it cannot read before the builder reads a page."""
    docs = make_book(tmp_path, {"page": []})
    (docs / "conf.py").write_text((docs / "conf.py").read_text() + "\nhtml_title = 5\n")
    (tmp_path / "data" / "inventories" / "scipy.inv").unlink()
    result = build(docs)
    assert result.returncode != 0
    tail = last_lines(result, 5)
    assert "2 problems failed the build:" in tail, tail
    assert "`html_title' has type `int'" in tail
    assert "scipy.inv" in tail


BAD_EDITS = {  # page -> (its broken content, what the end of the build must say of it)
    "asserts": ("```{code-cell} ipython3\nassert 1 == 2, 'one is not two'\n```", "one is not two"),
    "syntax": ("```{code-cell} ipython3\ndef broken(:\n    pass\n```", "SyntaxError"),
    "directive": ("```{no-such-directive}\nbody\n```", "no-such-directive"),
    "reference": ("See {doc}`no-such-page`.", "no-such-page"),
    "orphan": ("Linked from nowhere.", "isn't included in any toctree"),
    "math": ("It costs $\\notacommand n$.", 'Unknown LaTeX command "\\notacommand"'),  # MathML
}


def test_every_problem_is_named_at_the_end_of_every_build_until_it_is_fixed(tmp_path):
    docs = make_book(tmp_path, {name: [] for name in BAD_EDITS if name != "orphan"})
    for name, (broken, _) in BAD_EDITS.items():
        (docs / f"{name}.md").write_text(f"{FRONT_MATTER}\n# Page {name}\n\n{broken}\n")
    for attempt in ("first build", "again, nothing changed"):
        result = build(docs)
        assert result.returncode != 0, attempt
        tail = last_lines(result, 17)
        assert "6 problems failed the build" in tail, (attempt, tail)
        assert "build finished with problems, 6 warnings" in result.stdout, attempt
        for name, (_, said) in BAD_EDITS.items():
            line = next((ln for ln in tail.splitlines() if f"docs/{name}.md" in ln), "")
            assert line, (attempt, name, tail)
            assert said in tail[tail.index(line) :], (attempt, name, tail)
    for name in BAD_EDITS:
        (docs / f"{name}.md").write_text(f"{FRONT_MATTER}\n# Page {name}\n\nFixed.\n")
    index = docs / "index.md"
    index.write_text(index.read_text().replace("reference\n", "reference\norphan\n"))
    result = build(docs)
    assert result.returncode == 0, result.stdout
    assert read_record(docs / "_build").problems == []
    assert not (docs / "_build" / "failed-pages.txt").exists()


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
    tail = last_lines(result, 12).splitlines()
    assert result.returncode != 0
    head = next(i for i, line in enumerate(tail) if line.startswith("  docs/page.md:"))
    assert "ClaimDrift: claim 'demo-drift' (page page) drifted" in tail[head]
    label = page.read_text().splitlines().index("(claim-demo-drift)=")
    said = f"the book says (docs/page.md:{label + 2}): 1 + 1 makes 3."
    assert [line.strip() for line in tail[head + 1 : head + 4]] == [
        "its check:     the notebook cell that registers it",
        "JAX did:       1 + 1: 2 (the book expects 3)",  # its values, said once
        said,
    ]
    assert 'verify("demo-drift")' in "\n".join(tail)
    summary = tail[next(i for i, line in enumerate(tail) if "failed the build:" in line) :]
    assert labels(summary) == labels(contributing_sample())


def contributing_sample() -> list[str]:
    """The failure summary CONTRIBUTING.md shows under "When the build fails"."""
    text = (ROOT / "CONTRIBUTING.md").read_text().split("## When the build fails", 1)[1]
    return text.split("```\n", 2)[1].splitlines()


def labels(lines: list[str]) -> list[str]:
    """Each line's first word (a page's path as <page>), a cell's quoted lines as one."""
    found: list[str] = []
    for line in lines:
        word = line.split()[0]
        word = "<page>" if word.startswith("docs/") else word
        if not found or found[-1] != word:
            found.append(word)
    return found


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
    """Every kernel starts with tools/stand_in_device.py (as `nox -s standin_gpu` builds the
    book): a fact of the CPU alone is reported, not failed, on a page that runs on the default
    device, and checked on a page that pins the CPU."""
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "stand_in_device.py", startup / "00-stand-in-gpu.py")
    fact = 'from chapter2.claims import verify\nverify("cpu-async-dispatch-default")'
    pin = 'import jax\njax.config.update("jax_default_device", jax.devices("cpu")[0])'
    docs = make_book(tmp_path, {"anywhere": [fact], "about-the-cpu": [pin, fact]})
    result = build(docs, IPYTHONDIR=str(tmp_path / "ipython"))
    assert result.returncode == 0, last_lines(result, 40)
    anywhere = (docs / "_build" / "html" / "anywhere.html").read_text()
    assert "○ a fact of the CPU, not checked on GPU" in anywhere
    about_the_cpu = (docs / "_build" / "html" / "about-the-cpu.html").read_text()
    assert '✓ <span class="visually-hidden">checked on JAX' in about_the_cpu
    assert "not checked on GPU" not in about_the_cpu


# A time zone west of UTC, in POSIX's form (no zone database needed): jupyter-cache keeps
# when a page ran in UTC without the zone, and myst-nb reads that back as local time.
WEST = {"TZ": "EST5"}


def stamps(docs: Path, kind: str) -> dict[str, int]:
    """When a build last wrote each page's HTML ("html") or its doctree, which Sphinx writes
    for each page it read ("doctrees"): the file's modification time, by page."""
    suffix = {"html": ".html", "doctrees": ".doctree"}[kind]
    pages = {path.stem for path in docs.glob("*.md")}
    folder = docs / "_build" / kind
    return {p.stem: p.stat().st_mtime_ns for p in folder.glob(f"*{suffix}") if p.stem in pages}


def changed(before: dict[str, int], after: dict[str, int]) -> list[str]:
    """The pages whose file is new or was written again."""
    return sorted(page for page, stamp in after.items() if before.get(page) != stamp)


def test_rebuilds_execute_and_write_only_what_changed(tmp_path):
    """Run west of UTC (WEST), where a page served from the cache once read as run now."""
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
            "laid": [
                "import jax.numpy as jnp\nfrom chapter2.layout import aligned_empty",
                record.format("laid"),
            ],
        },
    )
    (docs / "notes.md").write_text("# Notes\n\n```{claims-matrix}\n```\n")
    index = docs / "index.md"
    index.write_text(index.read_text() + "\n```{toctree}\nnotes\n```\n")  # unnumbered

    def rebuild() -> tuple[list[str], list[str]]:
        """The pages this build executed (in the order they ran) and the pages it wrote."""
        before = len(log.read_text().split()) if log.exists() else 0
        html = stamps(docs, "html")
        result = build(docs, code_links=True, EXECUTION_LOG=str(log), **WEST)
        assert result.returncode == 0, result.stdout
        written = changed(html, stamps(docs, "html"))
        executed = log.read_text().split()[before:] if log.exists() else []
        said = f"Executed {len(executed)} of the 2 pages with code; the cache served the rest."
        assert said in result.stdout
        return executed, written

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
    # the contents reordered, no page added or removed: every page is read again, none runs
    doctrees = stamps(docs, "doctrees")
    index.write_text(
        index.read_text().replace("```{toctree}\nextra\nnotes\n", "```{toctree}\nnotes\nextra\n")
    )
    assert rebuild()[0] == []
    assert changed(doctrees, stamps(docs, "doctrees")) == [
        "extra",
        "index",
        "laid",
        "notes",
        "timed",
    ]
    # a change to the Sphinx layer (its code hash) reads and writes every page, runs none
    executions = log.read_text()
    html, doctrees = stamps(docs, "html"), stamps(docs, "doctrees")
    result = build(
        docs, "-D", "book_layer_hash=changed", code_links=True, EXECUTION_LOG=str(log), **WEST
    )
    assert result.returncode == 0, result.stdout
    assert log.read_text() == executions
    everything = ["extra", "index", "laid", "notes", "timed"]
    assert changed(html, stamps(docs, "html")) == changed(doctrees, stamps(docs, "doctrees"))
    assert changed(html, stamps(docs, "html")) == everything
    # a change that only the HTML depends on writes every page, and reads each first, so
    # that its code keeps its links into JAX's reference (book.links)
    same = ["-D", "book_layer_hash=changed"]  # as the build before: nothing else to read
    baseurl = ["-D", "html_baseurl=https://example.org/"]
    doctrees = stamps(docs, "doctrees")
    result = build(docs, *same, *baseurl, code_links=True, EXECUTION_LOG=str(log), **WEST)
    assert result.returncode == 0, result.stdout
    assert changed(doctrees, stamps(docs, "doctrees")) == everything  # each page read again
    reference = 'href="https://docs.jax.dev/en/latest/jax.numpy.html#module-jax.numpy"'
    assert reference in (docs / "_build/html/laid.html").read_text()
    assert log.read_text() == executions


def test_a_failing_cell_does_not_stop_its_page(tmp_path):
    """Every cell runs past a failing one (nb_execution_allow_errors, as every build), so a
    build lists each failing cell, the later ones marked as possible knock-ons."""
    docs = make_book(
        tmp_path, {"page": ["print('before')", "1 / 0", "print('after ' * 2)", "int('x')"]}
    )
    build(docs)
    cells = read_record(docs / "_build").failing_cells
    assert [(c.error, c.after_a_failure) for c in cells] == [
        ("ZeroDivisionError: division by zero", False),
        ("ValueError: invalid literal for int() with base 10: 'x'", True),
    ]
    assert "after after" in (docs / "_build/html/page.html").read_text()


# A throwaway book's conf.py, extended: how often each page was resolved, in resolved.json.
RESOLVED_COUNTER = """
import collections
import json
from pathlib import Path

resolved = collections.Counter()


def setup(app):
    app.connect("doctree-resolved", lambda app, doctree, name: resolved.update([name]))
    target = Path(app.outdir).parent / "resolved.json"
    app.connect("build-finished", lambda app, error: target.write_text(json.dumps(resolved)))
"""


def test_a_page_whose_outputs_left_the_cache_is_executed_again(tmp_path):
    """With the cache folder gone and Sphinx's environment kept, the page is executed again:
    when its HTML is written again (here an HTML option changed, as the versioned site's
    switcher changes them), its published notebook keeps its outputs."""
    docs = make_book(tmp_path, {"page": ["print('from the kernel')"]})
    counter = tmp_path / "extensions" / "resolved_counter.py"
    counter.parent.mkdir()
    counter.write_text(RESOLVED_COUNTER)
    assert build(docs, also=(counter,)).returncode == 0
    # each page resolved once: its notebook is made without resolving it again
    assert json.loads((docs / "_build" / "resolved.json").read_text()) == {"index": 1, "page": 1}
    page = docs / "page.md"
    page.write_text(page.read_text() + "\nA prose edit: read again, outputs from the cache.\n")
    assert build(docs, also=(counter,)).returncode == 0
    shutil.rmtree(docs / "_build" / ".jupyter_cache")
    assert build(docs, "-D", "html_title=Rewritten", also=(counter,)).returncode == 0
    published = (docs / "_build/html/_sources/page.ipynb").read_text()
    assert "from the kernel\\n" in published


def test_a_build_under_another_build_dir_keeps_the_first_cache(tmp_path):
    """The build folder is the HTML folder's parent: its cache, record and roofs go there."""
    docs = make_book(tmp_path, {"page": ["print('hello')"]})
    assert build(docs).returncode == 0
    first = sorted((docs / "_build" / ".jupyter_cache").iterdir())
    other = tmp_path / "elsewhere"
    assert build(docs, html=other / "html").returncode == 0
    assert sorted((docs / "_build" / ".jupyter_cache").iterdir()) == first
    assert list((other / ".jupyter_cache").iterdir())


def test_a_build_states_jaxs_defaults_whatever_the_shell_sets(tmp_path):
    """JAX's configuration variables and XLA's flags of the caller's shell reach no page: the
    build drops them before any kernel starts, and says so."""
    shown = (
        "import os, jax\n"
        "print('x64', jax.config.jax_enable_x64, '| devices', len(jax.devices()),\n"
        "      '| precision', jax.config.jax_default_matmul_precision,\n"
        "      '| cache', jax.config.jax_compilation_cache_dir,\n"
        "      '| set', sorted(k for k in os.environ if k == 'XLA_FLAGS'\n"
        "                      or k.startswith('JAX_') and k != 'JAX_PLATFORMS'))"
    )
    kernel = "print('page', os.environ['CHAPTER2_PAGE'], '| roofs', os.environ['CHAPTER2_ROOFS'])"
    docs = make_book(tmp_path, {"page": [shown, kernel]})
    caller = {
        "JAX_ENABLE_X64": "1",
        "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "cache"),
        "JAX_DEFAULT_MATMUL_PRECISION": "highest",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=4",
    }
    result = build(docs, **caller)
    assert result.returncode == 0, result.stdout
    said = "x64 False | devices 1 | precision None | cache None | set []"
    page = (docs / "_build/html/page.html").read_text()
    assert said in page
    # the kernel's environment names its page and the build's roofs (book.kernels)
    assert f"page page | roofs {docs / '_build' / 'roofs.json'}" in page
    dropped = ", ".join(sorted(caller))
    assert f"its pages run without {dropped}, set in this shell" in result.stdout


def test_the_drift_reports_page_links_the_builds_a_later_site_build_names(tmp_path):
    """The versions of the site are read where the page lists the committed reports: a build
    that names them after one that did not reads the page again and links the builds."""
    docs = make_book(tmp_path, {"drift-report": []})
    (docs / "drift-report.md").write_text("# Drift\n\n```{drift-report}\n```\n")
    for folder in ("drift", "matrix"):
        shutil.copytree(ROOT / "data" / folder, tmp_path / "data" / folder)
    page = docs / "_build" / "html" / "drift-report.html"
    assert build_in_process(docs) == ""  # no page with code: no kernel, no process of its own
    assert "in that build" not in page.read_text()
    plan = tmp_path / "site-plan.json"
    SitePlan(BASELINE, {BASELINE: tmp_path / "html", "0.10.2": tmp_path / "older"}).dump(plan)
    assert build_in_process(docs, BOOK_SITE_PLAN=str(plan)) == ""
    links = BeautifulSoup(page.read_text(), "html.parser").select("article a[href]")
    assert {a.get_text(): a["href"] for a in links}[
        "in that build"
    ] == "jax-0.10.2/drift-report.html"
    downloads = [a["href"] for a in links if a.get_text() == "The full report"]
    assert len(downloads) == len(list((ROOT / "data" / "drift").glob("*/report.md")))
    assert all((page.parent / href).is_file() for href in downloads)


def test_an_incremental_build_writes_what_a_clean_build_writes(tmp_path):
    """After a prose edit and a code edit, then an edit of the contents that adds a page, each
    page the incremental build wrote is the page a build from nothing writes (with the
    execution cache copied: it holds the same outputs), code links and numbers included."""
    book = tmp_path / "book"
    docs = make_book(
        book,
        {
            "first": ["import jax.numpy as jnp\nprint(jnp.ones(3).sum())"],
            "second": ["import jax\nprint(jax.numpy.arange(3))"],
        },
    )
    assert build(docs, code_links=True).returncode == 0
    index, first, second = docs / "index.md", docs / "first.md", docs / "second.md"

    def prose_and_code():
        first.write_text(first.read_text() + "\nA sentence more.\n")
        second.write_text(second.read_text().replace("arange(3)", "arange(4)"))

    def contents_and_a_new_page():
        (docs / "third.md").write_text(
            f"{FRONT_MATTER}\n# Page third\n\n```{{code-cell}} ipython3\n"
            "import jax.numpy as jnp\nprint(jnp.zeros(2))\n```\n"
        )
        index.write_text(index.read_text().replace("first\nsecond", "second\nthird\nfirst"))

    for edit in (prose_and_code, contents_and_a_new_page):
        edit()
        assert build(docs, code_links=True).returncode == 0, edit.__name__
        clean = tmp_path / edit.__name__
        shutil.copytree(book, clean, ignore=shutil.ignore_patterns("_build"))
        shutil.copytree(docs / "_build/.jupyter_cache", clean / "docs/_build/.jupyter_cache")
        assert build(clean / "docs", code_links=True).returncode == 0, edit.__name__
        for page in sorted((clean / "docs/_build/html").glob("*.html")):
            written = unversioned((docs / "_build/html" / page.name).read_text())
            assert written == unversioned(page.read_text()), f"{page.name}, {edit.__name__}"


def unversioned(page: str) -> str:
    """A page without the checksums Sphinx appends to its static files' addresses (`?v=...`),
    which an incremental build adds to a file that a clean build's first pages link bare."""
    return re.sub(r"\?v=[0-9a-f]{8}", "", page)


def test_a_release_note_on_a_release_the_matrix_never_recorded_is_a_warning_at_its_line(
    tmp_path,
):
    """Not a crash: the note names the claim and the release it has no record of."""
    docs = make_book(tmp_path, {"note": []})
    note = "```{release-note} some-claim 0.0.1\nUnder JAX {{jax}}, it held.\n```\n"
    (docs / "note.md").write_text(f"{FRONT_MATTER}\n# A note\n\n{note}")
    shutil.copytree(ROOT / "data" / "matrix", tmp_path / "data" / "matrix")
    line = (docs / "note.md").read_text().splitlines().index(note.splitlines()[0]) + 1
    warned = build_in_process(docs)
    said = "WARNING: the claims matrix holds no 'some-claim' under JAX 0.0.1"
    assert f"note.md:{line}: {said}" in warned


def test_a_backend_note_on_no_claim_of_the_book_is_a_warning_at_its_line(tmp_path):
    """Not a note that silently vanishes: a mistyped id is no claim the run could lack."""
    docs = make_book(tmp_path, {"note": []})
    note = "```{backend-note} no-such-claim\n:run: tpu-v5e-jax-0.10.2\nOn a {{device}}.\n```\n"
    (docs / "note.md").write_text(f"{FRONT_MATTER}\n# A note\n\n{note}")
    shutil.copytree(ROOT / "data" / "backends", tmp_path / "data" / "backends")
    (tmp_path / "src").symlink_to(ROOT / "src")  # the claims modules the book states
    line = (docs / "note.md").read_text().splitlines().index(note.splitlines()[0]) + 1
    warned = build_in_process(docs)
    said = "WARNING: a backend note names 'no-such-claim', which no claims module states"
    assert f"note.md:{line}: {said}" in warned
