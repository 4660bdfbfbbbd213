"""Claims of the page `async-dispatch`: what returns at once, and what waits."""

import re
import time

import jax
import jax.numpy as jnp

from chapter2.cases.dispatch import SYNCHRONIZING
from chapter2.claims.backends import CPU_BACKEND
from chapter2.claims.registry import CannotCheck, Kind, Observation, claim
from chapter2.compat import cost_analysis
from chapter2.compiles import CompileCounter


def _heavy(m):
    return jnp.tanh(m @ m) @ m


def _times(n: int) -> str:
    """How often, in words: never, once, twice, 3 times."""
    return {0: "never", 1: "once", 2: "twice"}.get(n, f"{n} times")


def _printed(text: str) -> str:
    """What a printed array shows, in words: its values, or its shape only."""
    if text.startswith(("Array([", "[")):
        return "its values"
    return "its shape only" if text.startswith("Array(shape=") else f"{text[:40]!r}"


@claim(
    "first-call-compiles",
    warning=True,
    checks="That a jitted product `m @ m.T` of a 200 × 200 matrix is traced and compiled in "
    "its first call, and neither in its second.",
)
def _first_call() -> Observation:
    traced = []

    def product(m):
        traced.append(m.shape)  # runs while JAX traces the function, not when it computes
        return m @ m.T

    compute_heavy = jax.jit(product)
    x = jnp.ones((200, 200))
    with CompileCounter("product") as first:
        compute_heavy(x).block_until_ready()
    traced_first = len(traced)
    with CompileCounter("product") as second:
        compute_heavy(x).block_until_ready()
    traces = [traced_first, len(traced) - traced_first]
    return Observation(
        expected={
            "compilations in the first call": 1,
            "in the second": 0,
            "traces in the first call, the second": [1, 0],
        },
        observed={
            "compilations in the first call": first.count,
            "in the second": second.count,
            "traces in the first call, the second": traces,
        },
        said=f"Checked again, smaller: a jitted m @ m.T on 200 × 200 ones was traced "
        f"{_times(traces[0])} and compiled {_times(first.count)} in its first call, traced "
        f"{_times(traces[1])} and compiled {_times(second.count)} in its second.",
    )


@claim(
    "cpu-async-dispatch-default",
    only_on=CPU_BACKEND,
    checks="That the option `jax_cpu_enable_async_dispatch` is on in a process that did not "
    "set it.",
    unchecked="That the option makes the CPU's dispatch asynchronous is what it is for; the "
    "cells above show results not yet ready when their calls return.",
)
def _async_default() -> Observation:
    value = jax.config.values.get("jax_cpu_enable_async_dispatch")
    words = {True: "on", False: "off", None: "not an option of this JAX"}.get(value, repr(value))
    return Observation(
        expected={"jax_cpu_enable_async_dispatch": True},
        observed={"jax_cpu_enable_async_dispatch": value},
        said="Read from `jax.config` in a process that had not set it: "
        f"`jax_cpu_enable_async_dispatch` is {words}.",
    )


def _scalar_loop(v):
    return jax.lax.fori_loop(0, 2_000_000, lambda _, v: v * 0.999 + 1.0, v)


@claim(
    "cheap-computation-runs-inline",
    only_on=("cpu", "XLA's CPU client runs what its cost analysis rates cheap on the caller"),
    checks="That the 2-million-step scalar loop, rated under 1000 flops, is ready when its "
    "call returns, and that with a 2000-element sum added, rated over 1000 flops, it is not.",
    unchecked="That the rule, not the machine's speed, makes the first look synchronous is "
    "read from the two calls, which differ in their rating alone.",
)
def _cheap_inline() -> Observation:
    one, w = jnp.float32(1.0), jnp.ones(2000)
    programs = {
        "rated under 1000 flops": jax.jit(lambda v, _: _scalar_loop(v)),
        "rated over 1000 flops": jax.jit(lambda v, w: _scalar_loop(v) + w.sum()),
    }
    ready, rated = {}, {}
    for name, f in programs.items():
        f(one, w).block_until_ready()  # compiled
        rated[name] = cost_analysis(f.lower(one, w).compile())["flops"]
        result = f(one, w)
        ready[name] = result.is_ready()
        result.block_until_ready()
    return Observation(
        expected={
            "ready on return": {"rated under 1000 flops": True, "rated over 1000 flops": False}
        },
        observed={"ready on return": ready, "flops rated": rated},
        repeats="the cell above",
        said="Called the same 2-million-step scalar loop twice, once with a 2000-element sum "
        f"added: rated {rated['rated under 1000 flops']:,.0f} flops, it was "
        f"{'ready' if ready['rated under 1000 flops'] else 'not ready'} when the call returned; "
        f"rated {rated['rated over 1000 flops']:,.0f}, "
        f"{'ready' if ready['rated over 1000 flops'] else 'not ready'}.",
    )


@claim(
    "not-ready-after-dispatch",
    kind=Kind.OBSERVED,
    checks="That a warmed-up `tanh(m @ m) @ m` on a 2000 × 2000 matrix is not ready right "
    "after its call returns, on this machine.",
)
def _not_ready() -> Observation:
    heavy = jax.jit(_heavy)
    m = jnp.ones((2000, 2000))
    heavy(m).block_until_ready()
    result = heavy(m)
    ready = result.is_ready()
    result.block_until_ready()
    return Observation(
        expected={"ready right after dispatch": False},
        observed={"ready right after dispatch": ready},
        said="A heavier computation than the cell's, tanh(m @ m) @ m on a 2000 × 2000 matrix "
        "of ones, warmed up, then called again: "
        f"is_ready() right after the call returned {ready}.",
    )


@claim(
    "block-until-ready-needs-argument",
    warning=True,
    checks="That `jax.block_until_ready()` with no argument raises `TypeError` for its missing "
    "argument `x`.",
)
def _needs_argument() -> Observation:
    try:
        jax.block_until_ready()
        raised = "nothing"
    except TypeError as err:
        raised = f"TypeError: {err}"
    named = re.search(r"argument: '(\w+)'", raised)
    return Observation(
        expected={"without an argument": True, "the missing argument": "x"},
        observed={
            "without an argument": "missing 1 required positional argument" in raised,
            "the missing argument": named[1] if named else None,
            "raised": raised,
        },
        repeats="the cell above",
        said="The cell above, run again: jax.block_until_ready() with no argument raised "
        f"{raised}.",
    )


class _Waits:
    """A leaf that is no jax.Array, with a `block_until_ready` method that notes its call."""

    def __init__(self):
        self.waited = False

    def block_until_ready(self):
        self.waited = True
        return self


@claim(
    "block-until-ready-pytree",
    warning=True,
    checks="That `jax.block_until_ready`, given a dict of a just-dispatched 2000 × 2000 "
    "result, a row of another in a list, an object with a `block_until_ready` method and the "
    "number 7, returns the same dict, with both arrays ready, the object's method called and "
    "7 as it was.",
)
def _pytree() -> Observation:
    f = jax.jit(_heavy)
    m = jnp.ones((2000, 2000))
    f(m).block_until_ready()
    other = _Waits()
    pending = {"a": f(m), "b": [f(m)[0]], "step": 7, "other": other}
    arrays = [leaf for leaf in jax.tree.leaves(pending) if isinstance(leaf, jax.Array)]
    before = [a.is_ready() for a in arrays]
    out = jax.block_until_ready(pending)
    return Observation(
        expected={
            "same object": True,
            "array leaves ready": True,
            "step kept": 7,
            "another leaf's block_until_ready called": True,
        },
        observed={
            "same object": out is pending,
            "array leaves ready": all(a.is_ready() for a in arrays),
            "step kept": out["step"],
            "another leaf's block_until_ready called": other.waited,
            "ready before the call": before,
        },
        said="jax.block_until_ready on a dict holding a result of tanh(m @ m) @ m for a "
        "2000 × 2000 matrix, just dispatched, the first row of another in a list, step 7 and an "
        "object with a block_until_ready method: it returned "
        f"{'the same dict' if out is pending else 'another object'}; "
        f"{sum(before)} of its {len(arrays)} arrays were ready before the call, "
        f"{sum(a.is_ready() for a in arrays)} after, step was {out['step']}, and the object's "
        f"method was {'called' if other.waited else 'not called'}.",
    )


@claim(
    "implicit-synchronization",
    rests_on=("not-ready-after-dispatch",),
    checks="That after each operation of the table, run on a just-dispatched result of "
    "`tanh(m @ m) @ m` for a 2000 × 2000 matrix, `block_until_ready` waits less than a tenth "
    "of the computation's own time.",
    unchecked="What the column of operation times holds, and that indexing dispatches a "
    "small computation compiled before the table, are read from the cell's code.",
)
def _implicit() -> Observation:
    heavy = jax.jit(_heavy)
    m = jnp.ones((2000, 2000))
    heavy(m).block_until_ready()
    start = time.perf_counter()
    heavy(m).block_until_ready()
    computation = time.perf_counter() - start
    left = {}
    for name, op in SYNCHRONIZING.items():
        result = heavy(m)
        if result.is_ready():
            msg = f"the result was ready before {name} ran: nothing left to wait for"
            raise CannotCheck(msg)
        op(result)
        start = time.perf_counter()
        result.block_until_ready()
        left[name] = time.perf_counter() - start
    return Observation(  # waited: less than a tenth of the computation was left afterwards
        expected={f"waited in {name}": True for name in SYNCHRONIZING},
        observed={
            **{f"waited in {name}": s < computation / 10 for name, s in left.items()},
            "computation ms": round(computation * 1e3, 1),
            "left afterwards ms": [round(s * 1e3, 2) for s in left.values()],
        },
        repeats="the cell above",
        said=f"The cell above, run again on a 2000 × 2000 matrix of ones, whose computation "
        f"alone took {computation * 1e3:.1f} ms: afterwards `block_until_ready` still waited "
        + "; ".join(f"{s * 1e3:.2f} ms after `{name}`" for name, s in left.items())
        + ".",
    )


def _repr_reads_no_values() -> bool:
    """Whether repr works on a 1 MiB array whose buffer is gone: it reads no values."""
    gone = jnp.ones((512, 512), jnp.float32)
    gone.delete()
    try:
        repr(gone)
    except RuntimeError:  # "Array has been deleted": it asked for the values
        return False
    return True


@claim(
    "repr-large-array-shape-only",
    warning=True,
    checks="That `repr` prints a 512 × 512 float32 array (1 MiB) as "
    "`Array(shape=(512, 512), dtype=float32)` without reading its values (it works on the "
    "array once deleted), prints the values of a 511 × 512 one and of a small jitted result, "
    "and leaves that result ready.",
    unchecked="What JAX's asynchronous dispatch page says is quoted, not checked.",
)
def _repr() -> Observation:
    exactly = repr(jnp.ones((512, 512), jnp.float32))
    unread = _repr_reads_no_values()
    just_below = repr(jnp.ones((511, 512), jnp.float32))  # 2 KiB short of 1 MiB
    small = jax.jit(lambda m: (jnp.tanh(m @ m) @ m)[:2, :2])(jnp.ones((500, 500)))
    below = repr(small)
    return Observation(
        expected={
            "1 MiB": "Array(shape=(512, 512), dtype=float32)",
            "1 MiB: reads no values": True,
            "just below 1 MiB prints values": True,
            "a small array prints values": True,
            "ready after its repr": True,
        },
        observed={
            "1 MiB": exactly,
            "1 MiB: reads no values": unread,
            "just below 1 MiB prints values": just_below.startswith("Array([["),
            "a small array prints values": below.startswith("Array([["),
            "ready after its repr": small.is_ready(),
        },
        said=f"repr of a 512 × 512 float32 array (1 MiB) printed {exactly}, and "
        f"{'worked' if unread else 'failed'} once the array was deleted; of a 511 × 512 one, "
        f"{_printed(just_below)}; of a jitted 2 × 2 result, {_printed(below)}, and the result "
        f"was {'' if small.is_ready() else 'not '}ready after it.",
    )


@claim(
    "repr-does-not-wait",
    rests_on=("repr-large-array-shape-only",),
    checks="That `repr` of a just-dispatched 2000 × 2000 result leaves it not ready (where "
    "the machine is too fast to catch it so, the check says it cannot check).",
)
def _repr_no_wait() -> Observation:
    heavy = jax.jit(_heavy)
    m = jnp.ones((2000, 2000))
    heavy(m).block_until_ready()
    result = heavy(m)
    if result.is_ready():
        msg = "the computation finished before repr was called: this machine is too fast for it"
        raise CannotCheck(msg)
    text = repr(result)
    ready = result.is_ready()
    result.block_until_ready()
    return Observation(
        expected={"ready after repr": False},
        observed={"ready after repr": ready, "repr": text},
        repeats="the cell above",
        said="As in the cell above, with a 2000 × 2000 matrix of ones: repr of the result just "
        f"dispatched printed {text}, and the result was {'' if ready else 'not '}ready after it.",
    )


@claim(
    "format-fetches-values",
    checks="That an f-string of a 512 × 512 float32 array of ones (1 MiB) prints its values, "
    "summarized, where an array of 1000 elements prints in full; and that an f-string of a "
    "just-dispatched 1000 × 1000 result leaves it ready.",
)
def _format() -> Observation:
    big = jnp.ones((512, 512), jnp.float32)
    heavy = jax.jit(_heavy)
    m = jnp.ones((1000, 1000))
    heavy(m).block_until_ready()
    result = heavy(m)
    _ = f"{result}"  # formatted for its effect: whether it waits
    waited = result.is_ready()
    observed = {
        "repr shape only": repr(big).startswith("Array(shape="),
        "str shape only": str(big).startswith("Array(shape="),
        "f-string prints values": f"{big}".startswith("[[1. 1. 1."),
        "summarized past 1000 elements, not at 1000": [
            "..." in f"{big}",
            "..." in f"{jnp.arange(1000.0)}",
        ],
        "a result ready after its f-string": waited,
    }
    shown = {True: "its shape only", False: "more than its shape"}
    summarized = observed["summarized past 1000 elements, not at 1000"]
    return Observation(
        expected={
            "f-string prints values": True,
            "summarized past 1000 elements, not at 1000": [True, False],
            "a result ready after its f-string": True,
        },
        observed=observed,
        said=f"For a 512 × 512 float32 array of ones (1 MiB), repr printed "
        f"{shown[observed['repr shape only']]}, str {shown[observed['str shape only']]}, and "
        f"an f-string {_printed(f'{big}')}, {'summarized' if summarized[0] else 'in full'} "
        f"(1000 elements print {'summarized' if summarized[1] else 'in full'}). A 1000 × 1000 "
        f"result just dispatched was {'ready' if waited else 'not ready'} after its f-string.",
    )
