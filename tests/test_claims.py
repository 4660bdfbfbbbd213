"""The claims registry: every claim holds here, sits on its page, can fail, and reports as data."""

import importlib
import inspect
import re

import jax
import pytest
from book.dependencies import strings
from book.record import read_record
from conftest import DOCS, HTML
from myst_nb.core.read import read_myst_markdown_notebook

import chapter2.claims as claims_package
from chapter2.claims import (
    CannotCheck,
    ClaimDrift,
    Kind,
    Observation,
    Status,
    claims,
    evaluate,
    load_errors,
    registry,
    verify,
)
from chapter2.claims.__main__ import main
from chapter2.claims.registry import describe_error, listed, page_of, status_of
from chapter2.records import ClaimsReport, VerdictRecord

ALL = claims()


@pytest.fixture
def empty_registry(monkeypatch):
    """A registry with no claims and no modules to load, for claims made up by a test."""
    monkeypatch.setattr(registry, "REGISTRY", {})
    monkeypatch.setattr(claims_package, "REGISTRY", registry.REGISTRY)
    monkeypatch.setattr(claims_package, "page_modules", list)
    return registry.REGISTRY


def made_up(claim_id, check, kind=Kind.ASSERTED):
    """A claim of a page `demo`."""
    return registry.claim(claim_id, kind=kind, page="demo")(check)


# --- every claim of the book -----------------------------------------------------------------


def test_every_claims_module_loads():
    assert load_errors() == {}


@pytest.fixture(scope="module")
def built_verdicts() -> dict[str, dict]:
    """Every verdict the book's build recorded (`nox -s docs` ran each check once)."""
    record = read_record(HTML.parent)
    if record is None:
        pytest.fail(f"no build record in {HTML.parent}: run `nox -s docs` first")
    pages = record.pages
    return {claim_id: v for found in pages.values() for claim_id, v in found.verdicts.items()}


@pytest.mark.parametrize("claim_id", sorted(ALL))
def test_claim_holds_on_this_jax(claim_id, built_verdicts):
    """Judged from the build's record, where its page's check ran against this JAX."""
    verdict = built_verdicts[claim_id]
    allowed = (
        {Status.HOLDS}
        if verdict.kind == Kind.ASSERTED
        else {
            Status.AS_SPECIFIED,
            Status.DIFFERS_HERE,
        }
    )
    assert verdict.jax == jax.__version__, "the build ran another JAX: run nox -s docs"
    assert verdict.status in allowed, verdict.evidence
    said = verdict.said  # what a reader's panel shows
    assert said.endswith("."), f"{claim_id} says no plain sentence of what was run: {said!r}"
    for machinery in (claim_id, "expected", "observation", "verdict", "{'", "['"):
        assert machinery not in said.lower(), f"{claim_id} says {machinery!r}: {said}"


def test_what_a_claim_says_is_written_once_on_its_page_never_in_its_check():
    """A check's docstring would be a second copy of the page's sentence, kept in step by
    nobody: checks have none."""
    assert [i for i, c in ALL.items() if c.check.__doc__] == []


def test_claims_modules_are_named_after_pages():
    for module in claims_package.page_modules():
        page = page_of(module)
        assert (DOCS / f"{page}.md").exists(), f"claims module {module} has no page {page}.md"
    assert all((DOCS / f"{c.page}.md").exists() for c in ALL.values())


@pytest.mark.parametrize("claim_id", sorted(ALL))
def test_claim_is_stated_on_its_home_page_then_verified_out_of_sight(claim_id):
    """The label, the statement (a warning box, or prose), then the check's cell, whose input
    is hidden: nothing else between them."""
    entry = ALL[claim_id]
    text = (DOCS / f"{entry.page}.md").read_text()
    label = f"({entry.label})=\n"
    cell = f'```{{code-cell}} ipython3\n:tags: [remove-input]\nverify("{claim_id}")\n```'
    assert text.count(label) == 1, f"{entry.page}.md needs the label {label} once"
    after = text[text.index(label) + len(label) :]
    assert cell in after, f"{entry.page}.md verifies {claim_id} after its statement, input hidden"
    between = after[: after.index(cell)]
    assert "```{code-cell}" not in between, "the statement holds no cell"
    assert not re.search(r"^\([\w-]+\)=$", between, flags=re.M), "one statement per claim"
    assert between.startswith(":::{warning}\n") is entry.warning, "only warnings are boxed"
    assert ":::{note}" not in between
    # one paragraph: what the mark certifies, and nothing after it before the mark
    assert "\n\n" not in between.strip(), f"{claim_id}: its statement is one paragraph"


def test_every_verify_cell_hides_its_input():
    """Each page's cells as myst-nb reads them for the build: a cell whose code names a claim
    (as book.dependencies finds the claims a page verifies) is tagged, in its metadata, to
    hide its input or itself."""
    verified = set()
    for page in sorted(DOCS.glob("*.md")):
        for cell in read_myst_markdown_notebook(page.read_text()).cells:
            if cell.cell_type != "code" or not (claim_ids := strings(cell.source) & set(ALL)):
                continue
            tags = set(cell.metadata.get("tags", []))
            assert tags & {"remove-input", "remove-cell"}, (page.name, claim_ids, sorted(tags))
            verified |= set(claim_ids)
    assert verified == set(ALL)  # the cells were read: each claim is verified in one


def page_tests(page: str):
    """The can-fail data of a page: tests/breakers/<page>.py, with BREAKERS and FORCED."""
    return importlib.import_module(f"breakers.{page.replace('-', '_')}")


@pytest.mark.parametrize("claim_id", sorted(ALL))
def test_every_claim_can_fail(claim_id, monkeypatch):
    """An asserted claim drifts once its page's breaker makes JAX behave otherwise; an observed
    one reports each outcome its page forces."""
    entry = ALL[claim_id]
    tests = page_tests(entry.page)
    if entry.kind is Kind.ASSERTED:
        breaker = getattr(tests, "BREAKERS", {}).get(claim_id)
        assert breaker, f"{claim_id} needs an entry in BREAKERS of {tests.__name__}"
        with monkeypatch.context() as mp:
            undo = breaker(mp)
            try:
                verdict = evaluate(claim_id)
            finally:
                if undo is not None:
                    undo()
        assert verdict.status is Status.DRIFTED, (
            f"{breaker.__name__} in {tests.__name__} left {claim_id} {verdict.status}: "
            f"{verdict.evidence}"
        )
        return
    forced = [f for f in getattr(tests, "FORCED", []) if f[0] == claim_id]
    assert forced, f"{claim_id} needs a forced outcome in FORCED of {tests.__name__}"
    for _, force, status, reported in forced:
        with monkeypatch.context() as mp:
            force(mp)
            verdict = evaluate(claim_id)
        assert verdict.status is status, verdict.evidence
        assert reported in verdict.evidence, verdict.evidence


@pytest.mark.parametrize("page", sorted({c.page for c in ALL.values()}))
def test_can_fail_data_names_only_claims_of_its_page(page):
    tests = page_tests(page)
    listed = set(getattr(tests, "BREAKERS", {})) | {f[0] for f in getattr(tests, "FORCED", [])}
    listed |= set(getattr(tests, "PARTS", {}))
    mine = {claim_id for claim_id, entry in ALL.items() if entry.page == page}
    assert listed <= mine, f"{tests.__name__} lists claims of no such page: {listed - mine}"


# Each part a check was extended by, so that its mark covers its whole statement, comes out
# wrong under a breaker of its own: PARTS of tests/breakers/<module>.py, {claim id: {the name
# of the value: a breaker}}.
PARTS = sorted(
    (claim_id, name)
    for page in {c.page for c in ALL.values()}
    for claim_id, parts in getattr(page_tests(page), "PARTS", {}).items()
    for name in parts
)


@pytest.mark.parametrize(("claim_id", "name"), PARTS)
def test_every_part_of_an_extended_check_can_fail(claim_id, name, monkeypatch):
    """The value named differs from what the check expects (so the check expects it)."""
    breaker = page_tests(ALL[claim_id].page).PARTS[claim_id][name]
    with monkeypatch.context() as mp:
        undo = breaker(mp)
        try:
            verdict = evaluate(claim_id)
        finally:
            if undo is not None:
                undo()
    assert verdict.observation is not None, verdict.evidence
    assert name in verdict.observation.differences, (
        f"{breaker.__name__} left {name!r} of {claim_id} as expected: {verdict.evidence}"
    )


# Pages being rebuilt, whose claims may not say yet what their checks test (each, the work
# that will): the test below fails a page listed here once all its claims say it.
REBUILT: dict[str, str] = {}


@pytest.mark.parametrize("claim_id", sorted(ALL))
def test_every_claim_says_what_its_check_tests(claim_id, request):
    """What the page of checks shows beside each statement: the check's coverage in words
    (`checks=`), and what the statement says that it does not (`unchecked=`, left out where
    the statement says no more). The words are plain sentences (registration refuses others)."""
    entry = ALL[claim_id]
    if not entry.checks and entry.page in REBUILT:
        request.applymarker(pytest.mark.xfail(reason=REBUILT[entry.page], strict=True))
    assert entry.checks, f"{claim_id} says nothing of what its check tests: @claim(checks=...)"
    assert registry.coverage_problem(claim_id, entry.checks, entry.unchecked) is None


def test_a_page_being_rebuilt_still_has_claims_that_do_not_say_what_they_check():
    waiting = {c.page for c in ALL.values() if not c.checks}
    assert set(REBUILT) <= waiting, f"every claim of {set(REBUILT) - waiting} says it: unlist it"


@pytest.mark.parametrize(
    ("checks", "unchecked", "problem"),
    [
        ("", "Why it matters.", "so checks= says what it tests"),
        ("it compiles once.", "", "capitalized"),
        ("It compiles once", "", "full stop"),
        ("It compiles once. ", "", "full stop"),
        ("The value of demo-coverage.", "", "without ids"),
        ("It returns {'a': 1}.", "", "without ids"),
        ("It compiles once.", "As expected, nothing.", "without ids"),
    ],
)
def test_a_claim_says_its_checks_coverage_in_plain_sentences(
    empty_registry, checks, unchecked, problem
):
    with pytest.raises(ValueError, match=problem):
        registry.claim("demo-coverage", page="demo", checks=checks, unchecked=unchecked)(
            lambda: Observation({}, {})
        )
    registry.claim("demo-whole", page="demo", checks="`f` compiles once.")(
        lambda: Observation({}, {})
    )
    assert evaluate("demo-whole").record().checks == "`f` compiles once."
    assert evaluate("demo-whole").record().unchecked == ""


# --- how a verdict is made --------------------------------------------------------------------


def test_status_has_one_rule():
    assert status_of(Kind.ASSERTED, True) is Status.HOLDS
    assert status_of(Kind.ASSERTED, False) is Status.DRIFTED
    assert status_of(Kind.OBSERVED, True) is Status.AS_SPECIFIED
    assert status_of(Kind.OBSERVED, False) is Status.DIFFERS_HERE
    assert status_of(Kind.ASSERTED, None) is Status.DRIFTED
    assert status_of(Kind.OBSERVED, None) is Status.DRIFTED
    for kind in Kind:
        assert status_of(kind, None, checkable=False) is Status.CANNOT_CHECK


def test_a_check_with_nothing_to_check_is_neither_held_nor_drifted(empty_registry):
    def nothing_here():
        msg = "this JAX has no such fusion"
        raise CannotCheck(msg)

    made_up("absent", nothing_here)
    verdict = evaluate("absent")
    assert verdict.status is Status.CANNOT_CHECK
    assert not verdict.drifted
    assert verdict.evidence == "this JAX has no such fusion"
    assert verify("absent") is not None  # the build goes on


def test_observation_compares_expected_values_and_shows_context():
    obs = Observation(
        expected={"kind": "dict", "shape": (2, 3)},
        observed={"kind": "list", "shape": [2, 3], "size": 6},
    )
    assert obs.differences == ["kind"]
    assert not obs.matches
    assert obs.observed["shape"] == [2, 3]  # tuples compare as JSON has them
    assert obs.sentence() == "kind: list (the book expects dict); shape: [2, 3]; size: 6"
    missing = Observation(expected={"a": 1}, observed={})
    assert missing.differences == ["a"]
    assert "a: (not observed)" in missing.sentence()


def test_a_check_that_raises_is_a_drift_not_a_crash(empty_registry):
    import jax.extend.core

    made_up("missing-api", lambda: jax.extend.core.NoSuchClass)
    verdict = evaluate("missing-api")
    assert verdict.status is Status.DRIFTED
    assert verdict.observation is None
    assert verdict.evidence == "`jax.extend.core.NoSuchClass` does not exist in this JAX"


def test_describe_error_names_missing_modules_and_attributes():
    with pytest.raises(AttributeError) as missing:
        jax.stages.NoSuchThing  # noqa: B018
    assert describe_error(missing.value) == "`jax.stages.NoSuchThing` does not exist in this JAX"
    with pytest.raises(ImportError) as err:
        importlib.import_module("jax.no_such_module")
    assert describe_error(err.value).startswith("`jax.no_such_module` cannot be imported")
    with pytest.raises(ImportError) as gone:
        from jax.experimental.layout import NoSuchFormat  # noqa: F401
    assert describe_error(gone.value) == (
        "`jax.experimental.layout.NoSuchFormat` does not exist in this JAX"
    )
    assert describe_error(ValueError("bad")) == "the check raised ValueError: bad"
    child = RuntimeError("example exited with 1:\nTraceback\n  File /x/y.py\nTypeError: no")
    assert (
        describe_error(child)
        == "the check raised RuntimeError: example exited with 1: ... TypeError: no"
    )


def test_drift_names_the_claim_its_check_and_what_jax_did(empty_registry):
    def adds():
        return Observation(expected={"1 + 1": 3}, observed={"1 + 1": 2})

    made_up("one-plus-one", adds)
    with pytest.raises(ClaimDrift) as err:
        verify("one-plus-one")
    message = str(err.value)
    assert "claim 'one-plus-one' (page demo) drifted" in message
    assert jax.__version__ in message
    assert f"its check:     tests/test_claims.py:{inspect.getsourcelines(adds)[1]}" in message
    assert "JAX did:       1 + 1: 2 (the book expects 3)" in message
    assert "its values" not in message  # what JAX did says them already


def test_a_notebook_shows_a_drift_as_its_claims_and_the_cells_error(empty_registry):
    made_up("one-plus-one", lambda: Observation(expected={"1 + 1": 3}, observed={"1 + 1": 2}))
    drift = ClaimDrift([evaluate("one-plus-one")], ZeroDivisionError("division by zero"))
    assert drift._render_traceback_() == [
        f"ClaimDrift: claim 'one-plus-one' (page demo) drifted on JAX {jax.__version__}.",
        "ClaimDrift: this cell failed with ZeroDivisionError: division by zero",
    ]
    assert "JAX did:       1 + 1: 2 (the book expects 3)" in str(drift)  # the build's summary
    assert [v.claim.id for v in drift.verdicts] == ["one-plus-one"]


def test_a_claim_rests_only_on_other_claims_of_the_book():
    for entry in ALL.values():
        assert entry.id not in entry.rests_on, entry.id
        unknown = [c for c in entry.rests_on if c not in ALL]
        assert not unknown, f"{entry.id} rests on unknown claims {unknown}"
    assert evaluate("repr-does-not-wait").record().rests_on == ["repr-large-array-shape-only"]


def test_observed_claims_report_without_raising(empty_registry):
    made_up("machine-fact", lambda: Observation({"fast": True}, {"fast": False}), Kind.OBSERVED)
    verdict = verify("machine-fact")
    assert verdict.status is Status.DIFFERS_HERE
    assert "differs here" in str(verdict)
    assert verdict.evidence == "fast: False (on the machine the book describes: True)"


def test_a_claim_id_is_registered_once(empty_registry):
    made_up("twice", lambda: Observation({}, {}))
    with pytest.raises(ValueError, match="twice"):
        made_up("twice", lambda: Observation({}, {}))


@pytest.mark.parametrize("claim_id", ["Jit-Caches", "jit_caches", "jit caches", "-jit", "jit-"])
def test_a_claim_id_is_one_docutils_keeps_as_its_labels_id(empty_registry, claim_id):
    with pytest.raises(ValueError, match="lowercase words and digits joined by hyphens"):
        made_up(claim_id, lambda: Observation({}, {}))
    made_up("jit-caches-2", lambda: Observation({}, {}))  # digits too: still its label's id


def test_a_claims_page_comes_from_its_module():
    assert page_of("chapter2.claims.pages.xla_compilation") == "xla-compilation"
    assert ALL["cost-analysis-dict"].page == "xla-compilation"
    assert ALL["cost-analysis-dict"].label == "claim-cost-analysis-dict"


def test_a_module_that_cannot_load_does_not_hide_the_others(monkeypatch):
    monkeypatch.setattr(claims_package, "_LOAD_ERRORS", {})
    monkeypatch.setattr(claims_package, "page_modules", lambda: ["jaxprs", "needs_a_newer_jax"])
    assert "cond-int32-false-first" in claims()
    errors = load_errors()
    assert list(errors) == ["needs_a_newer_jax"]
    assert "ModuleNotFoundError" in errors["needs_a_newer_jax"]


def test_verdict_data_carries_what_the_docs_layer_renders():
    verdict = evaluate("typed-prng-keys")
    data = verdict.record()
    assert data.page == "profiling"
    assert data.label == "claim-typed-prng-keys"
    assert data.status == "holds"
    assert data.kind == "asserted"
    assert data.expected["key(0) + 1"] == "TypeError"
    assert "key<fry>" in data.evidence
    assert data.check_source.lstrip().startswith("@claim(")
    assert data.jax == jax.__version__
    bundle = verdict._repr_mimebundle_()
    assert VerdictRecord.from_dict(bundle[registry.VERDICT_MIME]) == data
    assert bundle["text/plain"].startswith("[typed")


def test_the_source_shown_with_a_verdict_includes_the_module_functions_the_check_calls():
    source = evaluate("trace-files").record().check_source
    assert source.index('"trace-files",') < source.index("def _traced_step(")
    assert source.count("def _traced_step(") == 1  # a helper called twice is shown once
    assert "def generic_name(" not in source  # engine functions are on the helpers page
    shapes = evaluate("vmap-and-broadcast-compile-alike").record().check_source
    assert shapes.startswith("N, M, D = 1000, 1500, 64\n")  # the constants it reads come first


# --- python -m chapter2.claims ----------------------------------------------------------------


def test_json_report_of_every_claim(empty_registry, tmp_path, capsys):
    made_up("holds-here", lambda: Observation({"x": 1}, {"x": 1}))
    made_up("gone", lambda: jax.no_such_function())  # noqa: PLW0108 - fails when checked
    out = tmp_path / "claims.json"
    assert main(["--json", str(out)]) == 1  # a drift makes the run fail
    data = ClaimsReport.load(out)
    assert data.jax == jax.__version__
    assert data.modules_not_loaded == {}
    records = data.by_id
    assert records["holds-here"].page == records["gone"].page
    assert records["gone"].jaxlib
    assert records["holds-here"].status == "holds"
    assert records["holds-here"].observed == {"x": 1}
    assert records["gone"].status == "drifted"
    assert records["gone"].evidence == "`jax.no_such_function` does not exist in this JAX"
    assert "drifted  gone" in capsys.readouterr().out


def test_json_report_exits_zero_when_everything_holds(empty_registry, tmp_path):
    made_up("fine", lambda: Observation({"x": 1}, {"x": 1}))
    assert main(["--json", str(tmp_path / "c.json")]) == 0


@pytest.mark.parametrize(
    ("words", "none", "said"),
    [
        ([], "", ""),
        ([], "nothing", "nothing"),
        (["sin"], "none", "sin"),
        (iter(["sin", "cos"]), "", "sin and cos"),
        (("sin", "cos", "mul"), "", "sin, cos and mul"),
    ],
)
def test_words_are_listed_as_a_sentence_lists_them(words, none, said):
    assert listed(words, none) == said
