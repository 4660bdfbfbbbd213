"""Claims of the page `reference-solutions`: the facts the four exercises turn on."""

import re

import jax
import jax.numpy as jnp

from chapter2 import exercises, solutions
from chapter2.claims.registry import Observation, claim, counted, listed
from chapter2.compiles import CompileCounter
from chapter2.jaxprs import count_primitives, walk_eqns


def _first(jaxpr, primitive: str):
    """The first equation of `primitive` in `jaxpr`, sub-jaxprs included (None: none)."""
    return next((eqn for _, eqn in walk_eqns(jaxpr) if eqn.primitive.name == primitive), None)


def _placed(jaxpr) -> list[int]:
    """Where exercise 1's answer puts things: the sines in the cond's true branch and in the
    explicit jit, and the jits inside relu's custom_jvp_call."""
    cond, jit = _first(jaxpr, "cond"), _first(jaxpr, "jit")
    relu = _first(jit.params["jaxpr"], "custom_jvp_call") if jit else None
    return [
        count_primitives(cond.params["branches"][1])["sin"] if cond else 0,
        sum(e.primitive.name == "sin" for e in jit.params["jaxpr"].eqns) if jit else 0,
        count_primitives(relu.params["call_jaxpr"])["jit"] if relu else 0,
    ]


@claim(
    "exercise-target-histogram",
    checks="That `target`'s jaxpr holds, counted through every sub-jaxpr, one `cond`, one "
    "`custom_jvp_call`, two `sin` and two `jit`: a `sin` in the `cond`'s true branch and one "
    "in the explicit `jit`, and a `jit` inside the `custom_jvp_call` of `relu`.",
)
def _target_histogram() -> Observation:
    jaxpr = jax.make_jaxpr(solutions.target)(jnp.ones(4), True)
    counts = count_primitives(jaxpr)
    names = ["cond", "custom_jvp_call", "sin", "jit"]
    found = ", ".join(f"{counts[n]} {n}" for n in names[:-1]) + f" and {counts['jit']} jit"
    placed = _placed(jaxpr)
    return Observation(
        expected={
            "cond, custom_jvp_call, sin, jit": [1, 1, 2, 2],
            "sin in the true branch, sin in the jit, jit inside relu": [1, 1, 1],
        },
        observed={
            "cond, custom_jvp_call, sin, jit": [counts[n] for n in names],
            "sin in the true branch, sin in the jit, jit inside relu": placed,
        },
        said=f"The cell above, counted again through every sub-jaxpr of target(jnp.ones(4), "
        f"True): {found}; the cond's true branch holds {counted(placed[0], 'sin')}, the "
        f"explicit jit {counted(placed[1], 'sin')} of its own, and relu's custom_jvp_call "
        f"{counted(placed[2], 'jit')}.",
    )


def _types(signature: str) -> str:
    """A compilation's argument types as JAX logged them, in short: "float32[3], int32[] weak"."""
    found = re.findall(r"(\w+\[[\d,]*\])(, weak_type=True)?", signature)
    return ", ".join(f"{kind}{' weak' if weak else ''}" for kind, weak in found)


@claim(
    "exercise-compile-sequence",
    checks="That the exercise's six calls of `g` compile at ①, ③, ④ and ⑥ and hit the cache "
    "at ② and ⑤, the compilations' scalars typed float32 weak, float32, float32 weak (the "
    "same types as ①, so only `mode` changed) and int32 weak, with a float32[3] array each "
    "time.",
)
def _compile_sequence() -> Observation:
    with CompileCounter("g") as counter:
        per_call = exercises.compile_sequence()
    types = [_types(s) for s in counter.signatures]
    marks = "①②③④⑤⑥"
    compiled = listed([marks[i] for i, n in enumerate(per_call) if n], "none")
    hit = listed([marks[i] for i, n in enumerate(per_call) if not n], "none")
    return Observation(
        expected={
            "compilations per call": [1, 0, 1, 1, 0, 1],
            "the compilations' argument types": [
                "float32[3], float32[] weak",
                "float32[3], float32[]",
                "float32[3], float32[] weak",
                "float32[3], int32[] weak",
            ],
        },
        observed={"compilations per call": per_call, "the compilations' argument types": types},
        said=f"The exercise's six calls of g, run: {compiled} compiled, {hit} hit the cache, "
        f"{counted(sum(per_call), 'compilation')} in all, for the argument types "
        + "; ".join(types)
        + ".",
    )


@claim(
    "exercise-barrier-traffic",
    rests_on=("optimization-barrier-splits-fusion",),
    checks="That `h1` compiles to one fusion and `h2` to two; that XLA counts for `h2` at "
    "least a write and a read of the 512 × 512 intermediate more than for `h1`; and that both "
    "return identical values.",
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


@claim(
    "exercise-loop-waits",
    rests_on=("float-loss-waits", "ragged-batch-compiles-again"),
    checks="That of exercise 5's lines, each run on a step still in progress, ③ and ④ alone "
    "leave its result ready, and that `step` compiles again at batch 8 alone.",
    unchecked="That batch 8 has another shape is the exercise's data.",
)
def _loop_waits() -> Observation:
    waits, again = sorted(exercises.loop_waits()), exercises.loop_recompiles_at()
    return Observation(
        expected={"lines that wait": [3, 4], "batches that compile again": [8]},
        observed={"lines that wait": waits, "batches that compile again": again},
        said=f"Exercise 5's lines run on a step still in progress: lines {waits} left its "
        f"result ready; step compiled again at batch {again}.",
    )
