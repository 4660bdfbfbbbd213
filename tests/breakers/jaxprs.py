"""The claims of the page `jaxprs` fail when JAX behaves otherwise."""

import jax
import jax.extend as jex
import jax.numpy as jnp
from jax import lax
from jax.extend.core.primitives import jit_p


def separate_closed_jaxpr(mp):
    """An older JAX: ClosedJaxpr is its own wrapper class around a Jaxpr."""
    mp.setattr(jex.core, "ClosedJaxpr", type("ClosedJaxpr", (), {}))


def literals_without_type(mp):
    """An older jaxpr printer: literals print as 2.0, not 2.0:f32[]."""
    real = jex.core.Literal.pretty_print
    mp.setattr(
        jex.core.Literal,
        "pretty_print",
        lambda self, ctx, print_dtype=True: real(self, ctx, print_dtype=False),
    )


def nested_jit_named_pjit(mp):
    """An older JAX: the nested-jit primitive is called "pjit"."""
    mp.setattr(jit_p, "name", "pjit")


def relu_without_custom_jvp(mp):
    """A library whose relu is a plain maximum, with no custom derivative rule."""
    mp.setattr(jax.nn, "relu", lambda x: jnp.maximum(x, 0.0))


def bool_raises_concretization_error(mp):
    """An older JAX: bool(tracer) raises ConcretizationTypeError."""

    def concretization_error(self, tracer):
        raise jax.errors.ConcretizationTypeError(tracer)

    mp.setattr(jax.core.ShapedArray, "_bool", concretization_error)


def cond_branches_true_first(mp):
    """A JAX whose cond stores its branches as (true_fun, false_fun): same results, other jaxpr."""
    real = lax.cond
    mp.setattr(lax, "cond", lambda pred, t, f, *ops: real(jnp.logical_not(pred), f, t, *ops))


def dead_code_kept_when_lowering(mp):
    """A JAX that lowers every equation, used or not, as keep_unused=True does."""
    real = jax.jit
    mp.setattr(jax, "jit", lambda f, **kw: real(f, **{**kw, "keep_unused": True}))


def weak_types_made_strong(mp):
    """A jit that hands a Python float on as a float32 array: no weak type in its cache key."""
    real = jax.jit

    def jit(f, **kw):
        jitted = real(f, **kw)
        return lambda *args: jitted(*(jnp.float32(a) if type(a) is float else a for a in args))

    mp.setattr(jax, "jit", jit)


def cond_runs_both(mp):
    """A cond that computes both branches and selects, as under vmap, everywhere."""
    mp.setattr(lax, "cond", lambda p, t, f, v: jnp.where(p, t(v), f(v)))


def fori_loop_unrolled(mp):
    """A fori_loop that is a Python loop."""

    def fori_loop(lower, upper, body, value):
        for i in range(lower, upper):
            value = body(i, value)
        return value

    mp.setattr(lax, "fori_loop", fori_loop)


def ends_on_an_inner_jaxpr(mp):
    """An older make_jaxpr: its result holds the equations and constants, and its inputs and
    outputs only on an inner `.jaxpr`, as ClosedJaxpr did."""
    real = jax.make_jaxpr

    class Closed:
        def __init__(self, inner):
            self.jaxpr, self.consts, self.eqns = inner, inner.consts, inner.eqns

    mp.setattr(jax, "make_jaxpr", lambda f, **kw: lambda *a: Closed(real(f, **kw)(*a)))


def sin_traced_as_cos(mp):
    """A jnp.sin that traces to cos: both values of a static flag give the same jaxpr."""
    mp.setattr(jnp, "sin", jnp.cos)


def switch_branches_reversed(mp):
    """A lax.switch that stores its branches in the other order."""
    real = lax.switch
    mp.setattr(lax, "switch", lambda i, branches, *ops: real(i, list(branches)[::-1], *ops))


BREAKERS = {
    "cond-batched-runs-both": cond_runs_both,
    "python-loop-unrolls": fori_loop_unrolled,
    "same-jaxpr-compiles-twice": weak_types_made_strong,
    "literal-printed-with-type": literals_without_type,
    "closed-jaxpr-merged": separate_closed_jaxpr,
    "closure-constvar-literal": literals_without_type,
    "nested-jit-primitive": nested_jit_named_pjit,
    "library-functions-custom-jvp": relu_without_custom_jvp,
    "python-if-on-tracer": bool_raises_concretization_error,
    "cond-int32-false-first": cond_branches_true_first,
    "grad-jaxpr-dead-code": dead_code_kept_when_lowering,
}
PARTS = {
    "closed-jaxpr-merged": {".invars and .outvars on the object": ends_on_an_inner_jaxpr},
    "nested-jit-primitive": {"pjit in the printout": nested_jit_named_pjit},
    "python-if-on-tracer": {"jaxprs for static 0.7 and 0.3 differ": sin_traced_as_cos},
    "cond-int32-false-first": {
        "switch over [cos, sin] has the same branches": switch_branches_reversed,
    },
}
