"""chapter2.jaxprs: the recursive walk over a jaxpr and its sub-jaxprs."""

from collections import Counter

import jax
import jax.numpy as jnp
from jax import lax

from chapter2.jaxprs import count_primitives, walk_eqns


def _walk(f, *args):
    return [(depth, eqn.primitive.name) for depth, eqn in walk_eqns(jax.make_jaxpr(f)(*args))]


def test_flat_jaxpr_is_walked_in_order_at_depth_zero():
    def f(x, y):
        return jnp.sin(x) + jnp.cos(y) * 2.0

    assert _walk(f, jnp.ones(3), jnp.ones(3)) == [(0, "sin"), (0, "cos"), (0, "mul"), (0, "add")]


def test_nested_jit_is_entered_depth_first():
    @jax.jit
    def deepest(x):
        return jnp.exp(x)

    @jax.jit
    def middle(x):
        return deepest(x) - 1.0

    def f(x):
        return middle(x).sum()

    assert _walk(f, jnp.ones(3)) == [
        (0, "jit"),
        (1, "jit"),
        (2, "exp"),
        (1, "sub"),
        (0, "reduce_sum"),
    ]


def test_both_cond_branches_are_walked():
    def f(p, x):
        return lax.cond(p, jnp.sin, lambda v: jnp.cos(v) * 3.0, x)

    walked = _walk(f, True, jnp.ones(3))
    assert (0, "cond") in walked
    assert {(1, "sin"), (1, "cos"), (1, "mul")} <= set(walked)
    assert all(depth <= 1 for depth, _ in walked)


def test_scan_and_while_bodies_are_walked():
    def f(x):
        carry, _ = lax.scan(lambda c, v: (c + jnp.tanh(v), None), 0.0, x)
        return lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, carry)

    counts = count_primitives(jax.make_jaxpr(f)(jnp.ones(4)))
    assert counts["scan"] == 1
    assert counts["while"] == 1
    assert counts["tanh"] == 1  # inside the scan body
    assert counts["lt"] == 1  # inside the while condition


def test_count_primitives_counts_every_level():
    @jax.jit
    def inner(x):
        return jax.nn.relu(x) * 2.0

    def outer(x):
        return inner(x).sum() + jnp.logaddexp(x, 1.0).sum()

    counts = count_primitives(jax.make_jaxpr(outer)(jnp.ones(3)))
    assert isinstance(counts, Counter)
    assert counts["jit"] == 2  # inner, and the jit that relu wraps inside its custom_jvp
    assert counts["custom_jvp_call"] == 2  # relu and logaddexp
    assert counts["max"] == 2  # one in relu, one in logaddexp
    assert counts["reduce_sum"] == 2
    assert counts["pjit"] == 0
    top_level = Counter(e.primitive.name for e in jax.make_jaxpr(outer)(jnp.ones(3)).eqns)
    assert counts.total() > top_level.total()


def test_closure_constants_do_not_add_equations():
    w = jnp.arange(9.0).reshape(3, 3)
    closed = jax.make_jaxpr(lambda v: jnp.dot(w, v) + jnp.pi)(jnp.ones(3))
    assert len(closed.consts) == 1
    assert count_primitives(closed) == Counter({"dot_general": 1, "add": 1})
