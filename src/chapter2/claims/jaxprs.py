"""Claims of section 2.2 (jaxprs)."""

import jax
import jax.extend as jex
import jax.numpy as jnp
from jax import lax

from chapter2.claims.registry import Observation, claim
from chapter2.compiles import CompileCounter
from chapter2.jaxprs import count_primitives


@claim(
    "closed-jaxpr-merged",
    "2.2",
    "note-closed-jaxpr",
    "make_jaxpr returns a Jaxpr: jax.extend.core.ClosedJaxpr is the same class as Jaxpr, "
    ".jaxpr returns the object itself, and .consts and .eqns are read on it directly.",
)
def _closed_jaxpr_merged() -> Observation:
    w = jnp.ones((2, 2))
    closed = jax.make_jaxpr(lambda v: w @ v)(jnp.ones(2))
    same_class = jex.core.ClosedJaxpr is jex.core.Jaxpr
    is_self = closed.jaxpr is closed
    direct = len(closed.consts) == 1 and [e.primitive.name for e in closed.eqns] == ["dot_general"]
    return Observation(
        type(closed) is jex.core.ClosedJaxpr and same_class and is_self and direct,
        f"make_jaxpr returned {type(closed).__name__}; ClosedJaxpr is Jaxpr: {same_class}; "
        f".jaxpr is the object itself: {is_self}; .consts/.eqns read directly: {direct}",
    )


@claim(
    "literal-printed-with-type",
    "2.2",
    "note-literals",
    "A Python scalar in a traced function becomes a Literal, and the jaxpr prints it with its "
    "type, e.g. 2.0:f32[].",
)
def _literal_printed_with_type() -> Observation:
    jaxpr = jax.make_jaxpr(lambda v: v * 2.0)(jnp.ones(3, jnp.float32))
    operand = jaxpr.eqns[0].invars[1]
    kind = type(operand).__name__
    text = jaxpr.pretty_print(use_color=False)  # str() adds ANSI colours inside Jupyter
    printed = "2.0:f32[]" in text
    line = text.splitlines()[0].strip()
    return Observation(
        kind == "Literal" and printed,
        f"the scalar operand is a {kind}; the jaxpr reads {line!r}",
    )


@claim(
    "nested-jit-primitive",
    "2.2",
    "note-nested-jit",
    'A jitted function called inside a traced one appears as one equation of the primitive "jit" '
    '(older JAX: "pjit") whose params hold its name and its sub-jaxpr.',
)
def _nested_jit_primitive() -> Observation:
    @jax.jit
    def claim_inner(v):
        return jnp.sin(v) * 2.0

    jaxpr = jax.make_jaxpr(lambda v: claim_inner(v).sum())(jnp.ones(3))
    top = jaxpr.eqns[0]
    counts = count_primitives(jaxpr)
    sub = top.params.get("jaxpr")
    sub_prims = [e.primitive.name for e in sub.eqns] if sub is not None else None
    return Observation(
        top.primitive.name == "jit"
        and top.params.get("name") == "claim_inner"
        and sub_prims == ["sin", "mul"]
        and "pjit" not in counts,
        f"first equation: primitive {top.primitive.name!r}, name={top.params.get('name')!r}, "
        f"sub-jaxpr {sub_prims}; 'pjit' occurs {counts['pjit']} times",
    )


@claim(
    "python-if-on-tracer",
    "2.2",
    "note-python-if",
    "Inside jit, a Python if on a traced argument raises TracerBoolConversionError at once (no "
    "recompilation ever happens); with the argument static, each distinct value compiles once.",
)
def _python_if_on_tracer() -> Observation:
    def claim_traced_if(x, flag):
        return jnp.sin(x) if flag > 0.5 else jnp.cos(x)

    def claim_static_if(x, flag):
        return jnp.sin(x) if flag > 0.5 else jnp.cos(x)

    x = jnp.ones(3)
    with CompileCounter("claim_traced_if") as traced:
        try:
            jax.jit(claim_traced_if)(x, 0.7)
            raised = "nothing"
        except Exception as err:  # the check reports whatever was raised
            raised = type(err).__name__
    static = jax.jit(claim_static_if, static_argnums=1)
    flags = [0.7, 0.7, 0.3, 0.3]
    with CompileCounter("claim_static_if") as compiled:
        for flag in flags:
            static(x, flag)
    return Observation(
        raised == "TracerBoolConversionError" and traced.count == 0 and compiled.count == 2,
        f"traced flag: {raised} and {traced.count} compilations; static flag: "
        f"{compiled.count} compilations for the calls {flags}",
    )


@claim(
    "cond-int32-false-first",
    "2.2",
    "note-cond-branches",
    "In the jaxpr of lax.cond the boolean predicate is first converted to int32 by "
    "convert_element_type, and the branches parameter is (false_fun, true_fun).",
)
def _cond_int32_false_first() -> Observation:
    def f(p, x):
        return lax.cond(p > 0.5, jnp.sin, jnp.cos, x)

    jaxpr = jax.make_jaxpr(f)(0.7, jnp.ones(3))
    prims = [e.primitive.name for e in jaxpr.eqns]
    cond = jaxpr.eqns[prims.index("cond")] if "cond" in prims else None
    before = jaxpr.eqns[prims.index("cond") - 1] if cond is not None else None
    converted = (
        before is not None
        and before.primitive.name == "convert_element_type"
        and before.params["new_dtype"] == jnp.int32
        and cond.invars[0] is before.outvars[0]
    )
    branches = (
        [[e.primitive.name for e in br.eqns] for br in cond.params["branches"]] if cond else None
    )
    new_dtype = before.params.get("new_dtype") if before is not None else None
    return Observation(
        converted and branches == [["cos"], ["sin"]],
        f"equations {prims}; predicate converted to {new_dtype}; branches {branches} "
        f"(true_fun=sin, false_fun=cos)",
    )
