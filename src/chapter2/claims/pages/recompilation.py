"""Claims of the page `recompilation`: what makes jit compile again, and what does not."""

import dataclasses
import functools
import json
import re
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from chapter2.cannot_check import CannotCheck
from chapter2.claims.registry import Observation, claim, counted, listed
from chapter2.compiles import CompileCounter, explained_cache_misses
from chapter2.environment import default_device
from chapter2.fresh import ONE_PROCESS, run_probe


def _times(n: int) -> str:
    """How often, in words: never, once, twice, 3 times."""
    return {0: "never", 1: "once", 2: "twice"}.get(n, f"{n} times")


@claim(
    "static-argnums-decorator-factory",
    checks="That `jax.jit(static_argnums=(1,))`, called without a function, decorates one: "
    "called with 3, 3, 7 and 7, it traces for 3 and for 7 and compiles twice.",
)
def _static_argnums() -> Observation:
    traced = []

    @jax.jit(static_argnums=(1,))
    def branchy(x, size_param):
        traced.append(size_param)
        return jnp.sum(x * 2.0) if size_param > 5 else jnp.sum(x + 1.0)

    with CompileCounter("branchy") as compiled:
        for size_param in [3, 3, 7, 7]:
            branchy(jnp.ones(10), size_param)
    return Observation(
        expected={"traced for": [3, 7], "compilations": 2},
        observed={"traced for": traced, "compilations": compiled.count},
        repeats="the cell above",
        said=f"Called with 3, 3, 7, 7, as in the cell above: traced {_times(len(traced))}"
        f"{', for ' + listed([str(t) for t in traced]) if traced else ''}, and compiled "
        f"{_times(compiled.count)}.",
    )


_scale = 2.0  # a global that a jitted function reads


@claim(
    "global-change-not-retraced",
    warning=True,
    checks="That a jitted `v * scale`, reading a global `scale` of 2, still returns 2 for 1.0 "
    "after `scale` is set to 10, without compiling again, as does `jax.jit` of the same "
    "function again; and that a new shape, a new dtype, a new static value and `jax.jit` of a "
    "new function wrapping it each see the 10.",
)
def _global_change() -> Observation:
    global _scale  # noqa: PLW0603 - the claim is about a changing global
    _scale = 2.0

    def scaled(v):
        return v * _scale

    def scaled_by(v, n):
        return v * _scale * n

    jitted = jax.jit(scaled)
    static = jax.jit(scaled_by, static_argnums=1)
    static(jnp.ones(()), 1)  # traced with the old value
    with CompileCounter("scaled") as compiled:
        before = float(jitted(jnp.ones(())))
        _scale = 10.0
        after = float(jitted(jnp.ones(())))
    jitted_again = float(jax.jit(scaled)(jnp.ones(())))  # the same function: the same caches
    new_function = lambda v: scaled(v)  # noqa: E731, PLW0108 - a new object, so a new trace
    retraced = float(jax.jit(new_function)(jnp.ones(())))
    new_shape = float(jitted(jnp.ones(2))[0])
    new_dtype = float(jitted(jnp.ones((), jnp.float16)))
    new_static = float(static(jnp.ones(()), 2))
    _scale = 2.0
    return Observation(
        expected={
            "before the change": 2.0,
            "after the change": 2.0,
            "compilations": 1,
            "jax.jit of the same function again": 2.0,
            "jax.jit of a new function wrapping it": 10.0,
            "a new shape": 10.0,
            "a new dtype": 10.0,
            "a new static value, 2": 20.0,
        },
        observed={
            "before the change": before,
            "after the change": after,
            "compilations": compiled.count,
            "jax.jit of the same function again": jitted_again,
            "jax.jit of a new function wrapping it": retraced,
            "a new shape": new_shape,
            "a new dtype": new_dtype,
            "a new static value, 2": new_static,
        },
        said=f"A jitted `v * scale` reading a global `scale`, called on 1.0 with scale = 2, "
        f"then again after setting scale = 10, returned {before:g} and then {after:g}, compiling "
        f"{_times(compiled.count)}. `jax.jit` of the same function again returned "
        f"{jitted_again:g}; of a new function wrapping it, {retraced:g}; on a new shape, "
        f"{new_shape:g}; on a float16 1.0, {new_dtype:g}. Another, `v * scale * n` with `n` "
        f"static, traced with n = 1 before the change, returned {new_static:g} for n = 2.",
    )


def _x64_on():
    """A context that turns `jax_enable_x64` on (jax.enable_x64, or the older experimental
    one)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64  # noqa: PLC0415 - releases before jax.enable_x64

    return enable_x64()


def _scalar_type(signature: str) -> str:
    """A compilation's one scalar argument as JAX logged it, in short: "float32[] weak"."""
    found = re.search(r"(\w+)\[\](, weak_type=True)?", signature)
    return f"{found[1]}[]{' weak' if found[2] else ''}" if found else signature


@claim(
    "x32-weak-type-cache-keys",
    warning=True,
    checks="That with `jax_enable_x64` off, as it is by default, a jitted `v * 2` compiles once "
    "for a float32 array and a float64 NumPy array, returning float32 for the latter, and once "
    "more for each of 1 (int32, weak), 1.0 (float32, weak) and `jnp.float32(1.0)` (float32); "
    "and that with the option on, the float64 array compiles again.",
    unchecked="That the float64 array is converted on the host, in every call, is not tested.",
)
def _weak_types() -> Observation:

    @jax.jit
    def scale(v):
        return v * 2

    with CompileCounter("scale") as compiled:
        scale(jnp.ones(3, jnp.float32))
        narrowed = str(scale(np.ones(3, np.float64)).dtype)
        after_float64 = compiled.count
        scale(1)
        scale(1.0)
        scale(jnp.float32(1.0))
    scalars = [_scalar_type(s) for s in compiled.signatures[1:]]

    @jax.jit
    def scale_x64(v):
        return v * 2

    with _x64_on(), CompileCounter("scale_x64") as wide:
        scale_x64(jnp.ones(3, jnp.float32))
        scale_x64(np.ones(3, np.float64))
    return Observation(
        expected={
            "jax_enable_x64": False,
            "compilations after float32 then float64": 1,
            "the float64 array's result": "float32",
            "compilations in all": 4,
            "the scalars' types": ["int32[] weak", "float32[] weak", "float32[]"],
            "with jax_enable_x64 on, compilations after float32 then float64": 2,
        },
        observed={
            "jax_enable_x64": bool(jax.config.jax_enable_x64),
            "compilations after float32 then float64": after_float64,
            "the float64 array's result": narrowed,
            "compilations in all": compiled.count,
            "the scalars' types": scalars,
            "with jax_enable_x64 on, compilations after float32 then float64": wide.count,
        },
        repeats="the cell above",
        said=f"The cell above, run again, with jax_enable_x64 "
        f"{'on' if jax.config.jax_enable_x64 else 'off'}: "
        f"{counted(after_float64, 'compilation')} after the float32 and the float64 array, "
        f"whose result was {narrowed}, {compiled.count} in all after the scalars 1, 1.0 and "
        f"jnp.float32(1.0), compiled as {listed(scalars, 'nothing')}. With jax_enable_x64 on, "
        f"the two arrays made {counted(wide.count, 'compilation')}.",
    )


@claim(
    "lax-cond-one-compilation",
    checks="That a jitted `lax.cond` on `size_param > 5`, called on the page's data with 3 "
    "and with 7, compiles once and returns each branch's own result.",
    unchecked="That both branches are in the one program is what one compilation serving "
    "both results means; the HLO is not read.",
)
def _lax_cond() -> Observation:

    @jax.jit
    def branch_in_graph(x, size_param):
        return lax.cond(size_param > 5, lambda v: jnp.sum(v * 2.0), lambda v: jnp.sum(v + 1.0), x)

    x = jax.random.normal(jax.random.key(0), (10,))  # the page's data
    with CompileCounter("branch_in_graph") as compiled:
        r3 = float(branch_in_graph(x, jnp.array(3)))
        r7 = float(branch_in_graph(x, jnp.array(7)))
    v = np.asarray(x)
    own_branch = [bool(abs(r3 - np.sum(v + 1.0)) < 1e-4), bool(abs(r7 - np.sum(v * 2.0)) < 1e-4)]
    got = [
        wanted if own else f"{r:.4f}, not {wanted}"
        for r, own, wanted in zip((r3, r7), own_branch, ("sum(x + 1)", "sum(x * 2)"), strict=True)
    ]
    return Observation(
        expected={"compilations": 1, "3 and 7 each get their own branch's result": [True, True]},
        observed={
            "compilations": compiled.count,
            "3 and 7 each get their own branch's result": own_branch,
            "results for 3 and 7": [round(r3, 4), round(r7, 4)],
        },
        repeats="the cell above",
        said=f"The cell above, run again: {counted(compiled.count, 'compilation')} for the calls "
        f"with 3 and 7, which returned {got[0]} and {got[1]}.",
    )


@claim(
    "function-identity-cache",
    warning=True,
    checks="That two `functools.partial` objects of the same function and value do not "
    "compare equal; and that over 3 calls each, a new lambda and a new partial under "
    "`jax.jit` compile 3 times, while `jax.jit(base)` remade each time and a partial made "
    "before the loop compile once.",
    unchecked="Passing the bound value as a static argument is advice, not tested.",
)
def _function_identity() -> Observation:
    v = jnp.ones(3)  # made first: inside the blocks only the functions below compile

    def base(t, a):  # made anew by every run of this check, so no earlier run's cache counts
        return t * a

    with CompileCounter() as new_lambda:
        for _ in range(3):
            jax.jit(lambda t: t * 2)(v)
    with CompileCounter() as new_partial:
        for _ in range(3):
            jax.jit(functools.partial(base, a=2.0))(v)
    with CompileCounter() as rewrapped:
        for _ in range(3):
            jax.jit(base)(v, 2.0)
    equal = functools.partial(base, a=2.0) == functools.partial(base, a=2.0)
    once = jax.jit(functools.partial(base, a=3.0))
    with CompileCounter() as partial_once:
        for _ in range(3):
            once(v)
    names = ["new lambda", "new partial", "jax.jit(base) again", "partial made once"]
    counts = [new_lambda.count, new_partial.count, rewrapped.count, partial_once.count]
    return Observation(
        expected={
            "compilations: " + ", ".join(names): [3, 3, 1, 1],
            "equal partials compare equal": False,
        },
        observed={
            "compilations: " + ", ".join(names): counts,
            "equal partials compare equal": equal,
        },
        repeats="the cell above",
        said=f"The cell above, run again, 3 calls each: a new lambda compiled {_times(counts[0])}, "
        f"a new partial {_times(counts[1])}, jax.jit(base) made anew {_times(counts[2])}, and "
        f"a partial made before the loop {_times(counts[3])}. Two partials of base with "
        f"a=2.0 compared {'equal' if equal else 'unequal'}.",
    )


@claim(
    "explain-cache-misses",
    checks="That with cache misses explained, calls of a jitted `v @ w` with `w` of shape "
    "4 × 4, then 4 × 8, log an explanation naming `w`, f32[4,4] and f32[4,8].",
    unchecked="What its first two lines give is read from the message, not tested.",
)
def _explain() -> Observation:

    @jax.jit
    def explain_me(v, w):
        return v @ w

    with explained_cache_misses() as found:
        explain_me(jnp.ones((4, 4)), jnp.ones((4, 4)))
        explain_me(jnp.ones((4, 4)), jnp.ones((4, 8)))
    mine = [m for m in found if "explain_me" in m]
    wordings = [  # this JAX's, and older releases' for the same explanation
        "at w, now f32[4,8] and before f32[4,4]",
        "at w, seen f32[4,4], but now given f32[4,8]",
    ]
    named = bool(mine) and any(w in mine[-1] for w in wordings)
    return Observation(
        expected={"names w and both shapes": True},
        observed={
            "names w and both shapes": named,
            "misses explained": len(mine),
        },
        repeats="the cell above",
        said=f"The cell above, run again: calls with w of shape 4 × 4, then 4 × 8, logged "
        f"{counted(len(mine), 'explanation')} of a cache miss, the last "
        f"{'naming w, f32[4,4] and f32[4,8]' if named else 'not naming w with both shapes'}.",
    )


@claim(
    "tracing-context-recompiles",
    checks="That a jitted product of the same two 4 × 4 arrays compiles under the default "
    'matmul precision, again under "highest", and not a third time back under the default; '
    "that the explained cache miss names `jax_default_matmul_precision`; and that a jitted "
    "sine compiles under both precisions.",
)
def _tracing_context() -> Observation:

    @jax.jit
    def explain_me(v, w):
        return v @ w

    @jax.jit
    def sine(v):
        return jnp.sin(v) + 1

    x = jnp.ones((4, 4))
    with CompileCounter("explain_me") as counter, explained_cache_misses() as found:
        explain_me(x, x)
        with jax.default_matmul_precision("highest"):
            explain_me(x, x)
        explain_me(x, x)
    with CompileCounter("sine") as sines:
        sine(x)
        with jax.default_matmul_precision("highest"):
            sine(x)
    mine = [m for m in found if "explain_me" in m]
    option = bool(mine) and "jax_default_matmul_precision" in mine[-1]
    return Observation(
        expected={
            "compilations: default, highest, default again": 2,
            "names the option": True,
            "compilations of a sine: default, highest": 2,
        },
        observed={
            "compilations: default, highest, default again": counter.count,
            "names the option": option,
            "compilations of a sine: default, highest": sines.count,
        },
        said=f"One step further than the cell, on functions of its own: a product of the same "
        f'two 4 × 4 arrays under the default matmul precision, under "highest", then under the '
        f"default again compiled {_times(counter.count)} (the third call found the first "
        f"program cached), and the explained miss {'names' if option else 'does not name'} "
        f"jax_default_matmul_precision. A jitted sine compiled {_times(sines.count)} under the "
        "first two.",
    )


class _Config:
    def __init__(self, scale):
        self.scale = scale


@dataclasses.dataclass(frozen=True)
class _FrozenConfig:
    scale: float


@claim(
    "static-arguments-hashed",
    checks="That over 3 calls with a static configuration made anew each time, a plain "
    "object compiles 3 times and a frozen dataclass once, and that a list as a static "
    "argument raises `ValueError`.",
)
def _static_hashed() -> Observation:
    scaled = jax.jit(lambda x, config: x * config.scale, static_argnums=1)
    counts = {}
    for kind in (_Config, _FrozenConfig):
        with CompileCounter("<lambda>") as counter:
            for _ in range(3):
                scaled(jnp.ones(3), kind(2.0))
        counts[kind.__name__.lstrip("_")] = counter.count
    try:
        jax.jit(lambda x, sizes: x * len(sizes), static_argnums=1)(jnp.ones(3), [1, 2])
        listed = "accepted"
    except ValueError:
        listed = "ValueError"
    return Observation(
        expected={
            "compilations in 3 calls": {"Config": 3, "FrozenConfig": 1},
            "a list": "ValueError",
        },
        observed={"compilations in 3 calls": counts, "a list": listed},
        said=f"Called a jitted function 3 times with a static configuration made anew each time: "
        f"a plain object compiled {_times(counts['Config'])}, a frozen dataclass "
        f"{_times(counts['FrozenConfig'])}; a list as the static argument "
        f"{'raised ValueError' if listed == 'ValueError' else 'was accepted'}.",
    )


@claim(
    "persistent-cache-defaults",
    checks="That this JAX's defaults set no cache folder, a minimum compile time of 1 s for an "
    "entry to be written, and a minimum entry size of 0 bytes.",
)
def _cache_defaults() -> Observation:
    names = [
        "jax_compilation_cache_dir",
        "jax_persistent_cache_min_compile_time_secs",
        "jax_persistent_cache_min_entry_size_bytes",
    ]
    defaults = {name: getattr(jax.config, name) for name in names}
    folder, seconds, size = defaults.values()
    return Observation(
        expected=dict(zip(names, [None, 1.0, 0], strict=True)),
        observed=defaults,
        said=f"This JAX's defaults: {'no cache folder' if folder is None else f'folder {folder}'}"
        f", a minimum compile time of {seconds:g} s to be written, and a minimum entry size of "
        f"{size} bytes.",
    )


def second_process_on_the_device() -> None:
    """CannotCheck where a second process cannot open the default device: the persistent
    cache's claims are about two processes compiling for the same device."""
    platform = default_device().platform
    if platform in ONE_PROCESS:
        msg = (
            f"the process running the checks holds the {platform.upper()}, so the two it "
            "would start cannot open it: one process at a time holds the chip"
        )
        raise CannotCheck(msg)


@claim(
    "persistent-cache-across-processes",
    checks="That of two fresh processes compiling the page's 64 × 64 model with one cache "
    "folder and the time threshold lowered, the first logs a miss and writes a `jit_model` "
    "file, and the second logs a hit.",
    unchecked="That the second still traced and lowered, and that `jnp.ones`'s compilations "
    "are written too, are read from the cell's output.",
)
def _persistent_cache() -> Observation:
    second_process_on_the_device()
    with tempfile.TemporaryDirectory() as folder:
        first = json.loads(run_probe("persistent_cache", folder))
        second = json.loads(run_probe("persistent_cache", folder))

    def said(record, words):
        return any(words in m for m in record["cache_messages"])

    missed = said(first, "PERSISTENT COMPILATION CACHE MISS")
    wrote = any(f.startswith("jit_model-") for f in first["files"])
    hit = said(second, "Persistent compilation cache hit")
    return Observation(
        expected={"first process missed": True, "file written": True, "second process hit": True},
        observed={
            "first process missed": missed,
            "file written": wrote,
            "second process hit": hit,
        },
        repeats="the cell above",
        said=f"Two fresh processes, as in the cell above, compiled the 64 × 64 model with one "
        f"cache folder: the first {'missed' if missed else 'logged no miss'} and "
        f"{'wrote' if wrote else 'did not write'} a jit_model file, the second "
        f"{'hit' if hit else 'logged no hit'}.",
    )


@claim(
    "cache-folder-read-at-first-use",
    checks="That in a fresh process the first folder holds the compilations made after it was "
    "set and after it was changed, and the second folder only those after `reset_cache()`.",
)
def _cache_folder_late() -> Observation:
    second_process_on_the_device()
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        found = json.loads(run_probe("persistent_cache", "--late", first, second))
    return Observation(
        expected={
            "first folder": ["after_changing", "after_setting"],
            "second folder": ["after_reset"],
        },
        observed=found,
        repeats="the cell above",
        said=f"The cell above, run again in a fresh process: the first folder holds "
        f"{listed(found['first folder'], 'nothing')}, the second "
        f"{listed(found['second folder'], 'nothing')}.",
    )
