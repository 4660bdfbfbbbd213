"""Case study of the page xla-compilation: matmul-then-sum with a closure constant on the left.

The CPU backend hands `dot` followed by `reduce` to the YNNPACK library (a fusion of
kind=kCustom, "__ynn_fusion"). `jnp.sum(W_const @ x)` with a captured 128x128 `W_const` was
reported to return a wrong number silently on one CPU; the machines that built the book have
not reproduced it. This module holds the probe (both versions, the float64 reference, what
the compiled HLO holds) and turns the measured outcome into the page's wording, so that both
outcomes are worded, and tested, in one place.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass

import jax
import jax.numpy as jnp
import numpy as np

from chapter2.hlo import (
    called_computation,
    clean_hlo,
    dot_operands,
    entry_computation,
    fused_body,
    fusion_kinds,
)

N = 128
SEED = 0
# A float32 sum of n*n products of standard normals is off the float64 value by ~1e-4 here;
# the wrong results this case study is about are off by far more than this.
TOLERANCE = 1e-2  # for n = N; the rounding error grows with n, see tolerance()
YNN_OFF = {"XLA_FLAGS": "--xla_cpu_experimental_ynn_fusion_type="}


def tolerance(n: int = N) -> float:
    """How far a correct float32 result may be from the float64 reference, for n x n inputs."""
    return TOLERANCE * max(1.0, (n / N) ** 2)


def operands(n: int = N, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """The weight W and the input X: two n x n float32 matrices of standard normals."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((n, n)).astype(np.float32)
    x = rng.standard_normal((n, n)).astype(np.float32)
    return w, x


def reference(w: np.ndarray, x: np.ndarray) -> float:
    """sum(W @ X) computed by NumPy in float64: the number to trust."""
    return float(np.sum(w.astype(np.float64) @ x.astype(np.float64)))


def closure_version(w: np.ndarray) -> Callable:
    """jit(x -> sum(W @ x)) with W captured from the enclosing scope: a compile-time constant."""
    w_const = jnp.asarray(w)
    return jax.jit(lambda x: jnp.sum(w_const @ x))


def argument_version() -> Callable:
    """jit((x, w) -> sum(w @ x)): the same computation with W passed as an argument."""
    return jax.jit(lambda x, w: jnp.sum(w @ x))


def ynn_fusion_body(hlo: str) -> str | None:
    """The body of the ENTRY's __ynn_fusion in cleaned optimized HLO, or None if there is none."""
    for line in entry_computation(hlo).splitlines():
        if '"kind":"__ynn_fusion"' in line:
            return fused_body(hlo, called_computation(line))
    return None


@dataclass(frozen=True)
class ProbeResult:
    """What one run of the probe saw: the three numbers and the shape of the closure's HLO."""

    n: int
    seed: int
    closure: float  # sum(W_const @ X), W captured by the closure
    argument: float  # sum(W @ X), W passed as an argument
    reference: float  # the same in float64 NumPy
    uses_ynn: bool  # the closure version's optimized HLO holds a __ynn_fusion
    fusion_kinds: tuple[str, ...]  # the kind of every fusion in it (kCustom for a __ynn_fusion)
    dot_operands: tuple[str, str]  # what feeds the dot inside it (or in the ENTRY, without YNN)

    def as_dict(self) -> dict:
        return asdict(self)


def probe(n: int = N, seed: int = SEED) -> ProbeResult:
    """Run both versions on the same data, compare with float64, and read the closure's HLO."""
    w, x = operands(n, seed)
    closure, argument = closure_version(w), argument_version()
    xj, wj = jnp.asarray(x), jnp.asarray(w)
    hlo = clean_hlo(closure.lower(xj).compile().as_text())
    body = ynn_fusion_body(hlo)
    return ProbeResult(
        n=n,
        seed=seed,
        closure=float(closure(xj)),
        argument=float(argument(xj, wj)),
        reference=reference(w, x),
        uses_ynn=body is not None,
        fusion_kinds=tuple(fusion_kinds(hlo)),
        dot_operands=dot_operands(body if body is not None else entry_computation(hlo)),
    )


@dataclass(frozen=True)
class Outcome:
    """Whether a result is wrong against its float64 reference, and the sentence that says so."""

    wrong: bool
    error: float
    tolerance: float
    label: str  # "reproduced" or "not reproduced"
    sentence: str


def verdict(result: float, reference: float, tolerance: float = TOLERANCE) -> Outcome:
    """Judge the closure version's `result` against the float64 `reference`, in the page's words."""
    error = abs(result - reference)
    wrong = not error <= tolerance  # a NaN result is wrong too
    if wrong:
        sentence = (
            f"the closure version returned {result:.4f} where the float64 reference is "
            f"{reference:.4f}: an error of {error:.2e}, beyond the tolerance of {tolerance:g}, "
            "and with no error or warning. The bug is present on this machine."
        )
    else:
        sentence = (
            f"the closure version returned {result:.4f} against a float64 reference of "
            f"{reference:.4f}: an error of {error:.2e}, inside the tolerance of {tolerance:g}. "
            "The bug did not show up on this machine's CPU."
        )
    return Outcome(wrong, error, tolerance, "reproduced" if wrong else "not reproduced", sentence)


def bisect_conclusion(default: Outcome, ynn_off: Outcome) -> str:
    """What comparing the default run with a run without YNN fusion tells us."""
    if ynn_off.wrong:
        return (
            "Even with YNN fusion turned off the closure version is wrong, so the fault is not "
            "(only) in the YNN path: keep bisecting with other XLA flags."
        )
    if default.wrong:
        return (
            "Turning YNN fusion off makes the very same closure function correct, so the fault "
            "lies in YNNPACK's path for an embedded constant feeding dot + reduce, not in JAX's "
            "tracing: the jaxpr was right all along."
        )
    return (
        "Both runs are correct on this machine, so the flag has nothing to separate here; on a "
        "machine that does hit the bug, this same pair of runs is what pins the fault on "
        "YNNPACK's path for an embedded constant feeding dot + reduce."
    )
