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
) -> Audit:
    """Call `update` once per batch, counting; then time `timed_calls` more calls, cycling
    through the batches. `roofs`: place a jitted update (one with `.lower`) under them."""
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
        returned_ready,
        donated,
        per_step,
        placement,
    )
