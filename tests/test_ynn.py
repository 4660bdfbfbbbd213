"""The case study of the page cpu-case-study: the reported program and the HLO readers."""

import jax.numpy as jnp

from chapter2.cases import ynn
from chapter2.hlo import dot_operands

CLOSURE_BODY = """\
%fused_computation (param_0.3: f32[128,128]) -> f32[] {
  %constant.1 = f32[128,128]{1,0} constant({...})
  %param_0.3 = f32[128,128]{1,0} parameter(0)
  %dot_general.0 = f32[128,128]{1,0} dot(%constant.1, %param_0.3), lhs_contracting_dims={1}
  %constant.0 = f32[] constant(0)
  ROOT %reduce_sum.0 = f32[] reduce(%dot_general.0, %constant.0), dimensions={0,1}
}"""

HLO = f"""\
HloModule jit__lambda, is_scheduled=true
{CLOSURE_BODY}
ENTRY %main.2 (x.1: f32[128,128]) -> f32[] {{
  %x.1 = f32[128,128]{{1,0}} parameter(0)
  ROOT %ynn_fusion = f32[] fusion(%x.1), kind=kCustom, calls=%fused_computation, \
backend_config={{"fusion_config":{{"kind":"__ynn_fusion"}}}}
}}
"""

NO_YNN = """\
HloModule jit__lambda, is_scheduled=true
ENTRY %main.2 (x.1: f32[128,128]) -> f32[] {
  %x.1 = f32[128,128]{1,0} parameter(0)
  %constant.3 = f32[128,128]{1,0} constant({...})
  ROOT %dot.1 = f32[128,128]{1,0} dot(%constant.3, %x.1), lhs_contracting_dims={1}
}
"""


def test_hlo_readers_on_a_known_text():
    assert dot_operands(CLOSURE_BODY) == ("constant", "parameter")
    assert ynn.uses_ynn(HLO)
    assert not ynn.uses_ynn(NO_YNN)


def test_the_reported_input_ends_in_an_exact_square():
    x = ynn.reported_input()
    assert x.shape == (ynn.REPORTED_ROWS, 3)
    assert float(ynn.squared_norms(x, jnp.eye(3))[-1]) == (ynn.REPORTED_ROWS - 1) ** 2


def test_rows_that_differ_names_each_row():
    assert ynn.rows_that_differ(jnp.array([1.0, 2.0, 3.0]), jnp.array([1.0, 0.0, 3.0])) == [1]
    assert ynn.rows_that_differ(jnp.ones(4), jnp.ones(4)) == []


def test_jit_against_eager_on_this_machine():
    found = ynn.jit_against_eager(rows=4097)
    assert found["rows where jit and eager differ"] == 0
    assert found["first row that differs"] is None
    assert found["last row, eager"] == found["last row, jit"] == 4096**2
    assert found["jit's program is a __ynn_fusion"]
    assert found["__ynn_fusion with YNNPACK fusion off"] is False
