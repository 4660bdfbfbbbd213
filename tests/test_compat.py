"""The accessors for APIs that moved: today's JAX, and the shapes older releases had."""

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import pytest

from chapter2 import compat
from chapter2.claims import CannotCheck


def test_sub_jaxprs_and_constvars_on_this_jax():
    w = jnp.arange(3.0)
    inner = jax.jit(lambda u: u * 2.0)
    jaxpr = jax.make_jaxpr(lambda v: inner(v) + w)(jnp.ones(3))
    (sub,) = compat.jaxprs_in_params(jaxpr.eqns[0].params)
    assert [e.primitive.name for e in sub.eqns] == ["mul"]
    assert [v.aval.str_short(short_dtypes=True) for v in compat.constvars(jaxpr)] == ["f32[3]"]


def test_constvars_of_a_closed_jaxpr_that_wraps_one():
    """Older JAX: make_jaxpr returned a ClosedJaxpr whose inner .jaxpr held the constvars."""
    wrapped = SimpleNamespace(jaxpr=SimpleNamespace(constvars=["a"]))
    assert compat.constvars(wrapped) == ["a"]


def test_cost_analysis_as_a_dict_also_from_a_list():
    compiled = jax.jit(jnp.sin).lower(jnp.ones(4)).compile()
    assert compat.cost_analysis(compiled)["transcendentals"] == 4
    older = SimpleNamespace(cost_analysis=lambda: [{"flops": 8.0}])
    assert compat.cost_analysis(older) == {"flops": 8.0}


def test_layouts_wherever_they_are_kept():
    assert compat.major_to_minor(jnp.ones((2, 3))) == (0, 1)
    local = SimpleNamespace(major_to_minor=(1, 0))
    assert compat.major_to_minor(SimpleNamespace(device_local_layout=local)) == (1, 0)
    with pytest.raises(AttributeError, match="no layout"):
        compat.major_to_minor(SimpleNamespace(layout=None))


def test_auto_format_lets_the_compiler_choose():
    auto = jax.jit(lambda a: a * 2, in_shardings=compat.auto_format())
    compiled = auto.lower(jax.ShapeDtypeStruct((4, 4), jnp.float32)).compile()
    (chosen,), _ = compat.input_output_formats(compiled)
    assert compat.major_to_minor(chosen) == (0, 1)


def test_options_a_release_cannot_take_cannot_check():
    lowered = jax.jit(jnp.sin).lower(jnp.ones(4))
    assert compat.compile_with(lowered, {}).as_text().startswith("HloModule")

    class Older:
        def compile(self, options):
            msg = "Protocol Buffer reflection usage error"
            raise RuntimeError(msg)

    with pytest.raises(CannotCheck, match="cannot pass the XLA options"):
        compat.compile_with(Older(), {"xla_disable_hlo_passes": "fusion"})
