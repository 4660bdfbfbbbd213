"""The claims of the page `pairwise-distances` fail when JAX or XLA behaves otherwise."""

import jax.numpy as jnp

from breakers.shared import (
    barrier_that_does_nothing,
    compiler_options_ignored,
    config_option,
    xla_options,
)
from chapter2.cases import distances as dist


def gram_computed_exactly(mp):
    """A v2 that suffers no cancellation (as if the product were exact)."""
    mp.setitem(dist.VERSIONS, "v2", dist.distances_v1)


def sqrt_with_a_safe_gradient(mp):
    """A sqrt whose derivative at 0 is 0 instead of infinite."""
    real = jnp.sqrt
    mp.setattr(jnp, "sqrt", lambda z: jnp.where(z == 0, 0.0, real(jnp.where(z == 0, 1.0, z))))


def gram_gradient_through_differences(mp):
    """A v2 computed through the (N, M, d) differences, as v1 is."""
    mp.setattr(dist, "distances_v2", dist.distances_v1)


BREAKERS = {
    "same-key-prefix": config_option("jax_threefry_partitionable", False),
    "vmap-and-broadcast-compile-alike": xla_options(xla_cpu_experimental_ynn_fusion_type=""),
    "v1-temporaries-without-ynn": compiler_options_ignored,
    "tree-reduction-past-32": compiler_options_ignored,
    "gradient-brings-back-differences": compiler_options_ignored,
    "barrier-materializes-intermediate": barrier_that_does_nothing,
    "gram-one-dot-fewer-flops": xla_options(xla_disable_hlo_passes="transpose-folding"),
    "gram-epilogue-in-product-fusion": xla_options(xla_cpu_experimental_ynn_fusion_type=""),
    "gram-cancellation-centring-shrinks": gram_computed_exactly,
    "sqrt-gradient-at-zero": sqrt_with_a_safe_gradient,
}
PARTS = {
    "vmap-and-broadcast-compile-alike": {
        "v1's bytes accessed: its inputs and output": xla_options(
            xla_cpu_experimental_ynn_fusion_type=""
        ),
    },
    "sqrt-gradient-at-zero": {"v1 gradient nan in every entry": sqrt_with_a_safe_gradient},
    "gradient-brings-back-differences": {
        "v2 at most four N × M arrays": gram_gradient_through_differences,
    },
}
