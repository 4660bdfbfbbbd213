"""The claims of the page `fusion` fail when JAX or XLA behaves otherwise."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np

from chapter2.claims import fusion as fusion_claims
from claims.breaking import can_fail, xla_options


def key_reuse_draws_afresh(mp):
    """A PRNG that draws new numbers on every call, whatever the key."""
    real, calls = jax.random.uniform, itertools.count()
    mp.setattr(
        jax.random,
        "uniform",
        lambda key, *a, **kw: real(jax.random.fold_in(key, next(calls)), *a, **kw),
    )


def fusion_never_runs(mp):
    """An XLA whose fusion pass never runs, in the fresh processes as well."""
    real = fusion_claims.run_example
    mp.setattr(
        fusion_claims, "run_example", lambda name, env=None: real(name, env=fusion_claims.UNFUSED)
    )


def eager_results_on_the_host(mp):
    """An eager mode that hands results back to the host as NumPy arrays."""
    real = jnp.log
    mp.setattr(jnp, "log", lambda x: np.asarray(real(x)))


BREAKERS = {
    "same-key-identical-arrays": key_reuse_draws_afresh,
    "fusion-bytes-accessed": fusion_never_runs,
    "eager-intermediates-device-arrays": eager_results_on_the_host,
    "fusion-boundaries": xla_options(xla_disable_hlo_passes="fusion"),
}
FORCED = []

test_can_fail = can_fail(BREAKERS)
