"""The claims of the page `profiling` fail when JAX behaves otherwise."""

import contextlib
import gzip
import importlib
import importlib.metadata
import re
from pathlib import Path

import jax

from breakers.shared import compiler_options_ignored, debug_info_always, xla_options
from chapter2.traces import Trace


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


def memory_profile_uncompressed(mp):
    """A profiler that writes the pprof protobuf without gzip."""
    real = jax.profiler.device_memory_profile

    def save(path, backend=None):
        with Path(path).open("wb") as fh:
            fh.write(gzip.decompress(real(backend)))

    mp.setattr(jax.profiler, "save_device_memory_profile", save)


def jax_requires_xprof(mp):
    """A jax whose installation brings XProf along."""
    real = importlib.metadata.requires
    mp.setattr(
        importlib.metadata,
        "requires",
        lambda name: [*(real(name) or []), "xprof>=2"] if name == "jax" else real(name),
    )


def threads_named_as_in_0_11(mp):
    """A trace whose XLA threads carry the name JAX 0.11.2 gave them (tf_XLAPjRtCpuClient)."""
    module = importlib.import_module("chapter2.claims.pages.profiling")
    real = module.read_trace

    def renamed(log_dir):
        trace = real(log_dir)
        names = {
            k: v.replace("tf_XLAExecute", "tf_XLAPjRtCpuClient") for k, v in trace.threads.items()
        }
        return Trace(trace.events, names)

    mp.setattr(module, "read_trace", renamed)


def transfers_never_guarded(mp):
    """A transfer guard that lets every transfer through."""
    mp.setattr(jax, "transfer_guard", lambda level: contextlib.nullcontext())


def python_tracer_off(mp):
    """A profiler whose default options trace no Python."""
    real_options, real_trace = jax.profiler.ProfileOptions, jax.profiler.trace

    def quiet():
        options = real_options()
        options.python_tracer_level = 0
        return options

    mp.setattr(jax.profiler, "ProfileOptions", quiet)
    mp.setattr(jax.profiler, "trace", lambda d, **kw: real_trace(d, profiler_options=quiet()))


def start_trace_writes_perfetto(mp):
    """A start_trace that writes a Perfetto trace unasked."""
    real = jax.profiler.start_trace
    mp.setattr(
        jax.profiler, "start_trace", lambda log_dir, **kw: real(log_dir, create_perfetto_trace=True)
    )


def xplane_unreadable(mp):
    """A ProfileData that cannot read the trace's .xplane.pb."""

    class ProfileData:
        @staticmethod
        def from_file(path):
            msg = f"not an XSpace: {path}"
            raise ValueError(msg)

    mp.setattr(jax.profiler, "ProfileData", ProfileData)


def jax_without_extras(mp):
    """A jax whose metadata names no optional extra."""
    real = importlib.metadata.requires
    mp.setattr(
        importlib.metadata,
        "requires",
        lambda name: [r for r in real(name) or [] if "extra ==" not in r],
    )


def trace_options_ignored(mp):
    """A trace that ignores the ProfileOptions it is given."""
    real = jax.profiler.trace
    mp.setattr(
        jax.profiler, "trace", lambda log_dir, profiler_options=None, **kw: real(log_dir, **kw)
    )


def compiled_text_without_op_names(mp):
    """A compiled program whose text carries no op_name metadata."""
    real = jax.stages.Compiled.as_text
    mp.setattr(
        jax.stages.Compiled,
        "as_text",
        lambda self, *a, **kw: re.sub(r'op_name="[^"]*"', "", real(self, *a, **kw)),
    )


BREAKERS = {
    "python-tracer-on-by-default": python_tracer_off,
    "transfer-guard-disallows-host-arrays": transfers_never_guarded,
    "tensorboard-installed-separately": jax_requires_xprof,
    "typed-prng-keys": raw_new_style_keys,
    "trace-files": no_perfetto_trace,
    "trace-annotation-in-trace": annotations_not_recorded,
    "named-scope-debug-info": debug_info_always(True),
    "device-memory-profile": memory_profile_uncompressed,
    "profiled-step-kernels": xla_options(xla_cpu_experimental_ynn_fusion_type=""),
    "xla-execute-threads": threads_named_as_in_0_11,
}
PARTS = {
    "profiled-step-kernels": {
        "a __ynn_fusion with YNNPACK fusion off": compiler_options_ignored,
    },
    "trace-files": {
        "files start_trace wrote": start_trace_writes_perfetto,
        "a Chrome trace, an XSpace": xplane_unreadable,
    },
    "tensorboard-installed-separately": {"extras of jax naming one": jax_without_extras},
    "python-tracer-on-by-default": {"with the level set to 0": trace_options_ignored},
    "named-scope-debug-info": {
        "in the compiled HLO": compiled_text_without_op_names,
        "source file named without, with debug_info": debug_info_always(False),
    },
}
