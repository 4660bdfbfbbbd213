"""The claims of the page `fusion` fail when JAX or XLA behaves otherwise."""

import jax.numpy as jnp
import numpy as np

from chapter2.claims.pages import fusion as fusion_claims
from claims.breaking import key_reuse_draws_afresh, xla_options


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
    "same-key-identical-arrays": key_reuse_draws_afresh("uniform"),
    "fusion-bytes-accessed": fusion_never_runs,
    "eager-intermediates-device-arrays": eager_results_on_the_host,
    "fusion-boundaries": xla_options(xla_disable_hlo_passes="fusion"),
}
