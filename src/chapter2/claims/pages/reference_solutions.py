"""Claims of the page `reference-solutions`: the facts the four exercises turn on."""

import jax
import jax.numpy as jnp

from chapter2 import exercises, solutions
from chapter2.claims.registry import Observation, claim
from chapter2.jaxprs import count_primitives


@claim("exercise-target-histogram")
def _target_histogram() -> Observation:
    """Exercise 1's target holds, counting every sub-jaxpr: 1 cond, 1 custom_jvp_call (relu),
    2 sin (one in the cond's true branch, one in the jit) and 2 jit (the explicit one and
    relu's own)."""
    counts = count_primitives(jax.make_jaxpr(solutions.target)(jnp.ones(4), True))
    names = ["cond", "custom_jvp_call", "sin", "jit"]
    return Observation(
        expected={"cond, custom_jvp_call, sin, jit": [1, 1, 2, 2]},
        observed={"cond, custom_jvp_call, sin, jit": [counts[n] for n in names]},
    )


@claim("exercise-compile-sequence")
def _compile_sequence() -> Observation:
    """Exercise 2's six calls compile g four times: a new weak float scalar, a strong float32
    scalar, a new static mode and a weak int scalar are new cache keys; a new scalar value and
    a float64 NumPy array (canonicalized to float32) are not."""
    return Observation(
        expected={"compilations per call": [1, 0, 1, 1, 0, 1]},
        observed={"compilations per call": exercises.compile_sequence()},
    )


@claim(
    "exercise-barrier-traffic",
    rests_on=("fusion-boundaries",),
    expected_on={
        "gpu": (
            {"fusions without, with the barrier": [2, 3]},
            "XLA's GPU compiler splits tanh(t * 3 + 1) ** 2 into two fusions, and the barrier "
            "adds a third",
        )
    },
)
def _barrier_traffic() -> Observation:
    """In exercise 3, h1 = tanh(t * 3 + 1) ** 2 is one fusion; h2, with an optimization barrier
    in the middle, is two, accesses at least one more write and read of the intermediate, and
    computes the same values."""
    t = jax.random.normal(jax.random.key(7), (512, 512))
    h1 = solutions.fusion_report(exercises.h1, t)
    h2 = solutions.fusion_report(solutions.h2, t)
    return Observation(
        expected={
            "fusions without, with the barrier": [1, 2],
            "extra traffic covers it": True,
            "same values": True,
        },
        observed={
            "fusions without, with the barrier": [h1[0], h2[0]],
            "extra traffic covers it": h2[1] - h1[1] >= 2 * t.size * 4,
            "same values": bool(jnp.array_equal(exercises.h1(t), solutions.h2(t))),
            "bytes without, with": [h1[1], h2[1]],
        },
    )
