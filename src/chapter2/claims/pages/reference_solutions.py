"""Claims of the page `reference-solutions`: the facts the four exercises turn on."""

import jax
import jax.numpy as jnp

from chapter2 import exercises, solutions
from chapter2.claims.registry import Observation, claim
from chapter2.jaxprs import count_primitives


@claim("exercise-target-histogram")
def _target_histogram() -> Observation:
    counts = count_primitives(jax.make_jaxpr(solutions.target)(jnp.ones(4), True))
    names = ["cond", "custom_jvp_call", "sin", "jit"]
    return Observation(
        expected={"cond, custom_jvp_call, sin, jit": [1, 1, 2, 2]},
        observed={"cond, custom_jvp_call, sin, jit": [counts[n] for n in names]},
    )


@claim("exercise-compile-sequence")
def _compile_sequence() -> Observation:
    return Observation(
        expected={"compilations per call": [1, 0, 1, 1, 0, 1]},
        observed={"compilations per call": exercises.compile_sequence()},
    )


@claim(
    "exercise-barrier-traffic",
    rests_on=("optimization-barrier-splits-fusion",),
    expected_on={
        "gpu": (
            {"fusions without, with the barrier": [2, 3]},
            "XLA's GPU compiler splits tanh(t * 3 + 1) ** 2 into two fusions, and the barrier "
            "adds a third",
        )
    },
)
def _barrier_traffic() -> Observation:
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
