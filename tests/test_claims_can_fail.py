"""Every claim's check can fail: make JAX behave as another version would, and it must say so.

Each breaker takes pytest's `monkeypatch`, so whatever it changes is restored after the test.
Asserted claims must then report `holds is False`; observed claims (never asserted) must report
the forced outcome in their evidence text.
"""

import contextlib
import dataclasses
import re

import jax
import jax.extend as jex
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax._src import core, pjit
from jax.experimental.layout import Format, Layout
from jax.sharding import SingleDeviceSharding

from chapter2 import ynn
from chapter2.claims import REGISTRY, evaluate
from chapter2.claims import layout as layout_claims
from chapter2.claims import xla as xla_claims

REAL_DEVICE_PUT = jax.device_put


def xla_options(**options):
    """A breaker: every compilation runs with these XLA options (as if XLA had changed)."""

    def breaker(mp):
        real = jax.stages.Lowered.compile

        def compile_(self, compiler_options=None, **kwargs):
            return real(self, {**(compiler_options or {}), **options}, **kwargs)

        mp.setattr(jax.stages.Lowered, "compile", compile_)

    return breaker


# --- 2.1 profiling -------------------------------------------------------------------------


def raw_new_style_keys(mp):
    """A JAX without typed keys: key(0) is a raw uint32[2], like PRNGKey(0)."""
    mp.setattr(jax.random, "key", jax.random.PRNGKey)


def no_perfetto_trace(mp):
    """A profiler that ignores create_perfetto_trace=True."""
    real = jax.profiler.trace
    mp.setattr(
        jax.profiler,
        "trace",
        lambda log_dir, create_perfetto_trace=False, **kw: real(log_dir, **kw),
    )


def annotations_not_recorded(mp):
    """A profiler that records no TraceAnnotation spans."""
    mp.setattr(jax.profiler, "TraceAnnotation", lambda name, **kw: contextlib.nullcontext())


def locations_printed_by_default(mp):
    """A JAX whose StableHLO text carries source locations (and named scopes) by default."""
    real = jax.stages.Lowered.as_text
    mp.setattr(
        jax.stages.Lowered,
        "as_text",
        lambda self, dialect=None, *, debug_info=True: real(self, dialect, debug_info=debug_info),
    )


# --- 2.2 jaxprs ----------------------------------------------------------------------------


def separate_closed_jaxpr(mp):
    """An older JAX: ClosedJaxpr is its own wrapper class around a Jaxpr."""
    mp.setattr(jex.core, "ClosedJaxpr", type("ClosedJaxpr", (), {}))


def literals_without_type(mp):
    """An older jaxpr printer: literals print as 2.0, not 2.0:f32[]."""
    real = core.Literal.pretty_print
    mp.setattr(
        core.Literal,
        "pretty_print",
        lambda self, ctx, print_dtype=True: real(self, ctx, print_dtype=False),
    )


def nested_jit_named_pjit(mp):
    """An older JAX: the nested-jit primitive is called "pjit"."""
    mp.setattr(pjit.jit_p, "name", "pjit")


def bool_raises_concretization_error(mp):
    """An older JAX: bool(tracer) raises ConcretizationTypeError."""
    mp.setattr(core.ShapedArray, "_bool", core.concretization_function_error(float))


def cond_branches_true_first(mp):
    """A JAX whose cond stores its branches as (true_fun, false_fun): same results, other jaxpr."""
    real = lax.cond
    mp.setattr(lax, "cond", lambda pred, t, f, *ops: real(jnp.logical_not(pred), f, t, *ops))


# --- 2.3 XLA -------------------------------------------------------------------------------


def mhlo_lowering(mp):
    """A JAX from before StableHLO: lower().as_text() prints mhlo.* ops."""
    real = jax.stages.Lowered.as_text
    mp.setattr(
        jax.stages.Lowered,
        "as_text",
        lambda self, *a, **kw: real(self, *a, **kw).replace("stablehlo.", "mhlo."),
    )


def cost_analysis_list(mp):
    """An older JAX: cost_analysis() returns a list holding one dict."""
    real = jax.stages.Compiled.cost_analysis
    mp.setattr(jax.stages.Compiled, "cost_analysis", lambda self: [real(self)])


def unsafe_cancellation(mp):
    """An XLA that rewrites (x+y)-x to y: no add, no subtract left.

    XLA simplifies before any pass a compiler option can turn off, so this edits the HLO text
    the check reads (`clean_hlo` in the claims module) instead.
    """
    real = xla_claims.clean_hlo
    mp.setattr(
        xla_claims, "clean_hlo", lambda text: re.sub(r".* (add|subtract)\(.*\n?", "", real(text))
    )


def dump_without_fusion(mp):
    """The fresh process's XLA runs without its fusion pass (one fusion per op in the dump)."""
    real = xla_claims.run_example

    def run_example(name, *args, env, **kwargs):
        flags = f"{env['XLA_FLAGS']} --xla_disable_hlo_passes=fusion"
        return real(name, *args, env={**env, "XLA_FLAGS": flags}, **kwargs)

    mp.setattr(xla_claims, "run_example", run_example)


# --- 2.4 memory layout ---------------------------------------------------------------------


def column_major(x):
    dims = tuple(reversed(range(np.ndim(x))))
    return REAL_DEVICE_PUT(
        x, Format(Layout(major_to_minor=dims), SingleDeviceSharding(jax.devices()[0]))
    )


def column_major_default(mp):
    """A JAX whose arrays are column-major by default."""
    real = jnp.ones
    mp.setattr(jnp, "ones", lambda *a, **kw: column_major(real(*a, **kw)))


def keeps_fortran_order(mp):
    """A device_put that keeps a Fortran-order NumPy array column-major."""

    def device_put(x, *args, **kwargs):
        if isinstance(x, np.ndarray) and x.flags.f_contiguous and not x.flags.c_contiguous:
            return column_major(x)
        return REAL_DEVICE_PUT(x, *args, **kwargs)

    mp.setattr(jax, "device_put", device_put)


def device_put_always_copies(mp):
    """A backend that never aliases host memory (as a GPU)."""
    mp.setattr(jax, "device_put", lambda x, *a, **kw: REAL_DEVICE_PUT(np.array(x), *a, **kw))


def device_put_honours_may_alias(mp):
    """A device_put that copies when asked for may_alias=False."""

    def device_put(x, *args, may_alias=None, **kwargs):
        return REAL_DEVICE_PUT(np.array(x) if may_alias is False else x, *args, **kwargs)

    mp.setattr(jax, "device_put", device_put)


def every_buffer_shared(mp):
    """A machine on which every buffer is shared, whatever its alignment (helper patch)."""
    mp.setattr(layout_claims, "shares_buffer", lambda x, a: True)


def ynn_closure_result(offset):
    """The YNN case study's closure version returns the float64 reference plus `offset`."""

    def breaker(mp):
        real = ynn.probe

        def probe(*args, **kwargs):
            result = real(*args, **kwargs)
            return dataclasses.replace(result, closure=result.reference + offset)

        mp.setattr(ynn, "probe", probe)

    return breaker


# Asserted claims: after the breaker, the check must report holds is False.
BROKEN = {
    "typed-prng-keys": raw_new_style_keys,
    "trace-files": no_perfetto_trace,
    "trace-annotation-in-trace": annotations_not_recorded,
    "named-scope-debug-info": locations_printed_by_default,
    "closed-jaxpr-merged": separate_closed_jaxpr,
    "literal-printed-with-type": literals_without_type,
    "nested-jit-primitive": nested_jit_named_pjit,
    "python-if-on-tracer": bool_raises_concretization_error,
    "cond-int32-false-first": cond_branches_true_first,
    "stablehlo-then-hlo": mhlo_lowering,
    "cost-analysis-dict": cost_analysis_list,
    "no-value-changing-simplification": unsafe_cancellation,
    "xla-dump-before-after": dump_without_fusion,
    "cpu-ynn-fusion-closure-constant": xla_options(xla_cpu_experimental_ynn_fusion_type=""),
    "row-major-default": column_major_default,
    "transpose-materialized": xla_options(xla_disable_hlo_passes="fusion"),
    "transpose-absorbed": xla_options(xla_disable_hlo_passes="transpose-folding"),
    "fortran-input-row-major": keeps_fortran_order,
}

# Observed claims: after forcing an outcome, the evidence text must report that outcome.
FORCED = [
    ("ynn-closure-constant-wrong-result", ynn_closure_result(5.0), "The bug is present"),
    ("ynn-closure-constant-wrong-result", ynn_closure_result(0.0), "The bug did not show up"),
    ("device-put-zero-copy", device_put_always_copies, "aligned C False, C +16 bytes False"),
    ("device-put-zero-copy", every_buffer_shared, "aligned C True, C +16 bytes True"),
    (
        "device-put-may-alias-false",
        device_put_honours_may_alias,
        "'device_put(may_alias=False)': 0.0",
    ),
]


@pytest.mark.parametrize("claim_id", sorted(BROKEN))
def test_asserted_claim_fails_when_jax_behaves_otherwise(claim_id, monkeypatch):
    assert REGISTRY[claim_id].kind == "asserted"
    BROKEN[claim_id](monkeypatch)
    assert evaluate(claim_id).holds is False


@pytest.mark.parametrize(("claim_id", "force", "reported"), FORCED)
def test_observed_claim_reports_the_outcome(claim_id, force, reported, monkeypatch):
    assert REGISTRY[claim_id].kind == "observed"
    force(monkeypatch)
    assert reported in evaluate(claim_id).observation.observed


def test_every_claim_has_a_negative_test():
    assert set(BROKEN) | {claim_id for claim_id, _, _ in FORCED} == set(REGISTRY)
