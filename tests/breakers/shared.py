"""Shared breakers of the "can fail" data: each page's tests/breakers/<page>.py lists, in
BREAKERS, how to make JAX (or the machine) behave otherwise for each asserted claim, and in
FORCED, the outcomes to force for each observed one; tests/test_claims.py runs them all.

A breaker takes pytest's `monkeypatch`, so whatever it patches is restored after the test. A
breaker that changes what monkeypatch cannot (a JAX config option) returns a function that
puts it back.
"""

import itertools

import jax
from jax.experimental.layout import Format, Layout
from jax.sharding import SingleDeviceSharding


def xla_options(**options):
    """A breaker: every compilation runs with these XLA options (as if XLA had changed)."""

    def breaker(mp):
        real = jax.stages.Lowered.compile

        def compile_(self, compiler_options=None, **kwargs):
            return real(self, {**(compiler_options or {}), **options}, **kwargs)

        mp.setattr(jax.stages.Lowered, "compile", compile_)

    return breaker


def compiler_options_ignored(mp):
    """An XLA that ignores the options a compilation is given."""
    real = jax.stages.Lowered.compile
    mp.setattr(jax.stages.Lowered, "compile", lambda self, compiler_options=None, **kw: real(self))


def barrier_that_does_nothing(mp):
    """An optimization_barrier that XLA fuses across, as the CPU compiler did before 0.11.2.
    JAX's caches are cleared before and after, so no trace made with the other one is used."""
    mp.setattr(jax.lax, "optimization_barrier", lambda x: x)
    jax.clear_caches()
    return jax.clear_caches


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


REAL_DEVICE_PUT = jax.device_put


def column_major_format(ndim: int) -> Format:
    """The format of a column-major array of `ndim` dimensions on the first device."""
    dims = tuple(reversed(range(ndim)))
    return Format(Layout(major_to_minor=dims), SingleDeviceSharding(jax.devices()[0]))
