"""The claims of the page `memory-layout` fail when JAX behaves otherwise."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.layout import Format, Layout
from jax.sharding import SingleDeviceSharding

from chapter2.claims import Status
from chapter2.claims.pages import memory_layout as layout_claims
from claims.breaking import xla_options

REAL_DEVICE_PUT = jax.device_put
REAL_JIT = jax.jit


def column_major_format(ndim: int) -> Format:
    dims = tuple(reversed(range(ndim)))
    return Format(Layout(major_to_minor=dims), SingleDeviceSharding(jax.devices()[0]))


def column_major_default(mp):
    """A JAX whose arrays are column-major by default."""
    real = jnp.ones
    mp.setattr(
        jnp,
        "ones",
        lambda *a, **kw: REAL_DEVICE_PUT(x := real(*a, **kw), column_major_format(x.ndim)),
    )


def keeps_fortran_order(mp):
    """A device_put that keeps a Fortran-order NumPy array column-major."""

    def device_put(x, *args, **kwargs):
        if isinstance(x, np.ndarray) and x.flags.f_contiguous and not x.flags.c_contiguous:
            return REAL_DEVICE_PUT(x, column_major_format(x.ndim))
        return REAL_DEVICE_PUT(x, *args, **kwargs)

    mp.setattr(jax, "device_put", device_put)


def donation_ignored(mp):
    """A jit that ignores donate_argnums."""
    mp.setattr(
        jax,
        "jit",
        lambda f, **kw: REAL_JIT(f, **{k: v for k, v in kw.items() if k != "donate_argnums"}),
    )


def auto_layout_column_major(mp):
    """A compiler that picks column-major when asked to choose an input layout."""
    real = jax.stages.Compiled.input_formats

    def input_formats(self):
        args, kwargs = real.fget(self)
        return tuple(column_major_format(2) for _ in args), kwargs

    mp.setattr(jax.stages.Compiled, "input_formats", property(input_formats))


def device_put_honours_may_alias(mp):
    """A device_put that copies when asked for may_alias=False."""

    def device_put(x, *args, may_alias=None, **kwargs):
        return REAL_DEVICE_PUT(np.array(x) if may_alias is False else x, *args, **kwargs)

    mp.setattr(jax, "device_put", device_put)


def device_put_always_copies(mp):
    """A machine that never aliases host memory (as a GPU)."""
    mp.setattr(jax, "device_put", lambda x, *a, **kw: REAL_DEVICE_PUT(np.array(x), *a, **kw))


def every_buffer_shared(mp):
    """A machine on which every buffer is shared, whatever its alignment (helper patch)."""
    mp.setattr(layout_claims, "shares_buffer", lambda x, a: True)


BREAKERS = {
    "row-major-default": column_major_default,
    "transpose-materialized": xla_options(xla_disable_hlo_passes="fusion"),
    "transpose-absorbed": xla_options(xla_disable_hlo_passes="transpose-folding"),
    "donation-removes-copy": donation_ignored,
    "fortran-input-row-major": keeps_fortran_order,
    "auto-layout-cpu-row-major": auto_layout_column_major,
    "device-put-may-alias-false": device_put_honours_may_alias,
}
FORCED = [
    (
        "device-put-zero-copy",
        device_put_always_copies,
        Status.DIFFERS_HERE,
        "aligned C shared: False",
    ),
    (
        "device-put-zero-copy",
        every_buffer_shared,
        Status.DIFFERS_HERE,
        "C 16 bytes off shared: True",
    ),
]
