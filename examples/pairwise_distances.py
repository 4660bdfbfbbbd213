"""Pairwise distances v0-v3 on your sizes: error against float64, and time against X @ Y.T.

    python examples/pairwise_distances.py --n 1000 --m 1500 --d 64 [--offset 100] [--quick]

X (n x d) and Y (m x d) are standard normal points, moved by --offset from the origin (far
from it, v2's Gram identity loses digits to cancellation; v3 centres first). Each version of
`chapter2.cases.distances` is checked against SciPy's float64 `cdist` (NumPy's own float64
computation when SciPy is missing) and timed in turns with the bare product X @ Y.T, as a
median with the middle half of the runs. Every version runs jitted. Where XLA's own CPU code
runs v0 and v1 (no YNNPACK fusion, d over 32), each holds an (N, M, d) float32 array:
N * M * d * 4 bytes, 6 GB at N, M, d = 4000, 3000, 128.
"""

import sys

import jax
import numpy as np

from chapter2.cases.distances import VERSIONS
from chapter2.cli import Parser, positive, run
from chapter2.timing import bench_together, milliseconds


def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The distances in float64: SciPy's cdist, or NumPy's broadcasting without it."""
    try:
        from scipy.spatial.distance import cdist  # noqa: PLC0415 - optional
    except ImportError:
        diff = x[:, None, :].astype(np.float64) - y[None, :, :]
        return np.sqrt((diff**2).sum(axis=-1))
    return cdist(x.astype(np.float64), y.astype(np.float64))


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=positive, default=1000, help="points in X (1000)")
    parser.add_argument("--m", type=positive, default=1500, help="points in Y (1500)")
    parser.add_argument("--d", type=positive, default=64, help="dimensions (64)")
    parser.add_argument("--offset", type=float, default=0.0, help="shift from the origin (0)")
    parser.add_argument("--quick", action="store_true", help="small sizes, few runs")
    args = parser.parse_args(argv)
    n, m, d, runs = (200, 300, 16, 5) if args.quick else (args.n, args.m, args.d, 20)
    kx, ky = jax.random.split(jax.random.key(0))
    x = jax.random.normal(kx, (n, d)) + args.offset
    y = jax.random.normal(ky, (m, d)) + args.offset
    exact = reference(np.asarray(x), np.asarray(y))
    calls = {name: (jax.jit(f), (x, y)) for name, f in VERSIONS.items()}
    calls["X @ Y.T"] = (jax.jit(lambda a, b: a @ b.T), (x, y))
    timed = bench_together(calls, n=runs)
    counts = sorted({result.n for result in timed.values()})
    print(
        f"N = {n}, M = {m}, d = {d}, offset {args.offset:g}; "
        f"{' to '.join(map(str, counts))} runs each, in turns"
    )
    print(f"{'version':8s} {'median ms':>10s} {'middle half (ms)':>22s} {'max |error|':>12s}")
    for name, result in timed.items():
        if name in VERSIONS:
            error = float(np.max(np.abs(np.asarray(calls[name][0](x, y)) - exact)))
            shown = f"{error:.3g}"
        else:
            shown = "-"
        spread = f"{milliseconds(result.low)} to {milliseconds(result.high)}"
        print(f"{name:8s} {milliseconds(result.median):>10s} {spread:>22s} {shown:>12s}")
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
