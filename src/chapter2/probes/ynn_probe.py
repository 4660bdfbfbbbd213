"""Probe the closure-constant matmul-then-sum case of the page xla-compilation; print JSON.

    python -m chapter2.probes.ynn_probe [N] [SEED]
    XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type= python -m chapter2.probes.ynn_probe

computes sum(W @ X) for two N x N float32 matrices (default 128, seed 0) three ways: W captured
by a jitted closure, W passed as an argument, and NumPy in float64. The JSON line holds the
three numbers, whether the closure's optimized HLO uses a __ynn_fusion, what feeds its dot,
and the verdict on the closure version. XLA reads XLA_FLAGS once, when JAX starts its backend.
"""

import json
import os
import sys

import jax

from chapter2.cases import ynn


def main(argv: list[str]) -> None:
    n = int(argv[1]) if len(argv) > 1 else ynn.N
    seed = int(argv[2]) if len(argv) > 2 else ynn.SEED
    result = ynn.probe(n, seed)
    outcome = ynn.verdict(result.closure, result.reference, ynn.tolerance(n))
    record = {
        "jax": jax.__version__,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        **result.as_dict(),
        "closure_error": outcome.error,
        "argument_error": abs(result.argument - result.reference),
        "tolerance": outcome.tolerance,
        "verdict": outcome.label,
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main(sys.argv)
