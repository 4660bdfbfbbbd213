"""A small decoder-only transformer language model and its training loop, in plain JAX and
optax, with the changes an accelerator wants behind flags of its `Config`.

Everything below this docstring is one self-contained cell a reader can copy into a project:
it needs only JAX, NumPy, optax and the standard library. The page `training-step` shows it
as one cell, and a test keeps the two identical. Run as a script (or pasted into a notebook),
it trains the CPU config.
"""

import dataclasses
import functools
import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax


@dataclasses.dataclass(frozen=True)
class Config:
    vocab: int  # tokens
    width: int  # of the residual stream
    layers: int
    heads: int
    seq: int  # tokens a sequence
    batch: int  # sequences a step
    lr: float  # AdamW's learning rate, reached after `warmup` steps
    warmup: int = 10
    # What an accelerator wants, each off by default:
    bf16: bool = False  # products on bf16 copies of the parameters; AdamW, softmax, loss f32
    f32_params: tuple[str, ...] = ()  # with bf16, the parameters (by name) kept float32
    f32_results: bool = False  # with bf16, products return float32: only inputs are rounded
    remat: bool = False  # recompute each layer in the backward pass, saving only what the
    #                      policy dots_with_no_batch_dims_saveable keeps: the products with
    #                      the weights, not the attention's (they have batch dimensions)
    donate: bool = False  # let the step write the new state over the old one
    prefetch: bool = False  # put the next batch on the device while this step runs
    log_every: int = 1  # fetch losses every n steps, the newest left running (1: one late)
    accumulate: int = 1  # update once every n batches, with their mean gradient


FAST = {"donate": True, "prefetch": True, "log_every": 10}  # the loop made fast
CPU = Config(vocab=256, width=64, layers=2, heads=2, seq=64, batch=8, lr=5e-3, **FAST)
TPU = Config(vocab=16384, width=1024, layers=6, heads=8, seq=1024, batch=8, lr=1e-3, warmup=20)
TPU = dataclasses.replace(TPU, bf16=True, **FAST)  # as the v5e ran it; bf16 ended behind float32


# Data a model can learn: a fixed random bigram chain. Each token is followed by one of
# SUCCESSORS distinct tokens, drawn once, with probabilities NEXT_PROBS.
SUCCESSORS, NEXT_PROBS = 4, (0.5, 0.25, 0.15, 0.1)


def chain(vocab: int, seed: int = 1234) -> np.ndarray:
    """The successors of each token: an int array (vocab, SUCCESSORS)."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.choice(vocab, SUCCESSORS, replace=False) for _ in range(vocab)])


def entropy_rate() -> float:
    """The chain's entropy rate in nats, the lowest loss a model can reach: every token has
    the same probabilities over distinct successors, whatever the token."""
    return -sum(p * math.log(p) for p in NEXT_PROBS)


def batches(config: Config, seed: int = 0):
    """Endless batches of token sequences from the chain: int32 (batch, seq + 1)."""
    successors, rng = chain(config.vocab), np.random.default_rng(seed)
    while True:
        tokens = np.empty((config.batch, config.seq + 1), np.int32)
        tokens[:, 0] = rng.integers(config.vocab, size=config.batch)
        picks = rng.choice(SUCCESSORS, size=(config.batch, config.seq), p=NEXT_PROBS)
        for t in range(config.seq):
            tokens[:, t + 1] = successors[tokens[:, t], picks[:, t]]
        yield tokens


def init(config: Config, key) -> dict:
    """float32 parameters, the layers' stacked on a leading axis. GPT-2's recipe: normal,
    std 0.02, the projections back into the residual stream scaled down with depth; the
    output projection is the embedding (tied): the first logits are small (std about
    0.02·√width) and the first loss about ln(vocab)."""
    d, n = config.width, config.layers
    keys = iter(jax.random.split(key, 6))

    def normal(shape, std=0.02):  # drawn flat, then shaped: quicker to compile
        return std * jax.random.normal(next(keys), (math.prod(shape),)).reshape(shape)

    residual_std = 0.02 / math.sqrt(2 * n)
    return {
        "embed": normal((config.vocab, d)),
        "pos": normal((config.seq, d)),
        "layers": {
            "ln1": {"scale": jnp.ones((n, d)), "bias": jnp.zeros((n, d))},
            "qkv": normal((n, d, 3 * d)),
            "out": normal((n, d, d), residual_std),
            "ln2": {"scale": jnp.ones((n, d)), "bias": jnp.zeros((n, d))},
            "up": normal((n, d, 4 * d)),
            "down": normal((n, 4 * d, d), residual_std),
        },
        "final_ln": {"scale": jnp.ones(d), "bias": jnp.zeros(d)},
    }


def layer_norm(x, ln):
    x = x.astype(jnp.float32)  # the statistics in float32, whatever the compute type
    mean = x.mean(-1, keepdims=True)
    var = jnp.square(x - mean).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * ln["scale"] + ln["bias"]


def block(x, p, config: Config):
    """One pre-LN layer: causal multi-head attention, then a GELU MLP, each added to the
    float32 residual stream `x` (batch, seq, width)."""
    dtype = jnp.bfloat16 if config.bf16 else jnp.float32
    result = jnp.float32 if config.f32_results else None  # None: the inputs' type

    def product(a, w):  # `a` rounded to the compute type; the result as `result` says
        return jnp.matmul(a.astype(dtype), w, preferred_element_type=result)

    b, t, d = x.shape
    q, k, v = jnp.split(product(layer_norm(x, p["ln1"]), p["qkv"]), 3, axis=-1)
    q, k, v = (a.reshape(b, t, config.heads, d // config.heads).astype(dtype) for a in (q, k, v))
    # The scores feed a softmax: accumulated and kept in float32.
    scores = jnp.einsum("bqhc,bkhc->bhqk", q, k, preferred_element_type=jnp.float32)
    scores = scores / math.sqrt(d // config.heads)
    causal = jnp.tril(jnp.ones((t, t), bool))  # a position sees itself and those before
    weights = jax.nn.softmax(jnp.where(causal, scores, -jnp.inf), axis=-1).astype(dtype)
    attended = jnp.einsum("bhqk,bkhc->bqhc", weights, v, preferred_element_type=result)
    x = x + product(attended.reshape(b, t, d), p["out"])
    return x + product(jax.nn.gelu(product(layer_norm(x, p["ln2"]), p["up"])), p["down"])


def bf16_copies(params, keep=()):
    """bfloat16 copies of `params`, except those under a name in `keep` (such as "embed")."""

    def cast(path, w):
        kept = any(getattr(key, "key", None) in keep for key in path)
        return w if kept else w.astype(jnp.bfloat16)

    return jax.tree_util.tree_map_with_path(cast, params)


def loss_fn(params, tokens, config: Config):
    """Mean next-token cross-entropy (float32) of `tokens` (batch, seq + 1)."""
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    if config.bf16:  # bfloat16 copies for the products; the gradient reaches the float32 ones
        params = bf16_copies(params, keep=config.f32_params)
    x = (params["embed"][inputs] + params["pos"][: inputs.shape[1]]).astype(jnp.float32)
    layer = partial(block, config=config)
    if config.remat:
        layer = jax.checkpoint(
            layer, policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable
        )
    x, _ = jax.lax.scan(lambda x, p: (layer(x, p), None), x, params["layers"])  # over layers
    h = layer_norm(x, params["final_ln"]).astype(params["embed"].dtype)
    logits = jnp.einsum("btd,vd->btv", h, params["embed"], preferred_element_type=jnp.float32)
    return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()


def make_optimizer(config: Config):
    """AdamW (weight decay on every parameter, for brevity) after a linear warmup, the
    gradient clipped to norm 1; with `accumulate`, the mean gradient of that many batches."""
    schedule = optax.linear_schedule(0.0, config.lr, config.warmup)
    adamw = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=0.01))
    if config.accumulate > 1:  # no update (a zero one) until the last batch of each group
        return optax.MultiSteps(adamw, every_k_schedule=config.accumulate)
    return adamw


@functools.cache  # one jitted step per config: asked again, it returns the compiled one
def make_step(config: Config):
    """The jitted update `(state, batch) -> (state, loss)`, `state = (params, opt_state)`."""
    optimizer = make_optimizer(config)

    def step(state, batch):
        params, opt_state = state
        loss, grads = jax.value_and_grad(loss_fn)(params, batch, config)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    return jax.jit(step, donate_argnums=0 if config.donate else ())


def train(config: Config, steps: int, seed: int = 0):
    """`steps` batches from fresh parameters (one update each, or one every `accumulate`);
    returns the state and every loss as a float."""
    params = init(config, jax.random.key(seed))
    state, step = (params, make_optimizer(config).init(params)), make_step(config)
    data = batches(config, seed)  # one batch shape throughout: one compilation
    following = jax.device_put(next(data)) if config.prefetch else None
    pending, losses = [], []
    for i in range(steps):
        batch = following if config.prefetch else jax.device_put(next(data))
        state, loss = step(state, batch)  # dispatched: runs while the host goes on
        if config.prefetch and i + 1 < steps:
            following = jax.device_put(next(data))  # copied while this step runs
        pending.append(loss)
        if len(pending) > config.log_every:  # all but the newest step, which is left running
            losses += [float(x) for x in jax.device_get(pending[:-1])]
            pending = pending[-1:]
    return state, losses + [float(x) for x in jax.device_get(pending)]


def parameter_count(params) -> int:
    return sum(w.size for w in jax.tree.leaves(params))


def flops_per_step(config: Config) -> float:
    """The PaLM count (Chowdhery et al. 2022, Appendix B): 6N + 12·L·H·Q·T flops per token,
    forward and backward, times the tokens of a step. N counts the weights that take part in
    matrix products: qkv, out, up and down of every layer (12·width² a layer), and the tied
    output projection (vocab·width). The embedding lookup is a gather, the positions an
    addition, the LN parameters elementwise: no matrix-product flops. 12·L·H·Q·T counts the
    attention's two products over all T·T pairs (the causal mask skips none of them)."""
    c = config
    n = 12 * c.width**2 * c.layers + c.vocab * c.width
    attention = 12 * c.layers * c.heads * (c.width // c.heads) * c.seq
    return (6 * n + attention) * c.batch * c.seq


if __name__ == "__main__":  # run as a script, or pasted into a notebook
    state, losses = train(CPU, steps=60)
    for i in [*range(0, len(losses), 15), len(losses) - 1]:
        print(f"step {i:2d}: loss {losses[i]:.3f}")
    print(f"ln(vocab) = {math.log(CPU.vocab):.3f}; the chain's entropy rate, {entropy_rate():.3f}")
