"""Every claim of the registry holds on the installed JAX, and drift is reported clearly."""

import re
from pathlib import Path

import jax
import pytest

from chapter2.claims import REGISTRY, ClaimDrift, evaluate, registry, verify

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = {page.stem: page.read_text() for page in DOCS.glob("*.md")}


@pytest.mark.parametrize("claim_id", sorted(REGISTRY))
def test_claim_holds(claim_id):
    verdict = verify(claim_id)
    assert verdict.claim.kind == "observed" or verdict.holds


@pytest.mark.parametrize("claim_id", sorted(REGISTRY))
def test_claim_is_verified_beside_its_note(claim_id):
    entry = REGISTRY[claim_id]
    call = f'verify("{claim_id}")'
    pages = [name for name, text in PAGES.items() if call in text]
    assert len(pages) == 1, f"{claim_id} is verified on {pages or 'no page'}"
    text = PAGES[pages[0]]
    assert f"({entry.label})=" in text, f"label {entry.label} missing on {pages[0]}"
    # The verifying cell comes after the label, with no other label in between.
    after_label = text[text.index(f"({entry.label})=") :]
    assert call in after_label
    between = after_label[: after_label.index(call)]
    assert len(re.findall(r"^\([\w-]+\)=$", between, flags=re.M)) == 1


def test_drift_names_the_claim_the_statement_and_what_jax_did(monkeypatch):
    monkeypatch.setattr(registry, "REGISTRY", {})
    registry.claim("one-plus-one", "9.9", "note-x", "JAX adds 1 and 1 to make 3.")(
        lambda: registry.Observation(False, "1 + 1 gave 2")
    )
    with pytest.raises(ClaimDrift) as err:
        registry.verify("one-plus-one")
    message = str(err.value)
    assert "'one-plus-one'" in message and "section 9.9" in message
    assert "the book says: JAX adds 1 and 1 to make 3." in message
    assert "JAX did:       1 + 1 gave 2" in message and jax.__version__ in message


def test_observed_claims_report_without_raising(monkeypatch):
    monkeypatch.setattr(registry, "REGISTRY", {})
    registry.claim("machine-fact", "9.9", "note-y", "Something about this CPU.", kind="observed")(
        lambda: registry.Observation(False, "not seen here")
    )
    verdict = registry.verify("machine-fact")
    assert not verdict.holds and "observed on this machine" in str(verdict)


def test_a_claim_id_is_registered_once(monkeypatch):
    monkeypatch.setattr(registry, "REGISTRY", {})
    registry.claim("twice", "9.9", "l", "s")(lambda: registry.Observation(True, ""))
    with pytest.raises(ValueError, match="twice"):
        registry.claim("twice", "9.9", "l", "s")(lambda: registry.Observation(True, ""))


def test_verdict_html_escapes_jax_type_names():
    html = evaluate("typed-prng-keys")._repr_html_()
    assert "key&lt;fry&gt;" in html and "<fry>" not in html
