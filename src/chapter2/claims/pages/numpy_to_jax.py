"""Claims of the page `numpy-to-jax`: NumPy arrays entering JAX, zero-copy and layouts."""

import jax
import jax.dlpack
import jax.numpy as jnp
import numpy as np

from chapter2.claims.backends import CPU_BACKEND, HOST_MEMORY
from chapter2.claims.registry import Observation, claim, listed
from chapter2.compat import auto_format, input_output_formats, major_to_minor
from chapter2.layout import aligned_empty, misaligned_empty, misalignment, shares_buffer


@claim(
    "fortran-input-row-major",
    checks="That a 12 × 7 float32 array in Fortran order, passed through `jnp.asarray` and "
    "through `jax.device_put`, comes back with `major_to_minor` (0, 1) and the same values.",
    expected_on={
        "tpu": (
            {
                "jnp.asarray major_to_minor, same values": [[1, 0], True],
                "jax.device_put major_to_minor, same values": [[1, 0], True],
            },
            (
                "XLA's TPU backend chooses each array's layout from its shape: a 12 × 7 array "
                "gets its first dimension minor, as a 6 × 4 one does (the layout claim of 2.4)"
            ),
        )
    },
)
def _fortran_input() -> Observation:
    c = np.arange(12 * 7, dtype=np.float32).reshape(12, 7)
    f = np.asfortranarray(c)
    outs = {"jnp.asarray": jnp.asarray(f), "jax.device_put": jax.device_put(f)}
    got = {
        k: f"major_to_minor {tuple(major_to_minor(v))} and "
        + ("the same values" if np.array_equal(np.asarray(v), c) else "changed values")
        for k, v in outs.items()
    }
    results = (
        f"both returned a jax.Array with {got['jnp.asarray']}"
        if len(set(got.values())) == 1
        else f"jnp.asarray returned {got['jnp.asarray']}, jax.device_put {got['jax.device_put']}"
    )
    return Observation(
        expected={f"{k} major_to_minor, same values": [[0, 1], True] for k in outs},
        observed={
            f"{k} major_to_minor, same values": [
                list(major_to_minor(v)),
                bool(np.array_equal(np.asarray(v), c)),
            ]
            for k, v in outs.items()
        },
        said=f"Put a 12 × 7 float32 array in Fortran order through jnp.asarray and "
        f"jax.device_put: {results}.",
    )


@claim(
    "auto-layout-cpu-row-major",
    only_on=CPU_BACKEND,
    checks="That with `Format(Layout.AUTO)` on both sides, XLA picks `major_to_minor` (0, 1) "
    "for the input and the output of `a.T @ a` on a 64 × 64 float32 input.",
)
def _auto_layout() -> Observation:
    auto = jax.jit(lambda a: a.T @ a, in_shardings=auto_format(), out_shardings=auto_format())
    compiled = auto.lower(jax.ShapeDtypeStruct((64, 64), jnp.float32)).compile()
    (chosen_in,), chosen_out = input_output_formats(compiled)
    chosen = [tuple(major_to_minor(chosen_in)), tuple(major_to_minor(chosen_out))]
    return Observation(
        expected={"input layout": [0, 1], "output layout": [0, 1]},
        observed={
            "input layout": list(major_to_minor(chosen_in)),
            "output layout": list(major_to_minor(chosen_out)),
        },
        said=f"Compiled a.T @ a for a 64 × 64 float32 input (the page used 256 × 256) with "
        f"Format(Layout.AUTO) on both sides: XLA chose major_to_minor {chosen[0]} for the input "
        f"and {chosen[1]} for the output.",
    )


@claim(
    "device-put-zero-copy",
    only_on=HOST_MEMORY,
    checks="That `jax.device_put` shares the buffer of a 256 × 256 float32 C-order array on a "
    "64-byte boundary, and copies the same array 16 bytes past one, an aligned Fortran-order "
    "one and an aligned float64 one, which it returns as float32.",
)
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
    put = {name: jax.device_put(a) for name, a in arrays.items()}
    shared = {name: shares_buffer(put[name], a) for name, a in arrays.items()}
    narrowed = str(put["aligned float64"].dtype)
    pointers = [misalignment(a) for a in arrays.values()]
    described = {
        "aligned C": "the C-order float32 one on a 64-byte boundary",
        "C 16 bytes off": f"the C-order one {pointers[1]} bytes past a 64-byte boundary",
        "aligned Fortran": "the aligned Fortran-order one",
        "aligned float64": "the aligned float64 one",
    }
    kept = listed([described[name] for name in arrays if shared[name]], "no buffer")
    copied = listed([described[name] for name in arrays if not shared[name]], "none")
    return Observation(
        expected={
            **{f"{name} shared": name == "aligned C" for name in arrays},
            "aligned float64 put as": "float32",
        },
        observed={
            **{f"{name} shared": shared[name] for name in arrays},
            "aligned float64 put as": narrowed,
            "pointers mod 64": pointers,
        },
        said=f"Put four 256 × 256 arrays through jax.device_put: it shared the buffer of {kept}, "
        f"and copied {copied}; the float64 one came back as {narrowed}.",
    )


def _says(doc: str | None, words: str) -> bool:
    """Whether a docstring says `words`, however its lines are wrapped."""
    return words in " ".join((doc or "").split())


@claim(
    "asarray-copies",
    only_on=HOST_MEMORY,
    rests_on=("device-put-zero-copy",),
    checks="That `jnp.asarray`, `jnp.asarray(copy=False)` and `jnp.array` copy a 256 × 256 "
    "float32 C-order array on a 64-byte boundary, which `jax.device_put` and DLPack share; "
    "and that `jnp.asarray`'s docstring says `copy=False` is an error where a copy is "
    "necessary.",
)
def _asarray_copies() -> Observation:
    aligned = aligned_empty((256, 256))
    aligned[...] = 1.0
    ways = {
        "jnp.asarray": jnp.asarray,
        "jnp.asarray(copy=False)": lambda a: jnp.asarray(a, copy=False),
        "jnp.array": jnp.array,
        "device_put": jax.device_put,
        "DLPack": jax.dlpack.from_dlpack,
    }
    shared = {name: shares_buffer(convert(aligned), aligned) for name, convert in ways.items()}
    did = {name: "shared its buffer" if s else "copied it" for name, s in shared.items()}
    raises = _says(jnp.asarray.__doc__, "If False, then error if a copy is necessary")
    return Observation(
        expected={
            "jnp.asarray of aligned C shared": False,
            "jnp.array of aligned C shared": False,
            "jnp.asarray(copy=False) of aligned C shared": False,
            "device_put of aligned C shared": True,
            "DLPack of aligned C shared": True,
            "docstring: copy=False errors rather than copy": True,
        },
        observed={
            **{f"{name} of aligned C shared": s for name, s in shared.items()},
            "docstring: copy=False errors rather than copy": raises,
        },
        said="Given a 256 × 256 float32 C-order array on a 64-byte boundary, "
        + ", ".join(f"{name} {did[name]}" for name in ways)
        + f"; jnp.asarray's docstring {'says' if raises else 'does not say'} that copy=False "
        "is an error where a copy is necessary.",
    )


@claim(
    "device-put-may-alias-false",
    only_on=HOST_MEMORY,
    checks="That `jax.device_put(a, may_alias=False)` of an aligned 128 × 128 float32 C-order "
    "array shares its buffer, so that a later write into `a` shows in the result, while "
    "`jnp.array(a)` keeps the old value; and that `jax.device_put`'s docstring says "
    "`may_alias=False` copies.",
)
def _may_alias_false() -> Observation:
    a = aligned_empty((128, 128))
    a[...] = 0.0
    put = jax.device_put(a, may_alias=False)
    copied = jnp.array(a)
    a[0, 0] = 7.0
    aliased = shares_buffer(put, a)
    documented = _says(jax.device_put.__doc__, "If False, `x` will be copied")
    return Observation(
        expected={
            "docstring: may_alias=False copies": True,
            "may_alias=False shares the buffer": True,
            "device_put(may_alias=False)[0, 0] after a[0, 0] = 7": 7.0,
            "jnp.array(a)[0, 0] after a[0, 0] = 7": 0.0,
        },
        observed={
            "docstring: may_alias=False copies": documented,
            "may_alias=False shares the buffer": aliased,
            "device_put(may_alias=False)[0, 0] after a[0, 0] = 7": float(put[0, 0]),
            "jnp.array(a)[0, 0] after a[0, 0] = 7": float(copied[0, 0]),
        },
        said=f"Put an aligned 128 × 128 float32 array of zeros through jax.device_put(a, "
        f"may_alias=False) and jnp.array, then set a[0, 0] = 7: the device_put result "
        f"{'shared' if aliased else 'did not share'} a's buffer and read {float(put[0, 0]):g}, "
        f"the jnp.array copy read {float(copied[0, 0]):g}. The docstring of jax.device_put "
        f"{'says' if documented else 'does not say'} that may_alias=False copies.",
    )
