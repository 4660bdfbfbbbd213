import jax.numpy as jnp

from chapter2.timing import BenchResult, bench


def test_bench_warms_up_once_then_times_n_runs():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1

    result = bench(f, jnp.ones(3), n=7)
    assert len(calls) == 8  # one warm-up, seven timed
    assert isinstance(result, BenchResult) and result.n == 7
    assert 0 < result.min <= result.median
    assert result.min <= result.mean


def test_bench_result_prints_milliseconds():
    text = str(BenchResult(mean=0.002, median=0.0015, min=0.001, n=5))
    assert text.startswith("1.500 ms median") and "mean 2.000" in text and "n=5" in text
