"""Self-checks of the four exercises: each says, in one sentence, what is right or wrong.

A check takes the reader's answer (None when it is not defined yet) and returns a
`SelfCheck`. The reference solutions are in `chapter2.solutions`.
"""

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from chapter2.compiles import CompileCounter
from chapter2.hlo import compiled_text, count_fusions


@dataclass(frozen=True)
class SelfCheck:
    exercise: int
    passed: bool | None  # None: not answered yet
    sentence: str

    def __str__(self) -> str:
        mark = {True: "✅", False: "❌", None: "⏳"}[self.passed]
        return f"{mark} Exercise {self.exercise}: {self.sentence}"

    __repr__ = __str__


def _unanswered(exercise: int, name: str, signature: str) -> SelfCheck:
    return SelfCheck(
        exercise,
        None,
        f"not answered yet: define {name}{signature} in the cell above, then run this cell again.",
    )


def _histogram_probe(x):
    """One level each of scan, while and an inner jit."""

    def body(c, _):
        return jnp.sin(c) * 2.0, None

    c, _ = lax.scan(body, x, None, length=3)
    y, _ = lax.while_loop(lambda s: s[1] < 5, lambda s: (jnp.cos(s[0]), s[1] + 1), (c, 0))
    return jax.jit(lambda t: jnp.exp(jnp.exp(t)))(y).sum()


HISTOGRAM_EXPECTED = {
    "scan": 1,
    "sin": 1,
    "mul": 1,
    "while": 1,
    "lt": 1,
    "cos": 1,
    "add": 1,
    "jit": 1,
    "exp": 2,
    "reduce_sum": 1,
}


def check_histogram(primitive_histogram: Callable | None) -> SelfCheck:
    """Exercise 1: a primitive histogram that counts every sub-jaxpr."""
    if primitive_histogram is None:
        return _unanswered(1, "primitive_histogram", "(f, *args)")
    found = dict(primitive_histogram(_histogram_probe, jnp.ones(4)))
    for name in ["sin", "cos", "lt", "exp"]:
        if found.get(name, 0) != HISTOGRAM_EXPECTED[name]:
            return SelfCheck(
                1,
                False,
                f"'{name}' appears {HISTOGRAM_EXPECTED[name]} time(s) in the test function, your "
                f"histogram counts {found.get(name, 0)}: does it walk into the sub-jaxprs of scan, "
                "while and jit?",
            )
    if found != HISTOGRAM_EXPECTED:
        return SelfCheck(1, False, f"the counts are {found}, not {HISTOGRAM_EXPECTED}.")
    return SelfCheck(1, True, "the histogram counts every primitive, sub-jaxprs included.")


def compile_sequence() -> int:
    """How often g compiles over the exercise's six calls, measured."""

    @jax.jit(static_argnames="mode")
    def g(x, scale, mode="a"):
        return x * scale if mode == "a" else x + scale

    with CompileCounter("g") as counter:
        g(jnp.ones(3), 2.0)
        g(jnp.ones(3), 3.0)
        g(jnp.ones(3), jnp.float32(3.0))
        g(jnp.ones(3), 2.0, mode="b")
        g(np.ones(3, np.float64), 2.0)
        g(jnp.ones((3,)), 2)
    return counter.count


def check_prediction(predicted_compiles) -> SelfCheck:
    """Exercise 2: the predicted number of compilations of the call sequence."""
    if predicted_compiles is None:
        return _unanswered(2, "predicted_compiles", " = <a whole number>")
    if not isinstance(predicted_compiles, int) or isinstance(predicted_compiles, bool):
        return SelfCheck(
            2, False, f"predicted_compiles should be a whole number, not {predicted_compiles!r}."
        )
    measured = compile_sequence()
    if predicted_compiles != measured:
        return SelfCheck(
            2,
            False,
            f"you predicted {predicted_compiles} compilations and JAX compiled {measured} "
            "times: go through the calls one by one and ask which of shape, dtype, weak type "
            "and static value changed.",
        )
    return SelfCheck(2, True, f"{measured} compilations, as you predicted.")


def h1(t):
    """Exercise 3's function: an elementwise chain."""
    return jnp.tanh(t * 3.0 + 1.0) ** 2


def _with_barrier(t):
    return jnp.tanh(lax.optimization_barrier(t * 3.0 + 1.0)) ** 2


def check_fusion_report(fusion_report: Callable | None, h2: Callable | None) -> SelfCheck:
    """Exercise 3: (number of fusions, bytes accessed) of the optimized program, and h2, h1
    with a barrier, which must compile to more fusions and compute the same values."""
    if fusion_report is None:
        return _unanswered(3, "fusion_report", "(f, *args)")
    t = jax.random.normal(jax.random.key(123), (256, 384))
    nbytes = t.size * 4
    (f1, b1), (f2, b2) = fusion_report(h1, t), fusion_report(_with_barrier, t)
    if not all(isinstance(f, int | np.integer) for f in (f1, f2)):
        return SelfCheck(3, False, f"the number of fusions should be a whole number, not {f1!r}.")
    if f1 < 1:
        return SelfCheck(
            3, False, f"h1 has {f1} fusions by your count: are you reading the optimized HLO?"
        )
    if f2 <= f1:
        return SelfCheck(3, False, f"the barrier should add fusions, but h1 has {f1} and h2 {f2}.")
    if b1 < 2 * nbytes:
        return SelfCheck(
            3,
            False,
            f"h1 reads its input and writes its output ({2 * nbytes:,} bytes at least), but your "
            f"report says {b1:,.0f}: is it XLA's 'bytes accessed'?",
        )
    if b2 - b1 < 2 * nbytes:
        return SelfCheck(
            3,
            False,
            f"the barrier should add a write and a read of the intermediate ({2 * nbytes:,} "
            f"bytes), but h2 accesses only {b2 - b1:,.0f} bytes more than h1.",
        )
    f_double, b_double = fusion_report(h1, jnp.ones((512, 384)))
    if f_double != f1 or not 1.8 < b_double / b1 < 2.2:
        return SelfCheck(
            3,
            False,
            f"twice the elements should double the bytes: {b1:,.0f} became {b_double:,.0f}.",
        )
    if h2 is None:
        return _unanswered(3, "h2", "(t), h1 with lax.optimization_barrier around t * 3.0 + 1.0,")
    yours = count_fusions(compiled_text(h2, t))
    if yours <= f1:
        return SelfCheck(
            3,
            False,
            f"your h2 compiles to {yours} fusion(s), no more than h1's {f1}: does the barrier "
            "sit between t * 3.0 + 1.0 and the tanh?",
        )
    difference = float(jnp.max(jnp.abs(h2(t) - h1(t))))
    if difference > 1e-6:
        return SelfCheck(
            3,
            False,
            f"your h2 differs from h1 by up to {difference:.2g}: a barrier must not change what "
            "is computed.",
        )
    return SelfCheck(
        3,
        True,
        f"h1 has {f1} fusion(s), h2 {yours}, h2 moves the intermediate, and both give the same "
        "values.",
    )


def _analytic_gradient(X: np.ndarray) -> np.ndarray:
    """Gradient of sum(D(X, X)) in float64; pairs at distance 0 contribute nothing."""
    diff = X[:, None] - X[None]
    norm = np.linalg.norm(diff, axis=-1)
    unit = np.where(norm[..., None] > 0, diff / np.where(norm > 0, norm, 1.0)[..., None], 0.0)
    return 2 * unit.sum(axis=1)


def check_safe_distance(safe_pairwise_distance: Callable | None) -> SelfCheck:
    """Exercise 4: a distance matrix whose gradient is finite where distances are 0."""
    if safe_pairwise_distance is None:
        return _unanswered(4, "safe_pairwise_distance", "(X, Y)")
    rng = np.random.default_rng(5)
    X = rng.normal(size=(6, 4)).astype(np.float32)
    X[3] = X[1]  # two equal rows: zero distances off the diagonal too
    Y = rng.normal(size=(5, 4)).astype(np.float32)
    Y[2] = X[0]
    reference = np.linalg.norm(X.astype(np.float64)[:, None] - Y.astype(np.float64)[None], axis=-1)
    D = np.asarray(safe_pairwise_distance(jnp.asarray(X), jnp.asarray(Y)))
    if D.shape != (6, 5):
        return SelfCheck(4, False, f"the result should have shape (6, 5), not {D.shape}.")
    if not np.allclose(D, reference, atol=1e-5):
        return SelfCheck(4, False, "the distances themselves are wrong: compare with v1 first.")
    grad = jax.grad(lambda Z: jnp.sum(safe_pairwise_distance(Z, Z)))(jnp.asarray(X))
    if not bool(jnp.isfinite(grad).all()):
        return SelfCheck(
            4,
            False,
            "the gradient holds nan or inf where a distance is 0: sqrt's derivative is "
            "infinite there, even inside a single jnp.where.",
        )
    if not np.allclose(grad, _analytic_gradient(X.astype(np.float64)), rtol=1e-4, atol=1e-4):
        return SelfCheck(4, False, "the gradient is finite but differs from the analytic one.")
    grad_y = jax.grad(lambda W: jnp.sum(safe_pairwise_distance(jnp.asarray(X), W)))(jnp.asarray(Y))
    if not bool(jnp.isfinite(grad_y).all()):
        return SelfCheck(
            4,
            False,
            "the gradient with respect to Y holds nan or inf where a row of Y equals a row of "
            "X: the distance must be safe for any two sets, not only for D(X, X).",
        )
    return SelfCheck(
        4, True, "the distances match, and the gradients in X and in Y are finite and right."
    )
