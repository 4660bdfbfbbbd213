"""Reference solutions of the four exercises (checked by `chapter2.exercises`)."""

from collections import Counter

import jax
import jax.extend as jex
import jax.numpy as jnp
from jax import lax

from chapter2.hlo import count_fusions


def primitive_histogram(f, *args) -> Counter:
    """Exercise 1: how often each primitive occurs in the jaxpr of f, sub-jaxprs included."""

    def walk(jaxpr, counts):
        for eqn in jaxpr.eqns:
            counts[eqn.primitive.name] += 1
            for sub in jex.core.jaxprs_in_params(eqn.params):
                walk(sub, counts)
        return counts

    return walk(jax.make_jaxpr(f)(*args), Counter())


def target(x, flag):
    """Exercise 1's function: a cond, a jit and a relu."""
    y = lax.cond(flag, jnp.sin, jnp.cos, x)
    z = jax.jit(lambda t: jax.nn.relu(jnp.sin(t)))(y)
    return jnp.sum(z)


# Exercise 2: f32[3] with a weak scalar (1), the same again (hit), a strong float32 scalar (2),
# mode "b" (3), a float64 NumPy array canonicalized to float32 (hit), a weak int scalar (4).
predicted_compiles = 4


def fusion_report(f, *args) -> tuple[int, float]:
    """Exercise 3: the number of fusions and the bytes accessed of the optimized program."""
    compiled = jax.jit(f).lower(*args).compile()
    return count_fusions(compiled.as_text()), compiled.cost_analysis()["bytes accessed"]


def h2(t):
    """Exercise 3: h1 with an optimization barrier around t * 3.0 + 1.0."""
    return jnp.tanh(lax.optimization_barrier(t * 3.0 + 1.0)) ** 2


def safe_pairwise_distance(X, Y):
    """Exercise 4: distances whose gradient is 0 where a distance is 0 (double where)."""
    squared = jnp.sum((X[:, None, :] - Y[None, :, :]) ** 2, axis=-1)
    zero = squared == 0.0
    return jnp.where(zero, 0.0, jnp.sqrt(jnp.where(zero, 1.0, squared)))


# Exercise 5: the f-string (3) and min() (4) need the loss's value on the host, so they wait;
# append (2) keeps the array, and step (1) and jnp.sum (5) only dispatch. The last batch, at
# index 8, has 100 rows: another shape, another compilation.
waits = {3, 4}
recompiles_at = 8
