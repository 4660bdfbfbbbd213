"""The cheat sheet's rows and its training-loop checklist, and looking each API up in the
installed JAX (and optax)."""

import pkgutil

import jax
import jax.numpy

# (what to write, where each name it uses lives in the installed JAX, separated by spaces,
# what it does); an XLA flag lives nowhere
APIS = [
    (
        "jax.profiler.trace(dir, create_perfetto_trace=True)",
        "jax.profiler.trace",
        "trace as a context manager: xplane.pb, trace.json.gz, perfetto_trace.json.gz",
    ),
    (
        "jax.profiler.start_trace(dir) / stop_trace()",
        "jax.profiler.start_trace jax.profiler.stop_trace",
        "start and stop a trace",
    ),
    (
        "jax.profiler.TraceAnnotation(name)",
        "jax.profiler.TraceAnnotation",
        "name a span of host time",
    ),
    (
        "jax.profiler.StepTraceAnnotation(name, step_num=i)",
        "jax.profiler.StepTraceAnnotation",
        "name a training step, for TensorBoard",
    ),
    ("jax.named_scope(name)", "jax.named_scope", "prefix op names (HLO op_name metadata)"),
    (
        "jax.profiler.save_device_memory_profile(path)",
        "jax.profiler.save_device_memory_profile",
        "snapshot of device memory, pprof format",
    ),
    (
        "jax.profiler.ProfileData.from_file(path)",
        "jax.profiler.ProfileData.from_file",
        "read an xplane.pb in Python",
    ),
    (
        "jax.make_jaxpr(f, static_argnums=...)(*args)",
        "jax.make_jaxpr",
        "the Jaxpr of f, with its constants",
    ),
    (
        "jaxpr.invars / constvars / eqns / outvars, jaxpr.consts",
        "jax.extend.core.Jaxpr.invars jax.extend.core.Jaxpr.constvars "
        "jax.extend.core.Jaxpr.eqns jax.extend.core.Jaxpr.outvars jax.extend.core.Jaxpr.consts",
        "the parts of a jaxpr",
    ),
    (
        "jax.extend.core.jaxprs_in_params(eqn.params)",
        "jax.extend.core.jaxprs_in_params",
        "an equation's sub-jaxprs",
    ),
    (
        "jax.extend.core.jaxpr_as_fun(jaxpr)",
        "jax.extend.core.jaxpr_as_fun",
        "run a jaxpr as a function",
    ),
    (
        "jax.jit(f).lower(*args).as_text(debug_info=True)",
        "jax.stages.Lowered.as_text",
        "StableHLO text, with source locations if asked",
    ),
    ("lowered.compile().as_text()", "jax.stages.Compiled.as_text", "optimized HLO"),
    (
        "compiled.cost_analysis()",
        "jax.stages.Compiled.cost_analysis",
        "dict: flops, transcendentals, bytes accessed",
    ),
    (
        "compiled.memory_analysis()",
        "jax.stages.Compiled.memory_analysis",
        "argument, output and temp sizes in bytes",
    ),
    (
        "XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text",
        "",
        "dump HLO before and after optimization (set before the process starts)",
    ),
    (
        "lowered.compile({'xla_dump_to': DIR}) / jax.jit(f, compiler_options={...})",
        "jax.stages.Lowered.compile jax.jit",
        "the same XLA options for one compilation, in a running process",
    ),
    (
        "XLA_FLAGS=--xla_disable_hlo_passes=fusion",
        "",
        "turn XLA's fusion pass off, to compare (YNNPACK fusions stay: turn them off below)",
    ),
    (
        "XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=",
        "",
        "turn YNNPACK library fusion off on the CPU",
    ),
    ("x.format.layout", "array:format.layout", "the physical layout of an array"),
    (
        "with jax.log_compiles():",
        "jax.log_compiles",
        "log every XLA compilation inside the block (a bare call logs nothing)",
    ),
    (
        "jax.config.update('jax_log_compiles', True)",
        "config:jax_log_compiles",
        "log every XLA compilation from now on",
    ),
    (
        "jax.config.update('jax_explain_cache_misses', True)",
        "config:jax_explain_cache_misses",
        "explain why the cache missed",
    ),
    (
        "jax.config.update('jax_compilation_cache_dir', d)",
        "config:jax_compilation_cache_dir",
        "turn the persistent compilation cache on",
    ),
    (
        "jax_persistent_cache_min_compile_time_secs",
        "config:jax_persistent_cache_min_compile_time_secs",
        "compile time from which an entry is written to disk (1 s by default)",
    ),
    ("@jax.jit(static_argnums=...)", "jax.jit", "static arguments, decorator-factory form"),
    (
        "lax.optimization_barrier(x)",
        "jax.lax.optimization_barrier",
        "keep XLA from fusing or moving work across this point",
    ),
    (
        "x.block_until_ready() / jax.block_until_ready(tree)",
        "array:block_until_ready jax.block_until_ready",
        "wait for the computation (an argument is required)",
    ),
    ("x.is_ready()", "array:is_ready", "whether the computation has finished"),
    (
        "jax.jit(step, donate_argnums=0)",
        "jax.jit",
        "let the outputs reuse the first argument's buffers (parameters, optimizer state)",
    ),
    (
        "with jax.transfer_guard('disallow'):",
        "jax.transfer_guard",
        "raise on implicit transfers between host and device inside the block",
    ),
    (
        "jax.device_put(batch) / jax.device_get(tree)",
        "jax.device_put jax.device_get",
        "explicit transfers to and from the device",
    ),
    ("jax.lax.scan(step, state, batches)", "jax.lax.scan", "many steps in one program"),
    (
        "jax_cpu_enable_async_dispatch",
        "config:jax_cpu_enable_async_dispatch",
        "whether the CPU back end dispatches asynchronously (set before it starts)",
    ),
]


# A training loop, checked: (what to do, the names it uses, looked up as the APIS' are). Each
# line is measured on the page training-step; at most ten.
CHECKLIST = [
    (
        "Jit the whole update, loss, gradient and optimizer, as one step: `jax.jit(step)`.",
        "jax.jit",
    ),
    (
        "Keep the losses on the device; fetch them every few steps with `jax.device_get`, "
        "never `float(loss)` at each step.",
        "jax.device_get",
    ),
    (
        "Put each batch on the device with `jax.device_put`, the next one while the step runs; "
        "`jax.transfer_guard('disallow')` finds the implicit copies to the device.",
        "jax.device_put jax.transfer_guard",
    ),
    ("Give every batch one shape, so the step compiles once: drop or pad the last one.", ""),
    (
        "Donate the state, `jax.jit(step, donate_argnums=0)`, so the new one takes the old "
        "one's memory; keep only the state it returns.",
        "jax.jit",
    ),
    (
        "Compare bfloat16 products with float32 at the default precision (on a TPU it already "
        "multiplies in bfloat16) by time to your target loss, from several starts.",
        "jax.numpy.bfloat16",
    ),
    (
        "Measure MFU: the model's flops per step (6N + 12LHQT a token) over the step's time "
        "times the vendor's peak.",
        "",
    ),
    (
        "Guess the batch from `compiled.memory_analysis()`, then run a step at it. Time "
        "`jax.checkpoint(layer, policy=...)`: it trades recompute for memory, and can save time.",
        "jax.stages.Compiled.memory_analysis jax.checkpoint "
        "jax.checkpoint_policies.dots_with_no_batch_dims_saveable",
    ),
    (
        "Accumulate gradients with `optax.MultiSteps(optimizer, every_k_schedule=k)` when the "
        "batch does not fit.",
        "optax.MultiSteps",
    ),
    (
        "Trace a few steps with `jax.profiler.trace`: the device should not sit idle between them.",
        "jax.profiler.trace",
    ),
]


def resolves(name: str) -> bool:
    """Whether `name` is in the installed JAX: a config option (`config:`), an attribute path
    of a jax.Array (`array:`), or an importable object and its attributes."""
    if name.startswith("config:"):
        return name.removeprefix("config:") in jax.config.values
    if name.startswith("array:"):
        found = jax.numpy.ones(1)
        for attribute in name.removeprefix("array:").split("."):
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    try:
        pkgutil.resolve_name(name)
    except (ImportError, AttributeError, ValueError):
        return False
    return True


def missing(where: str) -> list[str]:
    """The names of a row (`where`, separated by spaces) that the installed JAX lacks."""
    return [name for name in where.split() if not resolves(name)]
