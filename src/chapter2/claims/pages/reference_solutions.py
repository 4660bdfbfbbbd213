"""Claims of the page `reference-solutions`: the facts the four exercises turn on."""

import jax
import jax.numpy as jnp

from chapter2 import exercises, solutions
from chapter2.claims.registry import Observation, claim, counted, listed
from chapter2.jaxprs import count_primitives


@claim("exercise-target-histogram")
def _target_histogram() -> Observation:
    counts = count_primitives(jax.make_jaxpr(solutions.target)(jnp.ones(4), True))
    names = ["cond", "custom_jvp_call", "sin", "jit"]
    found = ", ".join(f"{counts[n]} {n}" for n in names[:-1]) + f" and {counts['jit']} jit"
    return Observation(
        expected={"cond, custom_jvp_call, sin, jit": [1, 1, 2, 2]},
        observed={"cond, custom_jvp_call, sin, jit": [counts[n] for n in names]},
        said=f"The cell above, counted again through every sub-jaxpr of target(jnp.ones(4), "
        f"True): {found}.",
    )


@claim("exercise-compile-sequence")
def _compile_sequence() -> Observation:
    per_call = exercises.compile_sequence()
    marks = "①②③④⑤⑥"
    compiled = listed([marks[i] for i, n in enumerate(per_call) if n], "none")
    hit = listed([marks[i] for i, n in enumerate(per_call) if not n], "none")
    return Observation(
        expected={"compilations per call": [1, 0, 1, 1, 0, 1]},
        observed={"compilations per call": per_call},
        said=f"The exercise's six calls of g, run: {compiled} compiled, {hit} hit the cache, "
        f"{counted(sum(per_call), 'compilation')} in all.",
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
    same = bool(jnp.array_equal(exercises.h1(t), solutions.h2(t)))
    return Observation(
        expected={
            "fusions without, with the barrier": [1, 2],
            "extra traffic covers it": True,
            "same values": True,
        },
        observed={
            "fusions without, with the barrier": [h1[0], h2[0]],
            "extra traffic covers it": h2[1] - h1[1] >= 2 * t.size * 4,
            "same values": same,
            "bytes without, with": [h1[1], h2[1]],
        },
        repeats="the cell above",
        said=f"The cell above, run again: h1 compiles to {counted(h1[0], 'fusion')} and h2 to "
        f"{h2[0]}, which accesses {h2[1] - h1[1]:,.0f} bytes more (a write and a read of the "
        f"512 × 512 intermediate are {2 * t.size * 4:,}), with "
        f"{'identical' if same else 'different'} values.",
    )


@claim("exercise-loop-waits", rests_on=("float-loss-waits", "ragged-batch-compiles-again"))
def _loop_waits() -> Observation:
    waits, again = sorted(exercises.loop_waits()), exercises.loop_recompiles_at()
    return Observation(
        expected={"lines that wait": [3, 4], "batches that compile again": [8]},
        observed={"lines that wait": waits, "batches that compile again": again},
        said=f"Exercise 5's lines run on a step still in progress: lines {waits} left its "
        f"result ready; step compiled again at batch {again}.",
    )
