"""The HLO readers on frozen text: what they read must not depend on what XLA does today."""

import jax.numpy as jnp
import pytest

from chapter2.hlo import (
    called_computation,
    clean_hlo,
    compiled_text,
    count_fusions,
    dot_operands,
    entry_computation,
    entry_layout,
    entry_root,
    fused_body,
    fusion_kinds,
    has_op,
    input_output_alias,
    instruction_names,
    kernels,
    lowered_text,
    opcodes,
    reductions,
    root_opcode,
    source_lines,
    stablehlo_ops,
)

OPTIMIZED = """\
HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[4,4]{1,0}, f32[])->f32[4,4]{1,0}}, allow_spmd_sharding_propagation_to_output={true}

FileNames
1 "<string>"
2 "/home/someone/chapter2/hlo.py"

FunctionNames
1 "<module>"
2 "f"

FileLocations
1 {file_name_id=2 function_name_id=1 line=25 end_line=25 column=11 end_column=48}
2 {file_name_id=1 function_name_id=2 line=5 end_line=5 column=6 end_column=16}
3 {file_name_id=1 function_name_id=2 line=6 end_line=6 column=20 end_column=23}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}
3 {file_location_id=3 parent_frame_id=1}


%fused_computation (param_0.1: f32[], param_1.3: f32[4,4]) -> f32[4,4] {
  %param_1.3 = f32[4,4]{1,0} parameter(1)
  %sin.0 = f32[4,4]{1,0} sine(%param_1.3), metadata={op_name="jit(f)/sin" stack_frame_id=2}
  %param_0.1 = f32[] parameter(0)
  %mul.1 = f32[4,4]{1,0} broadcast(%param_0.1), dimensions={}
  ROOT %mul.0 = f32[4,4]{1,0} multiply(%mul.1, %sin.0), metadata={op_name="jit(f)/mul" stack_frame_id=3}
}

ENTRY %main.1 (x.1: f32[4,4], a.1: f32[]) -> f32[4,4] {
  %x.1 = f32[4,4]{1,0} parameter(0)
  %a.1 = f32[] parameter(1)
  ROOT %multiply_sine_fusion = f32[4,4]{1,0} fusion(%a.1, %x.1), kind=kLoop, calls=%fused_computation
}
"""

DONATED = """\
HloModule jit__lambda, is_scheduled=true, input_output_alias={ {}: (0, {}, may-alias) }, entry_computation_layout={(f32[8]{0})->f32[8]{0}}

ENTRY %main.1 (t.1: f32[8]) -> f32[8] {
  ROOT %t.1 = f32[8]{0} parameter(0)
}
"""

DOT = """\
%fused_computation (param_0.3: f32[8,8]) -> f32[] {
  %constant.1 = f32[8,8]{1,0} constant({...})
  %param_0.3 = f32[8,8]{1,0} parameter(0)
  %dot.0 = f32[8,8]{1,0} dot(%constant.1, %param_0.3), lhs_contracting_dims={1}
}"""

STABLEHLO = """\
module @jit_f {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<f32>) -> (tensor<4xf32>) {
    %0 = stablehlo.sine %arg0 : tensor<4xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.multiply %1, %0 : tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}"""


def test_clean_hlo_drops_location_tables_metadata_and_blank_lines():
    cleaned = clean_hlo(OPTIMIZED)
    for gone in ("FileNames", "StackFrames", "metadata=", "/home/someone", "\n\n"):
        assert gone not in cleaned
    assert cleaned.startswith("HloModule")
    assert "ENTRY %main.1" in cleaned
    assert "sine(" in cleaned


def test_fusions_and_their_kinds():
    assert count_fusions(OPTIMIZED) == 1
    assert fusion_kinds(OPTIMIZED) == ["kLoop"]
    assert count_fusions(DONATED) == 0
    assert fusion_kinds(DONATED) == []


def test_opcodes_in_order():
    body = fused_body(clean_hlo(OPTIMIZED))
    assert opcodes(body) == ["parameter", "sine", "parameter", "broadcast", "multiply"]
    assert has_op(body, "sine")
    assert not has_op(body, "transpose")
    assert not has_op('%x = f32[2]{0} negate(%y), metadata={op_name="transpose"}', "transpose")


def test_entry_parts():
    cleaned = clean_hlo(OPTIMIZED)
    entry = entry_computation(cleaned)
    assert entry.startswith("ENTRY")
    assert entry.endswith("}")
    assert "fused_computation (" not in entry
    assert entry_root(cleaned).startswith("ROOT %multiply_sine_fusion")
    assert root_opcode(cleaned) == "fusion"
    assert root_opcode(DONATED) == "parameter"


def test_fused_body_by_name():
    body = fused_body(OPTIMIZED, "fused_computation")
    assert body.startswith("%fused_computation (")
    assert body.endswith("}")
    assert "ENTRY" not in body
    with pytest.raises(LookupError, match="no computation called %no_such_computation"):
        fused_body(OPTIMIZED, "no_such_computation")
    with pytest.raises(LookupError, match="has no fusion"):
        fused_body(DONATED)


def test_fused_body_by_default_is_what_the_entrys_first_fusion_calls():
    """A GPU names the computation of a lone transpose `wrapped_transpose_computation`."""
    gpu = OPTIMIZED.replace("fused_computation", "wrapped_transpose_computation")
    assert fused_body(gpu).startswith("%wrapped_transpose_computation (")
    assert fused_body(gpu) == fused_body(OPTIMIZED).replace(
        "fused_computation", "wrapped_transpose_computation"
    )


def test_instruction_names_and_called_computations():
    assert instruction_names(fused_body(OPTIMIZED)) == {
        "param_1.3",
        "sin.0",
        "param_0.1",
        "mul.1",
        "mul.0",
    }
    root = entry_root(OPTIMIZED)
    assert called_computation(root) == "fused_computation"


def test_dot_operands_name_what_feeds_the_dot():
    assert dot_operands(DOT) == ("constant", "parameter")


def test_entry_layout_and_aliasing_of_the_header():
    assert entry_layout(OPTIMIZED) == "(f32[4,4]{1,0}, f32[])->f32[4,4]{1,0}"
    assert entry_layout(DONATED) == "(f32[8]{0})->f32[8]{0}"
    with pytest.raises(ValueError, match="unbalanced braces"):
        entry_layout("entry_computation_layout={(f32[2]{0}")
    assert input_output_alias(DONATED) == "{}: (0, {}, may-alias)"
    assert input_output_alias(OPTIMIZED) is None


def test_source_lines_follow_the_stack_frames():
    assert source_lines(OPTIMIZED) == {
        "sin.0": ("jit(f)/sin", "<string>", 5),
        "mul.0": ("jit(f)/mul", "<string>", 6),
    }


def test_stablehlo_ops():
    assert stablehlo_ops(STABLEHLO) == ["sine", "broadcast_in_dim", "multiply"]


def test_text_helpers_pass_jit_options_through():
    x = jnp.ones(8)

    def double(t):
        return t * 2

    def ignores_u(t, u):
        return t * 2

    assert input_output_alias(compiled_text(double, x)) is None
    assert input_output_alias(compiled_text(double, x, donate_argnums=0)) is not None
    assert "%arg1" not in lowered_text(ignores_u, x, x)  # an unused input is dropped ...
    assert "%arg1" in lowered_text(ignores_u, x, x, keep_unused=True)  # ... unless kept


def test_a_format_the_helpers_did_not_expect_is_named_not_crashed_on():
    """A check reading another backend's HLO says what it could not find."""
    body = fused_body(OPTIMIZED)
    with pytest.raises(LookupError, match="no ENTRY computation"):
        entry_computation(body)
    with pytest.raises(LookupError, match="calls no computation"):
        called_computation("%x = f32[2]{0} negate(%y)")
    with pytest.raises(LookupError, match="no dot of two operands"):
        dot_operands(OPTIMIZED)
    with pytest.raises(LookupError, match="no entry_computation_layout"):
        entry_layout(body)


def test_reductions_tell_a_max_from_a_sum():
    x = jnp.ones((8, 128))
    maxed = reductions(compiled_text(lambda t: t.max(axis=1), x))
    summed = reductions(compiled_text(lambda t: t.sum(axis=1), x))
    assert {op for ops in maxed.values() for op in ops} == {"maximum"}
    assert {op for ops in summed.values() for op in ops} == {"add"}
    assert set(maxed) == set(kernels(compiled_text(lambda t: t.max(axis=1), x)))
    doubled = compiled_text(lambda t: t * 2, x)
    assert reductions(doubled) == {name: [] for name in kernels(doubled)}
