"""Claims of the page `numpy-to-jax`: NumPy arrays entering JAX, zero-copy and layouts."""

import jax
import jax.numpy as jnp
import numpy as np

from chapter2.claims.backends import CPU_BACKEND, HOST_MEMORY
from chapter2.claims.registry import Observation, claim
from chapter2.compat import auto_format, input_output_formats, major_to_minor
from chapter2.layout import aligned_empty, misaligned_empty, misalignment, shares_buffer


@claim("fortran-input-row-major")
def _fortran_input() -> Observation:
    c = np.arange(12 * 7, dtype=np.float32).reshape(12, 7)
    f = np.asfortranarray(c)
    outs = {"jnp.asarray": jnp.asarray(f), "jax.device_put": jax.device_put(f)}
    return Observation(
        expected={f"{k} major_to_minor, same values": [[0, 1], True] for k in outs},
        observed={
            f"{k} major_to_minor, same values": [
                list(major_to_minor(v)),
                bool(np.array_equal(np.asarray(v), c)),
            ]
            for k, v in outs.items()
        },
    )


@claim("auto-layout-cpu-row-major", only_on=CPU_BACKEND)
def _auto_layout() -> Observation:
    auto = jax.jit(lambda a: a.T @ a, in_shardings=auto_format(), out_shardings=auto_format())
    compiled = auto.lower(jax.ShapeDtypeStruct((64, 64), jnp.float32)).compile()
    (chosen_in,), chosen_out = input_output_formats(compiled)
    return Observation(
        expected={"input layout": [0, 1], "output layout": [0, 1]},
        observed={
            "input layout": list(major_to_minor(chosen_in)),
            "output layout": list(major_to_minor(chosen_out)),
        },
    )


@claim("device-put-zero-copy", only_on=HOST_MEMORY)
def _zero_copy() -> Observation:
    shape = (256, 256)
    aligned = aligned_empty(shape)
    off = misaligned_empty(shape, by=16)
    fortran = aligned_empty(shape[::-1]).T  # column-major, and 64-byte aligned as well
    wide = aligned_empty(shape, np.float64)  # aligned, but converted to float32 by default
    arrays = {"aligned C": aligned, "C 16 bytes off": off, "aligned Fortran": fortran}
    arrays["aligned float64"] = wide
    for a in arrays.values():
        a[...] = 1.0
    return Observation(
        expected={f"{name} shared": name == "aligned C" for name in arrays},
        observed={
            **{f"{name} shared": shares_buffer(jax.device_put(a), a) for name, a in arrays.items()},
            "pointers mod 64": [misalignment(a) for a in arrays.values()],
        },
    )


@claim("asarray-copies", only_on=HOST_MEMORY, rests_on=("device-put-zero-copy",))
def _asarray_copies() -> Observation:
    aligned = aligned_empty((256, 256))
    aligned[...] = 1.0
    return Observation(
        expected={"jnp.asarray of aligned C shared": False, "jnp.array of aligned C shared": False},
        observed={
            "jnp.asarray of aligned C shared": shares_buffer(jnp.asarray(aligned), aligned),
            "jnp.array of aligned C shared": shares_buffer(jnp.array(aligned), aligned),
            "device_put of aligned C shared": shares_buffer(jax.device_put(aligned), aligned),
        },
    )


@claim("device-put-may-alias-false", only_on=HOST_MEMORY)
def _may_alias_false() -> Observation:
    a = aligned_empty((128, 128))
    a[...] = 0.0
    put = jax.device_put(a, may_alias=False)
    copied = jnp.array(a)
    a[0, 0] = 7.0
    return Observation(
        expected={
            "may_alias=False shares the buffer": True,
            "device_put(may_alias=False)[0, 0] after a[0, 0] = 7": 7.0,
            "jnp.array(a)[0, 0] after a[0, 0] = 7": 0.0,
        },
        observed={
            "may_alias=False shares the buffer": shares_buffer(put, a),
            "device_put(may_alias=False)[0, 0] after a[0, 0] = 7": float(put[0, 0]),
            "jnp.array(a)[0, 0] after a[0, 0] = 7": float(copied[0, 0]),
        },
    )
