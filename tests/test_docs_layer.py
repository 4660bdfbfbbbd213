"""The book's Sphinx layer (docs/_ext/book): rendering verdicts, reporting failures, caches."""

import re

import pytest
from book import cache, dependencies, failures, layer_hash, verdicts
from conftest import DOCS, ROOT

from chapter2.claims.registry import Status

VERDICT = {
    "id": "demo",
    "section": "demo-page",
    "kind": "observed",
    "warning": False,
    "status": "differs here",
    "jax": "0.12.0.1",
    "jaxlib": "0.12.0",
    "expected": {"files written": ["<host>.xplane.pb"], "ready": True},
    "observed": {"files written": ["<host>.xplane.pb"], "ready": False, "a*b": 2},
    "evidence": "files written: ['<host>.xplane.pb']; a*b: 2",
    "check_source": "@claim('demo', 'x')\ndef _demo():\n    return 1\n",
}

FAILED = (
    "Executing notebook failed: CellExecutionError\nTraceback (most recent call last):\n"
    '  File "jupyter_cache/executors/utils.py", line 58, in single_nb_execution\n'
    "nbclient.exceptions.CellExecutionError: An error occurred while executing the following"
    ' cell:\n------------------\ncosts = ca[0]\ncosts["flops"]\n------------------\n\n\n'
    "\x1b[31m---------------------------------------------------------------------------\x1b[39m\n"
    "\x1b[31mTypeError\x1b[39m                                 Traceback (most recent call last)\n"
    "\nThe above exception was the direct cause of the following exception:\n\n"
    "\x1b[31mClaimDrift\x1b[39m: claim 'cost-analysis-dict' (page xla-compilation) drifted on JAX"
    " 0.4.38.\n  the book says: cost_analysis() returns a dict.\n  JAX did:       list\n"
)


def test_escape_keeps_markup_characters_visible():
    assert verdicts.escape("a*b <host> x_y [1] {z} $5") == r"a\*b \<host\> x\_y \[1\] \{z\} \$5"
    assert verdicts.escape("plain words, dots.") == "plain words, dots."


def test_a_verdict_is_a_compact_mark_whose_panel_says_what_the_check_found():
    text = verdicts.verdict_markdown(VERDICT, boxed=False)
    assert text.startswith(
        "````{dropdown} ≠ not seen on the machine that built this page (JAX 0.12.0.1)\n"
        ":class-container: claim-mark claim-differs-here\n"
    )
    assert r"- files written: \[\<host\>.xplane.pb\] (as expected)" in text
    assert "- ready: no (the book describes yes)" in text
    assert r"- a\*b: 2" + "\n" in text  # context: shown, not compared
    assert "~~~python\n@claim('demo', 'x')\ndef _demo():\n    return 1\n~~~" in text


def test_a_warning_on_its_own_page_is_a_box_with_the_same_panel():
    boxed = verdicts.verdict_markdown({**VERDICT, "status": "holds"}, boxed=True)
    assert boxed.startswith("`````{container} claim-verdict claim-holds\n")
    assert "**✓ checked on JAX 0.12.0.1**\n" in boxed
    assert "````{dropdown} What the check found, and its code" in boxed
    assert verdicts.panel({**VERDICT, "status": "holds"}) in boxed


def test_a_check_with_nothing_to_check_gives_its_reason():
    unchecked = {**VERDICT, "status": "cannot check", "expected": None, "observed": None}
    text = verdicts.verdict_markdown({**unchecked, "evidence": "no YNN fusion"}, boxed=False)
    assert "{dropdown} ○ cannot be checked on JAX 0.12.0.1" in text
    assert "no YNN fusion" in text


def test_a_fact_of_another_backend_says_so_in_its_mark():
    """Built where the default device is a GPU, a fact of the CPU alone is not checked: the
    mark says why, not that this JAX could not check it."""
    elsewhere = {**VERDICT, "status": "cannot check", "expected": None, "observed": None}
    elsewhere |= {"only_on": ["cpu", "why"], "platform": "gpu", "evidence": "a fact of the CPU"}
    text = verdicts.verdict_markdown(elsewhere, boxed=False)
    assert text.startswith("````{dropdown} ○ a fact of the CPU, not checked on GPU\n")
    at_home = verdicts.verdict_markdown({**elsewhere, "platform": "cpu"}, boxed=False)
    assert at_home.startswith("````{dropdown} ○ cannot be checked on JAX 0.12.0.1\n")


def test_values_read_as_words():
    assert verdicts.words([True, False, None, [1, "a"]]) == "[yes, no, none, [1, a]]"
    assert verdicts.words({"x": 1.5}) == "{x: 1.5}"


@pytest.mark.parametrize("status", list(Status))
def test_every_status_has_a_symbol_words_and_a_colour_class(status):
    assert status.symbol
    assert "JAX 9.9" in status.words("9.9")
    assert verdicts.status_class(status) in (DOCS / "_static" / "book.css").read_text()


def test_a_failure_message_gives_page_cell_and_error():
    found = failures.parse_failure("xla-compilation", FAILED)
    assert found["page"] == "xla-compilation"
    assert found["cell"] == 'costs = ca[0]\ncosts["flops"]'
    assert found["error"].splitlines() == [
        "ClaimDrift: claim 'cost-analysis-dict' (page xla-compilation) drifted on JAX 0.4.38.",
        "  the book says: cost_analysis() returns a dict.",
        "  JAX did:       list",
    ]


def test_a_message_without_a_cell_still_names_its_last_line():
    found = failures.parse_failure("p", "Executing notebook failed: DeadKernelError\nKernel died")
    assert found == {"page": "p", "cell": "", "error": "DeadKernelError\nKernel died"[-11:]}


def test_summary_lists_each_failing_page_then_each_warning():
    text = failures.summary(
        [
            {"page": "a", "cell": "x = 1\n\ny = 2\nassert x == 2", "error": "AssertionError"},
            {"page": "b", "cell": "f()", "error": "NameError: name 'f' is not defined"},
        ],
        [{"page": "c", "line": "7", "message": "Unknown directive type: 'nope'"}],
    )
    assert text.splitlines() == [
        "3 problems failed the build:",
        "  page a: a cell failed",
        "      | y = 2",
        "      | assert x == 2",
        "    AssertionError",
        "  page b: a cell failed",
        "      | f()",
        "    NameError: name 'f' is not defined",
        "  page c, line 7: Unknown directive type: 'nope'",
    ]


def test_cache_folder_is_per_jax_and_prunes_only_its_own_stale_folders(tmp_path, monkeypatch):
    caches = tmp_path / "caches"
    first = cache.cache_folder(caches)
    assert any(first.glob("*.db")), "the cache's database is created before any worker starts"
    other_jax = caches / "jax-0.4.38-0123456789abcdef"
    other_jax.mkdir()
    monkeypatch.setattr(cache.sys, "version_info", (3, 99, 0))
    second = cache.cache_folder(caches)  # another Python: another cache for this JAX
    assert second != first
    assert second.name.startswith(first.name[: first.name.rindex("-")])
    assert not first.exists()
    assert other_jax.exists()
    monkeypatch.setattr(cache, "version", lambda name: "9.9")
    assert cache.cache_folder(caches).name.startswith("jax-9.9-")


def test_page_dependencies_follow_imports_claims_and_probes(tmp_path):
    from book import dependencies

    engine = tmp_path / "chapter2"
    (engine / "claims" / "pages").mkdir(parents=True)
    (engine / "probes").mkdir()
    for path, text in {
        "__init__.py": "",
        "hlo.py": "import re\n",
        "timing.py": "from chapter2.hlo import count_fusions\n",
        "unused.py": "",
        "claims/__init__.py": "from chapter2.claims.registry import claim\n",
        "claims/registry.py": "",
        "claims/pages/__init__.py": "",
        "claims/pages/fusion.py": '@claim("fused")\ndef f():\n    """Fused."""\n',
        "claims/pages/quiz.py": '@claim("asked")\ndef f():\n    """Asked."""\n',
        "probes/__init__.py": "",
        "probes/probe.py": "from chapter2 import timing\n",
    }.items():
        (engine / path).write_text(text)
    page = (
        "```{code-cell} ipython3\n:tags: [hide-input]\nfrom chapter2.claims import verify\n```\n"
        '```{code-cell} ipython3\nrun_probe("probe")\nverify("fused")\n```\n'
        "```{code-cell} ipython3\n---\ntags: [remove-cell]\n---\n"
        'for claim_id in ["asked", "not-a-claim, with a comma"]:\n    verify(claim_id)\n```\n'
    )
    found = {
        p.relative_to(engine).as_posix() for p in dependencies.page_dependencies(tmp_path, page)
    }
    assert found == {
        "__init__.py",
        "claims/__init__.py",
        "claims/registry.py",
        "claims/pages/__init__.py",
        "claims/pages/fusion.py",
        "claims/pages/quiz.py",
        "probes/__init__.py",
        "probes/probe.py",
        "timing.py",
        "hlo.py",
    }


def test_the_dependency_hash_joins_the_first_cells_options_in_either_form():
    from book import dependencies

    lines = "```{code-cell} ipython3\n:tags: [hide-input]\nimport jax\n```\n"
    hashed = dependencies.with_hash(lines, "abc")
    assert hashed.startswith("```{code-cell} ipython3\n:deps-hash: abc\n:tags: [hide-input]\n")
    yaml = "```{code-cell} ipython3\n---\ntags: [hide-input]\n---\nimport jax\n```\n"
    hashed = dependencies.with_hash(yaml, "abc")
    assert hashed.startswith("```{code-cell} ipython3\n---\ndeps-hash: abc\ntags: [hide-input]\n")
    for page in (lines, yaml):
        (cell,) = dependencies.read_myst_markdown_notebook(
            dependencies.with_hash(page, "abc")
        ).cells
        assert cell.metadata["deps-hash"] == "abc"
        assert cell.source == "import jax"


def test_pages_are_dealt_so_the_chunks_sphinx_makes_carry_even_work():
    from book.balance import deal
    from sphinx.util.parallel import make_chunks

    weights = {f"p{i}": float(w) for i, w in enumerate([30, 25, 20, 12, 9, 8, 5, 4, 3, 2, 1])}
    order = deal(list(weights), weights, 2)
    chunks = make_chunks(order, 2)  # as Sphinx cuts the list: 5, 5 and 1 pages
    assert sorted(order) == sorted(weights)
    assert [len(c) for c in chunks] == [5, 5, 1]
    first, second = (sum(weights[d] for d in chunk) for chunk in chunks[:2])
    assert abs(first - second) <= 2
    assert chunks[2] == ["p10"]  # the lightest page runs last


def test_the_helpers_page_shows_or_links_every_engine_module_the_pages_and_checks_use():
    src = ROOT / "src"
    used = set()
    for page in (ROOT / "docs").glob("*.md"):
        used |= dependencies.page_dependencies(src, page.read_text())
    pages = src / "chapter2" / "claims" / "pages"  # shown in the dropdown of each verdict
    engine = {
        path.relative_to(src).as_posix()
        for path in used
        if path.name != "__init__.py" and path.parent != pages
    }
    helpers = (ROOT / "docs" / "helpers.md").read_text()
    shown = set(re.findall(r"(?:literalinclude\} |download\}`[^<`]*<)\.\./src/([^\s>`]+)", helpers))
    assert engine, "no engine module found"
    assert engine <= shown, (
        f"neither shown nor linked on the helpers page: {sorted(engine - shown)}"
    )


def test_the_layer_hash_follows_the_layers_code(tmp_path):
    """conf-level value `book_layer_hash`: a change to any module of the layer changes it, so
    Sphinx reads every page again (tests/test_build.py shows the rebuild)."""
    layer = tmp_path / "book"
    layer.mkdir()
    for path in (ROOT / "docs" / "_ext" / "book").glob("*.py"):
        (layer / path.name).write_bytes(path.read_bytes())
    before = layer_hash(layer)
    assert before == layer_hash()
    backends = layer / "backends.py"
    backends.write_text(backends.read_text() + "\n# an edit\n")
    assert layer_hash(layer) != before


def test_a_backend_note_fills_in_what_the_run_recorded_and_names_it():
    from book.backends import recorded_runs, with_recorded

    [run] = recorded_runs(ROOT / "data" / "backends")
    text = with_recorded(
        "On an {{device}} with JAX {{jax}}, {{fusion-boundaries/softmax by hand|len}} fusion "
        "({{fusion-boundaries/softmax by hand|join}}), v3 {{distances N=1000 M=1500 d=64/v3/"
        "max_abs_err_highest|.2g}}.",
        run,
    )
    assert text == "On an NVIDIA H200 with JAX 0.11.2, 1 fusion (kCustom), v3 2.1e-06."
    with pytest.raises(KeyError):
        with_recorded("{{no-such-check/value}}", run)
