"""Claims of section 2.1 (profiling)."""

import tempfile

import jax
import jax.numpy as jnp

from chapter2.claims.registry import Observation, claim
from chapter2.traces import generic_name, read_trace, trace_files


@claim(
    "typed-prng-keys",
    "2.1",
    "note-typed-keys",
    "jax.random.key(0) returns a typed scalar key that refuses arithmetic; the old "
    "jax.random.PRNGKey(0) returns a raw uint32[2] array.",
)
def _typed_keys() -> Observation:
    old, new = jax.random.PRNGKey(0), jax.random.key(0)
    try:
        new + 1
        refused = "accepted"
    except TypeError:
        refused = "TypeError"
    holds = (
        old.dtype == jnp.uint32
        and old.shape == (2,)
        and jnp.issubdtype(new.dtype, jax.dtypes.prng_key)
        and new.shape == ()
        and refused == "TypeError"
    )
    return Observation(
        holds,
        f"PRNGKey(0) is {old.dtype}{list(old.shape)}; key(0) is {new.dtype}{list(new.shape)} "
        f"and key + 1 is {refused}",
    )


def _trace_one_step(annotation: str = "step", **trace_options):
    """Trace one warmed-up call of a small jitted function, inside a TraceAnnotation.

    Returns the files the trace wrote (relative to its folder) and its events.
    """
    f = jax.jit(lambda v: jnp.sin(v).sum())
    x = jnp.ones(1000)
    f(x).block_until_ready()
    with tempfile.TemporaryDirectory() as log_dir:
        with jax.profiler.trace(log_dir, **trace_options), jax.profiler.TraceAnnotation(annotation):
            f(x).block_until_ready()
        return trace_files(log_dir), read_trace(log_dir)


@claim(
    "trace-files",
    "2.1",
    "note-trace-files",
    "A trace writes plugins/profile/<timestamp>/<host>.xplane.pb and <host>.trace.json.gz "
    "(plus perfetto_trace.json.gz with create_perfetto_trace=True), not a profile.pb.",
)
def _trace_files() -> Observation:
    files, _ = _trace_one_step(create_perfetto_trace=True)
    expected = [
        "plugins/profile/<timestamp>/<host>.trace.json.gz",
        "plugins/profile/<timestamp>/<host>.xplane.pb",
        "plugins/profile/<timestamp>/perfetto_trace.json.gz",
    ]
    names = sorted(generic_name(f) for f in files)
    return Observation(names == expected, f"the trace folder holds {names}")


@claim(
    "trace-annotation-in-trace",
    "2.1",
    "note-annotations",
    "TraceAnnotation spans and the host-side call of a jitted function appear as events "
    "in the trace's *.trace.json.gz.",
)
def _trace_annotation() -> Observation:
    _, trace = _trace_one_step(annotation="claim_step")
    counts = trace.counts()
    calls = sum(n for name, n in counts.items() if name.startswith("PjitFunction("))
    return Observation(
        counts["claim_step"] == 1 and calls >= 1,
        f"'claim_step' events: {counts['claim_step']}, PjitFunction(...) events: {calls}",
    )


@claim(
    "named-scope-debug-info",
    "2.1",
    "note-named-scope",
    "named_scope names reach the op_name metadata of the compiled HLO; the StableHLO text "
    "shows them only with as_text(debug_info=True).",
)
def _named_scope() -> Observation:
    def f(v):
        with jax.named_scope("claim_scope"):
            return jnp.sin(v) * 2

    lowered = jax.jit(f).lower(jnp.ones(8))
    in_hlo = "claim_scope" in lowered.compile().as_text()
    plain = "claim_scope" in lowered.as_text()
    debug = "claim_scope" in lowered.as_text(debug_info=True)
    return Observation(
        in_hlo and not plain and debug,
        f"in compiled HLO: {in_hlo}; in StableHLO: {plain}; with debug_info=True: {debug}",
    )
