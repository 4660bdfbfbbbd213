"""Claims of the page `profiling`: keys, traces, annotations and memory profiles."""

import importlib.metadata
import re
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from chapter2.cases.ynn import uses_ynn
from chapter2.claims.backends import CPU_THREADS, YNN
from chapter2.claims.registry import Observation, claim, counted, listed
from chapter2.environment import default_device
from chapter2.hlo import compiled_text, entry_computation, instruction_names, kernels
from chapter2.pprof import buffer_bytes, read_profile
from chapter2.traces import generic_name, read_trace, trace_files


@claim("typed-prng-keys")
def _typed_keys() -> Observation:
    old, new = jax.random.PRNGKey(0), jax.random.key(0)
    try:
        new + 1
        added = "accepted"
    except TypeError:
        added = "TypeError"
    old_type = f"{old.dtype}{list(old.shape)}".replace(" ", "")
    shape = "a scalar" if new.shape == () else f"an array of shape {new.shape}"
    return Observation(
        expected={
            "PRNGKey(0)": "uint32[2]",
            "key(0) shape": [],
            "key(0) has a key dtype": True,
            "key(0) + 1": "TypeError",
        },
        observed={
            "PRNGKey(0)": old_type,
            "key(0) shape": list(new.shape),
            "key(0) has a key dtype": bool(jnp.issubdtype(new.dtype, jax.dtypes.prng_key)),
            "key(0) + 1": added,
            "key(0) dtype": str(new.dtype),
        },
        repeats="the cells above",
        said=f"The cells above, run again: PRNGKey(0) is a {old_type} array, key(0) is {shape} "
        f"of dtype {new.dtype}, and key(0) + 1 "
        f"{'raised TypeError' if added == 'TypeError' else 'was accepted'}.",
    )


@claim("profiled-step-kernels", only_on=YNN)
def _profiled_step() -> Observation:

    def complex_computation(x, y):
        return jnp.mean(jnp.sin(jnp.dot(x, y)) * x + y)

    x = jax.ShapeDtypeStruct((2000, 2000), jnp.float32)
    hlo = compiled_text(complex_computation, x, x)
    found = kernels(hlo)
    ynn = uses_ynn(hlo)
    folded = f"constant({1 / 2000**2:g})" in entry_computation(hlo)
    kernel_list = listed([f"{name} ({', '.join(ops)})" for name, ops in found.items()], "none")
    return Observation(
        expected={
            "kernels": {
                "ynn_fusion": ["dot", "sine", "multiply", "add", "reduce"],
                "wrapped_multiply": ["multiply"],
            },
            "is a __ynn_fusion": True,
            "1/N is a constant of the step": True,
        },
        observed={
            "kernels": found,
            "is a __ynn_fusion": ynn,
            "1/N is a constant of the step": folded,
        },
        said=f"Compiled complex_computation for two 2000 × 2000 float32 matrices: "
        f"{counted(len(found), 'kernel')}, {kernel_list}; the HLO holds "
        f"{'a' if ynn else 'no'} __ynn_fusion, and 1/N {'is' if folded else 'is not'} a "
        f"constant of the step.",
    )


def _traced_step(log_dir: str, **trace_options):
    """Trace one warmed-up call of a small jitted function inside a TraceAnnotation("step")."""
    step = jax.jit(lambda v: jnp.sin(v).sum())
    x = jnp.ones(1000)
    step(x).block_until_ready()
    with jax.profiler.trace(log_dir, **trace_options), jax.profiler.TraceAnnotation("step"):
        step(x).block_until_ready()
    return compiled_text(lambda v: jnp.sin(v).sum(), x)


@claim("trace-files", warning=True)
def _trace_files() -> Observation:
    with tempfile.TemporaryDirectory() as log_dir:
        _traced_step(log_dir, create_perfetto_trace=True)
        names = sorted(generic_name(f) for f in trace_files(log_dir))
    folders = {name.rpartition("/")[0] for name in names}
    written = (
        f" in {folders.pop()}/: {listed([name.rpartition('/')[2] for name in names])}"
        if len(folders) == 1
        else f": {listed(names)}"
        if names
        else ""
    )
    return Observation(
        expected={
            "files written": [
                "plugins/profile/<timestamp>/<host>.trace.json.gz",
                "plugins/profile/<timestamp>/<host>.xplane.pb",
                "plugins/profile/<timestamp>/perfetto_trace.json.gz",
            ]
        },
        observed={"files written": names},
        said=f"Traced one warmed-up call of a jitted sin(v).sum() over 1000 values, with "
        f"create_perfetto_trace=True: it wrote {counted(len(names), 'file')}{written}.",
    )


def _requirements(distribution: str) -> list[str]:
    """What installing `distribution` installs with it: its requirements without an extra."""
    found = importlib.metadata.requires(distribution) or []
    return [r for r in found if "extra ==" not in r]


@claim("tensorboard-installed-separately")
def _tensorboard_separately() -> Observation:
    viewers = re.compile(r"^(tensorboard|xprof|tensorboard[-_]plugin[-_]profile)\b", re.I)
    required = [r for d in ("jax", "jaxlib") for r in _requirements(d) if viewers.match(r)]
    extras = [r for r in importlib.metadata.requires("jax") or [] if "extra ==" in r]
    naming = sorted(r.split(";")[0] for r in extras if viewers.match(r))
    return Observation(
        expected={"viewers jax and jaxlib install": []},
        observed={
            "viewers jax and jaxlib install": required,
            "extras of jax naming one": naming,
        },
        said=f"Read from the installed jax and jaxlib: their requirements name "
        f"{listed(required, 'no TensorBoard or XProf package')}, and jax's optional extras "
        f"name {listed(naming, 'none either')}.",
    )


@claim("trace-annotation-in-trace")
def _trace_annotation() -> Observation:
    with tempfile.TemporaryDirectory() as log_dir:
        hlo = _traced_step(log_dir)
        trace = read_trace(log_dir)
    counts = trace.counts()
    calls = sum(n for name, n in counts.items() if name.startswith("PjitFunction("))
    instructions = set(counts) & instruction_names(hlo)
    kernel_names = listed(sorted(instructions), "no HLO instruction")
    return Observation(
        expected={
            "events of the annotation 'step'": 1,
            "host call events present": True,
            "kernel events named after HLO instructions": True,
        },
        observed={
            "events of the annotation 'step'": counts["step"],
            "host call events present": calls >= 1,
            "kernel events named after HLO instructions": bool(instructions),
            "HLO instructions seen": sorted(instructions),
        },
        said=f"Traced one warmed-up call of a jitted sin(v).sum() over 1000 values inside "
        f'TraceAnnotation("step"): the trace holds {counted(counts["step"], "event")} named '
        f"step, {counted(calls, 'host event')} of the jitted call, and kernel events named "
        f"after {kernel_names}.",
    )


@claim("transfer-guard-disallows-host-arrays")
def _transfer_guard() -> Observation:
    step = jax.jit(lambda x, y: jnp.mean(jnp.sin(x @ y) * x + y))
    x, y = jnp.ones((64, 64)), jnp.ones((64, 64))
    step(x, y).block_until_ready()  # compiled outside the guard

    def outcome(*args) -> str:
        with jax.transfer_guard("disallow"):
            try:
                jax.block_until_ready(step(*args))
            except Exception as err:  # its kind is what is observed
                return "raised" if "Disallowed" in str(err) else type(err).__name__
        return "ran"

    on_device, from_numpy = outcome(x, y), outcome(np.asarray(x), y)
    numpy_said = "raised, naming the disallowed transfer" if from_numpy == "raised" else from_numpy
    return Observation(
        expected={"device arrays": "ran", "a NumPy array": "raised"},
        observed={"device arrays": on_device, "a NumPy array": from_numpy},
        said=f"Called a jitted step of the same form on 64 x 64 arrays under "
        f'transfer_guard("disallow"): with arrays on the device it {on_device}; with a NumPy '
        f"array it {numpy_said}.",
    )


def _python_step(v):
    return float(jnp.sin(v).sum())


@claim("python-tracer-on-by-default")
def _python_tracer() -> Observation:
    level = jax.profiler.ProfileOptions().python_tracer_level
    v = jnp.ones(100)
    _python_step(v)  # compiled outside the trace
    with tempfile.TemporaryDirectory() as log_dir:
        with jax.profiler.trace(log_dir):
            _python_step(v)
        trace = read_trace(log_dir)
    calls = [e["name"] for e in trace.events if e["name"].endswith(" _python_step")]
    return Observation(
        expected={"python_tracer_level": 1, "a traced Python function is an event": True},
        observed={
            "python_tracer_level": level,
            "a traced Python function is an event": bool(calls),
            "events named after it": len(calls),
        },
        said=f"ProfileOptions() has python_tracer_level {level}; a trace made with the default "
        f"options of one call of a Python function holds {counted(len(calls), 'event')} named "
        "after it.",
    )


@claim("xla-execute-threads", only_on=CPU_THREADS)
def _xla_threads() -> Observation:
    with tempfile.TemporaryDirectory() as log_dir:
        hlo = _traced_step(log_dir)
        trace = read_trace(log_dir)
    kernels_run = [e for e in trace.events if e["name"] in instruction_names(hlo)]
    threads = sorted({trace.thread_of(e).split("/")[0] for e in kernels_run})
    return Observation(
        expected={"threads of the kernels": ["tf_XLAExecute"]},
        observed={"threads of the kernels": threads},
        said=f"In a trace of one call of a jitted sin(v).sum() over 1000 values, the "
        f"{counted(len(kernels_run), 'kernel event')} ran on threads named "
        f"{listed(threads, 'nothing')}.",
    )


@claim("named-scope-debug-info")
def _named_scope() -> Observation:

    def f(v):
        with jax.named_scope("my_scope"):
            return jnp.sin(v) * 2

    lowered = jax.jit(f).lower(jnp.ones(8))
    found = [
        "my_scope" in lowered.compile().as_text(),
        "my_scope" in lowered.as_text(),
        "my_scope" in lowered.as_text(debug_info=True),
    ]
    seen = ["appears" if hit else "does not appear" for hit in found]
    return Observation(
        expected={
            "in the compiled HLO": True,
            "in lower().as_text()": False,
            "in lower().as_text(debug_info=True)": True,
        },
        observed={
            "in the compiled HLO": found[0],
            "in lower().as_text()": found[1],
            "in lower().as_text(debug_info=True)": found[2],
        },
        said=f'Jitted jnp.sin(v) * 2 over 8 values inside jax.named_scope("my_scope"): the name '
        f"{seen[0]} in the compiled HLO, {seen[1]} in lower().as_text() and {seen[2]} in "
        f"lower().as_text(debug_info=True).",
    )


def _make_big():
    return jnp.ones((4000, 4000))


@claim(
    "device-memory-profile",
    expected_on={
        "tpu": (
            {"bytes added": 65536000},
            (
                "XLA's TPU backend stores float32 arrays in tiles of 8 × 128 elements, so each "
                "4000-element row of the array is padded to 4096"
            ),
        )
    },
)
def _memory_profile() -> Observation:
    backend = default_device().platform  # the profile is of a backend, not of a device
    before = read_profile(jax.profiler.device_memory_profile(backend=backend))
    big = _make_big().block_until_ready()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "memory.prof"
        jax.profiler.save_device_memory_profile(str(path), backend=backend)
        written = path.read_bytes()
    del big
    gzipped = written[:2] == b"\x1f\x8b"
    after = read_profile(written) if gzipped else []
    added = buffer_bytes(after) - buffer_bytes(before)
    named = any("_make_big" in a.stack for a in after)
    return Observation(
        expected={
            "file is gzip": True,
            "bytes added": 64_000_000,
            "a sample names the function": True,
        },
        observed={
            "file is gzip": gzipped,
            "bytes added": added,
            "a sample names the function": named,
        },
        repeats="the cell above",
        said=f"The cell above, run again: the saved profile {'is' if gzipped else 'is not'} "
        f"gzip-compressed, the 4000 × 4000 array added {added:,} bytes of live buffers, and "
        f"{'a sample' if named else 'no sample'} names the function that made it.",
    )
