"""Self-checks of the five exercises: each says, in one sentence, what is right or wrong.

A check takes the reader's answer (None when it is not defined yet) and returns a
`SelfCheck`. The reference solutions are in `chapter2.solutions`.
"""

import numbers
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from chapter2.compat import cost_analysis, jaxprs_in_params
from chapter2.compiles import CompileCounter
from chapter2.hlo import count_fusions
from chapter2.jaxprs import count_primitives


@dataclass(frozen=True)
class SelfCheck:
    exercise: int
    passed: bool | None  # None: not answered yet
    sentence: str

    def __str__(self) -> str:
        verdict = {True: "passed", False: "not yet right", None: "waiting"}[self.passed]
        return f"Exercise {self.exercise}, {verdict}: {self.sentence}"

    __repr__ = __str__


def _unanswered(exercise: int, name: str, signature: str) -> SelfCheck:
    return SelfCheck(
        exercise,
        None,
        f"not answered yet: define {name}{signature} in the cell above, then run this cell again.",
    )


_twice = jax.jit(jnp.log1p)  # called twice below: one sub-jaxpr, two equations


def _histogram_probe(x):
    """One level each of scan, while, cond, an inner jit and a custom_jvp function (relu),
    and an inner jit called twice."""

    def body(c, _):
        return jnp.sin(c) * 2.0, None

    c, _ = lax.scan(body, x, None, length=3)
    y, _ = lax.while_loop(lambda s: s[1] < 5, lambda s: (jnp.cos(s[0]), s[1] + 1), (c, 0))
    z = lax.cond(y.sum() > 0, jnp.tanh, jnp.negative, y)
    w = jax.jit(lambda t: jax.nn.relu(jnp.exp(t)))(z)
    return (_twice(w) + _twice(w * 2.0)).sum()


# primitive -> where it hides in the probe: what a histogram that finds none of it misses
_HIDDEN = {
    "sin": "the body of scan",
    "cos": "the body of while",
    "lt": "the condition of while",
    "tanh": "a branch of cond",
    "neg": "a branch of cond",
    "exp": "an inner jit",
    "max": "the custom_jvp_call of relu",
    "log1p": "a jitted function called twice, whose sub-jaxpr counts once for each call",
}


def check_histogram(primitive_histogram: Callable | None) -> SelfCheck:
    """Exercise 1: a primitive histogram that counts every sub-jaxpr."""
    if primitive_histogram is None:
        return _unanswered(1, "primitive_histogram", "(f, *args)")
    x = jnp.ones(4)
    expected = dict(count_primitives(jax.make_jaxpr(_histogram_probe)(x)))
    # a primitive may be keyed by its name or by the Primitive itself
    found = {getattr(k, "name", k): v for k, v in primitive_histogram(_histogram_probe, x).items()}
    for name, where in _HIDDEN.items():
        if found.get(name, 0) != expected[name]:
            question = (
                "does it walk into every sub-jaxpr?"
                if found.get(name, 0) == 0
                else "does it count a sub-jaxpr again for every equation that uses it?"
            )
            return SelfCheck(
                1,
                False,
                f"'{name}', which sits in {where}, appears {expected[name]} time"
                f"{'s' if expected[name] != 1 else ''} in the test function; your histogram "
                f"counts {found.get(name, 0)}: {question}",
            )
    if found != expected:
        return SelfCheck(1, False, f"the counts are {found}, not {expected}.")
    return SelfCheck(1, True, "the histogram counts every primitive, sub-jaxprs included.")


def compile_sequence() -> list[int]:
    """How many compilations each of the exercise's six calls of g caused, measured."""

    @jax.jit(static_argnames="mode")
    def g(x, scale, mode="a"):
        return x * scale if mode == "a" else x + scale

    calls = [
        lambda: g(jnp.ones(3), 2.0),
        lambda: g(jnp.ones(3), 3.0),
        lambda: g(jnp.ones(3), jnp.float32(3.0)),
        lambda: g(jnp.ones(3), 2.0, mode="b"),
        lambda: g(np.ones(3, np.float64), 2.0),
        lambda: g(jnp.ones((3,)), 2),
    ]
    per_call = []
    with CompileCounter("g") as counter:
        for call in calls:
            before = counter.count
            call()
            per_call.append(counter.count - before)
    return per_call


def check_prediction(predicted_compiles) -> SelfCheck:
    """Exercise 2: the predicted number of compilations of the call sequence."""
    if predicted_compiles is None:
        return _unanswered(2, "predicted_compiles", " = <a whole number>")
    whole = isinstance(predicted_compiles, numbers.Integral) or (
        isinstance(predicted_compiles, numbers.Real) and float(predicted_compiles).is_integer()
    )
    if not whole or isinstance(predicted_compiles, bool):
        return SelfCheck(
            2, False, f"predicted_compiles should be a whole number, not {predicted_compiles!r}."
        )
    predicted_compiles = int(predicted_compiles)
    measured = sum(compile_sequence())
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


def _producer(var, eqns: list) -> tuple | None:
    """The equation of `eqns` that computes `var`, with its neighbours; inside a `jit`
    equation that returns it, the equation of its body that does."""
    for eqn in eqns:
        for position, out in enumerate(eqn.outvars):
            if out is var:
                if eqn.primitive.name in ("jit", "pjit"):
                    body = eqn.params["jaxpr"]
                    body = getattr(body, "jaxpr", body)
                    return _producer(body.outvars[position], body.eqns)
                return eqn, eqns
    return None


def _barrier_wraps_the_affine_step(h2: Callable, t) -> bool:
    """Whether h2's optimization_barrier takes the result of t * 3.0 + 1.0 (an add of a mul),
    wherever either sits: in h2's jaxpr, or inside a `jit` (an h2 or a helper jitted)."""
    barriers = []

    def find(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "optimization_barrier":
                barriers.append((eqn, jaxpr.eqns))
            for sub in jaxprs_in_params(eqn.params):
                find(sub)

    find(jax.make_jaxpr(h2)(t).jaxpr)
    if len(barriers) != 1:
        return False
    barrier, neighbours = barriers[0]
    feed = _producer(barrier.invars[0], neighbours)
    if feed is None or feed[0].primitive.name != "add":
        return False
    add, around = feed
    return any(
        (made := _producer(v, around)) is not None and made[0].primitive == lax.mul_p
        for v in add.invars
    )


def fusions_and_bytes(f: Callable, *args) -> tuple[int, float]:
    """The truth a report is held to: the fusions of f's optimized HLO and the bytes XLA's
    cost model says the optimized program accesses."""
    compiled = jax.jit(f).lower(*args).compile()
    return count_fusions(compiled.as_text()), cost_analysis(compiled)["bytes accessed"]


def _report_against_the_truth(fusion_report, name: str, f: Callable, t) -> SelfCheck | None:
    """Why the report on `f` is not what XLA says, or None when it is."""
    fusions, moved = fusion_report(f, t)
    true_fusions, true_bytes = fusions_and_bytes(f, t)
    if not isinstance(fusions, int | np.integer):
        return SelfCheck(
            3, False, f"the number of fusions should be a whole number, not {fusions!r}."
        )
    if fusions != true_fusions:
        return SelfCheck(
            3,
            False,
            f"your report counts {fusions} fusions for {name}; its optimized HLO has "
            f"{true_fusions} `fusion` instructions. Count instructions (`count_fusions`) in "
            "`compile().as_text()`, not lines or words.",
        )
    if moved != true_bytes:
        return SelfCheck(
            3,
            False,
            f"your report gives {name} {moved:,.0f} bytes; the compiled program accesses "
            f"{true_bytes:,.0f}: read 'bytes accessed' from the cost analysis of the compiled "
            "program, not of the lowered one.",
        )
    return None


def check_fusion_report(fusion_report: Callable | None, h2: Callable | None) -> SelfCheck:
    """Exercise 3: (number of fusions, bytes accessed) of the optimized program, equal to
    what XLA says, and h2, h1 with a barrier around t * 3.0 + 1.0, which must compile to more
    fusions, move the intermediate array and compute the same values."""
    if fusion_report is None:
        return _unanswered(3, "fusion_report", "(f, *args)")
    t = jax.random.normal(jax.random.key(123), (256, 384))
    for name, f, x in [
        ("h1", h1, t),
        ("h1 on twice the elements", h1, jnp.ones((512, 384))),
        ("h1 with a barrier", _with_barrier, t),
    ]:
        wrong = _report_against_the_truth(fusion_report, name, f, x)
        if wrong:
            return wrong
    if h2 is None:
        return _unanswered(3, "h2", "(t), h1 with lax.optimization_barrier around t * 3.0 + 1.0,")
    if not _barrier_wraps_the_affine_step(h2, t):
        return SelfCheck(
            3,
            False,
            "your h2 should hold one lax.optimization_barrier, around t * 3.0 + 1.0 (the value "
            "that the tanh then reads).",
        )
    wrong = _report_against_the_truth(fusion_report, "your h2", h2, t)
    if wrong:
        return wrong
    (f1, b1), (f2, b2) = fusions_and_bytes(h1, t), fusions_and_bytes(h2, t)
    if f2 <= f1 or b2 - b1 < 2 * t.nbytes:
        return SelfCheck(
            3,
            False,
            f"your h2 compiles to {f2} fusions against h1's {f1}, and accesses {b2 - b1:,.0f} "
            f"more bytes; a barrier that splits the chain gives more fusions and at least "
            f"{2 * t.nbytes:,} more bytes (the intermediate written and read again).",
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
        f"fusions: h1 {f1}, h2 {f2}; h2 writes and reads the intermediate, and both give "
        "the same values.",
    )


def _unit_differences(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """(x_i - y_j) / ||x_i - y_j|| in float64, and 0 where the two points coincide."""
    diff = X[:, None].astype(np.float64) - Y[None].astype(np.float64)
    norm = np.linalg.norm(diff, axis=-1)
    return np.where(norm[..., None] > 0, diff / np.where(norm > 0, norm, 1.0)[..., None], 0.0)


def _analytic_gradient(X: np.ndarray) -> np.ndarray:
    """Gradient of sum(D(X, X)) in X; pairs at distance 0 contribute nothing."""
    return 2 * _unit_differences(X, X).sum(axis=1)


def _analytic_gradient_y(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Gradient of sum(D(X, Y)) in Y; pairs at distance 0 contribute nothing."""
    return -_unit_differences(X, Y).sum(axis=0)


def check_safe_distance(safe_pairwise_distance: Callable | None) -> SelfCheck:
    """Exercise 4: a distance matrix whose gradient is finite where distances are 0."""
    if safe_pairwise_distance is None:
        return _unanswered(4, "safe_pairwise_distance", "(X, Y)")
    rng = np.random.default_rng(5)
    X = rng.normal(size=(6, 4)).astype(np.float32)
    X[3] = X[1]  # two equal rows: zero distances off the diagonal too
    Y = rng.normal(size=(5, 4)).astype(np.float32)
    Y[2] = X[0]
    Y[4] = X[2] + np.float32(0.01)  # a close pair: a distance of 0.02 that must stay 0.02
    reference = np.linalg.norm(X.astype(np.float64)[:, None] - Y.astype(np.float64)[None], axis=-1)
    D = np.asarray(safe_pairwise_distance(jnp.asarray(X), jnp.asarray(Y)))
    if D.shape != (6, 5):
        return SelfCheck(4, False, f"the result should have shape (6, 5), not {D.shape}.")
    if not np.allclose(D, reference, atol=1e-5):
        return SelfCheck(4, False, "the distances themselves are wrong: compare with v1 first.")
    if np.any(D[reference == 0] != 0):
        return SelfCheck(
            4,
            False,
            f"where two points coincide the distance must be exactly 0, as v1's is, not "
            f"{D[reference == 0].max():.2g}: an epsilon under the square root is not the fix.",
        )
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
    if not np.allclose(grad_y, _analytic_gradient_y(X, Y), rtol=1e-4, atol=1e-4):
        return SelfCheck(
            4, False, "the gradient with respect to Y is finite but differs from the analytic one."
        )
    return SelfCheck(
        4, True, "the distances match, and the gradients in X and in Y are finite and right."
    )


# Exercise 5's loop: batches of 256 rows, then one of 100.
LOOP_BATCHES = (256,) * 8 + (100,)


def _loop_step(w, xb):
    loss, grad = jax.value_and_grad(lambda w: jnp.mean((xb @ w) ** 2))(w)
    return w - 0.01 * grad, loss


# line -> what it does to a step's fresh result (w, loss), as the exercise's loop writes it;
# line 1 is the step's dispatch itself
LOOP_LINES = {
    1: lambda _w, _loss, _history: None,
    2: lambda _w, loss, history: history.append(loss),
    3: lambda _w, loss, _history: f"step 0: {loss:.3f}",
    4: lambda _w, loss, _history: min(float("inf"), loss),
    5: lambda w, _loss, _history: jnp.sum(w),
}


def loop_waits() -> set[int]:
    """The lines of exercise 5's loop after which a step's result is ready: they waited.
    Line 1 dispatches the step; each line runs on a step large enough to be still running."""
    step = jax.jit(_loop_step)
    w, xb = jnp.ones((512, 512)), jnp.ones((4096, 512))
    done = jax.block_until_ready(step(w, xb))  # compiled
    for operation in LOOP_LINES.values():
        operation(*done, [])  # whatever a line compiles, compiled before it is timed
    return {line for line, op in LOOP_LINES.items() if _ready_after(op, step, w, xb)}


def _ready_after(operation: Callable, step: Callable, w, xb) -> bool:
    """Whether a freshly dispatched step's loss is ready once `operation` has run on it."""
    new_w, loss = step(w, xb)
    operation(new_w, loss, [])
    ready = loss.is_ready()
    jax.block_until_ready((new_w, loss))
    return ready


def loop_recompiles_at() -> list[int]:
    """The indices of exercise 5's batches at which `step` compiled after its first call."""

    @jax.jit
    def step(w, xb):  # a new function each time: its compilations are its own
        return _loop_step(w, xb)

    w, found = jnp.ones((64, 64)), []
    with CompileCounter("step") as counter:
        for i, rows in enumerate(LOOP_BATCHES):
            before = counter.count
            w, _ = step(w, jnp.ones((rows, 64)))
            if i > 0 and counter.count > before:
                found.append(i)
    return found


def _whole(value) -> bool:
    return not isinstance(value, bool | str) and (
        isinstance(value, numbers.Integral)
        or (isinstance(value, numbers.Real) and float(value).is_integer())
    )


def _lines(numbers: set[int]) -> str:
    return ("line " if len(numbers) == 1 else "lines ") + ", ".join(map(str, sorted(numbers)))


def check_loop(waits, recompiles_at) -> SelfCheck:
    """Exercise 5: the lines of the loop that wait for the device, and the index of the batch
    at which `step` compiles again."""
    if waits is None or recompiles_at is None:
        return _unanswered(5, "waits = {<line numbers>} and recompiles_at", " = <an index>")
    try:
        lines = {int(n) for n in waits if _whole(n)}
        complete = len(lines) == len(list(waits))
    except TypeError:
        complete = False
    if isinstance(waits, str) or not complete:
        return SelfCheck(5, False, f"waits should hold line numbers, such as {{1, 2}}: {waits!r}.")
    if not _whole(recompiles_at):
        return SelfCheck(5, False, f"recompiles_at should be a batch index, not {recompiles_at!r}.")
    measured, again = loop_waits(), loop_recompiles_at()
    wrong = []
    if lines - measured:
        wrong.append(
            f"the host does not wait at {_lines(lines - measured)}: work is only dispatched "
            "there, or an array kept"
        )
    if measured - lines:
        wrong.append(f"the host also waits at {_lines(measured - lines)}: a value is needed there")
    if [int(recompiles_at)] != again:
        wrong.append(
            f"step does not compile again at batch {int(recompiles_at)}: which batch has "
            "another shape?"
        )
    if wrong:
        return SelfCheck(5, False, "; ".join(wrong) + ".")
    return SelfCheck(
        5, True, f"{_lines(measured)} wait, and batch {again[0]} compiles the step again."
    )
