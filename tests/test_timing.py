import time
from types import SimpleNamespace

import jax.numpy as jnp
import pytest

from chapter2 import timing
from chapter2.timing import (
    WARM_UP,
    BenchResult,
    Comparison,
    bench,
    bench_together,
    milliseconds,
    times_text,
)


def test_bench_warms_up_then_times_n_runs():
    calls = []

    def f(x):
        calls.append(time.perf_counter())
        return x + 1

    result = bench(f, jnp.ones(3), n=7)
    warm_up = calls[:-7]
    assert len(warm_up) >= WARM_UP[0]
    assert calls[-7] - warm_up[0] >= WARM_UP[1]
    assert isinstance(result, BenchResult)
    assert result.n == 7
    assert 0 < min(result.times) <= result.low <= result.median <= result.high


def test_a_timing_prints_its_median_and_the_middle_half_of_its_runs():
    result = BenchResult((0.001, 0.002, 0.003, 0.004, 0.100))  # one slow run
    assert (result.low, result.median, result.high) == (0.002, 0.003, 0.004)
    assert str(result) == "3.00 ms median (2.00 to 4.00 ms for the middle half of 5 runs)"


@pytest.mark.parametrize(
    ("seconds", "shown"), [(0.1184, "118"), (0.003456, "3.46"), (0.0000214, "0.0214")]
)
def test_milliseconds_keep_three_digits(seconds, shown):
    assert milliseconds(seconds) == shown


@pytest.mark.parametrize(("ratio", "shown"), [(34.12, "34"), (3.44, "3.4"), (1.043, "1.04")])
def test_ratios_are_printed_to_their_size(ratio, shown):
    assert times_text(ratio) == shown


FAST = BenchResult((0.001, 0.0011, 0.0012))
SLOW = BenchResult((0.010, 0.011, 0.012))
NEAR = BenchResult((0.00108, 0.0012, 0.0013))  # its middle half overlaps FAST's


def test_a_comparison_says_faster_only_when_the_spreads_are_apart():
    faster = Comparison("v2", FAST, "v1", SLOW)
    assert faster.verdict == "faster"
    assert faster.ratio == pytest.approx(10)
    assert str(faster).startswith("v2 ran 10 × faster than v1 (medians 1.10 and 11.0 ms, 3 runs")
    slower = Comparison("v1", SLOW, "v2", FAST)
    assert slower.verdict == "slower"
    assert str(slower).startswith("v1 took 10 × as long as v2")


def test_the_median_lies_between_order_statistics_read_from_the_binomial():
    """95 % (at least) that the median of all runs lies between the k-th fastest and the
    k-th slowest of n: k = 5 of 19, 14 of 40; below six runs, the fastest and the slowest."""
    assert BenchResult(tuple(range(1, 20))).median_range == (5, 15)
    assert BenchResult(tuple(range(40, 0, -1))).median_range == (14, 27)
    assert BenchResult((3, 1, 2, 5, 4)).median_range == (1, 5)


def test_more_runs_tell_apart_two_calls_whose_spreads_overlap():
    """Two calls 20 % apart whose runs spread by 30 %: their middle halves overlap however
    many runs there are; the ranges of their medians, which narrow, part after enough."""
    spread = [0.85, 0.9, 0.95, 1.0, 1.05, 1.1, 1.15] * 6
    a, b = BenchResult(tuple(spread)), BenchResult(tuple(1.2 * s for s in spread))
    assert a.high > b.low  # the middle halves overlap
    assert Comparison("a", a, "b", b).verdict == "faster"
    few = [0.85, 1.0, 1.15]
    close = Comparison("a", BenchResult(tuple(few)), "b", BenchResult(tuple(1.2 * s for s in few)))
    assert close.verdict == "indistinguishable"


def test_overlapping_spreads_are_indistinguishable_whatever_the_medians():
    same = Comparison("v3", NEAR, "the bare product", FAST)
    assert NEAR.median > FAST.median
    assert same.verdict == "indistinguishable"
    assert str(same).startswith("v3 and the bare product could not be told apart (")
    assert "faster" not in str(same)
    assert "as long" not in str(same)


def test_medians_far_apart_but_not_told_apart_say_the_runs_spread_too_widely():
    """Three runs each: the medians' ranges are the fastest and slowest runs, 1 to 3 ms and
    2 to 4 ms. They overlap, though the medians differ by 1.5 times."""
    same = Comparison(
        "a", BenchResult((0.001, 0.002, 0.003)), "b", BenchResult((0.002, 0.003, 0.004))
    )
    assert same.verdict == "indistinguishable"
    assert str(same).endswith("; their runs vary too much to settle a 1.5 × gap)")
    close = Comparison(
        "a", BenchResult((0.001, 0.002, 0.003)), "b", BenchResult((0.001, 0.0021, 0.003))
    )
    assert "widely" not in str(close)  # medians 5 % apart: no doubt to answer


def test_a_comparison_displays_its_numbers_for_the_book():
    bundle = Comparison("v2", FAST, "v1", SLOW)._repr_mimebundle_()
    data = bundle["application/vnd.chapter2.comparison+json"]
    assert data["verdict"] == "faster"
    assert data["text"] == bundle["text/plain"]
    assert data["a"] == pytest.approx(
        {
            "name": "v2",
            "median": 0.0011,
            "median_low": 0.001,
            "median_high": 0.0012,
            "low": 0.00105,
            "high": 0.00115,
            "n": 3,
        }
    )


def test_calls_timed_together_take_turns_each_settled_by_an_untimed_run(monkeypatch):
    """On the fake clock: a real one, on a busy machine, can make a short call look long."""
    order = []
    call = fake_clock(monkeypatch)
    timed = bench_together(
        {"a": call("a", 0.001, log=order), "b": call("b", 0.001, log=order)}, n=3
    )
    assert order[-12:] == ["a", "a", "b", "b"] * 3  # the rounds alternate, each call twice
    assert [r.n for r in timed.values()] == [3, 3]


def fake_clock(monkeypatch):
    """A clock only the calls move, and a call of `cost` seconds that pays `penalty` more
    when another call ran just before it (what that one disturbed)."""
    clock, last = [0.0], [None]
    monkeypatch.setattr(timing, "time", SimpleNamespace(perf_counter=lambda: clock[0]))

    def call(name, cost, penalty=0.0, log=None):
        def run():
            clock[0] += cost + (penalty if last[0] not in (None, name) else 0)
            last[0] = name
            if log is not None:
                log.append(name)

        return run, ()

    return call


def test_a_cheap_call_beside_a_costly_one_reads_its_own_time(monkeypatch):
    """A call that runs right after another one pays for what that one disturbed (here
    0.1 s): the time recorded is the call's own, 1 ms and 10 ms."""
    call = fake_clock(monkeypatch)
    cheap, costly = call("cheap", 0.001, 0.1), call("costly", 0.010, 0.1)
    timed = bench_together({"cheap": cheap, "costly": costly}, n=5)
    medians = (timed["cheap"].median, timed["costly"].median)
    assert medians == pytest.approx((0.001, 0.010))
    assert (timed["cheap"].high, timed["costly"].high) == pytest.approx((0.001, 0.010))


def test_a_long_call_is_not_run_twice_a_round(monkeypatch):
    log = []
    call = fake_clock(monkeypatch)
    bench_together(
        {"short": call("short", 0.001, log=log), "long": call("long", 0.2, log=log)}, n=3
    )
    assert log[-9:] == ["short", "short", "long"] * 3


def test_the_warm_up_time_is_spent_once_for_all_the_calls(monkeypatch):
    """Each call warms up WARM_UP[0] times at least; the WARM_UP[1] seconds warm the machine,
    once for all the calls, not once for each."""
    call, log = fake_clock(monkeypatch), []
    cost = WARM_UP[1] / 9.5  # 10 calls pass WARM_UP[1], 9 do not
    bench_together({"a": call("a", cost, log=log), "b": call("b", cost, log=log)}, n=1)
    assert log[:-4] == ["a"] * 10 + ["b"] * WARM_UP[0]  # then a round of two settled calls
    log.clear()
    bench_together({"a": call("a", 1.0, log=log), "b": call("b", 1.0, log=log)}, n=1)
    assert log == ["a"] * WARM_UP[0] + ["b"] * WARM_UP[0] + ["a", "b"]  # the count alone


def test_a_cheap_call_that_compiled_slowly_is_still_settled(monkeypatch):
    """Only the last warm-up call says how long a call takes: the first one compiles."""
    log, clock = [], [0.0]
    monkeypatch.setattr(timing, "time", SimpleNamespace(perf_counter=lambda: clock[0]))

    def compiled_then_cheap():
        clock[0] += 0.3 if not log else 0.001
        log.append("cheap")

    bench_together({"cheap": (compiled_then_cheap, ())}, n=3)
    assert len(log) == 3 + 3 * 2  # three warm-up calls, then two a round


def test_rounds_stop_once_the_spreads_are_apart(monkeypatch):
    call = fake_clock(monkeypatch)
    timed = bench_together({"a": call("a", 0.001), "b": call("b", 0.002)}, n=40)
    assert [r.n for r in timed.values()] == [timing.FIRST_LOOK] * 2


def test_calls_that_stay_close_run_every_round_within_the_budget(monkeypatch):
    call = fake_clock(monkeypatch)
    timed = bench_together({"a": call("a", 0.001), "b": call("b", 0.001)}, n=40)
    assert [r.n for r in timed.values()] == [40, 40]
    timed = bench_together({"a": call("a", 0.04), "b": call("b", 0.04)}, n=40, budget=1.5)
    assert timed["a"].n == timing.FIRST_LOOK + timing.LOOK_EVERY  # 1.12 s at 7 rounds, 2.08 at 13


def test_a_disturbed_cheap_call_runs_untimed_until_it_is_back_to_its_fastest(monkeypatch):
    """After its neighbour, the cheap call's first untimed run pays the penalty, the second
    is back to its fastest: two untimed runs, then the timed one, every round."""
    log = []
    call = fake_clock(monkeypatch)
    cheap, costly = call("cheap", 0.001, 0.1, log=log), call("costly", 0.060, log=log)
    bench_together({"cheap": cheap, "costly": costly}, n=3)
    assert log[-12:] == ["cheap", "cheap", "cheap", "costly"] * 3


def test_a_call_that_never_settles_runs_untimed_at_most_settle_max_times(monkeypatch):
    log, clock = [], [0.0]
    monkeypatch.setattr(timing, "time", SimpleNamespace(perf_counter=lambda: clock[0]))

    def slower_each_time():  # 20 ms for the warm-up's three calls, then slower each time
        clock[0] += 0.02 + 0.01 * max(0, len(log) - 2)
        log.append("slower")

    bench_together({"slower": (slower_each_time, ())}, n=1)
    assert len(log) == WARM_UP[0] + timing.SETTLE_MAX + 1


def test_a_calls_own_cost_is_far_below_a_product_and_above_nothing():
    """The floor times a call that does no work to speak of: a 1000 x 1000 product, timed the
    same way, takes far longer; and no call is free."""
    import jax

    floor = timing.call_floor(n=20)
    x = jnp.ones((1000, 1000), jnp.float32)
    product = timing.bench(jax.jit(jnp.matmul), x, x, n=5)
    assert 0 < floor.median < product.median / 10
    assert floor.n >= 5
