"""Claims of the page `async-dispatch`: what returns at once, and what waits."""

import time

import jax
import jax.numpy as jnp

from chapter2.cases.dispatch import SYNCHRONIZING
from chapter2.claims.backends import CPU_BACKEND
from chapter2.claims.registry import CannotCheck, Kind, Observation, claim, counted
from chapter2.compat import cost_analysis
from chapter2.compiles import CompileCounter


def _heavy(m):
    return jnp.tanh(m @ m) @ m


def _printed(text: str) -> str:
    """What a printed array shows, in words: its values, or its shape only."""
    if text.startswith(("Array([", "[")):
        return "its values"
    return "its shape only" if text.startswith("Array(shape=") else f"{text[:40]!r}"


@claim("first-call-compiles", warning=True)
def _first_call() -> Observation:
    compute_heavy = jax.jit(lambda m: m @ m.T)
    x = jnp.ones((200, 200))
    with CompileCounter("<lambda>") as first:
        compute_heavy(x).block_until_ready()
    with CompileCounter("<lambda>") as second:
        compute_heavy(x).block_until_ready()
    return Observation(
        expected={"compilations in the first call": 1, "in the second": 0},
        observed={"compilations in the first call": first.count, "in the second": second.count},
        said=f"Checked again, smaller: a jitted m @ m.T on 200 × 200 ones made "
        f"{counted(first.count, 'compilation')} in its first call and "
        f"{counted(second.count, 'compilation')} in its second.",
    )


@claim("cpu-async-dispatch-default", only_on=CPU_BACKEND)
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


@claim("not-ready-after-dispatch", kind=Kind.OBSERVED)
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


@claim("block-until-ready-needs-argument", warning=True)
def _needs_argument() -> Observation:
    try:
        jax.block_until_ready()
        raised = "nothing"
    except TypeError as err:
        raised = f"TypeError: {err}"
    return Observation(
        expected={"without an argument": True},
        observed={
            "without an argument": "missing 1 required positional argument" in raised,
            "raised": raised,
        },
        repeats="the cell above",
        said="The cell above, run again: jax.block_until_ready() with no argument raised "
        f"{raised}.",
    )


@claim("block-until-ready-pytree", warning=True)
def _pytree() -> Observation:
    f = jax.jit(_heavy)
    m = jnp.ones((2000, 2000))
    f(m).block_until_ready()
    pending = {"a": f(m), "b": [f(m)[0]], "step": 7}
    arrays = [leaf for leaf in jax.tree.leaves(pending) if isinstance(leaf, jax.Array)]
    before = [a.is_ready() for a in arrays]
    out = jax.block_until_ready(pending)
    return Observation(
        expected={"same object": True, "array leaves ready": True, "step kept": 7},
        observed={
            "same object": out is pending,
            "array leaves ready": all(a.is_ready() for a in arrays),
            "step kept": out["step"],
            "ready before the call": before,
        },
        said="jax.block_until_ready on a dict holding a result of tanh(m @ m) @ m for a "
        "2000 × 2000 matrix, just dispatched, the first row of another in a list, and step 7: "
        f"it returned {'the same dict' if out is pending else 'another object'}; "
        f"{sum(before)} of its {len(arrays)} arrays were ready before the call, "
        f"{sum(a.is_ready() for a in arrays)} after, and step was {out['step']}.",
    )


@claim("implicit-synchronization", rests_on=("not-ready-after-dispatch",))
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


@claim("repr-large-array-shape-only", warning=True)
def _repr() -> Observation:
    exactly = repr(jnp.ones((512, 512), jnp.float32))
    just_below = repr(jnp.ones((511, 512), jnp.float32))  # 2 KiB short of 1 MiB
    small = jax.jit(lambda m: (jnp.tanh(m @ m) @ m)[:2, :2])(jnp.ones((500, 500)))
    below = repr(small)
    return Observation(
        expected={
            "1 MiB": "Array(shape=(512, 512), dtype=float32)",
            "just below 1 MiB prints values": True,
            "a small array prints values": True,
            "ready after its repr": True,
        },
        observed={
            "1 MiB": exactly,
            "just below 1 MiB prints values": just_below.startswith("Array([["),
            "a small array prints values": below.startswith("Array([["),
            "ready after its repr": small.is_ready(),
        },
        said=f"repr of a 512 × 512 float32 array (1 MiB) printed {exactly}; of a 511 × 512 one, "
        f"{_printed(just_below)}; of a jitted 2 × 2 result, {_printed(below)}, and the result "
        f"was {'' if small.is_ready() else 'not '}ready after it.",
    )


@claim("repr-does-not-wait", rests_on=("repr-large-array-shape-only",))
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


@claim("format-fetches-values")
def _format() -> Observation:
    big = jnp.ones((512, 512), jnp.float32)
    observed = {
        "repr shape only": repr(big).startswith("Array(shape="),
        "str shape only": str(big).startswith("Array(shape="),
        "f-string prints values": f"{big}".startswith("[[1. 1. 1."),
    }
    shown = {True: "its shape only", False: "more than its shape"}
    return Observation(
        expected={"f-string prints values": True},
        observed=observed,
        said=f"For a 512 × 512 float32 array of ones (1 MiB), repr printed "
        f"{shown[observed['repr shape only']]}, str {shown[observed['str shape only']]}, and "
        f"an f-string {_printed(f'{big}')}.",
    )
