"""Claims of the page `pairwise-distances`: four versions of one distance matrix."""

import jax
import jax.numpy as jnp

from chapter2.cases import distances as dist
from chapter2.cases.ynn import YNN_OFF, uses_ynn
from chapter2.claims.backends import YNN
from chapter2.claims.registry import CannotCheck, Observation, claim, counted, listed
from chapter2.hlo import compiled_text, fusion_kinds, kernels

N, M, D = 1000, 1500, 64


def _points(shift: float = 0.0):
    kx, ky = jax.random.split(jax.random.key(0))
    return jax.random.normal(kx, (N, D)) + shift, jax.random.normal(ky, (M, D)) + shift


def _of_entries(count: int, size: int) -> str:
    """How many of `size` entries, in words: "all 120 entries", "3 of the 120 entries"."""
    return f"all {size} entries" if count == size else f"{count} of the {size} entries"


@claim(
    "same-key-prefix",
    checks="That with `PRNGKey(0)` a (1000, 64) normal draw equals the first 1000 rows of a "
    "(1500, 64) one, and that `jax_threefry_partitionable` is on.",
    unchecked="That each element's bits depend only on the key and its position is what "
    "the option does, and that the diagonal would be 0 follows from the equal rows.",
)
def _same_key_prefix() -> Observation:
    key = jax.random.PRNGKey(0)
    X, Y = jax.random.normal(key, (N, D)), jax.random.normal(key, (M, D))
    prefix = bool(jnp.array_equal(X, Y[:N]))
    partitionable = jax.config.jax_threefry_partitionable
    return Observation(
        expected={"X equals Y[:1000]": True, "jax_threefry_partitionable": True},
        observed={
            "X equals Y[:1000]": prefix,
            "jax_threefry_partitionable": partitionable,
        },
        repeats="the cell above",
        said=f"The cell above, run again: X {'equals' if prefix else 'differs from'} the first "
        f"1000 rows of Y, with jax_threefry_partitionable {'on' if partitionable else 'off'}.",
    )


ONE_PASS = ["broadcast", "subtract", "multiply", "reduce", "sqrt"]  # v1's work, in order


@claim(
    "vmap-and-broadcast-compile-alike",
    checks="That v0 and v1 for the page's points compile to one fusion each, with the same "
    "flops; that v1 has no temporary bytes and accesses its inputs and output alone, by "
    "XLA's count (their bytes as the device stores them, in whole tiles on a TPU), though its "
    "jaxpr holds (N, M, d) arrays; and that at d = 64 and d = 3 both "
    "compile to the same single YNNPACK fusion, which broadcasts, subtracts, squares, sums "
    "and takes the square root.",
    expected_on={
        "tpu": (
            {
                "v0 and v1 at d = 64 and 3: one __ynn_fusion each, alike, doing all the work": (
                    False
                ),
                "v1's bytes accessed: its inputs and output": False,
            },
            (
                "the TPU has no YNNPACK: v0 and v1 compile alike to a loop fusion that "
                "subtracts, squares and sums, and a kernel of its own for the square root, "
                "so XLA counts the sums' bytes again, between the two"
            ),
        )
    },
)
def _v0_v1() -> Observation:
    X, Y = _points()
    v0, v1 = dist.evidence(dist.distances_v0, X, Y), dist.evidence(dist.distances_v1, X, Y)
    jaxpr = jax.make_jaxpr(dist.distances_v1)(X, Y)
    big = [v for e in jaxpr.eqns for v in e.outvars if v.aval.shape == (N, M, D)]
    same = v0.flops == v1.flops
    ends = v1.io_bytes  # X and Y read, D written, as the device stores them
    texts = {
        (name, d): compiled_text(f, X[:, :d], Y[:, :d])
        for name, f in [("v0", dist.distances_v0), ("v1", dist.distances_v1)]
        for d in (D, 3)
    }
    bodies = {key: list(kernels(text).values()) for key, text in texts.items()}
    one_ynn = all(
        uses_ynn(texts[key]) and len(found) == 1 and set(ONE_PASS) <= set(found[0])
        for key, found in bodies.items()
    ) and all(bodies["v0", d] == bodies["v1", d] for d in (D, 3))
    fusions = (
        f"{counted(v0.fusions, 'fusion')} each"
        if v0.fusions == v1.fusions
        else f"{counted(v0.fusions, 'fusion')} and {counted(v1.fusions, 'fusion')}"
    )
    return Observation(
        expected={
            "fusions v0, v1": [1, 1],
            "same flops": True,
            "(N, M, d) arrays in v1's jaxpr at least 2": True,
            "temp bytes of v1": 0,
            "v1's bytes accessed: its inputs and output": True,
            "v0 and v1 at d = 64 and 3: one __ynn_fusion each, alike, doing all the work": True,
        },
        observed={
            "fusions v0, v1": [v0.fusions, v1.fusions],
            "same flops": same,
            "(N, M, d) arrays in v1's jaxpr at least 2": len(big) >= 2,
            "temp bytes of v1": v1.temp_bytes,
            "v1's bytes accessed: its inputs and output": v1.bytes_accessed == ends,
            "v0 and v1 at d = 64 and 3: one __ynn_fusion each, alike, doing all the work": one_ynn,
            "v1's bytes accessed, its inputs and output": [v1.bytes_accessed, ends],
            "v1's fusion kinds": fusion_kinds(texts["v1", D]),
            "v1's kernels at d = 3": bodies["v1", 3],
        },
        said=f"v0 and v1 compile to {fusions}, with {'the same' if same else 'different'} "
        f"flops, and v1 to {v1.temp_bytes:,} bytes of temporaries and {v1.bytes_accessed:,.0f} "
        f"bytes accessed (its inputs and output are {ends:,}), though its jaxpr holds "
        f"{counted(len(big), 'array')} of shape (1000, 1500, 64). "
        + (
            f"At d = 64 and at d = 3, both compile to one YNNPACK fusion, the same for both, "
            f"that does {listed(ONE_PASS)}."
            if one_ynn
            else f"At d = 3, v1 compiles to {counted(len(bodies['v1', 3]), 'kernel')} "
            f"({'; '.join(listed(b) for b in bodies['v1', 3])}), "
            f"{'with' if uses_ynn(texts['v1', 3]) else 'without'} a YNNPACK fusion."
        ),
    )


@claim(
    "v1-temporaries-without-ynn",
    only_on=YNN,
    checks="That with YNNPACK fusion off v1 compiles to more than one fusion, with "
    "temporaries at least the size of the (N, M, d) array.",
    unchecked="The number of kernels and the traffic XLA estimates are the cell's, glued, "
    "not tested.",
)
def _v1_without_ynn() -> Observation:
    X, Y = _points()
    if not uses_ynn(compiled_text(dist.distances_v1, X, Y)):
        msg = "this JAX compiles v1 without a YNN fusion: there is none to turn off"
        raise CannotCheck(msg)
    off = dist.evidence(dist.distances_v1, X, Y, compiler_options=YNN_OFF)
    return Observation(
        expected={"more than one fusion": True, "temp bytes hold the (N, M, d) array": True},
        observed={
            "more than one fusion": off.fusions > 1,
            "temp bytes hold the (N, M, d) array": off.temp_bytes >= N * M * D * 4,
            "fusions, temp bytes": [off.fusions, off.temp_bytes],
        },
        repeats="the cell above",
        said=f"The cell above, run again for v1 with YNNPACK fusion off: "
        f"{counted(off.fusions, 'fusion')} and {off.temp_bytes / 1e6:,.0f} MB of temporaries, "
        f"where the (1000, 1500, 64) array takes {N * M * D * 4 / 1e6:,.0f} MB.",
    )


@claim(
    "tree-reduction-past-32",
    only_on=("cpu", "the rewrite is a pass of XLA's CPU compiler, on a reduction's length"),
    checks="That with YNNPACK fusion off v1 for the page's points cut to 32 coordinates is "
    "one fusion with no temporaries, and cut to 33, more than one fusion, with temporaries "
    "at least the size of the (N, M, 33) squared differences.",
    unchecked="That there are three fusions at d = 33 is the cell's count.",
)
def _tree_reduction() -> Observation:
    X, Y = _points()
    # With YNNPACK fusion off where this jaxlib has it, to see XLA's own CPU path.
    options = YNN_OFF if uses_ynn(compiled_text(dist.distances_v1, X, Y)) else None
    at = {
        dim: dist.evidence(dist.distances_v1, X[:, :dim], Y[:, :dim], compiler_options=options)
        for dim in (32, 33)
    }
    window = {
        dim: "reduce-window"
        in compiled_text(dist.distances_v1, X[:, :dim], Y[:, :dim], compiler_options=options)
        for dim in (32, 33)
    }
    squares = N * M * 33 * 4  # bytes of the (N, M, 33) squared differences
    return Observation(
        expected={
            "d = 32: fusions, temp bytes": [1, 0],
            "d = 33: more than one fusion": True,
            "d = 33: temporaries hold the squared differences": True,
        },
        observed={
            "d = 32: fusions, temp bytes": [at[32].fusions, at[32].temp_bytes],
            "d = 33: more than one fusion": at[33].fusions > 1,
            "d = 33: temporaries hold the squared differences": at[33].temp_bytes >= squares,
            "d = 33: fusions, temp bytes": [at[33].fusions, at[33].temp_bytes],
            "reduce-window at d = 32, 33": [window[32], window[33]],
        },
        repeats="the cell above",
        said=f"Compiled v1 for the page's points cut to 32 and to 33 coordinates"
        f"{' with YNNPACK fusion off' if options else ''}: {counted(at[32].fusions, 'fusion')} "
        f"and {at[32].temp_bytes / 1e6:,.0f} MB of temporaries at d = 32, "
        f"{counted(at[33].fusions, 'fusion')} and {at[33].temp_bytes / 1e6:,.0f} MB at d = 33, "
        f"where the squared differences take {squares / 1e6:,.0f} MB.",
    )


@claim(
    "barrier-materializes-intermediate",
    rests_on=("optimization-barrier-splits-fusion",),
    checks="That v1 with an optimization barrier on the difference has exactly the (N, M, d) "
    "array's bytes of temporaries, and that XLA counts at least a write and a read of them "
    "more than without it.",
    expected_on={
        "tpu": (
            {"temp bytes with the barrier": 393216000},
            "XLA's TPU backend pads the (1000, 1500, 64) array to whole tiles: its bytes are "
            "those of one dimension padded, 1000 to 1024 or 1500 to 1536, the layout itself "
            "not recorded",
        )
    },
)
def _v1_forced() -> Observation:
    X, Y = _points()
    v1 = dist.evidence(dist.distances_v1, X, Y)
    forced = dist.evidence(dist.distances_v1_materialized, X, Y)
    extra = forced.bytes_accessed - v1.bytes_accessed
    return Observation(
        expected={
            "temp bytes with the barrier": N * M * D * 4,
            "the barrier adds a write and a read of them": True,
        },
        observed={
            "temp bytes with the barrier": forced.temp_bytes,
            "the barrier adds a write and a read of them": extra >= 2 * N * M * D * 4,
            "bytes accessed v1, with the barrier": [v1.bytes_accessed, forced.bytes_accessed],
        },
        repeats="the cell above",
        said=f"The cell above, run again: v1 with the barrier has {forced.temp_bytes / 1e6:,.0f} "
        f"MB of temporaries, and XLA estimates {extra / 1e6:,.0f} MB more traffic than without "
        f"it; a write and a read of the (1000, 1500, 64) array are {2 * N * M * D * 4e-6:,.0f} MB.",
    )


@claim(
    "gram-one-dot-fewer-flops",
    checks="That v2 for the page's points compiles to one `dot` and no `transpose`, and to "
    "fewer flops than v1.",
    unchecked="By how much is the cell's ratio, glued.",
    expected_on={
        "tpu": (
            {"dots": 0},
            (
                "XLA's TPU compiler turns each product into a `convolution` inside a fusion, so"
                " its optimized HLO holds no `dot`"
            ),
        )
    },
)
def _v2() -> Observation:
    X, Y = _points()
    v1, v2 = dist.evidence(dist.distances_v1, X, Y), dist.evidence(dist.distances_v2, X, Y)
    return Observation(
        expected={"dots": 1, "transposes": 0, "fewer flops than v1": True},
        observed={
            "dots": v2.dots,
            "transposes": v2.transposes,
            "fewer flops than v1": v2.flops < v1.flops,
            "flops v1, v2": [v1.flops, v2.flops],
        },
        repeats="the cell above",
        said=f"The cell above, run again: v2 compiles to {counted(v2.dots, 'dot')} and "
        f"{counted(v2.transposes, 'transpose')}, and v1 needs {v1.flops / v2.flops:.2f} times "
        f"v2's flops.",
    )


@claim(
    "gram-epilogue-in-product-fusion",
    checks="That v2 for the page's points compiles to one kernel, a `__ynn_fusion`, which "
    "holds the reduce, dot, subtract, add, maximum and square root.",
    expected_on={
        "tpu": (
            {"kernels": 3, "is a __ynn_fusion": False, "body holds all of them": False},
            (
                "the TPU has no YNNPACK: the two squared norms are kernels of their own, and "
                "the product (a `convolution`) shares its fusion with the rest of the Gram "
                "identity"
            ),
        )
    },
)
def _v2_one_fusion() -> Observation:
    hlo = compiled_text(dist.distances_v2, *_points())
    found = kernels(hlo)
    body = next(iter(found.values()), [])
    ynn = uses_ynn(hlo)
    return Observation(
        expected={"kernels": 1, "is a __ynn_fusion": True, "body holds all of them": True},
        observed={
            "kernels": len(found),
            "is a __ynn_fusion": ynn,
            "body holds all of them": {"reduce", "dot", "subtract", "add", "maximum", "sqrt"}
            <= set(body),
            "body": body,
        },
        said=f"Compiled v2 for the page's X and Y: {counted(len(found), 'kernel')}, "
        f"{'which' if len(found) == 1 else 'the first of which'} computes "
        f"{listed(body, 'nothing')}; the compiled HLO holds {'a' if ynn else 'no'} "
        f"__ynn_fusion.",
    )


@claim(
    "gram-cancellation-centring-shrinks",
    checks="That for the page's points shifted by 100, v2's largest error is above 1e-2 and "
    "v1's and v3's below 1e-4, against a float64 reference, and that v3's largest "
    "self-distance is smaller than v2's.",
    unchecked="The figures are the cell's, glued.",
    expected_on={
        "tpu": (
            {"v1 and v3 errors below 1e-4": False},
            (
                "under JAX's default matmul precision the TPU multiplies float32 matrices in "
                "bfloat16, and v3 computes a product too, so its error rises above 1e-4; under "
                'jax.default_matmul_precision("highest") the products keep float32\'s precision'
            ),
        ),
        "gpu": (
            {"v1 and v3 errors below 1e-4": False},
            "under JAX's default matmul precision, XLA on NVIDIA GPUs from Ampere on computes "
            "float32 matrix products in TF32 (10 of float32's 23 mantissa bits), and v3 "
            "computes a product too, so its error rises above 1e-4; under "
            'jax.default_matmul_precision("highest") the products run in full float32',
        ),
    },
)
def _cancellation() -> Observation:
    X, Y = _points(shift=100.0)
    reference = dist.reference(X, Y)
    errors = {
        name: dist.largest_error(dist.VERSIONS[name], X, Y, reference)
        for name in ("v1", "v2", "v3")
    }
    diagonal = {name: dist.largest_self_distance(dist.VERSIONS[name], X) for name in ("v2", "v3")}
    said = (
        f"The cell above, run again: v2's largest error is {errors['v2']:.1e}, v1's and v3's "
        f"at most {max(errors['v1'], errors['v3']):.1e}, and the largest self-distance is "
        f"{diagonal['v2']:.3g} with v2 and {diagonal['v3']:.3g} with v3."
    )
    return Observation(
        expected={
            "v2 error above 1e-2": True,
            "v1 and v3 errors below 1e-4": True,
            "v3 self-distances smaller": True,
        },
        observed={
            "v2 error above 1e-2": errors["v2"] > 1e-2,
            "v1 and v3 errors below 1e-4": max(errors["v1"], errors["v3"]) < 1e-4,
            "v3 self-distances smaller": diagonal["v3"] < diagonal["v2"],
            "largest errors": {k: float(f"{v:.3g}") for k, v in errors.items()},
            "largest self-distances": {k: float(f"{v:.3g}") for k, v in diagonal.items()},
        },
        repeats="the cell above",
        said=said,
    )


@claim(
    "sqrt-gradient-at-zero",
    checks="That jitted `jax.grad` of the summed distances of 40 random 3-D points to "
    "themselves is nan in every entry with v1, and finite with the double-where distance.",
    unchecked="That the square root's derivative is infinite at 0 is mathematics.",
)
def _sqrt_gradient() -> Observation:
    X = jax.random.normal(jax.random.key(11), (40, 3))
    naive = jax.jit(jax.grad(lambda Z: jnp.sum(dist.distances_v1(Z, Z))))(X)
    safe = jax.jit(jax.grad(lambda Z: jnp.sum(dist.safe_distances(Z, Z))))(X)
    nans, finite = int(jnp.isnan(naive).sum()), bool(jnp.isfinite(safe).all())
    return Observation(
        expected={
            "v1 gradient has nan": True,
            "v1 gradient nan in every entry": True,
            "safe gradient finite": True,
        },
        observed={
            "v1 gradient has nan": bool(jnp.isnan(naive).any()),
            "v1 gradient nan in every entry": nans == naive.size,
            "safe gradient finite": finite,
        },
        said=f"Took jax.grad, jitted, of the summed distances of 40 random 3-D points (key 11) to "
        f"themselves: "
        f"{_of_entries(nans, naive.size)} of v1's gradient were nan, "
        f"the double-where version's is {'finite' if finite else 'not finite everywhere'}.",
    )


@claim(
    "gradient-brings-back-differences",
    only_on=YNN,
    checks="That with YNNPACK fusion off, jax.grad of the summed distances for the page's "
    "points has temporaries at least the size of the (N, M, d) differences with v1 and with "
    "the double-where distance, and with v2 at most a few N × M arrays.",
)
def _gradient_temporaries() -> Observation:
    X, Y = _points()
    # With YNNPACK fusion off where this jaxlib has it, to see XLA's own CPU path.
    options = YNN_OFF if uses_ynn(compiled_text(dist.distances_v1, X, Y)) else None
    temps = {}
    for name, fn in {
        "v1": dist.distances_v1,
        "double where": dist.safe_distances,
        "v2": dist.distances_v2,
    }.items():
        grad = jax.jit(jax.grad(lambda a, b, fn=fn: jnp.sum(fn(a, b))))
        temps[name] = grad.lower(X, Y).compile(options).memory_analysis().temp_size_in_bytes
    differences = N * M * D * 4
    return Observation(
        expected={
            "v1 and double where hold the differences": True,
            "v2 under the differences": True,
            "v2 at most four N × M arrays": True,
        },
        observed={
            "v1 and double where hold the differences": min(temps["v1"], temps["double where"])
            >= differences,
            "v2 under the differences": temps["v2"] < differences,
            "v2 at most four N × M arrays": temps["v2"] <= 4 * N * M * 4,
            "temp bytes": temps,
        },
        repeats="the cell above",
        said="Compiled jax.grad of the summed distances for the page's points with YNNPACK "
        f"fusion off: {temps['v1'] / 1e6:,.0f} MB of temporaries for v1, "
        f"{temps['double where'] / 1e6:,.0f} MB for the double where and "
        f"{temps['v2'] / 1e6:,.0f} MB for v2, where the differences take "
        f"{differences / 1e6:,.0f} MB.",
    )
