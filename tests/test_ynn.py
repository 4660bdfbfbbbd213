"""The case study of the page xla-compilation: probe, HLO readers, wording of both outcomes."""

import math

import pytest

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


def test_verdict_wrong_result_reproduced():
    outcome = ynn.verdict(-3.5, -981.4677)
    assert outcome.wrong
    assert outcome.label == "reproduced"
    assert outcome.error == pytest.approx(977.9677)
    assert "The bug is present on this machine." in outcome.sentence
    assert "-3.5000" in outcome.sentence
    assert "-981.4677" in outcome.sentence
    assert "did not show up" not in outcome.sentence


def test_verdict_wrong_result_not_reproduced():
    outcome = ynn.verdict(-981.4674, -981.4677)
    assert not outcome.wrong
    assert outcome.label == "not reproduced"
    assert "The bug did not show up on this machine's CPU" in outcome.sentence
    assert "inside the tolerance of 0.01" in outcome.sentence
    assert "is present" not in outcome.sentence


def test_verdict_tolerance_edge_and_nan():
    assert not ynn.verdict(1.0 + ynn.TOLERANCE / 2, 1.0).wrong
    assert ynn.verdict(1.0 + 2 * ynn.TOLERANCE, 1.0).wrong
    assert ynn.verdict(math.nan, 1.0).wrong  # a NaN is a wrong result, not a pass
    assert not ynn.verdict(1.5, 1.0, tolerance=1.0).wrong


@pytest.mark.parametrize(
    ("default_wrong", "off_wrong", "expected"),
    [
        (True, False, "makes the very same closure function correct"),
        (False, False, "Both runs are correct on this machine"),
        (True, True, "Even with YNN fusion turned off"),
        (False, True, "Even with YNN fusion turned off"),
    ],
)
def test_bisect_conclusion_covers_every_outcome(default_wrong, off_wrong, expected):
    def outcome(wrong):
        return ynn.verdict(0.0 if wrong else 1.0, 1.0)

    assert expected in ynn.bisect_conclusion(outcome(default_wrong), outcome(off_wrong))


def test_hlo_readers_on_a_known_text():
    body = ynn.ynn_fusion_body(HLO)
    assert body == CLOSURE_BODY
    assert dot_operands(body) == ("constant", "parameter")
    assert ynn.ynn_fusion_body(NO_YNN) is None


def test_tolerance_grows_with_n():
    assert ynn.tolerance() == ynn.tolerance(32) == ynn.TOLERANCE
    assert ynn.tolerance(2 * ynn.N) == 4 * ynn.TOLERANCE


def test_probe_on_this_machine():
    result = ynn.probe()  # n = 128: one __ynn_fusion with the constant embedded
    w, x = ynn.operands()
    assert result.reference == pytest.approx(ynn.reference(w, x))
    assert abs(result.argument - result.reference) <= ynn.TOLERANCE  # never affected
    assert result.uses_ynn
    assert result.fusion_kinds == ("kCustom",)
    assert result.dot_operands == ("constant", "parameter")
    assert set(result.as_dict()) >= {"closure", "argument", "reference", "uses_ynn"}


def test_probe_small_n_keeps_the_constant_out_of_the_fusion():
    result = ynn.probe(n=32, seed=1)  # below 64: the dot alone goes to YNN, the sum is a kLoop
    assert result.uses_ynn
    assert result.fusion_kinds[0] == "kCustom"
    assert "kLoop" in result.fusion_kinds
    assert result.dot_operands == ("parameter", "parameter")
    assert abs(result.closure - result.reference) <= ynn.TOLERANCE
