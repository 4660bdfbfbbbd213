"""Claims of the page `profiling`: keys, traces, annotations and memory profiles."""

import gzip
import importlib.metadata
import json
import re
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from chapter2.cases.ynn import YNN_OFF, uses_ynn
from chapter2.claims.backends import CPU_THREADS, YNN
from chapter2.claims.registry import Observation, claim, counted, listed
from chapter2.compat import cost_analysis
from chapter2.environment import default_device
from chapter2.hlo import compiled_text, entry_computation, instruction_names, kernels
from chapter2.pprof import buffer_bytes, read_profile
from chapter2.traces import generic_name, read_trace, trace_file, trace_files


@claim(
    "typed-prng-keys",
    checks="That `PRNGKey(0)` is a uint32[2] array and `key(0)` a scalar of a PRNG key dtype, "
    "to which adding 1 raises `TypeError`.",
)
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


@claim(
    "profiled-step-kernels",
    only_on=YNN,
    checks="That `complex_computation`, compiled for two 2000 × 2000 float32 matrices, is a "
    "`__ynn_fusion` named `ynn_fusion` (dot, sine, multiply, add, reduce) and a "
    "`wrapped_multiply` (a multiply), with 1/N a constant of the step; and that compiled with "
    "`xla_cpu_experimental_ynn_fusion_type` empty it holds no `__ynn_fusion`.",
)
def _profiled_step() -> Observation:

    def complex_computation(x, y):
        return jnp.mean(jnp.sin(jnp.dot(x, y)) * x + y)

    x = jax.ShapeDtypeStruct((2000, 2000), jnp.float32)
    hlo = compiled_text(complex_computation, x, x)
    found = kernels(hlo)
    ynn = uses_ynn(hlo)
    off = uses_ynn(jax.jit(complex_computation).lower(x, x).compile(YNN_OFF).as_text())
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
            "a __ynn_fusion with YNNPACK fusion off": False,
        },
        observed={
            "kernels": found,
            "is a __ynn_fusion": ynn,
            "1/N is a constant of the step": folded,
            "a __ynn_fusion with YNNPACK fusion off": off,
        },
        said=f"Compiled complex_computation for two 2000 × 2000 float32 matrices: "
        f"{counted(len(found), 'kernel')}, {kernel_list}; the HLO holds "
        f"{'a' if ynn else 'no'} __ynn_fusion, and 1/N {'is' if folded else 'is not'} a "
        f"constant of the step. Compiled with YNNPACK fusion off, it holds "
        f"{'a' if off else 'no'} __ynn_fusion.",
    )


def _traced_step(log_dir: str, **trace_options):
    """Trace one warmed-up call of a small jitted function inside a TraceAnnotation("step")."""
    step = jax.jit(lambda v: jnp.sin(v).sum())
    x = jnp.ones(1000)
    step(x).block_until_ready()
    with jax.profiler.trace(log_dir, **trace_options), jax.profiler.TraceAnnotation("step"):
        step(x).block_until_ready()
    return compiled_text(lambda v: jnp.sin(v).sum(), x)


def _formats(log_dir: str) -> list[bool]:
    """Whether a trace's `*.trace.json.gz` is a Chrome trace (a gzipped JSON object with
    `traceEvents`) and its `*.xplane.pb` an XSpace that `ProfileData` reads (with planes)."""
    found = []
    for ending, read in [
        (".trace.json.gz", lambda f: "traceEvents" in json.loads(gzip.decompress(f.read_bytes()))),
        (".xplane.pb", lambda f: bool(list(jax.profiler.ProfileData.from_file(str(f)).planes))),
    ]:
        try:
            found.append(read(trace_file(log_dir, ending)))
        except Exception:  # any failure to read it is what is observed
            found.append(False)
    return found


def _started_and_stopped(log_dir: str) -> None:
    """One warmed-up call of a small jitted function, between start_trace and stop_trace."""
    step = jax.jit(lambda v: jnp.sin(v).sum())
    x = jnp.ones(1000)
    step(x).block_until_ready()
    jax.profiler.start_trace(log_dir)
    try:
        step(x).block_until_ready()
    finally:
        jax.profiler.stop_trace()


@claim(
    "trace-files",
    warning=True,
    checks="That a trace by `trace` with `create_perfetto_trace=True` writes, in "
    "`plugins/profile/<timestamp>/`, `<host>.xplane.pb`, `<host>.trace.json.gz` and "
    "`perfetto_trace.json.gz`; that one by `start_trace` and `stop_trace` writes the first two; "
    "and that the first is an XSpace `ProfileData` reads and the second a gzipped Chrome "
    "trace (JSON with `traceEvents`).",
)
def _trace_files() -> Observation:
    with tempfile.TemporaryDirectory() as log_dir:
        _traced_step(log_dir, create_perfetto_trace=True)
        names = sorted(generic_name(f) for f in trace_files(log_dir))
    with tempfile.TemporaryDirectory() as log_dir:
        _started_and_stopped(log_dir)
        started = sorted(generic_name(f) for f in trace_files(log_dir))
        formats = _formats(log_dir)
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
            ],
            "files start_trace wrote": [
                "plugins/profile/<timestamp>/<host>.trace.json.gz",
                "plugins/profile/<timestamp>/<host>.xplane.pb",
            ],
            "a Chrome trace, an XSpace": [True, True],
        },
        observed={
            "files written": names,
            "files start_trace wrote": started,
            "a Chrome trace, an XSpace": formats,
        },
        said=f"Traced one warmed-up call of a jitted sin(v).sum() over 1000 values, with "
        f"create_perfetto_trace=True: it wrote {counted(len(names), 'file')}{written}. Traced "
        f"again between start_trace and stop_trace, it wrote {counted(len(started), 'file')}; "
        f"the .trace.json.gz {'is' if formats[0] else 'is not'} a Chrome trace, and "
        f"ProfileData {'reads' if formats[1] else 'cannot read'} the .xplane.pb.",
    )


def _requirements(distribution: str) -> list[str]:
    """What installing `distribution` installs with it: its requirements without an extra."""
    found = importlib.metadata.requires(distribution) or []
    return [r for r in found if "extra ==" not in r]


@claim(
    "tensorboard-installed-separately",
    checks="That the requirements of the installed `jax` and `jaxlib` name no TensorBoard, "
    "profile plugin or XProf package, and that the one optional extra of `jax` naming one "
    "brings `xprof`.",
)
def _tensorboard_separately() -> Observation:
    viewers = re.compile(r"^(tensorboard|xprof|tensorboard[-_]plugin[-_]profile)\b", re.I)
    required = [r for d in ("jax", "jaxlib") for r in _requirements(d) if viewers.match(r)]
    extras = [r for r in importlib.metadata.requires("jax") or [] if "extra ==" in r]
    naming = sorted(r.split(";")[0] for r in extras if viewers.match(r))
    return Observation(
        expected={"viewers jax and jaxlib install": [], "extras of jax naming one": ["xprof"]},
        observed={
            "viewers jax and jaxlib install": required,
            "extras of jax naming one": naming,
        },
        said=f"Read from the installed jax and jaxlib: their requirements name "
        f"{listed(required, 'no TensorBoard or XProf package')}, and jax's optional extras "
        f"name {listed(naming, 'none either')}.",
    )


@claim(
    "trace-annotation-in-trace",
    checks="That a trace of one call of a jitted `sin(v).sum()` inside "
    '`TraceAnnotation("step")`, read in Python from its `*.trace.json.gz`, holds one event '
    "named step, host events of the jitted call, and kernel events named after the "
    "program's HLO instructions.",
)
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


@claim(
    "transfer-guard-disallows-host-arrays",
    checks='That under `transfer_guard("disallow")` a jitted step of the page\'s form on '
    "64 × 64 arrays runs on arrays already on the device, and raises on a NumPy array, naming "
    "the disallowed transfer.",
)
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


def _python_calls(v, **trace_options) -> int:
    """The events named after `_python_step` in a trace of one call of it."""
    with tempfile.TemporaryDirectory() as log_dir:
        with jax.profiler.trace(log_dir, **trace_options):
            _python_step(v)
        trace = read_trace(log_dir)
    return sum(e["name"].endswith(" _python_step") for e in trace.events)


@claim(
    "python-tracer-on-by-default",
    checks="That `ProfileOptions()` has `python_tracer_level` 1; that a trace with the default "
    "options holds an event named after a traced Python function; and that a trace with the "
    "level set to 0 holds none.",
    unchecked="What the Python events cost on a busy host, and what JAX's profiling guide "
    "says, are not tested.",
)
def _python_tracer() -> Observation:
    level = jax.profiler.ProfileOptions().python_tracer_level
    v = jnp.ones(100)
    _python_step(v)  # compiled outside the trace
    calls = _python_calls(v)
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    without = _python_calls(v, profiler_options=options)
    return Observation(
        expected={
            "python_tracer_level": 1,
            "a traced Python function is an event": True,
            "with the level set to 0": False,
        },
        observed={
            "python_tracer_level": level,
            "a traced Python function is an event": bool(calls),
            "with the level set to 0": bool(without),
            "events named after it": calls,
        },
        said=f"ProfileOptions() has python_tracer_level {level}; a trace made with the default "
        f"options of one call of a Python function holds {counted(calls, 'event')} named "
        f"after it, and one with the level set to 0, {counted(without, 'event')}.",
    )


@claim(
    "xla-execute-threads",
    only_on=CPU_THREADS,
    checks="That in a trace of one call of a jitted `sin(v).sum()` over 1000 values, which "
    "XLA's cost analysis rates at 1000 flops or more, every kernel event ran on a thread named "
    "`tf_XLAExecute/…`; and that in a trace of one call of a jitted transpose of a 2000 x 2000 "
    "array, rated at none, every kernel event ran on the thread that made the call.",
    unchecked="That every program rated under 1000 flops runs there (2.7 checks the rule "
    "itself), and that XLA's pool may run parts of one.",
)
def _xla_threads() -> Observation:
    with tempfile.TemporaryDirectory() as log_dir:
        hlo = _traced_step(log_dir)
        trace = read_trace(log_dir)
    kernels_run = [e for e in trace.events if e["name"] in instruction_names(hlo)]
    threads = sorted({trace.thread_of(e).split("/")[0] for e in kernels_run})
    transpose, a = jax.jit(lambda m: m.T), jnp.ones((2000, 2000))
    transpose(a).block_until_ready()
    with tempfile.TemporaryDirectory() as log_dir:
        with jax.profiler.trace(log_dir):
            transpose(a).block_until_ready()
        trace = read_trace(log_dir)
    names = instruction_names(transpose.lower(a).compile().as_text())
    callers = {trace.thread_of(e) for e in trace.events if e["name"].startswith("PjitFunction")}
    inline = [trace.thread_of(e) for e in trace.events if e["name"] in names]
    flops = [_flops(jax.jit(lambda v: jnp.sin(v).sum()), jnp.ones(1000)), _flops(transpose, a)]
    return Observation(
        expected={
            "threads of the kernels": ["tf_XLAExecute"],
            "rated at 1000 flops or more": [True, False],
            "the transpose's kernels ran on the calling thread": True,
        },
        observed={
            "threads of the kernels": threads,
            "rated at 1000 flops or more": [f >= 1000 for f in flops],
            "the transpose's kernels ran on the calling thread": bool(inline)
            and set(inline) <= callers,
            "the transpose's kernel threads": sorted(set(inline)),
        },
        said=f"In a trace of one call of a jitted sin(v).sum() over 1000 values, rated at "
        f"{flops[0]:.0f} flops, the {counted(len(kernels_run), 'kernel event')} ran on threads "
        f"named {listed(threads, 'nothing')}. A jitted transpose of a 2000 x 2000 array, rated "
        f"at {flops[1]:.0f} flops, ran its {counted(len(inline), 'kernel event')} on "
        f"{listed(sorted(set(inline)), 'no thread')}; the call ran on "
        f"{listed(sorted(callers), 'no thread')}.",
    )


def _flops(jitted, *args) -> float:
    """The flops XLA's cost analysis rates a jitted function's compiled program at."""
    return cost_analysis(jitted.lower(*args).compile()).get("flops", 0.0)


@claim(
    "named-scope-debug-info",
    checks='That for a jitted `jnp.sin(v) * 2` inside `jax.named_scope("my_scope")`, the '
    "compiled HLO's `op_name` metadata holds the name; that `lower().as_text()` holds neither "
    "the name nor the source file's name; and that `lower().as_text(debug_info=True)` holds "
    "both.",
)
def _named_scope() -> Observation:

    def f(v):
        with jax.named_scope("my_scope"):
            return jnp.sin(v) * 2

    lowered = jax.jit(f).lower(jnp.ones(8))
    source = Path(f.__code__.co_filename).name
    plain, debug = lowered.as_text(), lowered.as_text(debug_info=True)
    found = [
        bool(re.search(r'op_name="[^"]*my_scope', lowered.compile().as_text())),
        "my_scope" in plain,
        "my_scope" in debug,
    ]
    located = [source in plain, source in debug]
    seen = ["appears" if hit else "does not appear" for hit in found]
    return Observation(
        expected={
            "in the compiled HLO": True,
            "in lower().as_text()": False,
            "in lower().as_text(debug_info=True)": True,
            "source file named without, with debug_info": [False, True],
        },
        observed={
            "in the compiled HLO": found[0],
            "in lower().as_text()": found[1],
            "in lower().as_text(debug_info=True)": found[2],
            "source file named without, with debug_info": located,
        },
        said=f'Jitted jnp.sin(v) * 2 over 8 values inside jax.named_scope("my_scope"): the name '
        f"{seen[0]} in the compiled HLO's op_name metadata, {seen[1]} in lower().as_text() and "
        f"{seen[2]} in lower().as_text(debug_info=True), which "
        f"{'names' if located[1] else 'does not name'} the source file.",
    )


def _make_big():
    return jnp.ones((4000, 4000))


@claim(
    "device-memory-profile",
    checks="That the saved profile is gzip-compressed, that a new 4000 × 4000 float32 array "
    "adds 64,000,000 bytes of live buffers to it, and that a sample names the function that "
    "made the array.",
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
