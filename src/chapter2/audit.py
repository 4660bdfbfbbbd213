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
import numpy as np

from chapter2.compiles import CompileCounter
from chapter2.roofline import Placement, Roofs, place
from chapter2.timing import BenchResult

HOST_VALUES = (float, int, np.ndarray, np.generic)


@dataclass(frozen=True)
class Audit:
    """One update function, audited over `calls` calls of `steps_per_call` steps each."""

    calls: int
    steps_per_call: int
    compilations_first: int  # in the first call
    compilations_later: int  # in all the calls after it
    numpy_inputs: int  # NumPy arrays among one call's arguments, at most: JAX copies them in
    host_results: int  # host values (a float, a NumPy array) among one call's results
    ready_on_return: int  # calls whose device results were all computed when the call returned
    donated: int  # input arrays one call deleted: donated to the program
    per_step: BenchResult  # seconds per step of the timed calls
    placement: Placement | None  # for one jitted program: its place under the roofs

    @property
    def waits(self) -> bool:
        """Whether a call waits for the device: it hands back a host value, or every call's
        results were ready when it returned."""
        return self.host_results > 0 or self.ready_on_return == self.calls


def _leaves(tree) -> list:
    return jax.tree.leaves(tree)


def audit(
    update: Callable,
    state,
    batches: Sequence[tuple],
    roofs: Roofs | None = None,
    steps_per_call: int = 1,
    timed_calls: int = 10,
) -> Audit:
    """Call `update` once per batch, counting; then time `timed_calls` more calls, cycling
    through the batches. `roofs`: place a jitted update (one with `.lower`) under them."""
    numpy_inputs = max(
        sum(isinstance(leaf, np.ndarray) for leaf in _leaves(batch)) for batch in batches
    )
    host_results = ready = donated = 0
    with CompileCounter() as counter:
        for i, batch in enumerate(batches):
            inputs = [leaf for leaf in _leaves(state) if isinstance(leaf, jax.Array)]
            state, *rest = update(state, *batch)
            results = _leaves((state, rest))
            on_device = [leaf for leaf in results if isinstance(leaf, jax.Array)]
            ready += all(leaf.is_ready() for leaf in on_device)
            host_results = max(host_results, sum(isinstance(r, HOST_VALUES) for r in results))
            donated = max(donated, sum(leaf.is_deleted() for leaf in inputs))
            jax.block_until_ready(on_device)
            if i == 0:
                first = counter.count
        later = counter.count - first
    times = []
    for batch in itertools.islice(itertools.cycle(batches), timed_calls):
        start = time.perf_counter()
        state, *rest = update(state, *batch)
        jax.block_until_ready([r for r in _leaves((state, rest)) if isinstance(r, jax.Array)])
        times.append((time.perf_counter() - start) / steps_per_call)
    per_step = BenchResult(tuple(times))
    placement = None
    if roofs is not None and hasattr(update, "lower"):
        compiled = update.lower(state, *batches[0]).compile()
        # XLA's cost analysis counts a loop's body once: one step's cost, one step's time
        placement = place(compiled, per_step.median, roofs)
    return Audit(
        len(batches),
        steps_per_call,
        first,
        later,
        numpy_inputs,
        host_results,
        ready,
        donated,
        per_step,
        placement,
    )
