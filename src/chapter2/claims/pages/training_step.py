"""Claims of the page `training-step`: what JAX decides about a training loop's waits,
transfers, compilations and donated buffers, checked on the page's model in its CPU config."""

import dataclasses
import functools
from functools import partial

import jax
import numpy as np

from chapter2.cannot_check import CannotCheck
from chapter2.claims.registry import Observation, claim, counted
from chapter2.compiles import CompileCounter

RAGGED = 3  # examples in the smaller last batch of the ragged check's epoch
# The checks are about what JAX waits for, guards and aliases, not about speed: their programs
# compile with XLA's backend optimizations off, in about half the time, on the page's budget.
QUICK_COMPILE = {"xla_backend_optimization_level": 0}


def _model():
    """The page's model, imported when a check runs: it needs an optax that runs on this JAX,
    which old releases have not."""
    try:
        from chapter2.cases import transformer  # noqa: PLC0415
    except ImportError as err:
        msg = f"the page's model needs optax, which cannot run here: {err}"
        raise CannotCheck(msg) from err
    return transformer


@functools.cache
def _page():
    """The page's model, its CPU config, fresh parameters and one batch of the chain (NumPy)."""
    model = _model()
    config = model.CPU
    return model, config, model.init(config, jax.random.key(0)), next(model.batches(config))


@functools.cache
def _loss():
    """The page's loss, jitted once for the checks that only call it."""
    model, config, _, _ = _page()
    return jax.jit(partial(model.loss_fn, config=config), compiler_options=QUICK_COMPILE)


@claim(
    "float-loss-waits",
    checks="That right after the page's jitted loss is dispatched, `is_ready()` is false in "
    "more than half of 20 calls, each waited for with `float(loss)` before the next, and that "
    "after `float(loss)` it is true every time.",
)
def _float_waits() -> Observation:
    _, _, params, tokens = _page()
    loss_of, batch = _loss(), jax.device_put(tokens)
    jax.block_until_ready(loss_of(params, batch))  # compiled
    waiting, ready = 0, True
    for _ in range(20):
        loss = loss_of(params, batch)
        waiting += not loss.is_ready()
        float(loss)
        ready = ready and loss.is_ready()
    return Observation(
        expected={"loss ready after float(loss)": True, "not ready at dispatch, mostly": True},
        observed={
            "loss ready after float(loss)": ready,
            "not ready at dispatch, mostly": waiting > 10,
            "calls not ready at dispatch, of 20": waiting,
        },
        said=f"Right after the page's jitted loss was dispatched, it was not ready in {waiting} "
        "of 20 calls; after float(loss), it "
        + ("was ready every time." if ready else "was not always ready."),
    )


def _raises(call) -> str | None:
    try:
        call()
    except Exception as err:  # the error's type is the observation
        return type(err).__name__
    return None


@claim(
    "transfer-guard-catches-numpy-batch",
    checks='That under `transfer_guard("disallow")` the page\'s jitted loss raises on a NumPy '
    "batch, and that `device_put` of the same batch, and the loss of what it returns, run.",
)
def _guard_numpy() -> Observation:
    _, _, params, tokens = _page()
    loss_of = _loss()
    jax.block_until_ready(loss_of(params, jax.device_put(tokens)))  # compiled outside the guard
    with jax.transfer_guard("disallow"):
        numpy_error = _raises(lambda: loss_of(params, tokens))
        device_error = _raises(
            lambda: jax.block_until_ready(loss_of(params, jax.device_put(tokens)))
        )
    caught = numpy_error is not None
    return Observation(
        expected={"NumPy batch raises": True, "device batch raises": False},
        observed={"NumPy batch raises": caught, "device batch raises": device_error is not None},
        said="Under jax.transfer_guard('disallow'), the page's jitted loss of a NumPy batch "
        + (f"raised {numpy_error}" if caught else "ran")
        + "; with the batch put on the device by device_put inside the guard, it "
        + (f"raised {device_error}" if device_error else "ran")
        + ".",
    )


@claim(
    "transfer-guard-misses-float-on-cpu",
    only_on=("cpu", "a CPU array already lives in host memory"),
    checks="That on a CPU, `float` of an array put on the device raises nothing under "
    '`transfer_guard("disallow")`.',
    unchecked="Why, and what JAX's transfer guard page says, are not tested.",
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


@claim(
    "ragged-batch-compiles-again",
    checks="That a new jitted function of the page's batches compiles twice over an epoch of "
    "two full batches and a smaller one, and once over the two full batches alone.",
)
def _ragged() -> Observation:
    model, config, params, _ = _page()
    rows = 2 * config.batch + RAGGED
    tokens = next(model.batches(dataclasses.replace(config, batch=rows), seed=1))
    epoch = [tokens[start : start + config.batch] for start in range(0, rows, config.batch)]
    counts = {}
    for name, batches in [("with the smaller last batch", epoch), ("without it", epoch[:-1])]:
        embedded = jax.jit(lambda params, tokens: params["embed"][tokens].sum())  # a new cache
        with CompileCounter() as counter:
            for batch in batches:
                embedded(params, batch)
        counts[name] = counter.count
    return Observation(
        expected={"compilations": {"with the smaller last batch": 2, "without it": 1}},
        observed={"compilations": counts},
        said=f"A new jitted function of the page's batches (the sum of their embeddings), over "
        f"an epoch of {rows} sequences in batches of {config.batch}: "
        + ", ".join(f"{counted(n, 'compilation')} {name}" for name, n in counts.items())
        + ".",
    )


@claim(
    "donation-aliases-state",
    checks="That the page's AdamW update, jitted with `donate_argnums=0` and compiled for the "
    "page's CPU config, aliases as many bytes as its parameters and AdamW's state hold, as "
    "the device stores them (in whole tiles on a TPU).",
)
def _aliases() -> Observation:
    import optax  # noqa: PLC0415 - importable: _page() imported the model, which needs it

    model, config, params, _ = _page()
    optimizer = model.make_optimizer(config)

    def update(state, grads):
        params, opt_state = state
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    # Shapes alone: compiling needs no arrays, and makes none on the host's behalf.
    state = jax.eval_shape(lambda p: (p, optimizer.init(p)), params)
    grads = jax.eval_shape(lambda p: p, params)
    donating = jax.jit(update, donate_argnums=0, compiler_options=QUICK_COMPILE)
    memory = donating.lower(state, grads).compile().memory_analysis()
    state_bytes = sum(leaf.size * leaf.dtype.itemsize for leaf in jax.tree.leaves(state))
    # The state as the device stores it: the arguments of a program that only takes it.
    taking = jax.jit(lambda _state: None, keep_unused=True).lower(state).compile()
    stored = taking.memory_analysis().argument_size_in_bytes
    padded = f" ({stored:,} as the device stores them)" if stored != state_bytes else ""
    return Observation(
        expected={"aliased bytes": stored},
        observed={"aliased bytes": memory.alias_size_in_bytes, "state bytes": state_bytes},
        said=f"The page's AdamW update, jitted with donate_argnums=0: "
        f"{memory.alias_size_in_bytes:,} bytes aliased, of a state of {state_bytes:,} "
        f"bytes{padded}.",
    )


@claim(
    "donated-array-deleted",
    checks="That after one call of a jitted function given `donate_argnums=0`, every array of "
    "the state passed to it is deleted, and a second call on that state raises.",
)
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


@claim(
    "donation-by-keyword",
    checks="That a state passed by keyword to a function given `donate_argnums=0` is deleted "
    "after a call under `jit`, and kept after a call under `pmap`.",
)
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
