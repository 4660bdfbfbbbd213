"""What an update function costs over a few calls: its compilations, the NumPy data it takes
in, whether it hands back host values or waits for its results, what it donates, its time
per step and, for one jitted program, its place under this machine's roofs.

An update is `update(state, *batch) -> (state, ...)`: the audit threads the state through
its calls, so a donated state is never reused.
"""

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from chapter2.compiles import CompileCounter
from chapter2.roofline import Placement, Roofs, place
from chapter2.timing import BenchResult

HOST_VALUES = (float, int, np.ndarray, np.generic)

# The vendor's peak rate of the devices whose MFU the audit can give, by the kind JAX names:
# (bfloat16 flop/s, where the vendor says so). Elsewhere it gives the share of the peak
# measured on the machine instead, which is not an MFU.
VENDOR_PEAKS = {
    "TPU v5 lite": (197e12, "https://cloud.google.com/tpu/docs/v5e"),  # Cloud TPU v5e
}


@dataclass(frozen=True)
class Utilization:
    """A model's flops per step at a step's time, against a peak: the vendor's (`mfu`), or,
    for a device whose vendor peak the audit does not know, the measured one."""

    model_flops: float  # per step, as the model counts them (the PaLM count, say)
    seconds: float  # per step
    peak: float  # flop/s
    vendor: bool  # the peak is the vendor's: the share is an MFU
    source: str  # where the peak comes from

    @property
    def share(self) -> float:
        return self.model_flops / self.seconds / self.peak

    def __str__(self) -> str:
        from chapter2.roofline import percent, rate_text  # noqa: PLC0415 - imports nothing heavy

        if self.vendor:
            vendor = rate_text(self.peak, "FLOP")
            return f"MFU {percent(self.share)} of the vendor's {vendor} ({self.source})"
        return (
            f"{percent(self.share)} of the measured peak, {rate_text(self.peak, 'FLOP')} "
            f"({self.source}; not an MFU)"
        )


def utilization(
    model_flops: float, seconds: float, device_kind: str, measured_peak: float | None
) -> Utilization | None:
    """The MFU where VENDOR_PEAKS knows `device_kind`, else the share of `measured_peak`
    (None where there is neither)."""
    if device_kind in VENDOR_PEAKS:
        peak, source = VENDOR_PEAKS[device_kind]
        return Utilization(model_flops, seconds, peak, True, source)
    if measured_peak:
        source = f"measured here; no vendor peak known for {device_kind!r}"
        return Utilization(model_flops, seconds, measured_peak, False, source)
    return None


@dataclass(frozen=True)
class Audit:
    """One update function, audited over `calls` calls of `steps_per_call` steps each."""

    calls: int
    steps_per_call: int
    compilations_first: int  # in the first call
    compilations_later: int  # in all the calls after it
    numpy_inputs: int  # NumPy arrays among one call's arguments, at most: JAX copies them in
    host_results: int  # host values (a float, a NumPy array) among one call's results
    returned_ready: bool  # a call given held-back inputs returned with its results computed
    donated: int  # input arrays one call deleted: donated to the program
    per_step: BenchResult  # seconds per step of the timed calls
    placement: Placement | None  # for one jitted program: its place under the roofs
    utilization: Utilization | None = None  # for a model that gives its flops per step
    loops: bool = False  # its program holds a loop, whose body XLA's count covers once

    @property
    def waits(self) -> bool:
        """Whether a call waits for the device: it hands back a host value, or it returned
        only once its results were computed."""
        return self.host_results > 0 or self.returned_ready


def _leaves(tree) -> list:
    return jax.tree.leaves(tree)


@jax.jit
def _held_back(arrays: list) -> list:
    """The same values, ready only after tens of milliseconds of device work: a call given
    them can return with its results computed only if it waited for the device."""
    spun = jax.lax.fori_loop(0, 2000, lambda _, c: jnp.sin(c) + 1.0, jnp.ones(4096))
    never = spun[0] > 1e30  # false, but XLA cannot know it before the loop has run
    return [a + never.astype(a.dtype) for a in arrays]


def _returned_ready(update: Callable, state, batch) -> tuple[bool, object]:
    """Call `update` on `state` with its numeric device arrays held back; whether the call
    returned with every device result computed, and the state it returned."""
    leaves, tree = jax.tree.flatten(state)
    held = [
        i
        for i, a in enumerate(leaves)
        if isinstance(a, jax.Array) and jnp.issubdtype(a.dtype, jnp.number)
    ]
    for i, a in zip(held, _held_back([leaves[i] for i in held]), strict=True):
        leaves[i] = a
    state, *rest = update(jax.tree.unflatten(tree, leaves), *batch)
    results = [r for r in _leaves((state, rest)) if isinstance(r, jax.Array)]
    ready = bool(held) and all(r.is_ready() for r in results)
    jax.block_until_ready(results)
    return ready, state


def audit(
    update: Callable,
    state,
    batches: Sequence[tuple],
    roofs: Roofs | None = None,
    steps_per_call: int = 1,
    timed_calls: int = 10,
    model_flops: float | None = None,
) -> Audit:
    """Call `update` once per batch, counting; then time `timed_calls` more calls, cycling
    through the batches. `roofs`: place a jitted update (one with `.lower`) under them.
    `model_flops`: the model's flops per step, set against the device's vendor peak (MFU) or,
    where `VENDOR_PEAKS` does not know it, the peak of `roofs`."""
    numpy_inputs = max(
        sum(isinstance(leaf, np.ndarray) for leaf in _leaves(batch)) for batch in batches
    )
    host_results = donated = 0
    with CompileCounter() as counter:
        for i, batch in enumerate(batches):
            inputs = [leaf for leaf in _leaves(state) if isinstance(leaf, jax.Array)]
            state, *rest = update(state, *batch)
            results = _leaves((state, rest))
            on_device = [leaf for leaf in results if isinstance(leaf, jax.Array)]
            host_results = max(host_results, sum(isinstance(r, HOST_VALUES) for r in results))
            donated = max(donated, sum(leaf.is_deleted() for leaf in inputs))
            jax.block_until_ready(on_device)
            if i == 0:
                first = counter.count
        later = counter.count - first
    returned_ready, state = _returned_ready(update, state, batches[0])
    times = []
    for batch in itertools.islice(itertools.cycle(batches), timed_calls):
        start = time.perf_counter()
        state, *rest = update(state, *batch)
        jax.block_until_ready([r for r in _leaves((state, rest)) if isinstance(r, jax.Array)])
        times.append((time.perf_counter() - start) / steps_per_call)
    per_step = BenchResult(tuple(times))
    placement, loops = None, False
    if roofs is not None and hasattr(update, "lower"):
        compiled = update.lower(state, *batches[0]).compile()
        # XLA's cost analysis counts a loop's body once: one step's cost, one step's time
        placement = place(compiled, per_step.median, roofs)
        loops = " while(" in compiled.as_text()
    used = None
    if model_flops is not None:
        kind = jax.devices()[0].device_kind
        used = utilization(model_flops, per_step.median, kind, roofs.peak if roofs else None)
    return Audit(
        len(batches),
        steps_per_call,
        first,
        later,
        numpy_inputs,
        host_results,
        returned_ready,
        donated,
        per_step,
        placement,
        used,
        loops,
    )
