"""The claims of the page `memory-layout` fail when JAX behaves otherwise."""

import jax
import jax.numpy as jnp

from breakers.shared import REAL_DEVICE_PUT, column_major_format, xla_options

REAL_JIT = jax.jit


def column_major_default(mp):
    """A JAX whose arrays are column-major by default."""
    real = jnp.ones
    mp.setattr(
        jnp,
        "ones",
        lambda *a, **kw: REAL_DEVICE_PUT(x := real(*a, **kw), column_major_format(x.ndim)),
    )


def donation_ignored(mp):
    """A jit that ignores donate_argnums."""
    mp.setattr(
        jax,
        "jit",
        lambda f, **kw: REAL_JIT(f, **{k: v for k, v in kw.items() if k != "donate_argnums"}),
    )


BREAKERS = {
    "row-major-default": column_major_default,
    "transpose-materialized": xla_options(xla_disable_hlo_passes="fusion"),
    "transpose-absorbed": xla_options(xla_disable_hlo_passes="transpose-folding"),
    "donation-removes-copy": donation_ignored,
}
PARTS = {
    "transpose-materialized": {
        "a.T bytes accessed: the matrix read and written once": xla_options(
            xla_disable_hlo_passes="fusion"
        ),
    },
    "donation-removes-copy": {"the donated array deleted": donation_ignored},
}
