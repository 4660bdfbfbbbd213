"""What the TPU record keeps of training the transformer of `chapter2.cases.transformer`.

`record()` measures, on JAX's default device, with the TPU config (the CPU config and few
steps when `quick`): the seven loops of the page `training-step` over the transformer; the
compiler's flop count against the model's; the idle time of the device in a trace; mixed
precision; rematerialization; the largest batch that fits; gradient accumulation. Each
section that fails records its error and the others still run. The result is plain JSON.
"""

import argparse
import contextlib
import dataclasses
import gc
import gzip
import io
import json
import math
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.ad_checkpoint import print_saved_residuals

from chapter2.cases.transformer import (
    CPU,
    TPU,
    Config,
    batches,
    block,
    entropy_rate,
    flops_per_step,
    init,
    loss_fn,
    make_optimizer,
    make_step,
    parameter_count,
)
from chapter2.compiles import CompileCounter
from chapter2.hlo import every_kernel
from chapter2.timing import bench, bench_together

# TPU v5e: 197 TFLOP/s of bfloat16 per chip, the vendor's figure (Cloud TPU v5e page).
PEAK_FLOPS = 197e12
PEAK_SOURCE = "https://cloud.google.com/tpu/docs/v5e"

LOOP_NAMES = ("as written", "one jit", "no wait", "one shape", "donated", "prefetched", "scanned")
LOG_EVERY = 2  # the fast loops fetch losses LOG_EVERY at a time; scanned: steps per dispatch
RAGGED = 4  # examples in the last, smaller batch of an epoch
TRACED_STEPS = 5
TIMED_STEPS = 5  # steps timed together at each batch the batch search ran
LOSS_TOLERANCE = 0.1  # nats: final losses of two precisions that differ less agree
LAST = 10  # a run's final loss: the mean of its last LAST losses
WELL_BELOW = 0.6  # the loss fell well below ln(vocab): final loss < WELL_BELOW * ln(vocab)
ACCUMULATION_TOLERANCE = 1e-4  # parameters' distance apart over their move, float32
ACCUMULATED_UPDATES = 3  # updates compared: the warmup's first has a learning rate of 0
PRECISION_SEEDS = (1, 2)  # starts of bfloat16 against float32 besides mixed_precision's 0
# The start from which bfloat16 had not left the plateau after 120 steps on the TPU (call 6),
# run longer (Plan.precision_long_times): did it leave later, or not at all?
PRECISION_LONG_SEEDS = (2,)
# A second bfloat16 recipe: the embedding, the positions and LayerNorm's parameters kept in
# float32, the layers' matrices cast. Run from mixed_precision's start (0) and those of
# PRECISION_SEEDS, the long start for Plan.precision_long_times as long.
KEPT_F32 = ("embed", "pos", "ln1", "ln2", "final_ln")
DEVICE_PROCESS, MODULES_THREAD = "/device:TPU:0", "XLA Modules"
OPS_THREAD = "XLA Ops"  # the lane of a device's process that holds each instruction it ran
TOP_OPS = 12  # the instructions a step's summary names, longest first


@dataclasses.dataclass(frozen=True)
class Plan:
    """How much of each section to run."""

    full_batches: int  # per epoch of the seven loops, before the ragged one
    bench_rounds: int
    bench_budget: float  # seconds
    precision_steps: int
    accumulation_k: int
    precision_long_times: int  # precision_long runs this many times precision_steps


FULL = Plan(
    full_batches=6,
    bench_rounds=13,
    bench_budget=15.0,
    precision_steps=120,
    accumulation_k=4,
    precision_long_times=4,
)
QUICK = Plan(
    full_batches=2,
    bench_rounds=3,
    bench_budget=0.5,
    precision_steps=60,
    accumulation_k=4,
    precision_long_times=2,
)


def _say(started: float, message: str) -> None:
    sys.stderr.write(f"[{time.perf_counter() - started:7.1f} s] {message}\n")
    sys.stderr.flush()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def _error(error: BaseException) -> dict:
    return {"error": {"type": type(error).__name__, "message": _first_line(error)}}


# The update, as the seven loops and the sections below build it.
def update_fn(config: Config, optimizer):
    """`(state, tokens) -> (state, loss)`: loss, gradient, the optimizer's update."""

    def step(state, tokens):
        params, opt_state = state
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, config)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    return step


def fresh_state(config: Config, seed: int = 0):
    """Parameters and the optimizer's state, as `train` starts them."""
    params = init(config, jax.random.key(seed))
    return params, make_optimizer(config).init(params)


def audited_step(config: Config = CPU, calls: int = 4):
    """The transformer's step as `examples/step_audit.py` audits it: (update, state, batches,
    steps per call, the model's flops per step), `calls` batches of the chain on the device."""
    data = batches(config, seed=7)
    feed = [(jax.device_put(next(data)),) for _ in range(calls)]
    return make_step(config), fresh_state(config), feed, 1, flops_per_step(config)


def token_rows(config: Config, rows: int, seed: int) -> np.ndarray:
    """`rows` sequences of the chain: int32 (rows, seq + 1)."""
    return next(batches(dataclasses.replace(config, batch=rows), seed))


def split(tokens: np.ndarray, batch: int, drop_last: bool = False):
    stop = len(tokens) - len(tokens) % batch if drop_last else len(tokens)
    return [tokens[start : start + batch] for start in range(0, stop, batch)]


def final_loss(losses: list[float]) -> float:
    """A run's final loss: the mean of its last LAST losses."""
    return float(np.mean(losses[-LAST:]))


def held_at_once(memory: dict) -> int:
    """What a step holds at once by its memory analysis (`_memory`'s fields): its arguments,
    outputs and temporaries, less the outputs that reuse the arguments' buffers."""
    return memory["argument"] + memory["output"] + memory["temp"] - memory["alias"]


def _memory(compiled) -> dict:
    """A compiled program's memory analysis in bytes. `peak`: the program's own peak where it
    reports one at least as large as its temporaries (the TPU's), else argument + output +
    temp - alias; `peak_from` says which."""
    stats = compiled.memory_analysis()
    fields = ("argument", "output", "alias", "temp", "generated_code")
    found = {f: int(getattr(stats, f"{f}_size_in_bytes", 0) or 0) for f in fields}
    reported = getattr(stats, "peak_memory_in_bytes", None)
    found["peak_reported"] = int(reported) if reported is not None else None
    if reported and reported >= found["temp"]:
        found["peak"], found["peak_from"] = int(reported), "reported"
    else:
        found["peak"] = held_at_once(found)
        found["peak_from"] = "argument + output + temp - alias"
    return found


def traffic_floor(memory: dict) -> int:
    """The fewest bytes a step with this memory analysis (bytes by field, as `_memory` keeps
    them) can move through the memory that holds its arrays: it reads its arguments and writes
    its outputs once, and every temporary it holds is written once and read at least once
    (XLA allocates none that no instruction reads)."""
    return memory["argument"] + memory["output"] + 2 * memory["temp"]


def _costs(compiled) -> dict:
    analysis = compiled.cost_analysis()
    return analysis[0] if isinstance(analysis, list) else analysis  # older JAX: a list


def _flops(compiled) -> float:
    return float(_costs(compiled)["flops"])


class Loops:
    """The seven loops of the page `training-step`, over the transformer: each
    `(state, tokens) -> (state, losses)` trains one epoch of `tokens` (examples, seq + 1)."""

    def __init__(self, config: Config):
        self.config, self.optimizer = config, make_optimizer(config)
        step = update_fn(config, self.optimizer)
        self.grad = jax.jit(jax.value_and_grad(partial(loss_fn, config=config)))
        self.step = jax.jit(step)
        self.step_donated = jax.jit(step, donate_argnums=0)
        self.scanned = jax.jit(partial(jax.lax.scan, step), donate_argnums=0)

    def batches(self, tokens, drop_last=False):
        return split(tokens, self.config.batch, drop_last)

    # As commonly written: the gradient jitted, the optimizer run op by op, each NumPy batch
    # converted inside the step, the loss fetched at every step, a ragged last batch.
    def update_eager(self, state, tokens):
        params, opt_state = state
        loss, grads = self.grad(params, jnp.asarray(tokens))
        updates, opt_state = self.optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), float(loss)

    def as_written(self, state, tokens):
        losses = []
        for batch in self.batches(tokens):
            state, loss = self.update_eager(state, batch)
            losses.append(loss)
        return state, losses

    def one_jit(self, state, tokens):
        losses = []
        for batch in self.batches(tokens):
            state, loss = self.step(state, batch)
            losses.append(float(loss))
        return state, losses

    @staticmethod
    def on_device(step, state, feed):
        """Losses kept on the device, fetched LOG_EVERY at a time, LOG_EVERY steps late."""
        pending, fetched = [], []
        for batch in feed:
            state, loss = step(state, batch)
            pending.append(loss)
            if len(pending) == 2 * LOG_EVERY:
                fetched += [float(x) for x in jax.device_get(pending[:LOG_EVERY])]
                del pending[:LOG_EVERY]
        return state, fetched + [float(x) for x in jax.device_get(pending)]

    @staticmethod
    def put_each(feed):
        return (jax.device_put(batch) for batch in feed)

    @staticmethod
    def put_ahead(feed):
        current = None
        for batch in feed:
            following = jax.device_put(batch)
            if current is not None:
                yield current
            current = following
        if current is not None:
            yield current

    def no_wait(self, state, tokens):
        return self.on_device(self.step, state, self.put_each(self.batches(tokens)))

    def one_shape(self, state, tokens):
        return self.on_device(self.step, state, self.put_each(self.batches(tokens, True)))

    def donated(self, state, tokens):
        feed = self.put_each(self.batches(tokens, True))
        return self.on_device(self.step_donated, state, feed)

    def prefetched(self, state, tokens):
        feed = self.put_ahead(self.batches(tokens, True))
        return self.on_device(self.step_donated, state, feed)

    def groups(self, tokens):
        """Groups of LOG_EVERY full batches, stacked: (LOG_EVERY, batch, seq + 1)."""
        group = self.config.batch * LOG_EVERY
        whole = tokens[: len(tokens) - len(tokens) % group]
        return whole.reshape(-1, LOG_EVERY, self.config.batch, tokens.shape[1])

    def scanned_loop(self, state, tokens):
        losses, previous = [], None
        for stacked in self.groups(tokens):
            state, chunk = self.scanned(state, jax.device_put(stacked))
            if previous is not None:
                losses += [float(x) for x in jax.device_get(previous)]
            previous = chunk
        return state, losses + (
            [float(x) for x in jax.device_get(previous)] if previous is not None else []
        )

    def named(self) -> dict:
        loops = (
            self.as_written,
            self.one_jit,
            self.no_wait,
            self.one_shape,
            self.donated,
            self.prefetched,
            self.scanned_loop,
        )
        return dict(zip(LOOP_NAMES, loops, strict=True))

    def tokens_used(self, name: str, examples: int) -> int:
        """Examples an epoch of `examples` trains on with loop `name`, times seq."""
        if name in ("as written", "one jit", "no wait"):
            used = examples
        elif name == "scanned":
            used = examples - examples % (self.config.batch * LOG_EVERY)
        else:
            used = examples - examples % self.config.batch
        return used * self.config.seq

    def steps_per_epoch(self, name: str, examples: int) -> int:
        b = self.config.batch
        return -(-examples // b) if name in ("as written", "one jit", "no wait") else examples // b


def epochs(loop, config: Config, tokens: np.ndarray, seed: int = 0):
    """A call that trains one more epoch with `loop` each time, the examples shuffled anew;
    the state stays inside."""
    state, rng = fresh_state(config, seed), np.random.default_rng(seed)

    def epoch():
        nonlocal state
        state, _ = loop(state, tokens[rng.permutation(len(tokens))])
        return state

    return epoch


def seven_loops(loops: Loops, plan: Plan, say) -> dict:
    config = loops.config
    examples = plan.full_batches * config.batch + RAGGED
    tokens = token_rows(config, examples, seed=1)
    per_token = flops_per_step(config) / (config.batch * config.seq)
    timed, compiles = {}, {}
    for name, loop in loops.named().items():
        epoch = epochs(loop, config, tokens)
        with CompileCounter() as counter:
            jax.block_until_ready(epoch())
        compiles[name] = counter.count
        say(f"loops: {name}: first epoch, {counter.count} compilations")
        # One loop at a time: seven train states do not fit beside a step's temporaries.
        timed[name] = bench(epoch, n=plan.bench_rounds, budget=plan.bench_budget)
        del epoch
        gc.collect()
    out = {
        "examples_per_epoch": examples,
        "batch": config.batch,
        "first_epoch_compilations": compiles,
        "epoch_seconds": {name: list(t.times) for name, t in timed.items()},
        "steps_per_epoch": {},
        "seconds_per_step": {},
        "tokens_per_second": {},
        "mfu": {},
        "timed": "one loop after another, each alone on the device with its own train state "
        "(seven states do not fit in the chip's memory beside a step's temporaries)",
        "note": "seconds per step: median epoch over its steps (the ragged loops count the "
        "small last step as one); tokens per second: the tokens an epoch trains on over its "
        "median time; MFU: those tokens' model flops (flops_per_step per token) per second "
        "over the peak",
    }
    for name, t in timed.items():
        steps = loops.steps_per_epoch(name, examples)
        rate = loops.tokens_used(name, examples) / t.median
        out["steps_per_epoch"][name] = steps
        out["seconds_per_step"][name] = t.median / steps
        out["tokens_per_second"][name] = rate
        out["mfu"][name] = rate * per_token / PEAK_FLOPS
    return out


def one_layer_costs(config: Config) -> dict:
    """XLA's cost analysis of one layer's forward and backward, compiled alone."""
    params = jax.eval_shape(partial(init, config), jax.random.key(0))["layers"]
    dtype = jnp.bfloat16 if config.bf16 else jnp.float32
    layer = jax.tree.map(lambda w: jax.ShapeDtypeStruct(w.shape[1:], dtype), params)
    x = jax.ShapeDtypeStruct((config.batch, config.seq, config.width), jnp.float32)

    def one_layer(x, p):
        return block(x, p, config).astype(jnp.float32).sum()

    layer_grad = jax.jit(jax.value_and_grad(one_layer, argnums=(0, 1)))
    return _costs(layer_grad.lower(x, layer).compile())


def step_costs(compiled, config: Config) -> dict:
    """XLA's flops and bytes accessed of a whole step of `config` compiled as `compiled`: its
    cost analysis counts the body of the layers' scan once, so the other layers' forward and
    backward, each compiled alone, are added."""
    step, layer = _costs(compiled), one_layer_costs(config)
    return {
        key: float(step.get(key, 0.0)) + (config.layers - 1) * float(layer.get(key, 0.0))
        for key in ("flops", "bytes accessed", "transcendentals")
    }


def hardware_count(loops: Loops) -> dict:
    """The compiler's flop count of the step against the PaLM count. The layers' scan body is
    counted once, so one layer's forward and backward, compiled alone, are added for the
    other layers."""
    config = loops.config
    state = fresh_state(config)
    batch = jax.ShapeDtypeStruct((config.batch, config.seq + 1), jnp.int32)
    step_flops = _flops(loops.step_donated.lower(state, batch).compile())
    layer_flops = float(one_layer_costs(config)["flops"])
    all_layers = step_flops + (config.layers - 1) * layer_flops
    model = flops_per_step(config)
    return {
        "compiled_step_flops": step_flops,
        "one_layer_forward_backward_flops": layer_flops,
        "compiled_flops_all_layers": all_layers,
        "palm_flops": model,
        "ratio_all_layers_to_palm": all_layers / model,
        "ratio_step_to_palm": step_flops / model,
        "note": "cost_analysis counts a scan body once: the step's figure holds one layer's "
        "forward and backward, so layers - 1 times one layer's, compiled alone, are added. "
        "The compiler also counts what the PaLM count leaves out: the optimizer's "
        "elementwise work, LayerNorm, softmax, GELU, the loss; remat's recompute when on.",
    }


def read_trace_events(log_dir: str | Path) -> list[dict]:
    """The events of the one `*.trace.json.gz` a trace wrote under `log_dir`."""
    found = sorted(Path(log_dir).rglob("*.trace.json.gz"))
    if len(found) != 1:
        msg = f"expected one *.trace.json.gz under {log_dir}, found {len(found)}"
        raise FileNotFoundError(msg)
    with gzip.open(found[0]) as fh:
        return json.load(fh)["traceEvents"]


class NoDeviceLane(ValueError):
    """The trace has no lane of the device's program executions."""


def lane_events(events: list[dict], process: str, thread: str) -> list[dict]:
    """The complete events of thread `thread` of process `process` in a Chrome trace (ts and
    dur in µs); NoDeviceLane, naming what is missing, where there are none."""
    meta = [e for e in events if e.get("ph") == "M"]
    pids = {
        e["pid"]
        for e in meta
        if e.get("name") == "process_name" and e.get("args", {}).get("name") == process
    }
    if not pids:
        processes = sorted(
            {e.get("args", {}).get("name", "?") for e in meta if e.get("name") == "process_name"}
        )
        msg = f"the trace has no process named {process!r} (it has {processes})"
        raise NoDeviceLane(msg)
    lanes = {
        (e["pid"], e["tid"])
        for e in meta
        if e.get("pid") in pids
        and e.get("name") == "thread_name"
        and e.get("args", {}).get("name") == thread
    }
    found = [e for e in events if e.get("ph") == "X" and (e.get("pid"), e.get("tid")) in lanes]
    if not found:
        msg = f"the trace has no events on a thread {thread!r} of process {process!r}"
        raise NoDeviceLane(msg)
    return found


def device_idle(
    events: list[dict], process: str = DEVICE_PROCESS, thread: str = MODULES_THREAD
) -> dict:
    """The device's program executions in a Chrome trace (`lane_events` of thread `thread`
    of process `process`): from the first one's start to the last one's end, how long the
    device ran programs and how long it sat idle between them."""
    modules = sorted(
        (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)))
        for e in lane_events(events, process, thread)
    )
    busy, gaps, reach = 0.0, [], modules[0][0]
    for start, end in modules:
        if start > reach:
            gaps.append(start - reach)
        busy += max(0.0, end - max(start, reach))
        reach = max(reach, end)
    span = reach - modules[0][0]
    return {
        "modules": len(modules),
        "span_ms": span / 1e3,
        "busy_ms": busy / 1e3,
        "idle_ms": (span - busy) / 1e3,
        "idle_fraction": (span - busy) / span if span else 0.0,
        "gaps": len(gaps),
        "largest_gap_ms": max(gaps, default=0.0) / 1e3,
    }


def traced_idle(loops: Loops) -> dict:
    """TRACED_STEPS steps traced, for the loop as written and the made-fast one (donated,
    prefetched, losses fetched late), each summarised by `device_idle`."""
    config = loops.config
    tokens = token_rows(config, TRACED_STEPS * config.batch, seed=2)
    opts = jax.profiler.ProfileOptions()
    opts.python_tracer_level = 0
    opts.host_tracer_level = 1
    out: dict = {"steps": TRACED_STEPS}
    for name, loop in (("as written", loops.as_written), ("made fast", loops.prefetched)):
        state = fresh_state(config)
        jax.block_until_ready(state)
        with tempfile.TemporaryDirectory() as log_dir:
            with jax.profiler.trace(log_dir, profiler_options=opts):
                state, _ = loop(state, tokens)
                jax.block_until_ready(state)
            try:
                out[name] = device_idle(read_trace_events(log_dir))
            except NoDeviceLane as error:
                out[name] = {"unreadable": str(error)}
        del state
    return out


def instruction_kinds(hlo: str) -> dict[str, str]:
    """Each instruction of optimized HLO text that a device runs, by what it computes:
    "matrix products" (a dot or a convolution, alone or fused), "reductions" (a reduce, alone
    or fused), "copies" (copy, transpose and their async halves), "control" (while, call,
    conditional: containers of other instructions), else "elementwise and other"."""
    kinds = {}
    for name, ops in every_kernel(hlo).items():
        if {"dot", "convolution"} & set(ops):
            kinds[name] = "matrix products"
        elif "reduce" in ops:
            kinds[name] = "reductions"
        elif ops and set(ops) <= {"copy", "copy-start", "copy-done", "transpose"}:
            kinds[name] = "copies"
        elif ops and set(ops) <= {"while", "call", "conditional"}:
            kinds[name] = "control"
        else:
            kinds[name] = "elementwise and other"
    return kinds


def device_ops(events: list[dict], process: str = DEVICE_PROCESS) -> dict[str, list[float]]:
    """Each instruction the device ran in a Chrome trace (`lane_events` of the thread
    OPS_THREAD of process `process`), with the length of each run of it in µs."""
    ran: dict[str, list[float]] = {}
    for e in lane_events(events, process, OPS_THREAD):
        ran.setdefault(e["name"], []).append(float(e.get("dur", 0)))
    return ran


def ops_summary(ran: dict[str, list[float]], kinds: dict[str, str], steps: int) -> dict:
    """What a step's instructions took on the device, in ms a step: by kind (containers left
    out, their instructions counted), and the TOP_OPS longest instructions."""
    per_step = {name: sum(times) / 1e3 / steps for name, times in ran.items()}
    kind_of = {name: kinds.get(name, "not in the step's HLO") for name in ran}
    by_kind: dict[str, float] = {}
    for name, ms in per_step.items():
        if kind_of[name] != "control":
            by_kind[kind_of[name]] = by_kind.get(kind_of[name], 0.0) + ms
    top = sorted(
        (name for name in per_step if kind_of[name] != "control"), key=per_step.get, reverse=True
    )
    return {
        "steps": steps,
        "ms_by_kind": dict(sorted(by_kind.items(), key=lambda kv: -kv[1])),
        "top": [
            {
                "name": name,
                "kind": kind_of[name],
                "ms": per_step[name],
                "runs": len(ran[name]) / steps,
            }
            for name in top[:TOP_OPS]
        ],
    }


def step_ops(loops: Loops) -> dict:
    """TRACED_STEPS steps of the made-fast loop traced: each instruction's device time a step
    (the trace's OPS_THREAD lane), by kind from the compiled step's HLO."""
    config = loops.config
    tokens = token_rows(config, (TRACED_STEPS + 1) * config.batch, seed=3)
    abstract = jax.eval_shape(partial(fresh_state, config))
    shape = jax.ShapeDtypeStruct((config.batch, config.seq + 1), jnp.int32)
    kinds = instruction_kinds(loops.step_donated.lower(abstract, shape).compile().as_text())
    state = fresh_state(config)
    state, _ = loops.prefetched(state, tokens[: config.batch])  # compiles, outside the trace
    jax.block_until_ready(state)
    opts = jax.profiler.ProfileOptions()
    opts.python_tracer_level = 0
    opts.host_tracer_level = 1
    with tempfile.TemporaryDirectory() as log_dir:
        with jax.profiler.trace(log_dir, profiler_options=opts):
            state, _ = loops.prefetched(state, tokens[config.batch :])
            jax.block_until_ready(state)
        events = read_trace_events(log_dir)
    del state
    try:
        summary = ops_summary(device_ops(events), kinds, TRACED_STEPS)
    except NoDeviceLane as error:
        return {"unreadable": str(error)}
    summary["busy_ms"] = device_idle(events)["busy_ms"] / TRACED_STEPS
    return summary


_COMPILED: dict = {}  # (jitted step, precision, batch shape): its compiled program


def _compiled(step, state, batch: np.ndarray, precision: str | None):
    """`step` compiled for `state` and `batch`, once a process for each precision and shape:
    the runs from other starts reuse it."""
    key = (step, precision, batch.shape)
    if key not in _COMPILED:
        _COMPILED[key] = step.lower(state, batch).compile()
    return _COMPILED[key]


def _run_steps(
    config: Config, step, batches_: list[np.ndarray], precision: str | None, seed: int = 0
) -> dict:
    """`len(batches_)` steps of the donated `step` from the start of `seed`: the compile
    apart, the steps timed as a loop that fetches losses late."""
    context = jax.default_matmul_precision(precision) if precision else contextlib.nullcontext()
    with context:
        state = fresh_state(config, seed)
        compiled = _compiled(step, state, batches_[0], precision)
        state, first = compiled(state, jax.device_put(batches_[0]))
        losses = [float(first)]
        pending, started = [], time.perf_counter()
        for batch in batches_[1:]:
            state, loss = compiled(state, jax.device_put(batch))
            pending.append(loss)
            if len(pending) > LOG_EVERY:
                losses += [float(x) for x in jax.device_get(pending[:-1])]
                pending = pending[-1:]
        losses += [float(x) for x in jax.device_get(pending)]
        seconds = (time.perf_counter() - started) / (len(batches_) - 1)
    return {
        "seconds_per_step": seconds,
        "mfu": flops_per_step(config) / seconds / PEAK_FLOPS,
        "final_loss": final_loss(losses),
        "losses": losses,
    }


def mixed_precision(loops: Loops, plan: Plan, say) -> dict:
    config = loops.config
    data = batches(config, seed=3)
    same = [next(data) for _ in range(plan.precision_steps)]
    variants = {
        "bfloat16": (dataclasses.replace(config, bf16=True), None),
        "float32": (dataclasses.replace(config, bf16=False), None),
        "float32 highest": (dataclasses.replace(config, bf16=False), "highest"),
    }
    runs = {}
    for name, (variant, precision) in variants.items():
        if variant == config and precision is None:
            step = loops.step_donated  # the same program, compiled already
        else:
            step = make_step(dataclasses.replace(variant, donate=True))
        runs[name] = _run_steps(variant, step, same, precision)
        say(f"mixed precision: {name}: final loss {runs[name]['final_loss']:.3f}")
    reference = runs["float32 highest"]["final_loss"]
    largest = max(abs(r["final_loss"] - reference) for r in runs.values())
    floor = math.log(config.vocab)
    return {
        "steps": plan.precision_steps,
        "variants": runs,
        "reference": "float32 highest",
        "final_loss_is": f"the mean of the last {LAST} losses",
        "largest_final_difference": largest,
        "tolerance": LOSS_TOLERANCE,
        "within_tolerance": largest <= LOSS_TOLERANCE,
        "ln_vocab": floor,
        "entropy_rate": entropy_rate(),
        "loss_fell_well_below_ln_vocab": all(
            r["final_loss"] < WELL_BELOW * floor for r in runs.values()
        ),
        "well_below_means": f"final loss under {WELL_BELOW} ln(vocab)",
        "peak_flops": PEAK_FLOPS,
    }


def _ready_step(step, config: Config, batch):
    """`step` compiled for a fresh state of `config` and `batch`, and a call that runs one
    more donated step each time (`_stepper`)."""
    state = fresh_state(config)
    compiled = step.lower(state, batch).compile()
    return compiled, _stepper(compiled, state, batch)


def _stepper(compiled, state, batch):
    """A call that runs one more donated step each time, the state kept inside."""
    box = [state]

    def one():
        box[0], loss = compiled(box[0], batch)
        return loss

    return one


def saved_residuals_text(config: Config, lines: int = 30) -> str:
    """What `print_saved_residuals` prints for one layer under the remat policy."""
    dtype = jnp.bfloat16 if config.bf16 else jnp.float32
    params = jax.eval_shape(partial(init, config), jax.random.key(0))["layers"]
    layer = jax.tree.map(lambda w: jax.ShapeDtypeStruct(w.shape[1:], dtype), params)
    x = jax.ShapeDtypeStruct((config.batch, config.seq, config.width), jnp.float32)
    policy = jax.checkpoint_policies.dots_with_no_batch_dims_saveable
    one_layer = jax.checkpoint(partial(block, config=config), policy=policy)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print_saved_residuals(one_layer, x, layer)
    text = printed.getvalue().replace(str(Path(block.__code__.co_filename).parent) + "/", "")
    return "\n".join(text.splitlines()[:lines])


def remat(loops: Loops, plan: Plan) -> dict:
    config = loops.config
    batch = jax.device_put(token_rows(config, config.batch, seed=4))
    memory, flops, steppers = {}, {}, {}
    with_remat = make_step(dataclasses.replace(config, remat=True, donate=True))
    for name, step in (("without", loops.step_donated), ("with", with_remat)):
        compiled, stepper = _ready_step(step, config, batch)
        memory[name], flops[name] = _memory(compiled), _flops(compiled)
        steppers[name] = (stepper, ())
    timed = bench_together(steppers, n=plan.bench_rounds, budget=plan.bench_budget / 2)
    return {
        "policy": "jax.checkpoint_policies.dots_with_no_batch_dims_saveable",
        "memory_bytes": memory,
        "compiled_step_flops": flops,
        "seconds_per_step": {name: t.median for name, t in timed.items()},
        "step_seconds": {name: list(t.times) for name, t in timed.items()},
        "saved_residuals_one_layer": saved_residuals_text(config),
    }


def _out_of_memory(error: Exception) -> bool:
    """Whether XLA refused a program for want of memory."""
    return "RESOURCE_EXHAUSTED" in str(error) or "Ran out of memory" in str(error)


def _remat_names(compiled) -> int:
    """Instructions XLA rematerialized to fit: their names carry `.remat`."""
    return compiled.as_text().count(".remat")


def batch_fits(loops: Loops, say, limit: int | None = None) -> dict:
    """The largest batch, its memory counted one way at every batch (`held_at_once`): fitted
    at the config's batch and twice it, predicted under the device's limit (or `limit`
    bytes); compiled there and at the next batch of the series past both (four compiles in
    all), then, at each batch that compiled, smallest first, a step run, the allocator's peak
    read, and TIMED_STEPS more steps timed. Run first in its process, so that the peak is
    this section's."""
    config, step = loops.config, loops.step_donated
    device = jax.devices()[0]
    limit = limit or (device.memory_stats() or {}).get("bytes_limit")
    if not limit:
        return {"skipped": "this device reports no bytes_limit in memory_stats()"}
    abstract = jax.eval_shape(partial(fresh_state, config))

    def compile_at(batch):
        shape = jax.ShapeDtypeStruct((batch, config.seq + 1), jnp.int32)
        return step.lower(abstract, shape).compile()

    compiled = {b: compile_at(b) for b in (config.batch, 2 * config.batch)}
    held = {b: held_at_once(_memory(c)) for b, c in compiled.items()}
    (small, a), (large, b) = held.items()
    slope = (b - a) / (large - small)
    predicted = int((limit - (a - slope * small)) / slope)
    say(f"batch fits: {a - slope * small:.3g} + {slope:.3g} * batch; predicted {predicted}")
    out: dict = {
        "bytes_limit": int(limit),
        "fit": {"batches": [small, large], "held": [a, b], "a": a - slope * small, "b": slope},
        "predicted": predicted,
        "runs": [],
    }
    beyond = max(predicted, large) + small  # the next batch of the series past both
    for batch in (predicted, beyond):
        if batch in compiled:
            continue
        try:
            compiled[batch] = compile_at(batch)
        except Exception as error:
            if not _out_of_memory(error):
                raise
            out["runs"].append({"batch": batch, "refused": _first_line(error)})
    for batch in sorted(compiled):
        run = {
            "batch": batch,
            "memory_bytes": _memory(compiled[batch]),
            "remat_instructions": _remat_names(compiled[batch]),
        }
        try:
            state = fresh_state(config)
            tokens = jax.device_put(token_rows(config, batch, seed=5))
            state, loss = compiled[batch](state, tokens)
            run["loss"] = float(loss)
            stepper = _stepper(compiled[batch], state, tokens)
            del state
            started = time.perf_counter()
            jax.block_until_ready([stepper() for _ in range(TIMED_STEPS)])
            seconds = (time.perf_counter() - started) / TIMED_STEPS
            flops = flops_per_step(dataclasses.replace(config, batch=batch))
            run["timed"] = {
                "steps": TIMED_STEPS,
                "seconds_per_step": seconds,
                "mfu": flops / seconds / PEAK_FLOPS,
            }
            del stepper, tokens
        except Exception as error:
            run["error"] = _error(error)["error"]
        gc.collect()
        run["peak_bytes_in_use"] = (device.memory_stats() or {}).get("peak_bytes_in_use")
        out["runs"].append(run)
    return out


def _norm(tree) -> float:
    """The Euclidean norm of every leaf of `tree` together."""
    return math.sqrt(sum(float(jnp.sum(jnp.square(leaf))) for leaf in jax.tree.leaves(tree)))


def _largest(tree) -> float:
    return max(float(jnp.max(jnp.abs(leaf))) for leaf in jax.tree.leaves(tree))


def multisteps_gap(config: Config, k: int, large: np.ndarray) -> dict:
    """The page's step with `accumulate=k` (AdamW inside optax.MultiSteps) over the k
    micro-batches of each batch of `large` (updates, k * b, seq + 1), against the page's step
    on each whole batch, from the same start, in float32 at the highest matmul precision:
    how far apart the parameters end, over how far the large batches moved them (Euclidean
    norms of every parameter together, and largest entries), and the largest move of a
    parameter by a micro-batch before a group's last (MultiSteps' update is zero there)."""
    exact = dataclasses.replace(config, bf16=False, remat=False, donate=False, accumulate=1)
    grouped = dataclasses.replace(exact, accumulate=k)
    with jax.default_matmul_precision("highest"):
        state = fresh_state(exact)
        start = state[0]
        for batch in large:
            state, _ = make_step(exact)(state, batch)
        whole = state[0]
        state, early = fresh_state(grouped), 0.0  # the same parameters: seed 0
        for batch in large:
            for i, part in enumerate(batch.reshape(k, len(batch) // k, -1)):
                before = state[0]
                state, _ = make_step(grouped)(state, part)
                if i < k - 1:
                    early = max(early, _largest(jax.tree.map(jnp.subtract, state[0], before)))
        accumulated = state[0]
    apart = jax.tree.map(jnp.subtract, accumulated, whole)
    moved = jax.tree.map(jnp.subtract, whole, start)
    return {
        "k": k,
        "micro_batch": int(large.shape[1]) // k,
        "updates": len(large),
        "distance": _norm(apart),
        "moved": _norm(moved),
        "relative_difference": _norm(apart) / _norm(moved),
        "largest_difference": _largest(apart),
        "largest_move": _largest(moved),
        "moved_before_a_groups_last_batch": early,
    }


def multisteps_cost(loops: Loops, plan: Plan) -> dict:
    """In the config the device ran (bfloat16, donated): the page's step with `accumulate=k`
    on batches of batch / k against the step on whole batches: the memory each holds at once
    by its memory analysis, and its time per update (k micro-steps, timed in turns)."""
    config, k = loops.config, plan.accumulation_k
    grouped = dataclasses.replace(config, accumulate=k)
    tokens = token_rows(config, config.batch, seed=6)
    memory, steppers = {}, {}
    for name, variant, rows in (
        ("whole batch", config, tokens),
        ("accumulated", grouped, tokens[: config.batch // k]),
    ):
        compiled, stepper = _ready_step(make_step(variant), variant, jax.device_put(rows))
        memory[name] = _memory(compiled)
        steppers[name] = (stepper, ())
    timed = bench_together(steppers, n=plan.bench_rounds, budget=plan.bench_budget / 2)
    per_update = {"whole batch": 1, "accumulated": k}
    return {
        "batch": config.batch,
        "micro_batch": config.batch // k,
        "memory_bytes": memory,
        "held_at_once": {name: held_at_once(m) for name, m in memory.items()},
        "seconds_per_call": {name: t.median for name, t in timed.items()},
        "call_seconds": {name: list(t.times) for name, t in timed.items()},
        "seconds_per_update": {name: timed[name].median * n for name, n in per_update.items()},
    }


def multisteps(loops: Loops, plan: Plan) -> dict:
    """The page's gradient accumulation: exact against the large batch (`multisteps_gap`,
    ACCUMULATED_UPDATES updates of the config's batch), and what it costs
    (`multisteps_cost`)."""
    config, k = loops.config, plan.accumulation_k
    rows = token_rows(config, config.batch * ACCUMULATED_UPDATES, seed=6)
    found = multisteps_gap(config, k, rows.reshape(ACCUMULATED_UPDATES, config.batch, -1))
    return found | {
        "optimizer": "the page's make_optimizer: AdamW after a warmup, clipped, in MultiSteps",
        "precision": "float32, jax.default_matmul_precision('highest')",
        "tolerance": ACCUMULATION_TOLERANCE,
        "within_tolerance": found["relative_difference"] <= ACCUMULATION_TOLERANCE,
        "cost": multisteps_cost(loops, plan),
    }


def precision_seeds(
    loops: Loops, plan: Plan, say, seeds=PRECISION_SEEDS, steps: int | None = None
) -> dict:
    """bfloat16 against float32 at the default precision from other starts than
    `mixed_precision`'s: for each of `seeds`, fresh parameters from it and batches of its
    own, `steps` steps each (`plan.precision_steps` by default)."""
    config, out, steps = loops.config, {}, steps or plan.precision_steps
    for seed in seeds:
        data = batches(config, seed=100 + seed)
        same = [next(data) for _ in range(steps)]
        runs = {}
        for name, bf16 in (("bfloat16", True), ("float32", False)):
            variant = dataclasses.replace(config, bf16=bf16, donate=True)
            runs[name] = _run_steps(variant, make_step(variant), same, None, seed=seed)
            say(f"precision seed {seed}: {name}: final loss {runs[name]['final_loss']:.3f}")
        out[str(seed)] = {
            "final_loss": {name: run["final_loss"] for name, run in runs.items()},
            "losses": {name: run["losses"] for name, run in runs.items()},
            "seconds_per_step": {name: run["seconds_per_step"] for name, run in runs.items()},
            "difference": abs(runs["bfloat16"]["final_loss"] - runs["float32"]["final_loss"]),
        }
    return {
        "steps": steps,
        "seeds": out,
        "tolerance": LOSS_TOLERANCE,
        "final_loss_is": f"the mean of the last {LAST} losses",
        "batches_seed": "100 + the seed",
    }


def _start(config: Config, plan: Plan, seed: int) -> list[np.ndarray]:
    """The batches the recorded precision runs from `seed` used: mixed_precision's for 0, the
    precision_seeds' (and precision_long's, as long) for the others."""
    data = batches(config, seed=3 if seed == 0 else 100 + seed)
    times = plan.precision_long_times if seed in PRECISION_LONG_SEEDS else 1
    return [next(data) for _ in range(times * plan.precision_steps)]


def _from_every_start(config: Config, plan: Plan, say, label: str) -> dict:
    """`config`'s run from each start the first bfloat16 recipe ran from, on the same batches:
    by start, its losses, time per step and MFU."""
    out = {}
    for seed in (0, *PRECISION_SEEDS):
        run = _run_steps(config, make_step(config), _start(config, plan, seed), None, seed=seed)
        say(f"{label} {seed}: final loss {run['final_loss']:.3f}")
        out[str(seed)] = {key: run[key] for key in ("losses", "seconds_per_step", "mfu")}
    return out


def precision_kept(loops: Loops, plan: Plan, say) -> dict:
    """bfloat16 with KEPT_F32 in float32, from each start the other recipe ran from, on the
    same batches; and the all-bfloat16 recipe again from start 0, whose losses, set beside
    mixed_precision's, show whether a run repeats exactly from one process to the next."""
    kept = dataclasses.replace(loops.config, bf16=True, f32_params=KEPT_F32, donate=True)
    out = _from_every_start(kept, plan, say, "kept float32")
    every = dataclasses.replace(loops.config, bf16=True, donate=True)
    again = _run_steps(every, make_step(every), _start(every, plan, 0), None, seed=0)
    return {
        "kept_float32": list(KEPT_F32),
        "seeds": out,
        "all_bfloat16_again": {"seed": 0, "losses": again["losses"]},
        "steps": plan.precision_steps,
        "long_steps": plan.precision_long_times * plan.precision_steps,
        "batches_seed": "3 for start 0, else 100 + the seed, as the earlier runs",
    }


def precision_results(loops: Loops, plan: Plan, say) -> dict:
    """bfloat16 whose products return float32 (`Config.f32_results`), from each start the
    other recipes ran from. Only the products' inputs and their gradients are rounded to
    bfloat16: the results, the gradients that reach them and the elementwise work between
    products stay float32. Set beside the all-bfloat16 recipe's stall, it narrows down which
    rounding stalls."""
    config = dataclasses.replace(loops.config, bf16=True, f32_results=True, donate=True)
    return {
        "seeds": _from_every_start(config, plan, say, "float32 results"),
        "steps": plan.precision_steps,
        "long_steps": plan.precision_long_times * plan.precision_steps,
        "batches_seed": "3 for start 0, else 100 + the seed, as the earlier runs",
    }


def device_facts() -> dict:
    """The default device, as `chapter2.accelerator` records it."""
    device = jax.devices()[0]
    return {
        "platform": device.platform,
        "device": device.device_kind,
        "jax": jax.__version__,
        "memory": device.memory_stats() or {},
    }


SECTIONS = (
    "batch_fits",  # first: the allocator's peak it reads is then its own
    "loops",
    "hardware_count",
    "traces",
    "mixed_precision",
    "remat",
    "multisteps",
    "step_ops",
    "precision_seeds",
    "precision_long",
    "precision_kept",
    "precision_results",
)


def record(
    quick: bool = False, out_path: Path | None = None, only: list[str] | None = None
) -> dict:
    """Every section's numbers on JAX's default device; the CPU config and few steps when
    `quick`. A section that fails records {"error": {"type", "message"}}. With `out_path`,
    the JSON so far is written there after each section."""
    started = time.perf_counter()
    say = partial(_say, started)
    config, plan = (CPU, QUICK) if quick else (TPU, FULL)
    out: dict = {
        "device": device_facts(),
        "jax": jax.__version__,
        "quick": quick,
        "config": dataclasses.asdict(config),
        "plan": dataclasses.asdict(plan),
        "parameters": parameter_count(jax.eval_shape(partial(init, config), jax.random.key(0))),
        "flops_per_step": flops_per_step(config),
        "peak_flops": PEAK_FLOPS,
        "peak_source": PEAK_SOURCE,
        "ln_vocab": math.log(config.vocab),
        "entropy_rate": entropy_rate(),
        "section_seconds": {},
    }
    loops = Loops(config)
    sections = {
        "batch_fits": lambda: batch_fits(loops, say),
        "loops": lambda: seven_loops(loops, plan, say),
        "hardware_count": lambda: hardware_count(loops),
        "traces": lambda: traced_idle(loops),
        "mixed_precision": lambda: mixed_precision(loops, plan, say),
        "remat": lambda: remat(loops, plan),
        "multisteps": lambda: multisteps(loops, plan),
        "step_ops": lambda: step_ops(loops),
        "precision_seeds": lambda: precision_seeds(loops, plan, say),
        "precision_long": lambda: precision_seeds(
            loops, plan, say, PRECISION_LONG_SEEDS, plan.precision_long_times * plan.precision_steps
        ),
        "precision_kept": lambda: precision_kept(loops, plan, say),
        "precision_results": lambda: precision_results(loops, plan, say),
    }
    for name, section in sections.items():
        if only and name not in only:
            continue
        say(f"{name}: starting")
        begun = time.perf_counter()
        try:
            out[name] = section()
        except Exception as error:  # one failing section must not stop the others
            out[name] = _error(error)
            say(f"{name}: failed: {type(error).__name__}: {_first_line(error)}")
        out["section_seconds"][name] = time.perf_counter() - begun
        out["seconds"] = time.perf_counter() - started
        gc.collect()  # the section's device arrays go before the next one
        say(f"{name}: done in {out['section_seconds'][name]:.1f} s")
        if out_path is not None:
            Path(out_path).write_text(json.dumps(out, indent=1) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m chapter2.training_numbers", description=__doc__
    )
    parser.add_argument("out", type=Path, help="the JSON file to write")
    parser.add_argument("--quick", action="store_true", help="the CPU config, few steps")
    parser.add_argument("--part", nargs="+", choices=SECTIONS, help="only these sections")
    args = parser.parse_args(argv)
    found = record(args.quick, args.out, args.part)
    return 1 if any("error" in value for value in found.values() if isinstance(value, dict)) else 0


if __name__ == "__main__":
    sys.exit(main())
