"""Claims of the page `fusion`: what XLA fuses, what it costs not to, and what stops it."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from chapter2.cases.fusion import softmax_by_hand
from chapter2.cases.ynn import YNN_OFF, uses_ynn
from chapter2.claims.backends import YNN
from chapter2.claims.registry import CannotCheck, Observation, claim
from chapter2.compat import compile_with, cost_analysis
from chapter2.hlo import compiled_text, count_fusions, kernels

N = 1000 * 1000


@claim("same-key-identical-arrays")
def _same_key() -> Observation:
    old = jax.random.PRNGKey(0)
    kx, ky = jax.random.split(jax.random.key(0))
    same = jax.random.uniform(old, (100,)), jax.random.uniform(old, (100,))
    split = jax.random.uniform(kx, (100,)), jax.random.uniform(ky, (100,))
    return Observation(
        expected={"same key: identical": True, "split keys: identical": False},
        observed={
            "same key: identical": bool(jnp.array_equal(*same)),
            "split keys: identical": bool(jnp.array_equal(*split)),
        },
    )


UNFUSED = {"xla_disable_hlo_passes": "fusion"}  # compiler options: XLA's fusion pass off


def _simple_computation(x, y):
    return jnp.exp(jnp.log(x) + y)


@claim("fusion-bytes-accessed")
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
    )


@claim("eager-intermediates-device-arrays", warning=True)
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
    )


def _chain(t):
    return jnp.exp(jnp.log(jnp.abs(t) + 1.0) * 2.0)


def _with_barrier(t):
    return jnp.exp(lax.optimization_barrier(jnp.log(jnp.abs(t) + 1.0)) * 2.0)


@claim("optimization-barrier-splits-fusion")
def _barrier_splits() -> Observation:
    mat = jnp.ones((1000, 1000))
    return Observation(
        expected={"chain fusions": 1, "with the barrier": 2},
        observed={
            "chain fusions": count_fusions(compiled_text(_chain, mat)),
            "with the barrier": count_fusions(compiled_text(_with_barrier, mat)),
        },
    )


@claim(
    "softmax-kernel-boundary",
    expected_on={
        "gpu": (
            {
                "softmax kernels above 1": False,
                "max, subtract and exp in one kernel": False,  # one kernel holds them all
                "the sum alone": False,
            },
            "XLA's GPU compiler makes a softmax written by hand one fusion, of kind kCustom",
        )
    },
)
def _softmax_boundary() -> Observation:
    softmax = list(kernels(compiled_text(softmax_by_hand, jnp.ones((1000, 1000)))).values())
    return Observation(
        expected={
            "softmax kernels above 1": True,
            "max, subtract and exp in one kernel": True,
            "the sum alone": True,
        },
        observed={
            "softmax kernels above 1": len(softmax) > 1,
            "max, subtract and exp in one kernel": [
                "reduce",
                "broadcast",
                "subtract",
                "exponential",
            ]
            in softmax,
            "the sum alone": ["reduce"] in softmax,
            "softmax kernels": softmax,
        },
    )


@claim("softmax-kernels-without-ynn", only_on=YNN)
def _softmax_without_ynn() -> Observation:
    mat = jnp.ones((1000, 1000))
    if not uses_ynn(compiled_text(softmax_by_hand, mat)):
        msg = "this JAX compiles the softmax without a YNN fusion: there is none to turn off"
        raise CannotCheck(msg)
    off = compile_with(jax.jit(softmax_by_hand).lower(mat), YNN_OFF)
    found = list(kernels(off.as_text()).values())
    reductions = [ops for ops in found if {"reduce", "reduce-window"} & set(ops)]
    return Observation(
        expected={"a kernel holds a reduction and the exponential": False},
        observed={
            "a kernel holds a reduction and the exponential": any(
                "exponential" in ops for ops in reductions
            ),
            "softmax kernels": found,
        },
    )
