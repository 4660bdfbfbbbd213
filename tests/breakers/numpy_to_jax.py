"""The claims of the page `numpy-to-jax` fail when JAX behaves otherwise."""

import jax
import jax.numpy as jnp
import numpy as np

from breakers.shared import REAL_DEVICE_PUT, column_major_format


def keeps_fortran_order(mp):
    """A device_put that keeps a Fortran-order NumPy array column-major."""

    def device_put(x, *args, **kwargs):
        if isinstance(x, np.ndarray) and x.flags.f_contiguous and not x.flags.c_contiguous:
            return REAL_DEVICE_PUT(x, column_major_format(x.ndim))
        return REAL_DEVICE_PUT(x, *args, **kwargs)

    mp.setattr(jax, "device_put", device_put)


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


def asarray_wraps_the_buffer(mp):
    """A jnp.asarray that hands the NumPy array to device_put, as JAX did before 0.10."""
    mp.setattr(jnp, "asarray", lambda a, *args, **kwargs: jax.device_put(a))


def float64_kept(mp):
    """A JAX that keeps float64 (as with x64 on): a float64 array is not narrowed."""
    saved = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    return lambda: jax.config.update("jax_enable_x64", saved)


def asarray_documented_to_copy(mp):
    """A jnp.asarray whose docstring says copy=False may still copy."""
    real = jnp.asarray

    def asarray(a, *args, **kwargs):
        """copy: if False, a copy may still be made."""
        return real(a, *args, **kwargs)

    mp.setattr(jnp, "asarray", asarray)


def device_put_documented_to_alias(mp):
    """A jax.device_put whose docstring says may_alias=False may still alias."""

    def device_put(x, *args, **kwargs):
        """may_alias: if False, `x` may still be aliased."""
        return REAL_DEVICE_PUT(x, *args, **kwargs)

    mp.setattr(jax, "device_put", device_put)


BREAKERS = {
    "fortran-input-row-major": keeps_fortran_order,
    "auto-layout-cpu-row-major": auto_layout_column_major,
    "device-put-may-alias-false": device_put_honours_may_alias,
    "device-put-zero-copy": device_put_always_copies,
    "asarray-copies": asarray_wraps_the_buffer,
}
PARTS = {
    "device-put-zero-copy": {"aligned float64 put as": float64_kept},
    "asarray-copies": {
        "device_put of aligned C shared": device_put_always_copies,
        "docstring: copy=False errors rather than copy": asarray_documented_to_copy,
    },
    "device-put-may-alias-false": {
        "docstring: may_alias=False copies": device_put_documented_to_alias,
    },
}
