"""Claims of the page `training-step`: what JAX decides about a training loop's waits,
transfers, compilations and donated buffers."""

import jax
import numpy as np

from chapter2.cannot_check import CannotCheck
from chapter2.claims.registry import Observation, claim, counted
from chapter2.compiles import CompileCounter


def _training():
    """The page's training code, imported when a check runs: it needs an optax that runs on
    this JAX, which old releases have not."""
    try:
        from chapter2.cases import training  # noqa: PLC0415
    except ImportError as err:
        msg = f"the page's training loop needs optax, which cannot run here: {err}"
        raise CannotCheck(msg) from err
    return training


def _device_batch(training):
    x, y = training.synthetic_data()
    xb, yb = next(training.batches(x, y))
    return xb, yb, jax.device_put(xb), jax.device_put(yb)


@claim("float-loss-waits")
def _float_waits() -> Observation:
    training = _training()
    _, _, xb, yb = _device_batch(training)
    state = training.init_state()
    jax.block_until_ready(training.step_jit(state, xb, yb))  # compiled
    for _ in range(20):  # a step that finished before is_ready() was asked shows nothing
        _, loss = training.step_jit(state, xb, yb)
        dispatched = loss.is_ready()
        if not dispatched:
            break
    float(loss)
    ready = loss.is_ready()
    return Observation(
        expected={"loss ready after float(loss)": True, "ready at dispatch": False},
        observed={"loss ready after float(loss)": ready, "ready at dispatch": dispatched},
        said="Right after the page's step was dispatched, its loss was "
        + ("already" if dispatched else "not")
        + " ready; after float(loss), it "
        + ("was." if ready else "still was not."),
    )


def _raises(call) -> str | None:
    try:
        call()
    except Exception as err:  # the error's type is the observation
        return type(err).__name__
    return None


@claim("transfer-guard-catches-numpy-batch")
def _guard_numpy() -> Observation:
    training = _training()
    step = training.step_jit
    xb, yb, dxb, dyb = _device_batch(training)
    state = training.init_state()
    with jax.transfer_guard("disallow"):
        numpy_error = _raises(lambda: step(state, xb, yb))
        device_error = _raises(lambda: jax.block_until_ready(step(state, dxb, dyb)))
    caught = numpy_error is not None
    return Observation(
        expected={"NumPy batch raises": True, "device batch raises": False},
        observed={"NumPy batch raises": caught, "device batch raises": device_error is not None},
        said="Under jax.transfer_guard('disallow'), the step with a NumPy batch "
        + (f"raised {numpy_error}" if caught else "ran")
        + "; with the batch put on the device first, it "
        + (f"raised {device_error}" if device_error else "ran")
        + ".",
    )


@claim(
    "transfer-guard-misses-float-on-cpu",
    only_on=("cpu", "a CPU array already lives in host memory"),
)
def _guard_float() -> Observation:
    loss = jax.device_put(np.float32(3.0))
    with jax.transfer_guard("disallow"):
        error = _raises(lambda: float(loss))
    return Observation(
        expected={"float(loss) raises": False},
        observed={"float(loss) raises": error is not None},
        said="float() of a CPU array under jax.transfer_guard('disallow'): "
        + (f"raised {error}." if error else "returned its value."),
    )


@claim("ragged-batch-compiles-again")
def _ragged() -> Observation:
    training = _training()
    x, y = training.synthetic_data()
    step = jax.jit(lambda w, xb: ((xb @ w) ** 2).mean())
    w = jax.device_put(np.ones((x.shape[1], 3), np.float32))
    counts = {}
    for name, drop in [("with the smaller last batch", False), ("without it", True)]:
        with CompileCounter("<lambda>") as counter:
            for xb, _ in training.batches(x, y, drop_last=drop):
                step(w, xb)
        counts[name] = counter.count
        step = jax.jit(lambda w, xb: ((xb @ w) ** 2).mean())  # a fresh cache for the next
    return Observation(
        expected={"compilations": {"with the smaller last batch": 2, "without it": 1}},
        observed={"compilations": counts},
        said="A jitted function over one epoch's batches: "
        + ", ".join(f"{counted(n, 'compilation')} {name}" for name, n in counts.items())
        + ".",
    )


def _state_bytes(state) -> int:
    return sum(leaf.nbytes for leaf in jax.tree.leaves(state))


@claim(
    "donation-aliases-state",
    expected_on={
        "tpu": (
            {"aliased bytes": 300032},
            (
                "XLA's TPU backend pads each array to whole tiles of 128 lanes: a 64 × 64 "
                "weight to 64 × 128, a 64-element bias to 128, so the donated buffers it reuses "
                "are larger than their elements"
            ),
        )
    },
)
def _aliases() -> Observation:
    training = _training()
    _, _, xb, yb = _device_batch(training)
    state = training.init_state()
    memory = (
        jax.jit(training.train_step, donate_argnums=0).lower(state, xb, yb).compile()
    ).memory_analysis()
    state_bytes = _state_bytes(state)
    return Observation(
        expected={"aliased bytes": state_bytes},
        observed={"aliased bytes": memory.alias_size_in_bytes},
        said=f"The donated step's memory analysis: {memory.alias_size_in_bytes:,} bytes "
        f"aliased, of a state of {state_bytes:,} bytes.",
    )


@claim("donated-array-deleted")
def _deleted() -> Observation:
    add = jax.jit(lambda s: jax.tree.map(lambda a: a + 1, s), donate_argnums=0)
    state = jax.device_put({"w": np.ones(1000, np.float32), "b": np.zeros(10, np.float32)})
    add(state)
    error = _raises(lambda: add(state))
    deleted = all(leaf.is_deleted() for leaf in jax.tree.leaves(state))
    return Observation(
        expected={"reuse raises": True, "deleted": True},
        observed={"reuse raises": error is not None, "deleted": deleted, "error": error},
        said="A jitted function with donate_argnums=0, called twice on the same state: "
        + (f"the second call raised {error}" if error else "the second call ran")
        + "; the state's arrays were "
        + ("deleted." if deleted else "not deleted."),
    )


@claim("donation-by-keyword")
def _by_keyword() -> Observation:
    def add(state, step):
        return jax.tree.map(lambda a: a + step, state)

    if not hasattr(jax, "pmap"):
        msg = "jax.pmap, the transformation of JAX's example, does not exist here"
        raise CannotCheck(msg)
    donated = {}
    for name, transform, leading in [("jit", jax.jit, ()), ("pmap", jax.pmap, (1,))]:
        state = jax.device_put(
            {"w": np.ones((*leading, 1000), np.float32), "b": np.zeros((*leading, 10), np.float32)}
        )
        transform(add, donate_argnums=0)(state=state, step=np.ones(leading, np.float32))
        donated[name] = all(leaf.is_deleted() for leaf in jax.tree.leaves(state))
    return Observation(
        expected={"donated by keyword under jit": True, "donated by keyword under pmap": False},
        observed={f"donated by keyword under {n}": d for n, d in donated.items()},
        said="A function given donate_argnums=0, its state passed as state=...: under jit the "
        f"state's arrays were {'deleted, so donated' if donated['jit'] else 'kept'}; under "
        f"pmap, {'deleted' if donated['pmap'] else 'kept, not donated'}.",
    )
