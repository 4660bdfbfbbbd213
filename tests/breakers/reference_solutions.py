"""The claims of the page `reference-solutions` fail when JAX behaves otherwise."""

import jax
import jax.numpy as jnp
from jax.extend.core.primitives import jit_p

from breakers.async_dispatch import compiles_on_every_call
from breakers.jaxprs import relu_without_custom_jvp
from breakers.shared import xla_options


def float64_not_canonicalized(mp):
    """A JAX that keeps float64 NumPy input apart from float32 (as with x64 on)."""
    real = jax.jit

    def jit(fun=None, **kwargs):
        def wrap(f):
            jitted = real(f, **kwargs)

            def call(x, *args, **kw):
                keep_apart = getattr(x, "dtype", None) == "float64"
                return jitted(jnp.asarray(x, jnp.bfloat16) if keep_apart else x, *args, **kw)

            return call

        return wrap(fun) if fun is not None else wrap

    mp.setattr(jax, "jit", jit)


def nested_jit_named_pjit(mp):
    """An older JAX: the nested-jit primitive is called "pjit"."""
    mp.setattr(jit_p, "name", "pjit")


def relu_plain_traced_anew(mp):
    """A relu with no custom derivative rule, and no trace of `target` kept from before it."""
    relu_without_custom_jvp(mp)
    jax.clear_caches()
    return jax.clear_caches


BREAKERS = {
    "exercise-target-histogram": nested_jit_named_pjit,
    "exercise-compile-sequence": float64_not_canonicalized,
    "exercise-barrier-traffic": xla_options(xla_disable_hlo_passes="fusion"),
    "exercise-loop-waits": compiles_on_every_call,
}
PARTS = {
    "exercise-target-histogram": {
        "sin in the true branch, sin in the jit, jit inside relu": relu_plain_traced_anew,
    },
    "exercise-compile-sequence": {
        "the compilations' argument types": float64_not_canonicalized,
    },
}
