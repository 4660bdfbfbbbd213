"""Shared tools of the "can fail" tests: each section's test module makes JAX (or the machine)
behave otherwise and shows that its claims say so.

A breaker takes pytest's `monkeypatch`, so whatever it patches is restored after the test. A
breaker that changes what monkeypatch cannot (a JAX config option) returns a function that
puts it back.
"""

import itertools

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


def config_option(name: str, value):
    """A breaker: the JAX config option `name` takes `value` while the check runs."""

    def breaker(mp):
        saved = jax.config.values[name]
        jax.config.update(name, value)
        return lambda: jax.config.update(name, saved)

    return breaker


def debug_info_always(value: bool):
    """A breaker: Lowered.as_text() shows source locations always (True) or never (False)."""

    def breaker(mp):
        real = jax.stages.Lowered.as_text
        mp.setattr(
            jax.stages.Lowered,
            "as_text",
            lambda self, dialect=None, *, debug_info=value: real(self, dialect, debug_info=value),
        )

    return breaker


def key_reuse_draws_afresh(sampler: str):
    """A breaker: jax.random.<sampler> draws new numbers on every call, whatever the key."""

    def breaker(mp):
        real, calls = getattr(jax.random, sampler), itertools.count()
        mp.setattr(
            jax.random,
            sampler,
            lambda key, *a, **kw: real(jax.random.fold_in(key, next(calls)), *a, **kw),
        )

    return breaker


def can_fail(breakers: dict):
    """A test, parametrized over `breakers`, that each asserted claim drifts once broken."""

    @pytest.mark.parametrize("claim_id", sorted(breakers))
    def test_asserted_claim_drifts_when_jax_behaves_otherwise(claim_id, monkeypatch):
        assert claims()[claim_id].kind is Kind.ASSERTED
        undo = breakers[claim_id](monkeypatch)
        try:
            verdict = evaluate(claim_id)
        finally:
            if undo is not None:
                undo()
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
