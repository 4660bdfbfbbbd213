"""The claims of the page `fusion` fail when JAX or XLA behaves otherwise."""

import jax.numpy as jnp
import numpy as np

from breakers.shared import (
    barrier_that_does_nothing,
    compiler_options_ignored,
    key_reuse_draws_afresh,
    xla_options,
)


def eager_results_on_the_host(mp):
    """An eager mode that hands results back to the host as NumPy arrays."""
    real = jnp.log
    mp.setattr(jnp, "log", lambda x: np.asarray(real(x)))


BREAKERS = {
    "same-key-identical-arrays": key_reuse_draws_afresh("uniform"),
    "fusion-bytes-accessed": xla_options(xla_disable_hlo_passes="fusion"),
    "eager-intermediates-device-arrays": eager_results_on_the_host,
    "optimization-barrier-splits-fusion": barrier_that_does_nothing,
    "softmax-kernel-boundary": xla_options(xla_cpu_experimental_ynn_fusion_type=""),
    "softmax-kernels-without-ynn": compiler_options_ignored,
}
