"""Case study of the page pairwise-distances: the distance matrix D[i, j] = ||X[i] - Y[j]||.

Four versions, each a refactoring of the one before: v0 (two vmaps over a pair function), v1
(explicit broadcasting), v2 (the Gram identity, one matrix product), v3 (v2 on centred data,
which shrinks v2's cancellation far from the origin), and a distance whose gradient is safe
where two points coincide. `evidence` compiles a version and reads what XLA made of it.
"""

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from chapter2.compat import cost_analysis
from chapter2.hlo import count_fusions, opcodes


def pair_distance(x, y):
    """The distance between two points."""
    return jnp.sqrt(jnp.sum((x - y) ** 2))


def distances_v0(X, Y):
    """v0: the pair function, vectorized over both sets by two vmaps."""
    return jax.vmap(lambda x: jax.vmap(lambda y: pair_distance(x, y))(Y))(X)


def distances_v1(X, Y):
    """v1: explicit broadcasting to (N, M, d), then a sum over d."""
    diff = X[:, None, :] - Y[None, :, :]
    return jnp.sqrt(jnp.sum(diff**2, axis=-1))


def distances_v1_materialized(X, Y):
    """v1 with an optimization barrier that forces the (N, M, d) difference into memory."""
    diff = lax.optimization_barrier(X[:, None, :] - Y[None, :, :])
    return jnp.sqrt(jnp.sum(diff**2, axis=-1))


def distances_v2(X, Y):
    """v2: ||x - y||^2 = ||x||^2 - 2 x.y + ||y||^2, one matrix product X @ Y.T."""
    x_sq = jnp.sum(X**2, axis=1)
    y_sq = jnp.sum(Y**2, axis=1)
    squared = x_sq[:, None] - 2 * jnp.dot(X, Y.T) + y_sq[None, :]
    return jnp.sqrt(jnp.maximum(0.0, squared))  # rounding can make tiny values negative


def distances_v3(X, Y):
    """v3: v2 after moving both sets by the mean of X; distances do not change."""
    mu = jnp.mean(X, axis=0)
    return distances_v2(X - mu, Y - mu)


def safe_distances(X, Y):
    """v1 whose gradient is 0, not nan, where a distance is 0 (the double-where trick)."""
    squared = jnp.sum((X[:, None, :] - Y[None, :, :]) ** 2, axis=-1)
    zero = squared == 0.0
    return jnp.where(zero, 0.0, jnp.sqrt(jnp.where(zero, 1.0, squared)))


def numpy_gram(X, Y):
    """The Gram identity in plain NumPy (float32 in, float32 out), for comparison."""
    x_sq = (X**2).sum(axis=1)
    y_sq = (Y**2).sum(axis=1)
    return np.sqrt(np.maximum(0.0, x_sq[:, None] - 2 * X @ Y.T + y_sq[None, :]))


def numpy_gram_bytes(N: int, M: int, d: int, itemsize: int = 4) -> int:
    """The bytes `numpy_gram` reads and writes, counted by hand, each NumPy step a pass of its
    own: the squared norms (X and Y read, squared, summed), `2 * X`, the product (N, M)
    written, and four steps (-, +, maximum, sqrt) that each read and write an (N, M) array."""
    return itemsize * (6 * N * d + 4 * M * d + 9 * N * M + 2 * (N + M))


VERSIONS = {"v0": distances_v0, "v1": distances_v1, "v2": distances_v2, "v3": distances_v3}


def reference(X, Y, rows: int = 64) -> np.ndarray:
    """D in float64 NumPy, `rows` rows of X at a time: the answer every version is checked
    against (the direct differences, with no (N, M, d) array in memory at once)."""
    x, y = np.asarray(X, np.float64), np.asarray(Y, np.float64)
    blocks = (x[i : i + rows, None, :] - y[None, :, :] for i in range(0, len(x), rows))
    return np.concatenate([np.sqrt((block**2).sum(-1)) for block in blocks])


def largest_error(fn, X, Y, expected: np.ndarray) -> float:
    """The largest absolute difference between the jitted fn(X, Y) and `expected`."""
    return float(np.abs(np.asarray(jax.jit(fn)(X, Y)) - expected).max())


def largest_self_distance(fn, X) -> float:
    """The largest distance fn computes between a point of X and itself (exactly 0 is right)."""
    return float(np.abs(np.diag(np.asarray(jax.jit(fn)(X, X)))).max())


@dataclass(frozen=True)
class Evidence:
    """What XLA compiled for one version: kernels, products, work and memory."""

    fusions: int
    dots: int
    transposes: int
    flops: float
    bytes_accessed: float
    temp_bytes: int
    io_bytes: int  # its arguments and outputs, as the device stores them (tiles padded)


def hand_count(name: str, n: int, m: int, d: int) -> tuple[float, float]:
    """The flops and bytes of a version for n and m points of d coordinates, counted by hand
    as XLA's cost analysis counts them (an add, a multiply or a compare is a flop; the square
    root is apart, a transcendental), for a backend whose cost analysis the book lacks. The
    bytes are the least any version moves: both inputs read once, the output written once."""
    pairs = n * m
    gram = 2 * pairs * d + (n + m) * (2 * d - 1) + 4 * pairs  # product, norms, -2, +, +, max
    flops = {
        "v0": pairs * (3 * d - 1),  # d subtractions, d squares, d - 1 additions per pair
        "v1": pairs * (3 * d - 1),
        "v2": gram,
        "v3": gram + (n + m) * d + n * d,  # and the centring: a mean, two subtractions
        "bare X @ Y.T": 2 * pairs * d,
    }
    return flops[name], 4 * (n * d + m * d + pairs)


def evidence(fn, *args, compiler_options: dict | None = None) -> Evidence:
    """Compile `fn` for `args` (with XLA `compiler_options`, if given) and read its optimized
    HLO, cost and memory analysis."""
    compiled = jax.jit(fn).lower(*args).compile(compiler_options)
    ops = opcodes(compiled.as_text())
    costs = cost_analysis(compiled)
    memory = compiled.memory_analysis()
    return Evidence(
        fusions=count_fusions(compiled.as_text()),
        dots=ops.count("dot"),
        transposes=ops.count("transpose"),
        flops=costs["flops"],
        bytes_accessed=costs["bytes accessed"],
        temp_bytes=memory.temp_size_in_bytes,
        io_bytes=memory.argument_size_in_bytes + memory.output_size_in_bytes,
    )
