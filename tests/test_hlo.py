import jax.numpy as jnp
import pytest

from chapter2.hlo import (
    clean_hlo,
    compiled_text,
    count_fusions,
    entry_computation,
    entry_root,
    fused_body,
    fusion_kinds,
    lowered_text,
)


def chain(x, a, b):
    return a * jnp.sin(x) + b


@pytest.fixture(scope="module")
def optimized():
    return compiled_text(chain, jnp.ones((100, 100)), 2.0, 1.0)


def test_lowered_is_stablehlo_and_compiled_is_hlo(optimized):
    lowered = lowered_text(chain, jnp.ones((100, 100)), 2.0, 1.0)
    assert "stablehlo.sine" in lowered and "HloModule" not in lowered
    assert optimized.startswith("HloModule")


def test_clean_hlo_drops_location_tables_and_metadata(optimized):
    assert "FileNames" in optimized and "metadata=" in optimized
    cleaned = clean_hlo(optimized)
    assert "FileNames" not in cleaned and "StackFrames" not in cleaned
    assert "metadata=" not in cleaned and __file__ not in cleaned
    assert "\n\n" not in cleaned
    assert "ENTRY" in cleaned and "sine(" in cleaned


def test_elementwise_chain_is_one_loop_fusion(optimized):
    assert count_fusions(optimized) == 1
    assert fusion_kinds(optimized) == ["kLoop"]


def test_count_fusions_sees_no_fusion_in_a_plain_parameter():
    assert count_fusions(compiled_text(lambda x: x, jnp.ones(3))) == 0


def test_entry_parts(optimized):
    cleaned = clean_hlo(optimized)
    entry = entry_computation(cleaned)
    assert entry.startswith("ENTRY") and entry.rstrip().endswith("}")
    assert entry_root(cleaned).startswith("ROOT ") and " fusion(" in entry_root(cleaned)
    body = fused_body(cleaned)
    assert body.startswith("%fused_computation") and "sine(" in body and "ENTRY" not in body
