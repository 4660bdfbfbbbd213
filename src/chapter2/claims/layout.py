"""Claims of section 2.4 (memory layout)."""

import jax
import jax.numpy as jnp
import numpy as np

from chapter2.claims.registry import Observation, claim
from chapter2.hlo import clean_hlo, compiled_text, count_fusions, entry_root, fusion_kinds
from chapter2.layout import (
    aligned_empty,
    entry_layout,
    has_transpose,
    misaligned_empty,
    misalignment,
    shares_buffer,
)


@claim(
    "row-major-default",
    "2.4",
    "note-row-major-default",
    "A jax.Array is row-major: its format.layout.major_to_minor is (0, 1), and the optimized "
    "HLO writes that layout in minor-to-major order, as f32[m,n]{1,0}.",
)
def _row_major_default() -> Observation:
    x = jnp.ones((6, 4), jnp.float32)
    major_to_minor = tuple(x.format.layout.major_to_minor)
    entry = entry_layout(compiled_text(lambda t: t * 2.0, x))
    holds = major_to_minor == (0, 1) and entry == "(f32[6,4]{1,0})->f32[6,4]{1,0}"
    return Observation(
        holds, f"major_to_minor={major_to_minor}; HLO entry_computation_layout={{{entry}}}"
    )


def _optimized(fn, *args) -> str:
    return clean_hlo(compiled_text(fn, *args))


@claim(
    "transpose-materialized",
    "2.4",
    "note-transpose-materialized",
    "Under jit, a standalone a.T is materialized: the optimized HLO holds a transpose inside "
    "one loop fusion; a.T * 2 + 1 is also a single fusion, with the transpose inside it.",
)
def _transpose_materialized() -> Observation:
    a = jnp.ones((256, 128), jnp.float32)
    alone = _optimized(lambda t: t.T, a)
    chained = _optimized(lambda t: t.T * 2 + 1, a)
    holds = (
        has_transpose(alone)
        and fusion_kinds(alone) == ["kLoop"]
        and has_transpose(chained)
        and count_fusions(chained) == 1
    )
    return Observation(
        holds,
        f"a.T: transpose in HLO={has_transpose(alone)}, fusions {fusion_kinds(alone)}; "
        f"a.T*2+1: transpose in HLO={has_transpose(chained)}, "
        f"{count_fusions(chained)} fusion(s) {fusion_kinds(chained)}",
    )


@claim(
    "transpose-absorbed",
    "2.4",
    "note-transpose-absorbed",
    "Under jit, a.T @ b compiles to a dot with lhs_contracting_dims={0} and no transpose, and "
    "a.T.T compiles to a single copy with no transpose.",
)
def _transpose_absorbed() -> Observation:
    a = jnp.ones((256, 128), jnp.float32)
    b = jnp.ones((256, 64), jnp.float32)
    matmul = _optimized(lambda s, t: s.T @ t, a, b)
    double = _optimized(lambda t: t.T.T, a)
    double_root = entry_root(double)
    holds = (
        not has_transpose(matmul)
        and "lhs_contracting_dims={0}" in matmul
        and not has_transpose(double)
        and " copy(" in double_root
    )
    dims = "lhs_contracting_dims={0}" if "lhs_contracting_dims={0}" in matmul else "other dims"
    return Observation(
        holds,
        f"a.T @ b: transpose in HLO={has_transpose(matmul)}, dot with {dims}; "
        f"a.T.T: transpose in HLO={has_transpose(double)}, ROOT is "
        f"{double_root.split('=', 1)[1].split('(')[0].split()[-1]}",
    )


@claim(
    "fortran-input-row-major",
    "2.4",
    "note-fortran-input",
    "A Fortran-order NumPy array handed to JAX becomes a row-major jax.Array "
    "(major_to_minor == (0, 1)) holding the same values.",
)
def _fortran_input() -> Observation:
    c = np.arange(12 * 7, dtype=np.float32).reshape(12, 7)
    f = np.asfortranarray(c)
    outs = {"jnp.asarray": jnp.asarray(f), "jax.device_put": jax.device_put(f)}
    layouts = {k: tuple(v.format.layout.major_to_minor) for k, v in outs.items()}
    equal = {k: bool(np.array_equal(np.asarray(v), c)) for k, v in outs.items()}
    holds = (
        f.flags.f_contiguous
        and not f.flags.c_contiguous
        and all(m == (0, 1) for m in layouts.values())
        and all(equal.values())
    )
    return Observation(holds, f"major_to_minor {layouts}; values equal {equal}")


@claim(
    "device-put-zero-copy",
    "2.4",
    "note-zero-copy",
    "On the CPU, jax.device_put shares the buffer of a C-contiguous NumPy array whose data "
    "pointer is 64-byte aligned (zero-copy), and copies a C array 16 bytes off that boundary "
    "and a Fortran-order array, aligned or not.",
    kind="observed",
)
def _zero_copy() -> Observation:
    shape = (256, 256)
    aligned = aligned_empty(shape)
    aligned[...] = 1.0
    off = misaligned_empty(shape, by=16)
    off[...] = 1.0
    fortran = aligned_empty(shape[::-1]).T  # column-major, and 64-byte aligned as well
    fortran[...] = 1.0
    shared = {
        name: shares_buffer(jax.device_put(a), a)
        for name, a in [("aligned C", aligned), ("C +16 bytes", off), ("Fortran", fortran)]
    }
    holds = shared == {"aligned C": True, "C +16 bytes": False, "Fortran": False}
    return Observation(
        holds,
        "shares the NumPy buffer: "
        + ", ".join(f"{k} {v}" for k, v in shared.items())
        + f" (pointers mod 64: {misalignment(aligned)}, {misalignment(off)}, "
        + f"{misalignment(fortran)})",
    )


@claim(
    "device-put-may-alias-false",
    "2.4",
    "note-may-alias",
    "On the CPU, jax.device_put(a, may_alias=False) of an aligned C-contiguous NumPy array "
    "still shares the NumPy buffer, so a later write into `a` shows in the jax.Array; "
    "jnp.array(a) makes an independent copy.",
    kind="observed",
)
def _may_alias_false() -> Observation:
    a = aligned_empty((128, 128))
    a[...] = 0.0
    put = jax.device_put(a, may_alias=False)
    copied = jnp.array(a)
    a[0, 0] = 7.0
    seen = {"device_put(may_alias=False)": float(put[0, 0]), "jnp.array": float(copied[0, 0])}
    holds = shares_buffer(put, a) and seen == {
        "device_put(may_alias=False)": 7.0,
        "jnp.array": 0.0,
    }
    return Observation(
        holds,
        f"after a[0, 0] = 7: element [0, 0] reads {seen}; "
        f"may_alias=False shares the buffer: {shares_buffer(put, a)}",
    )
