"""Shared tools of the "can fail" tests: each section's test module makes JAX (or the machine)
behave otherwise and shows that its claims say so.

A breaker takes pytest's `monkeypatch`, so whatever it changes is restored after the test.
"""

import jax
import pytest

from chapter2.claims import Kind, Status, claims, evaluate


def xla_options(**options):
    """A breaker: every compilation runs with these XLA options (as if XLA had changed)."""

    def breaker(mp):
        real = jax.stages.Lowered.compile

        def compile_(self, compiler_options=None, **kwargs):
            return real(self, {**(compiler_options or {}), **options}, **kwargs)

        mp.setattr(jax.stages.Lowered, "compile", compile_)

    return breaker


def can_fail(breakers: dict):
    """A test, parametrized over `breakers`, that each asserted claim drifts once broken."""

    @pytest.mark.parametrize("claim_id", sorted(breakers))
    def test_asserted_claim_drifts_when_jax_behaves_otherwise(claim_id, monkeypatch):
        assert claims()[claim_id].kind is Kind.ASSERTED
        breakers[claim_id](monkeypatch)
        verdict = evaluate(claim_id)
        assert verdict.status is Status.DRIFTED, verdict.evidence

    return test_asserted_claim_drifts_when_jax_behaves_otherwise


def reports_the_machine(forced: list):
    """A test: after forcing an outcome, an observed claim reports that status and evidence."""

    @pytest.mark.parametrize(("claim_id", "force", "status", "reported"), forced)
    def test_observed_claim_reports_what_the_machine_did(
        claim_id, force, status, reported, monkeypatch
    ):
        assert claims()[claim_id].kind is Kind.OBSERVED
        force(monkeypatch)
        verdict = evaluate(claim_id)
        assert verdict.status is status and reported in verdict.evidence

    return test_observed_claim_reports_what_the_machine_did
