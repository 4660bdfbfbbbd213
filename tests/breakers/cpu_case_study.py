"""The claims of the page `cpu-case-study` fail, or report, as the machine behaves."""

import dataclasses

from breakers.shared import xla_options
from chapter2.cases import ynn
from chapter2.claims import Status
from chapter2.claims.pages import cpu_case_study as case_claims


def ynn_closure_result(offset):
    """The closure version returns the float64 reference plus `offset`."""

    def breaker(mp):
        real = ynn.probe

        def probe(*args, **kwargs):
            result = real(*args, **kwargs)
            return dataclasses.replace(result, closure=result.reference + offset)

        mp.setattr(ynn, "probe", probe)

    return breaker


def flag_ignored(mp):
    """A fresh process whose XLA ignores the flag that turns YNN fusion off."""
    real = case_claims.run_probe

    def run_probe(name, *args, env=None, **kwargs):
        return real(name, *args, **kwargs)

    mp.setattr(case_claims, "run_probe", run_probe)


BREAKERS = {
    "cpu-ynn-fusion-closure-constant": xla_options(xla_cpu_experimental_ynn_fusion_type=""),
    "ynn-fusion-flag-off": flag_ignored,
}
FORCED = [
    ("ynn-closure-constant-wrong-result", ynn_closure_result(5.0), Status.AS_SPECIFIED, "True"),
    ("ynn-closure-constant-wrong-result", ynn_closure_result(0.0), Status.DIFFERS_HERE, "False"),
    (
        "ynn-closure-constant-wrong-result",
        xla_options(xla_cpu_experimental_ynn_fusion_type=""),
        Status.CANNOT_CHECK,
        "without a YNN fusion",
    ),
]
