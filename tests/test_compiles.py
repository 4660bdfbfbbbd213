import logging

import jax
import jax.numpy as jnp

from chapter2.compiles import CompileCounter, explained_cache_misses


def test_counts_one_compilation_per_new_signature():
    @jax.jit
    def doubled(v):
        return v * 2

    with CompileCounter("doubled") as cc:
        doubled(jnp.ones(3))
        doubled(jnp.zeros(3))  # same shape and dtype: cache hit
        doubled(jnp.ones(4))  # new shape
        doubled(1.0)  # weakly typed scalar
    assert cc.count == 3
    assert "float32[3]" in cc.signatures[0]
    assert "weak_type=True" in cc.signatures[2]


def test_name_filter_ignores_other_functions():
    other = jax.jit(lambda v: v + 1)
    with CompileCounter("not_this_one") as cc:
        other(jnp.ones(5))
    assert cc.count == 0
    with CompileCounter() as everything:
        other(jnp.ones(6))
    assert everything.count >= 1


def test_jax_handlers_are_restored():
    logger = logging.getLogger("jax")
    before = [(h, h.level) for h in logger.handlers]
    with CompileCounter():
        jax.jit(lambda v: v - 1)(jnp.ones(2))
    assert [(h, h.level) for h in logger.handlers] == before
    assert not jax.config.jax_log_compiles


def test_cache_miss_explanations_name_the_changed_argument():
    @jax.jit
    def product(v, w):
        return v @ w

    with explained_cache_misses() as misses:
        product(jnp.ones((4, 4)), jnp.ones((4, 4)))
        product(jnp.ones((4, 4)), jnp.ones((4, 8)))
    assert any("at w, now f32[4,8] and before f32[4,4]" in m for m in misses)
    assert not jax.config.jax_explain_cache_misses


def test_both_forms_of_jaxs_compile_log_are_read():
    from chapter2.compiles import _COMPILING

    line = (
        "Compiling {} with global shapes and types [ShapedArray(float32[3])]. Argument mapping: x"
    )
    for logged in ("jit(static_if)", "static_if"):
        match = _COMPILING.match(line.format(logged))
        assert (match["jit"] or match["name"]) == "static_if"
        assert match["sig"] == "[ShapedArray(float32[3])]"


def test_the_count_can_be_read_inside_the_block():
    f = jax.jit(lambda v: v + 1)
    with CompileCounter("<lambda>") as cc:
        f(jnp.ones(2))
        inside = cc.count
        f(jnp.ones(3))
    assert (inside, cc.count) == (1, 2)


def test_a_count_and_the_explanations_collect_side_by_side():
    """Nested collections both see the records: the inner one quiets JAX's handlers only."""
    f = jax.jit(lambda x: x * 3)
    five, six = jnp.ones(5), jnp.ones(6)  # made outside: a first jnp.ones of a shape compiles
    with CompileCounter() as counter, explained_cache_misses() as explanations:
        f(five)
        f(six)
    assert counter.count == 2
    assert len(explanations) == 2
