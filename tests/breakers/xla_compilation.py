"""The claims of the page `xla-compilation` fail when JAX or XLA behaves otherwise."""

import jax
import jax.numpy as jnp

from breakers.shared import xla_options
from chapter2.claims.pages import xla_compilation as xla_claims
from chapter2.hlo import clean_hlo


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


def zero_added_as_written(mp):
    """A jitted function whose x + 0.0 is computed as IEEE says: -0.0 becomes +0.0."""
    real = jax.jit

    class AddsZero:
        def __init__(self, f, **kwargs):
            self.jitted = real(f, **kwargs)

        def lower(self, *args):
            return self.jitted.lower(*args)

        def __call__(self, *args):
            return self.jitted(*args) + 0.0

    mp.setattr(jax, "jit", AddsZero)


def dump_without_fusion(mp):
    """The fresh process's XLA runs without its fusion pass (one fusion per op in the dump)."""
    real = xla_claims.run_probe

    def run_probe(name, *args, **kwargs):
        return real(name, *args, env={"XLA_FLAGS": "--xla_disable_hlo_passes=fusion"}, **kwargs)

    mp.setattr(xla_claims, "run_probe", run_probe)


def cost_analysis_by_running(mp):
    """A JAX whose cost analysis runs the program and measures it: an array of 40 GB that
    was never allocated cannot be run, so it reports nothing."""
    mp.setattr(jax.stages.Compiled, "cost_analysis", lambda self: {})


def cost_analysis_that_sees_library_calls(mp):
    """A cost analysis that counts a library routine's work (here, a Cholesky's n³/3)."""
    real = jax.stages.Compiled.cost_analysis

    def seeing(self):
        costs = dict(real(self))
        if "custom_call_target" in self.as_text():
            costs["flops"] += 500**3 / 3
        return costs

    mp.setattr(jax.stages.Compiled, "cost_analysis", seeing)


def cost_analysis_that_counts_trips(mp):
    """A cost analysis that multiplies a loop's body by its 100 trips."""
    real = jax.stages.Compiled.cost_analysis

    def counting(self):
        costs = dict(real(self))
        if "while(" in self.as_text():
            costs["flops"] *= 100
        return costs

    mp.setattr(jax.stages.Compiled, "cost_analysis", counting)


def compiled_text_without_metadata(mp):
    """A compiler that keeps no source locations in the optimized HLO."""
    real = jax.stages.Compiled.as_text
    mp.setattr(jax.stages.Compiled, "as_text", lambda self: clean_hlo(real(self)))


def sine_behind_a_barrier(mp):
    """A jnp.sin whose result XLA may not fuse with what reads it (JAX's caches cleared, so
    no trace made with the real one is used)."""
    real = jnp.sin
    mp.setattr(jnp, "sin", lambda x: jax.lax.optimization_barrier(real(x)))
    jax.clear_caches()
    return jax.clear_caches


def sine_slightly_off(mp):
    """A jnp.sin that is off by one part in ten thousand: its folded constant is not sin 2."""
    real = jnp.sin
    mp.setattr(jnp, "sin", lambda x: real(x) * 1.0001)


BREAKERS = {
    "cost-analysis-counts-loop-body-once": cost_analysis_that_counts_trips,
    "cost-analysis-blind-to-custom-calls": cost_analysis_that_sees_library_calls,
    "stablehlo-then-hlo": mhlo_lowering,
    "elementwise-chain-one-fusion": xla_options(xla_disable_hlo_passes="fusion"),
    "matmul-sum-ynn-fusion": xla_options(xla_cpu_experimental_ynn_fusion_type=""),
    "cost-analysis-dict": cost_analysis_list,
    "cost-analysis-is-an-estimate": cost_analysis_by_running,
    "constant-folding": xla_options(xla_disable_hlo_passes="constant_folding"),
    "simplifier-keeps-negative-zero": zero_added_as_written,
    "cancellation-rewrite-integers-only": xla_options(xla_disable_hlo_passes="algsimp"),
    "hlo-metadata-source-lines": compiled_text_without_metadata,
    "xla-dump-before-after": dump_without_fusion,
}
PARTS = {
    "elementwise-chain-one-fusion": {"it computes sine, multiply, add": sine_behind_a_barrier},
    "constant-folding": {
        "sin 2 among its constants": sine_slightly_off,
    },
}
