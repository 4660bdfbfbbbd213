"""Case study of the page `training-step`: a small classifier's training loop, as commonly
written, and the same loop made fast one change at a time.

Each `loop_*` runs one epoch: `(state, x, y) -> (state, losses)`, with `x` and `y` NumPy
arrays, `state` the parameters and the optimizer state, `losses` the losses it fetched.
"""

import itertools
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax

SIZES = (64, 64, 64, 64)  # inputs, two hidden layers, classes
BATCH = 256
EXAMPLES = 4 * BATCH + 100  # 4 full batches, then a smaller one of 100
LOG_EVERY = 2  # the fast loops fetch the loss every LOG_EVERY steps
optimizer = optax.adam(1e-3)


def synthetic_data(seed: int = 0, examples: int = EXAMPLES) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and integer labels, the labels set by a random linear teacher."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((examples, SIZES[0]), dtype=np.float32)
    teacher = rng.standard_normal((SIZES[0], SIZES[-1]), dtype=np.float32)
    return x, np.argmax(x @ teacher, axis=1).astype(np.int32)


def init_state(seed: int = 0) -> tuple[list, optax.OptState]:
    """The parameters, a list of (weights, bias) per layer, drawn on the host (He
    initialization), and Adam's state for them."""
    rng = np.random.default_rng(seed)
    params = [
        (
            jnp.asarray(rng.standard_normal((m, n), np.float32) * np.sqrt(2 / m, dtype=np.float32)),
            jnp.zeros(n),
        )
        for m, n in itertools.pairwise(SIZES)
    ]
    return params, optimizer.init(params)


def forward(params, x):
    """A ReLU network's logits."""
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, x, y):
    """The mean cross-entropy of the logits."""
    return optax.softmax_cross_entropy_with_integer_labels(forward(params, x), y).mean()


def batches(x, y, drop_last: bool = False):
    """Consecutive batches of BATCH examples; the last one smaller unless `drop_last`."""
    stop = len(x) - len(x) % BATCH if drop_last else len(x)
    for start in range(0, stop, BATCH):
        yield x[start : start + BATCH], y[start : start + BATCH]


# The loop as commonly written: the gradient jitted, the optimizer's update run op by op,
# every batch converted from NumPy inside the step, the loss fetched at every step.
loss_and_grad = jax.jit(jax.value_and_grad(loss_fn))


def update_eager(state, xb, yb):
    params, opt_state = state
    loss, grads = loss_and_grad(params, jnp.asarray(xb), jnp.asarray(yb))
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return (optax.apply_updates(params, updates), opt_state), float(loss)


def loop_eager(state, x, y):
    losses = []
    for xb, yb in batches(x, y):
        state, loss = update_eager(state, xb, yb)
        losses.append(loss)
    return state, losses


# One change at a time.
def train_step(state, xb, yb, objective=loss_fn):
    """The whole update: loss, gradient, the optimizer's update, the new parameters."""
    params, opt_state = state
    loss, grads = jax.value_and_grad(objective)(params, xb, yb)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return (optax.apply_updates(params, updates), opt_state), loss


step_jit = jax.jit(train_step)


def loss_bf16(params, x, y):
    """The cross-entropy of the network run in bfloat16, computed in float32."""
    half = jax.tree.map(lambda a: a.astype(jnp.bfloat16), params)
    logits = forward(half, x.astype(jnp.bfloat16)).astype(jnp.float32)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


step_bf16 = jax.jit(partial(train_step, objective=loss_bf16))


def update_jit(state, xb, yb):
    state, loss = step_jit(state, xb, yb)
    return state, float(loss)


def loop_jit(state, x, y):
    """The whole update under one jit; still a NumPy batch and a fetched loss per step."""
    losses = []
    for xb, yb in batches(x, y):
        state, loss = update_jit(state, xb, yb)
        losses.append(loss)
    return state, losses


def loop_on_device(step, state, feed):
    """`step` over the batches of `feed`, its losses kept on the device and fetched LOG_EVERY at
    a time, each at least LOG_EVERY steps late: the host never waits for a step it has just
    dispatched, except for the last ones at the epoch's end."""
    pending, fetched = [], []
    for batch in feed:
        state, loss = step(state, *batch)
        pending.append(loss)
        if len(pending) == 2 * LOG_EVERY:  # fetch the older half
            fetched += jax.device_get(pending[:LOG_EVERY])
            del pending[:LOG_EVERY]
    return state, fetched + jax.device_get(pending)


def put_each(feed):
    """Each batch put on the device as it is used: one call puts both arrays."""
    return (jax.device_put(batch) for batch in feed)


def put_ahead(feed):
    """Each batch put on the device one batch early: the next is put before this one is used."""
    current = None
    for batch in feed:
        following = jax.device_put(batch)
        if current is not None:
            yield current
        current = following
    if current is not None:
        yield current


step_donated = jax.jit(train_step, donate_argnums=0)


def loop_late_fetch(state, x, y):
    return loop_on_device(step_jit, state, batches(x, y))  # NumPy batches, as before


def loop_no_sync(state, x, y):
    return loop_on_device(step_jit, state, put_each(batches(x, y)))


def loop_one_shape(state, x, y):
    return loop_on_device(step_jit, state, put_each(batches(x, y, drop_last=True)))


def loop_donated(state, x, y):
    return loop_on_device(step_donated, state, put_each(batches(x, y, drop_last=True)))


def loop_prefetched(state, x, y):
    return loop_on_device(step_donated, state, put_ahead(batches(x, y, drop_last=True)))


@partial(jax.jit, donate_argnums=0)
def steps_scanned(state, xs, ys):
    """`len(xs)` steps in one dispatch: a lax.scan of train_step over stacked batches."""
    return jax.lax.scan(lambda s, batch: train_step(s, *batch), state, (xs, ys))


def stacked(x, y):
    """Groups of LOG_EVERY full batches, each stacked into one array: (LOG_EVERY, BATCH, ...)."""
    group = BATCH * LOG_EVERY
    for start in range(0, len(x) - len(x) % group, group):
        yield (
            x[start : start + group].reshape(LOG_EVERY, BATCH, -1),
            y[start : start + group].reshape(LOG_EVERY, BATCH),
        )


def loop_scanned(state, x, y):
    """LOG_EVERY steps per dispatch, their batches put on the device together; each group's
    losses fetched once the next group is dispatched, so the host waits only with the next
    group queued, except for the last. Examples past the last whole group are left out."""
    losses, previous = [], None
    for xs, ys in stacked(x, y):
        state, chunk = steps_scanned(state, *jax.device_put((xs, ys)))
        if previous is not None:
            losses += list(jax.device_get(previous))
        previous = chunk
    return state, losses + (list(jax.device_get(previous)) if previous is not None else [])


def epochs(loop, seed: int = 0):
    """A call that trains one more epoch with `loop` each time, on the examples shuffled
    anew (so a dropped last batch leaves out other examples each time); the state stays
    inside."""
    x, y = synthetic_data(seed)
    state, rng = init_state(seed), np.random.default_rng(seed)

    def epoch():
        nonlocal state
        order = rng.permutation(len(x))
        state, _ = loop(state, x[order], y[order])
        return state

    return epoch


def as_written():
    """The first loop, for `examples/step_audit.py`: its update and one epoch's batches."""
    x, y = synthetic_data()
    return update_eager, init_state(), list(batches(x, y))


def made_fast():
    """The last loop, for `examples/step_audit.py`: the scanned update, its groups of
    batches on the device, LOG_EVERY steps a call."""
    x, y = synthetic_data()
    groups = [tuple(jax.device_put(a) for a in group) for group in stacked(x, y)]
    return steps_scanned, init_state(), groups, LOG_EVERY
