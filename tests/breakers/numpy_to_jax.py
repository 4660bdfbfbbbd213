"""The claims of the page `numpy-to-jax` fail when JAX behaves otherwise."""

import jax
import numpy as np

from breakers.shared import REAL_DEVICE_PUT, column_major_format
from chapter2.claims import Status
from chapter2.claims.pages import numpy_to_jax as numpy_claims


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


def every_buffer_shared(mp):
    """A machine on which every buffer is shared, whatever its alignment (helper patch)."""
    mp.setattr(numpy_claims, "shares_buffer", lambda x, a: True)


BREAKERS = {
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
