"""Claims of the page `fusion`: what XLA fuses, what it costs not to, and what stops it."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from chapter2.cases.fusion import softmax_by_hand
from chapter2.cases.ynn import YNN_OFF, uses_ynn
from chapter2.claims.backends import YNN
from chapter2.claims.registry import CannotCheck, Observation, claim, counted, listed
from chapter2.compat import compile_with, cost_analysis
from chapter2.hlo import compiled_text, count_fusions, kernels, reductions

N = 1000 * 1000


def _kernels(found: list[list[str]]) -> str:
    """Kernels in words, each by what it computes: "3 kernels (reduce; divide; ...)"."""
    return f"{counted(len(found), 'kernel')} (" + "; ".join(listed(ops) for ops in found) + ")"


def _alike(same: bool) -> str:
    return "identical" if same else "different"


def _how_many(count: int, of: int) -> str:
    """`count` of `of` kernels in words: "none of the 4 kernels", "2 of the 4 kernels"."""
    return f"{'none' if count == 0 else count} of the {counted(of, 'kernel')}"


@claim(
    "same-key-identical-arrays",
    checks="That two draws of 100 uniform numbers with `PRNGKey(0)` are identical, and two "
    "with the two subkeys of `split(key(0))` are not.",
)
def _same_key() -> Observation:
    old = jax.random.PRNGKey(0)
    kx, ky = jax.random.split(jax.random.key(0))
    same = jax.random.uniform(old, (100,)), jax.random.uniform(old, (100,))
    split = jax.random.uniform(kx, (100,)), jax.random.uniform(ky, (100,))
    observed = {
        "same key: identical": bool(jnp.array_equal(*same)),
        "split keys: identical": bool(jnp.array_equal(*split)),
    }
    return Observation(
        expected={"same key: identical": True, "split keys: identical": False},
        observed=observed,
        said="Two draws of 100 uniform numbers with PRNGKey(0) came out "
        f"{_alike(observed['same key: identical'])}; two with the subkeys of "
        f"split(key(0)), {_alike(observed['split keys: identical'])}.",
    )


UNFUSED = {"xla_disable_hlo_passes": "fusion"}  # compiler options: XLA's fusion pass off


def _simple_computation(x, y):
    return jnp.exp(jnp.log(x) + y)


@claim(
    "fusion-bytes-accessed",
    checks="That `exp(log(x) + y)` on 1000 × 1000 float32 arrays compiles to 1 kernel, and "
    "to 3 with XLA's `fusion` pass off; that XLA counts 3 × 4N bytes accessed fused and "
    "7 × 4N unfused; and that neither program has temporary bytes.",
    unchecked="That the unfused kernels write into the output's buffer is read from the "
    "zero temporary bytes: the buffer assignment itself is not inspected.",
    expected_on={
        "tpu": (
            {
                "kernels fused, unfused": [1, 1],
                "bytes accessed fused, unfused": [12288000, 12288000],
            },
            (
                "the option that turns off the CPU's `fusion` pass leaves the TPU's program one "
                "kernel, and XLA's TPU backend stores each 1000 × 1000 float32 array in tiles "
                "of 8 × 128 elements, rows padded to 1024, so each array counts 4,096,000 bytes"
            ),
        )
    },
)
def _fused_against_unfused() -> Observation:
    x = jnp.ones((1000, 1000))
    found = {}
    lowered = jax.jit(_simple_computation).lower(x, x)
    for name, options in [("fused", {}), ("unfused", UNFUSED)]:
        compiled = compile_with(lowered, options)
        found[name] = (
            len(kernels(compiled.as_text())),
            cost_analysis(compiled)["bytes accessed"],
            compiled.memory_analysis().temp_size_in_bytes,
        )
    kernel_counts, traffic, temp = (list(values) for values in zip(*found.values(), strict=True))
    return Observation(
        expected={
            "kernels fused, unfused": [1, 3],
            "bytes accessed fused, unfused": [3 * 4 * N, 7 * 4 * N],
            "temp bytes fused, unfused": [0, 0],
        },
        observed={
            "kernels fused, unfused": kernel_counts,
            "bytes accessed fused, unfused": traffic,
            "temp bytes fused, unfused": temp,
        },
        repeats="the table above",
        said="exp(log(x) + y) on 1000 × 1000 float32 arrays, compiled again as in the table "
        f"above, fused and unfused: {kernel_counts[0]} and {kernel_counts[1]} kernels, "
        f"{traffic[0]:,.0f} and {traffic[1]:,.0f} bytes accessed, {temp[0]:,} and {temp[1]:,} "
        "temporary bytes.",
    )


@claim(
    "eager-intermediates-device-arrays",
    warning=True,
    checks="That `jnp.log` of a 10 × 10 array, run without jit, returns a `jax.Array` "
    "(`ArrayImpl`), not a NumPy array; its device is reported.",
    unchecked="That the result stays on its device is what a `jax.Array` is: on a machine "
    "with one device, no other device could be told apart.",
)
def _eager_intermediates() -> Observation:
    a = jnp.log(jnp.ones((10, 10)))
    return Observation(
        expected={"type": "ArrayImpl", "is a jax.Array": True, "is a NumPy array": False},
        observed={
            "type": type(a).__name__,
            "is a jax.Array": isinstance(a, jax.Array),
            "is a NumPy array": isinstance(a, np.ndarray),
            "device": str(a.device),
        },
        said="jnp.log of a 10 × 10 array of ones, run without jit, returned an array of type "
        f"{type(a).__name__} on {a.device}: "
        f"{'a' if isinstance(a, jax.Array) else 'not a'} jax.Array, "
        f"{'a' if isinstance(a, np.ndarray) else 'not a'} NumPy array.",
    )


def _chain(t):
    return jnp.exp(jnp.log(jnp.abs(t) + 1.0) * 2.0)


def _with_barrier(t):
    return jnp.exp(lax.optimization_barrier(jnp.log(jnp.abs(t) + 1.0)) * 2.0)


@claim(
    "optimization-barrier-splits-fusion",
    checks="That the elementwise chain compiles to one fusion, and to two with "
    "`lax.optimization_barrier` in its middle.",
    unchecked="That the two pass the intermediate through memory is tested on the "
    "pairwise-distances page, where a barrier adds v1's difference to its temporaries and "
    "traffic.",
)
def _barrier_splits() -> Observation:
    mat = jnp.ones((1000, 1000))
    chain = count_fusions(compiled_text(_chain, mat))
    barrier = count_fusions(compiled_text(_with_barrier, mat))
    return Observation(
        expected={"chain fusions": 1, "with the barrier": 2},
        observed={"chain fusions": chain, "with the barrier": barrier},
        repeats="the two chains above",
        said="The two chains above, compiled again for a 1000 × 1000 matrix of ones: "
        f"{counted(chain, 'fusion')} without the barrier, {counted(barrier, 'fusion')} with it.",
    )


@claim(
    "softmax-kernel-boundary",
    checks="That the softmax by hand, compiled for a 1000 × 1000 matrix, has more than one "
    "kernel: one that takes the row's maximum, subtracts it and exponentiates, and one that "
    "only sums (each reduction told by what it combines: a maximum or an addition).",
    unchecked="What the kernel with the `divide` computes is read from the printed kernels, "
    "not tested.",
    expected_on={
        "tpu": (
            {"max, subtract and exp in one kernel": False, "the sum alone": False},
            (
                "XLA's TPU compiler computes the max in a kernel of its own, then computes the "
                "exponentials again in the sum's kernel and in the division's, rather than "
                "write them out"
            ),
        ),
        "gpu": (
            {
                "softmax kernels above 1": False,
                "max, subtract and exp in one kernel": False,  # one kernel holds them all
                "the sum alone": False,
            },
            "XLA's GPU compiler makes a softmax written by hand one fusion, of kind kCustom",
        ),
    },
)
def _softmax_boundary() -> Observation:
    text = compiled_text(softmax_by_hand, jnp.ones((1000, 1000)))
    combined = reductions(text)  # each kernel's reductions: "maximum" a max, "add" a sum
    found = {name: (ops, combined[name]) for name, ops in kernels(text).items()}
    softmax = [ops for ops, _ in found.values()]
    return Observation(
        expected={
            "softmax kernels above 1": True,
            "max, subtract and exp in one kernel": True,
            "the sum alone": True,
        },
        observed={
            "softmax kernels above 1": len(softmax) > 1,
            "max, subtract and exp in one kernel": (
                ["reduce", "broadcast", "subtract", "exponential"],
                ["maximum"],
            )
            in found.values(),
            "the sum alone": (["reduce"], ["add"]) in found.values(),
            "softmax kernels": softmax,
        },
        repeats="the softmax by hand above",
        said="The softmax by hand above, compiled again for a 1000 × 1000 matrix of ones: "
        f"{_kernels(softmax)}.",
    )


@claim(
    "softmax-kernels-without-ynn",
    only_on=YNN,
    checks="That with YNNPACK fusion off no kernel of the softmax by hand computes both a "
    "reduction and the exponential.",
    unchecked="The split of each row's reduction into a `reduce-window` and a `reduce` is "
    "read from the printed kernels; the pass that makes it is tested on the "
    "pairwise-distances page.",
)
def _softmax_without_ynn() -> Observation:
    mat = jnp.ones((1000, 1000))
    if not uses_ynn(compiled_text(softmax_by_hand, mat)):
        msg = "this JAX compiles the softmax without a YNN fusion: there is none to turn off"
        raise CannotCheck(msg)
    off = compile_with(jax.jit(softmax_by_hand).lower(mat), YNN_OFF)
    found = list(kernels(off.as_text()).values())
    reducing = [ops for ops in found if {"reduce", "reduce-window"} & set(ops)]
    return Observation(
        expected={"a kernel holds a reduction and the exponential": False},
        observed={
            "a kernel holds a reduction and the exponential": any(
                "exponential" in ops for ops in reducing
            ),
            "softmax kernels": found,
        },
        repeats="the cell above",
        said="The softmax by hand, compiled again with YNNPACK fusion off as in the cell above, "
        f"for a 1000 × 1000 matrix of ones: {_kernels(found)}; "
        f"{_how_many(sum('exponential' in ops for ops in reducing), len(reducing))} "
        "with a reduction also computed the exponential.",
    )
