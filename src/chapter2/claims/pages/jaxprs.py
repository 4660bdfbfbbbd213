"""Claims of the page `jaxprs`: what make_jaxpr returns and how jaxprs print and nest."""

import jax
import jax.numpy as jnp
from jax import lax

from chapter2.claims.registry import Observation, claim
from chapter2.compat import constvars
from chapter2.compiles import CompileCounter
from chapter2.hlo import clean_hlo, compiled_text, has_op, lowered_text, stablehlo_ops
from chapter2.jaxprs import count_primitives


def _names(jaxpr) -> list[str]:
    return [eqn.primitive.name for eqn in jaxpr.eqns]


@claim("literal-printed-with-type")
def _literal_printed_with_type() -> Observation:
    jaxpr = jax.make_jaxpr(lambda x, y: jnp.sin(x) + jnp.cos(y) * 2.0)(jnp.ones(10), jnp.ones(10))
    text = jaxpr.pretty_print(use_color=False)  # str() adds ANSI colours inside Jupyter
    mul = next(eqn for eqn in jaxpr.eqns if eqn.primitive.name == "mul")
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
            "mul line": next(line.strip() for line in text.splitlines() if " mul " in line),
        },
    )


@claim("closed-jaxpr-merged")
def _closed_jaxpr_merged() -> Observation:
    import jax.extend as jex  # noqa: PLC0415 - a JAX without it makes a verdict, not a crash

    w = jnp.ones((2, 2))
    closed = jax.make_jaxpr(lambda v: w @ v)(jnp.ones(2))
    return Observation(
        expected={
            "make_jaxpr returns": "Jaxpr",
            "ClosedJaxpr is Jaxpr": True,
            ".jaxpr is the object itself": True,
            ".consts and .eqns on the object": [1, ["dot_general"]],
        },
        observed={
            "make_jaxpr returns": type(closed).__name__,
            "ClosedJaxpr is Jaxpr": jex.core.ClosedJaxpr is jex.core.Jaxpr,
            ".jaxpr is the object itself": closed.jaxpr is closed,
            ".consts and .eqns on the object": [len(closed.consts), _names(closed)],
        },
    )


@claim("closure-constvar-literal")
def _closure_constvar_literal() -> Observation:
    w = jnp.arange(9.0).reshape(3, 3)
    jaxpr = jax.make_jaxpr(lambda v: jnp.dot(w, v) + jnp.pi)(jnp.ones(3))
    add = next(eqn for eqn in jaxpr.eqns if eqn.primitive.name == "add")
    return Observation(
        expected={"constvars": ["f32[3,3]"], "jnp.pi is a": "Literal", "printed as": True},
        observed={
            "constvars": [v.aval.str_short(short_dtypes=True) for v in constvars(jaxpr)],
            "jnp.pi is a": type(add.invars[1]).__name__,
            "printed as": "3.1415927410125732:f32[]" in jaxpr.pretty_print(use_color=False),
        },
    )


@claim("nested-jit-primitive")
def _nested_jit_primitive() -> Observation:

    @jax.jit
    def inner(v):
        return jnp.sin(v) * 2.0

    jaxpr = jax.make_jaxpr(lambda v: inner(v).sum())(jnp.ones(3))
    top = jaxpr.eqns[0]
    return Observation(
        expected={"primitive": "jit", "params name": "inner", "sub-jaxpr": ["sin", "mul"]},
        observed={
            "primitive": top.primitive.name,
            "params name": top.params.get("name"),
            "sub-jaxpr": _names(top.params["jaxpr"]) if "jaxpr" in top.params else None,
        },
    )


@claim("library-functions-custom-jvp")
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
    )


@claim("python-if-on-tracer", warning=True)
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
    return Observation(
        expected={
            "traced flag raises": "TracerBoolConversionError",
            "compilations with a traced flag": 0,
            "compilations for static flags 0.7, 0.7, 0.3, 0.3": 2,
        },
        observed={
            "traced flag raises": raised,
            "compilations with a traced flag": traced.count,
            "compilations for static flags 0.7, 0.7, 0.3, 0.3": compiled.count,
        },
    )


@claim("cond-int32-false-first", warning=True)
def _cond_int32_false_first() -> Observation:

    def f(p, x):
        return lax.cond(p > 0.5, jnp.sin, jnp.cos, x)

    jaxpr = jax.make_jaxpr(f)(0.7, jnp.ones(3))
    names = _names(jaxpr)
    cond = jaxpr.eqns[names.index("cond")]
    before = jaxpr.eqns[names.index("cond") - 1]
    other = jax.make_jaxpr(f)(0.3, jnp.ones(3))
    return Observation(
        expected={
            "same jaxpr for 0.7 and 0.3": True,
            "before cond": ["convert_element_type", "int32"],
            "cond indexed by it": True,
            "branches (true=sin, false=cos)": [["cos"], ["sin"]],
        },
        observed={
            "same jaxpr for 0.7 and 0.3": jaxpr.pretty_print(use_color=False)
            == other.pretty_print(use_color=False),
            "before cond": [before.primitive.name, str(before.params.get("new_dtype"))],
            "cond indexed by it": cond.invars[0] is before.outvars[0],
            "branches (true=sin, false=cos)": [_names(b) for b in cond.params["branches"]],
        },
    )


@claim("grad-jaxpr-dead-code", warning=True)
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
            "reduce in the StableHLO, in the optimized HLO": reduces(),
            "the same with keep_unused=True": reduces(keep_unused=True),
        },
    )


@claim("same-jaxpr-compiles-twice")
def _same_jaxpr() -> Observation:

    def sine(s):
        return jnp.sin(s)

    with CompileCounter("sine") as counter:
        jax.jit(sine)(1.0)
        jax.jit(sine)(jnp.float32(1.0))
    jaxprs = [jax.make_jaxpr(sine)(1.0), jax.make_jaxpr(sine)(jnp.float32(1.0))]
    return Observation(
        expected={"jaxprs print alike": True, "compilations": 2},
        observed={
            "jaxprs print alike": str(jaxprs[0]) == str(jaxprs[1]),
            "compilations": counter.count,
            "weak types": [j.in_avals[0].weak_type for j in jaxprs],
        },
    )
