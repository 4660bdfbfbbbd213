"""Claims of the page `jaxprs`: what make_jaxpr returns and how jaxprs print and nest."""

import jax
import jax.numpy as jnp
from jax import lax

from chapter2.claims.registry import Observation, claim, counted, listed
from chapter2.compat import constvars
from chapter2.compiles import CompileCounter
from chapter2.hlo import clean_hlo, compiled_text, has_op, lowered_text, stablehlo_ops
from chapter2.jaxprs import count_primitives


def _names(jaxpr) -> list[str]:
    return [eqn.primitive.name for eqn in jaxpr.eqns]


def _is(yes: bool) -> str:
    return "is" if yes else "is not"


@claim(
    "literal-printed-with-type",
    checks="That in the jaxpr of `sin(x) + cos(y) * 2.0` the 2.0 is a `Literal`, printed "
    "`2.0:f32[]`.",
    unchecked="What older releases printed is recorded in the claims matrix, not tested here.",
)
def _literal_printed_with_type() -> Observation:
    jaxpr = jax.make_jaxpr(lambda x, y: jnp.sin(x) + jnp.cos(y) * 2.0)(jnp.ones(10), jnp.ones(10))
    text = jaxpr.pretty_print(use_color=False)  # str() adds ANSI colours inside Jupyter
    mul = next(eqn for eqn in jaxpr.eqns if eqn.primitive.name == "mul")
    mul_line = next(line.strip() for line in text.splitlines() if " mul " in line)
    return Observation(
        expected={
            "equations": ["sin", "cos", "mul", "add"],
            "2.0 is a": "Literal",
            "printed": True,
        },
        observed={
            "equations": _names(jaxpr),
            "2.0 is a": type(mul.invars[1]).__name__,
            "printed": "2.0:f32[]" in text,
            "mul line": mul_line,
        },
        repeats="the example above",
        said="The example above, traced again with arrays of ones: equations "
        f"{listed(_names(jaxpr), 'none')}; the 2.0 is a {type(mul.invars[1]).__name__}, and the "
        f"mul line reads {mul_line}.",
    )


@claim(
    "closed-jaxpr-merged",
    checks="That `make_jaxpr` of `w @ v`, with `w` a captured 2 × 2 matrix, returns a "
    "`Jaxpr`; that `jax.extend.core.ClosedJaxpr` is that class; that its `.jaxpr` is the "
    "object itself; and that `.consts`, `.eqns`, `.invars` and `.outvars` read on the object "
    "hold one constant, one `dot_general`, one input and one output.",
    unchecked="That the alias is kept for old code is JAX's reason, not tested.",
)
def _closed_jaxpr_merged() -> Observation:
    import jax.extend as jex  # noqa: PLC0415 - a JAX without it makes a verdict, not a crash

    w = jnp.ones((2, 2))
    closed = jax.make_jaxpr(lambda v: w @ v)(jnp.ones(2))
    ends = [len(getattr(closed, name, None) or []) for name in ("invars", "outvars")]
    return Observation(
        expected={
            "make_jaxpr returns": "Jaxpr",
            "ClosedJaxpr is Jaxpr": True,
            ".jaxpr is the object itself": True,
            ".consts and .eqns on the object": [1, ["dot_general"]],
            ".invars and .outvars on the object": [1, 1],
        },
        observed={
            "make_jaxpr returns": type(closed).__name__,
            "ClosedJaxpr is Jaxpr": jex.core.ClosedJaxpr is jex.core.Jaxpr,
            ".jaxpr is the object itself": closed.jaxpr is closed,
            ".consts and .eqns on the object": [len(closed.consts), _names(closed)],
            ".invars and .outvars on the object": ends,
        },
        said="make_jaxpr of w @ v, with w a captured 2 × 2 matrix, returned a "
        f"{type(closed).__name__}; jax.extend.core.ClosedJaxpr "
        f"{_is(jex.core.ClosedJaxpr is jex.core.Jaxpr)} the same class as Jaxpr, its .jaxpr "
        f"{_is(closed.jaxpr is closed)} the object itself, which holds "
        f"{counted(len(closed.consts), 'constant')} and "
        f"{counted(len(_names(closed)), 'equation')} ({listed(_names(closed), 'none')}), "
        f"{counted(ends[0], 'input')} and {counted(ends[1], 'output')}.",
    )


@claim(
    "closure-constvar-literal",
    checks="That in the jaxpr of `w @ v + jnp.pi`, with `w` a captured 3 × 3 matrix, `w` is "
    "the one constvar, of type `f32[3,3]`, and `jnp.pi` a `Literal` printed "
    "`3.1415927410125732:f32[]`.",
    unchecked="That the matrix's value sits in `.consts` is shown by the cell above, not tested.",
)
def _closure_constvar_literal() -> Observation:
    w = jnp.arange(9.0).reshape(3, 3)
    jaxpr = jax.make_jaxpr(lambda v: jnp.dot(w, v) + jnp.pi)(jnp.ones(3))
    add = next(eqn for eqn in jaxpr.eqns if eqn.primitive.name == "add")
    observed = {
        "constvars": [v.aval.str_short(short_dtypes=True) for v in constvars(jaxpr)],
        "jnp.pi is a": type(add.invars[1]).__name__,
        "printed as": "3.1415927410125732:f32[]" in jaxpr.pretty_print(use_color=False),
    }
    return Observation(
        expected={"constvars": ["f32[3,3]"], "jnp.pi is a": "Literal", "printed as": True},
        observed=observed,
        repeats="the cell above",
        said="The cell above, traced again: "
        f"{counted(len(observed['constvars']), 'constvar')}, "
        f"{listed(observed['constvars'], 'none')}; "
        f"jnp.pi is a {observed['jnp.pi is a']}, "
        f"{'printed' if observed['printed as'] else 'not printed'} as "
        "3.1415927410125732:f32[].",
    )


@claim(
    "nested-jit-primitive",
    checks="That in the jaxpr of a sum of a jitted `inner(v) = sin(v) * 2.0`, the first "
    'equation is of the primitive `jit`, with `inner` in `params["name"]` and a sub-jaxpr '
    'of `sin` and `mul` in `params["jaxpr"]`; and that the printed jaxpr holds no `pjit`.',
    unchecked="That older material calls the primitive `pjit` is said of that material.",
)
def _nested_jit_primitive() -> Observation:

    @jax.jit
    def inner(v):
        return jnp.sin(v) * 2.0

    jaxpr = jax.make_jaxpr(lambda v: inner(v).sum())(jnp.ones(3))
    top = jaxpr.eqns[0]
    sub = _names(top.params["jaxpr"]) if "jaxpr" in top.params else None
    return Observation(
        expected={
            "primitive": "jit",
            "params name": "inner",
            "sub-jaxpr": ["sin", "mul"],
            "pjit in the printout": False,
        },
        observed={
            "primitive": top.primitive.name,
            "params name": top.params.get("name"),
            "sub-jaxpr": sub,
            "pjit in the printout": "pjit" in jaxpr.pretty_print(use_color=False),
        },
        said="make_jaxpr of a jitted inner(v) = sin(v) * 2.0, called inside a sum: the first "
        f"equation is {top.primitive.name}, with name {top.params.get('name')} and "
        + (f"a sub-jaxpr of {listed(sub, 'none')}." if sub is not None else "no params['jaxpr']."),
    )


@claim(
    "library-functions-custom-jvp",
    checks="That the jaxpr of a sum of a jitted `relu(v) * 2.0` and of `logaddexp(v, 1.0)` "
    "holds, counted at every level, 2 `custom_jvp_call`, 2 `jit` and at least one `max`.",
    unchecked="Which `custom_jvp_call` holds which `jit`, and where the `max` sits, is read "
    "from the printout above: the check counts them.",
)
def _library_custom_jvp() -> Observation:
    inner = jax.jit(lambda v: jax.nn.relu(v) * 2.0)
    jaxpr = jax.make_jaxpr(lambda v: inner(v).sum() + jnp.logaddexp(v, 1.0).sum())(jnp.ones(3))
    counts = count_primitives(jaxpr)
    return Observation(
        expected={"jit": 2, "custom_jvp_call": 2, "max inside": True},
        observed={
            "jit": counts["jit"],
            "custom_jvp_call": counts["custom_jvp_call"],
            "max inside": counts["max"] >= 1,
            "top level": _names(jaxpr),
        },
        repeats="the cell above",
        said="The outer function above, traced again: at the top level "
        f"{listed(_names(jaxpr), 'none')}; counted at every level, "
        f"{counts['jit']} jit, {counts['custom_jvp_call']} custom_jvp_call and "
        f"{counted(counts['max'], 'max equation')}.",
    )


@claim(
    "python-if-on-tracer",
    warning=True,
    checks="That a jitted `if flag > 0.5` on a traced flag raises `TracerBoolConversionError` "
    "on its first call, having compiled nothing; and that with the flag static, 0.7 and 0.3 "
    "give different jaxprs and calls with 0.7, 0.7, 0.3 and 0.3 compile twice.",
    unchecked="The common explanation is quoted, not tested.",
)
def _python_if_on_tracer() -> Observation:

    def traced_if(x, flag):
        return jnp.sin(x) if flag > 0.5 else jnp.cos(x)

    def static_if(x, flag):
        return jnp.sin(x) if flag > 0.5 else jnp.cos(x)

    x = jnp.ones(3)
    with CompileCounter("traced_if") as traced:
        try:
            jax.jit(traced_if)(x, 0.7)
            raised = "nothing"
        except Exception as err:
            raised = type(err).__name__
    static = jax.jit(static_if, static_argnums=1)
    with CompileCounter("static_if") as compiled:
        for flag in [0.7, 0.7, 0.3, 0.3]:
            static(x, flag)
    jaxprs = [str(jax.make_jaxpr(static_if, static_argnums=1)(x, f)) for f in (0.7, 0.3)]
    differ = jaxprs[0] != jaxprs[1]
    return Observation(
        expected={
            "traced flag raises": "TracerBoolConversionError",
            "compilations with a traced flag": 0,
            "compilations for static flags 0.7, 0.7, 0.3, 0.3": 2,
            "jaxprs for static 0.7 and 0.3 differ": True,
        },
        observed={
            "traced flag raises": raised,
            "compilations with a traced flag": traced.count,
            "compilations for static flags 0.7, 0.7, 0.3, 0.3": compiled.count,
            "jaxprs for static 0.7 and 0.3 differ": differ,
        },
        said="A jitted sin-or-cos with if flag > 0.5, called with a traced flag of 0.7: raised "
        f"{raised}, after {counted(traced.count, 'compilation')}. With the flag static, 0.7 "
        f"and 0.3 gave {'different' if differ else 'identical'} jaxprs, and calls with 0.7, "
        f"0.7, 0.3 and 0.3 made {counted(compiled.count, 'compilation')}.",
    )


def _branches(jaxpr) -> list[list[str]]:
    """The primitives of each branch of the jaxpr's first `cond`, in its order."""
    cond = next(eqn for eqn in jaxpr.eqns if eqn.primitive.name == "cond")
    return [_names(b) for b in cond.params["branches"]]


@claim(
    "cond-int32-false-first",
    warning=True,
    checks="That `lax.cond(p > 0.5, sin, cos, x)` traces to the same jaxpr for 0.7 and 0.3, in "
    "which `convert_element_type` to int32 makes the index of the `cond`, whose branches are "
    "cos (index 0), then sin; and that `lax.switch` with the branches [cos, sin] traces to a "
    "`cond` with the same branches.",
    unchecked="The form in quotes is the misreading, not tested.",
)
def _cond_int32_false_first() -> Observation:

    def f(p, x):
        return lax.cond(p > 0.5, jnp.sin, jnp.cos, x)

    jaxpr = jax.make_jaxpr(f)(0.7, jnp.ones(3))
    names = _names(jaxpr)
    cond = jaxpr.eqns[names.index("cond")]
    before = jaxpr.eqns[names.index("cond") - 1]
    other = jax.make_jaxpr(f)(0.3, jnp.ones(3))
    same = jaxpr.pretty_print(use_color=False) == other.pretty_print(use_color=False)
    branches = _branches(jaxpr)
    switch = jax.make_jaxpr(lambda i, x: lax.switch(i, [jnp.cos, jnp.sin], x))(1, jnp.ones(3))
    return Observation(
        expected={
            "same jaxpr for 0.7 and 0.3": True,
            "before cond": ["convert_element_type", "int32"],
            "cond indexed by it": True,
            "branches (true=sin, false=cos)": [["cos"], ["sin"]],
            "switch over [cos, sin] has the same branches": True,
        },
        observed={
            "same jaxpr for 0.7 and 0.3": same,
            "before cond": [before.primitive.name, str(before.params.get("new_dtype"))],
            "cond indexed by it": cond.invars[0] is before.outvars[0],
            "branches (true=sin, false=cos)": branches,
            "switch over [cos, sin] has the same branches": _branches(switch) == branches,
        },
        said="lax.cond(p > 0.5, sin, cos, x), traced as in the cells above for p = 0.7 and 0.3: "
        f"{'the same jaxpr' if same else 'two different jaxprs'}. Before the cond, "
        f"{before.primitive.name} to {before.params.get('new_dtype')}, whose result "
        f"{_is(cond.invars[0] is before.outvars[0])} the cond's index; its branches, in order: "
        + ", then ".join(listed(names, "none") for names in branches)
        + "; lax.switch over [cos, sin] gave the branches "
        + ", then ".join(listed(names, "none") for names in _branches(switch))
        + ".",
    )


@claim(
    "grad-jaxpr-dead-code",
    warning=True,
    checks="That the jaxpr of `jax.grad` of `sum(sin(x) ** 2)` holds one `reduce_sum`; that "
    "neither the StableHLO JAX lowers it to nor the optimized HLO holds a reduce; and that "
    "with `keep_unused=True` the StableHLO holds one and the optimized HLO none.",
)
def _grad_dead_code() -> Observation:

    def f(x):
        return jnp.sum(jnp.sin(x) ** 2)

    grad_f, x = jax.grad(f), jnp.ones(4)
    counts = count_primitives(jax.make_jaxpr(grad_f)(x))

    def reduces(**jit_kwargs) -> list[bool]:
        return [
            "reduce" in stablehlo_ops(lowered_text(grad_f, x, **jit_kwargs)),
            has_op(clean_hlo(compiled_text(grad_f, x, **jit_kwargs)), "reduce"),
        ]

    plain, kept = reduces(), reduces(keep_unused=True)
    where = ["the StableHLO", "the optimized HLO"]

    def found(flags: list[bool]) -> str:
        if all(flags):
            return f"in both {listed(where, 'none')}"
        if any(flags):
            return f"in {where[flags.index(True)]} only"
        return f"in neither {' nor '.join(where)}"

    return Observation(
        expected={
            "sin, cos, reduce_sum in the jaxpr": [1, 1, 1],
            "reduce in the StableHLO, in the optimized HLO": [False, False],
            "the same with keep_unused=True": [True, False],
        },
        observed={
            "sin, cos, reduce_sum in the jaxpr": [
                counts["sin"],
                counts["cos"],
                counts["reduce_sum"],
            ],
            "reduce in the StableHLO, in the optimized HLO": plain,
            "the same with keep_unused=True": kept,
        },
        repeats="the cells above",
        said="The cells above, run again: the jaxpr of jax.grad of sum(sin(x) ** 2) holds "
        f"{counts['sin']} sin, {counts['cos']} cos and {counts['reduce_sum']} reduce_sum; "
        f"a reduce is {found(plain)}, and with keep_unused=True {found(kept)}.",
    )


@claim(
    "same-jaxpr-compiles-twice",
    checks="That the jaxprs of `sine` for `1.0` and `jnp.float32(1.0)` print alike and that "
    "jit compiles it twice; which input is weakly typed is reported.",
    unchecked="That the weak type is what the cache key tells apart is shown on the "
    "recompilation page, where JAX explains a cache miss.",
)
def _same_jaxpr() -> Observation:

    def sine(s):
        return jnp.sin(s)

    with CompileCounter("sine") as counter:
        jax.jit(sine)(1.0)
        jax.jit(sine)(jnp.float32(1.0))
    jaxprs = [jax.make_jaxpr(sine)(1.0), jax.make_jaxpr(sine)(jnp.float32(1.0))]
    calls = ["1.0", "jnp.float32(1.0)"]
    weak = [c for c, j in zip(calls, jaxprs, strict=True) if j.in_avals[0].weak_type]
    return Observation(
        expected={"jaxprs print alike": True, "compilations": 2},
        observed={
            "jaxprs print alike": str(jaxprs[0]) == str(jaxprs[1]),
            "compilations": counter.count,
            "weak types": [j.in_avals[0].weak_type for j in jaxprs],
        },
        repeats="the cell above",
        said="The cell above, run again: the jaxprs of sine for 1.0 and jnp.float32(1.0) print "
        f"{'alike' if str(jaxprs[0]) == str(jaxprs[1]) else 'differently'}, with a weakly "
        f"typed input for {listed(weak, 'neither')}, and jit compiled sine "
        f"{counted(counter.count, 'time')}.",
    )


@claim(
    "cond-batched-runs-both",
    checks="That a `cond` of sin and cos, each branch counting its runs by a callback, runs "
    "the sin branch alone under jit with a True predicate; and that under vmap with [True, "
    "False] both branches run and the jaxpr holds `select_n` and no `cond`.",
)
def _cond_branches() -> Observation:
    ran: list[str] = []

    def counted_branch(name, fn):
        def branch(v):
            jax.debug.callback(lambda: ran.append(name))
            return fn(v)

        return branch

    def branches(p, v):
        return lax.cond(p, counted_branch("sin", jnp.sin), counted_branch("cos", jnp.cos), v)

    jax.jit(branches)(True, jnp.ones(2)).block_until_ready()
    jax.effects_barrier()
    under_jit, ran[:] = sorted(ran), []
    batched = jax.vmap(branches)
    batched(jnp.array([True, False]), jnp.ones(2)).block_until_ready()
    jax.effects_barrier()
    primitives = count_primitives(jax.make_jaxpr(batched)(jnp.array([True, False]), jnp.ones(2)))
    return Observation(
        expected={
            "branches run under jit": ["sin"],
            "branches run under vmap": ["cos", "sin"],
            "select_n and no cond under vmap": True,
        },
        observed={
            "branches run under jit": under_jit,
            "branches run under vmap": sorted(ran),
            "select_n and no cond under vmap": primitives["select_n"] > 0
            and primitives["cond"] == 0,
        },
        said=f"A cond of sin and cos, each branch counting its runs: under jit with a True "
        f"predicate, {listed(under_jit, 'no branch')} ran; under vmap with [True, False], "
        f"{listed(sorted(ran), 'no branch')} ran, and its jaxpr holds "
        f"{counted(primitives['select_n'], 'select_n')} and {counted(primitives['cond'], 'cond')}.",
    )


@claim(
    "python-loop-unrolls",
    checks="That the Python loop's jaxpr has 400 equations and the `fori_loop`'s one.",
    unchecked="The time to trace and compile is the cell's measurement, glued, not tested; "
    "that it grows with the iterations is not measured.",
)
def _loop_unrolls() -> Observation:
    def unrolled(v):
        for _ in range(200):
            v = jnp.sin(v) * 0.5
        return v

    def rolled(v):
        return lax.fori_loop(0, 200, lambda _, v: jnp.sin(v) * 0.5, v)

    v = jnp.ones(8)
    counts = {f.__name__: len(jax.make_jaxpr(f)(v).eqns) for f in (unrolled, rolled)}
    return Observation(
        expected={"equations": {"unrolled": 400, "rolled": 1}},
        observed={"equations": counts},
        repeats="the cell above",
        said=f"The cell above, traced again: the Python loop's jaxpr has {counts['unrolled']} "
        f"equations, the fori_loop's {counts['rolled']}.",
    )
