"""Claims of the page `memory-layout`: row-major arrays, transposes, donation, NumPy input."""

import jax
import jax.numpy as jnp
import numpy as np

from chapter2.claims.registry import Kind, Observation, claim
from chapter2.hlo import (
    clean_hlo,
    compiled_text,
    entry_layout,
    fused_body,
    fusion_kinds,
    has_op,
    input_output_alias,
    opcodes,
    root_opcode,
)
from chapter2.layout import aligned_empty, misaligned_empty, misalignment, shares_buffer


def _optimized(fn, *args, **jit_kwargs) -> str:
    return clean_hlo(compiled_text(fn, *args, **jit_kwargs))


@claim("row-major-default")
def _row_major_default() -> Observation:
    """A jax.Array is row-major: its format.layout.major_to_minor is (0, 1), and the optimized
    HLO writes that layout in minor-to-major order, as f32[m,n]{1,0}."""
    x = jnp.ones((6, 4), jnp.float32)
    return Observation(
        expected={
            "major_to_minor": [0, 1],
            "entry_computation_layout": "(f32[6,4]{1,0})->f32[6,4]{1,0}",
        },
        observed={
            "major_to_minor": list(x.format.layout.major_to_minor),
            "entry_computation_layout": entry_layout(compiled_text(lambda t: t * 2.0, x)),
        },
    )


@claim("transpose-materialized")
def _transpose_materialized() -> Observation:
    """Under jit, a standalone a.T is materialized: one loop fusion whose body is a transpose
    to layout {0,1} then a copy to {1,0}. a.T * 2 + 1 is one fusion too, ending in the same
    transpose and copy, materialized as well, with the multiply and the add moved in front of
    the transpose."""
    a = jnp.ones((256, 128), jnp.float32)
    alone = _optimized(lambda t: t.T, a)
    chained = _optimized(lambda t: t.T * 2 + 1, a)
    chained_body = opcodes(fused_body(chained))
    order = [op for op in chained_body if op in ("multiply", "add", "transpose")]
    return Observation(
        expected={
            "a.T fusions": ["kLoop"],
            "a.T fused body": ["parameter", "transpose", "copy"],
            "a.T * 2 + 1 fusions": ["kLoop"],
            "order inside it": ["multiply", "add", "transpose"],
            "it ends with": ["transpose", "copy"],
        },
        observed={
            "a.T fusions": fusion_kinds(alone),
            "a.T fused body": opcodes(fused_body(alone)),
            "a.T * 2 + 1 fusions": fusion_kinds(chained),
            "order inside it": order,
            "it ends with": chained_body[-2:],
        },
    )


@claim("transpose-absorbed")
def _transpose_absorbed() -> Observation:
    """Under jit, a.T @ b compiles to a dot with lhs_contracting_dims={0} and no transpose, and
    a.T.T compiles to a single copy with no transpose."""
    a = jnp.ones((256, 128), jnp.float32)
    b = jnp.ones((256, 64), jnp.float32)
    matmul = _optimized(lambda s, t: s.T @ t, a, b)
    double = _optimized(lambda t: t.T.T, a)
    return Observation(
        expected={
            "a.T @ b has a transpose": False,
            "dot contracts lhs dimension 0": True,
            "a.T.T has a transpose": False,
            "a.T.T compiles to": "copy",
        },
        observed={
            "a.T @ b has a transpose": has_op(matmul, "transpose"),
            "dot contracts lhs dimension 0": "lhs_contracting_dims={0}" in matmul,
            "a.T.T has a transpose": has_op(double, "transpose"),
            "a.T.T compiles to": root_opcode(double),
        },
    )


@claim("donation-removes-copy")
def _donation() -> Observation:
    """Donating the argument (donate_argnums=0) lets a.T.T return the input's own buffer: the
    ROOT is the parameter, and the module records input_output_alias; without donation the ROOT
    is a copy."""
    a = jnp.ones((256, 128), jnp.float32)
    kept = compiled_text(lambda t: t.T.T, a)
    donated = compiled_text(lambda t: t.T.T, a, donate_argnums=0)
    return Observation(
        expected={
            "ROOT without donation": "copy",
            "ROOT with donation": "parameter",
            "input_output_alias with donation": "{}: (0, {}, may-alias)",
        },
        observed={
            "ROOT without donation": root_opcode(clean_hlo(kept)),
            "ROOT with donation": root_opcode(clean_hlo(donated)),
            "input_output_alias with donation": input_output_alias(donated),
        },
    )


@claim("fortran-input-row-major")
def _fortran_input() -> Observation:
    """A Fortran-order NumPy array handed to JAX (jnp.asarray or jax.device_put) becomes a
    row-major jax.Array (major_to_minor == (0, 1)) holding the same values."""
    c = np.arange(12 * 7, dtype=np.float32).reshape(12, 7)
    f = np.asfortranarray(c)
    outs = {"jnp.asarray": jnp.asarray(f), "jax.device_put": jax.device_put(f)}
    return Observation(
        expected={f"{k} major_to_minor, same values": [[0, 1], True] for k in outs},
        observed={
            f"{k} major_to_minor, same values": [
                list(v.format.layout.major_to_minor),
                bool(np.array_equal(np.asarray(v), c)),
            ]
            for k, v in outs.items()
        },
    )


@claim("auto-layout-cpu-row-major")
def _auto_layout() -> Observation:
    """jax.jit accepts Format(Layout.AUTO) for inputs and outputs (jax.experimental.layout); on
    the CPU the compiler picks row-major for both."""
    from jax.experimental.layout import Format, Layout  # noqa: PLC0415 - as for jex above

    auto = jax.jit(
        lambda a: a.T @ a, in_shardings=Format(Layout.AUTO), out_shardings=Format(Layout.AUTO)
    )
    compiled = auto.lower(jax.ShapeDtypeStruct((64, 64), jnp.float32)).compile()
    (chosen_in,), _ = compiled.input_formats
    return Observation(
        expected={"input layout": [0, 1], "output layout": [0, 1]},
        observed={
            "input layout": list(chosen_in.layout.major_to_minor),
            "output layout": list(compiled.output_formats.layout.major_to_minor),
        },
    )


@claim("device-put-zero-copy", kind=Kind.OBSERVED)
def _zero_copy() -> Observation:
    """On the CPU, jax.device_put shares the buffer of a C-contiguous NumPy array whose data
    pointer is 64-byte aligned (zero-copy), and copies a C array 16 bytes off that boundary and
    a Fortran-order array, aligned or not."""
    shape = (256, 256)
    aligned = aligned_empty(shape)
    off = misaligned_empty(shape, by=16)
    fortran = aligned_empty(shape[::-1]).T  # column-major, and 64-byte aligned as well
    arrays = {"aligned C": aligned, "C 16 bytes off": off, "aligned Fortran": fortran}
    for a in arrays.values():
        a[...] = 1.0
    return Observation(
        expected={f"{name} shared": name == "aligned C" for name in arrays},
        observed={
            **{f"{name} shared": shares_buffer(jax.device_put(a), a) for name, a in arrays.items()},
            "pointers mod 64": [misalignment(a) for a in arrays.values()],
        },
    )


@claim("device-put-may-alias-false")
def _may_alias_false() -> Observation:
    """On the CPU, jax.device_put(a, may_alias=False) of an aligned C-contiguous NumPy array
    still shares the NumPy buffer, so a later write into `a` shows in the jax.Array;
    jnp.array(a) makes an independent copy."""
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
