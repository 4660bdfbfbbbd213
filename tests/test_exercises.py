"""Each self-check accepts the reference solution and rejects plausible wrong answers, saying
why in the sentence the reader sees."""

from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from chapter2 import exercises, solutions
from chapter2.cases.distances import distances_v1
from chapter2.hlo import clean_hlo, count_fusions


def test_unanswered_exercises_say_so():
    for number, check in enumerate(
        [
            exercises.check_histogram,
            exercises.check_prediction,
            lambda answer: exercises.check_fusion_report(answer, None),
            exercises.check_safe_distance,
            lambda answer: exercises.check_loop(answer, None),
        ],
        start=1,
    ):
        result = check(None)
        assert result.passed is None
        assert str(result).startswith(f"Exercise {number}, waiting: not answered")


def test_exercise_3_asks_for_h2_once_the_report_is_right():
    result = exercises.check_fusion_report(solutions.fusion_report, None)
    assert result.passed is None
    assert "define h2(t)" in result.sentence


@pytest.mark.parametrize(
    ("check", "answer"),
    [
        (exercises.check_histogram, (solutions.primitive_histogram,)),
        (exercises.check_prediction, (solutions.predicted_compiles,)),
        (exercises.check_fusion_report, (solutions.fusion_report, solutions.h2)),
        (exercises.check_safe_distance, (solutions.safe_pairwise_distance,)),
        (exercises.check_loop, (solutions.waits, solutions.recompiles_at)),
    ],
)
def test_reference_solutions_pass(check, answer):
    result = check(*answer)
    assert result.passed is True
    assert str(result).startswith("Exercise ")
    assert ", passed: " in str(result)


# --- exercise 1 ------------------------------------------------------------------------------


def top_level_only(f, *args):
    return Counter(e.primitive.name for e in jax.make_jaxpr(f)(*args).eqns)


def only_jit_bodies(f, *args):
    """Recurses into params["jaxpr"] (jit) but misses scan and while bodies."""

    def walk(jaxpr, counts):
        for eqn in jaxpr.eqns:
            counts[eqn.primitive.name] += 1
            if "jaxpr" in eqn.params and eqn.primitive.name == "jit":
                walk(eqn.params["jaxpr"], counts)
        return counts

    return walk(jax.make_jaxpr(f)(*args), Counter())


def only_named_jaxpr_params(f, *args):
    """Recurses into params named jaxpr, cond_jaxpr and body_jaxpr: misses cond's branches and
    custom_jvp_call's call_jaxpr."""

    def walk(jaxpr, counts):
        for eqn in jaxpr.eqns:
            counts[eqn.primitive.name] += 1
            for key in ("jaxpr", "cond_jaxpr", "body_jaxpr"):
                if key in eqn.params:
                    sub = eqn.params[key]
                    walk(getattr(sub, "jaxpr", sub), counts)
        return counts

    return walk(jax.make_jaxpr(f)(*args), Counter())


@pytest.mark.parametrize(
    ("wrong", "missed"),
    [
        (top_level_only, "the body of scan"),
        (only_jit_bodies, "the body of scan"),
        (only_named_jaxpr_params, "a branch of cond"),
    ],
)
def test_a_histogram_that_misses_sub_jaxprs_is_rejected(wrong, missed):
    result = exercises.check_histogram(wrong)
    assert result.passed is False
    assert f"which sits in {missed}" in result.sentence
    assert "your histogram counts 0" in result.sentence


def memoised_walk(f, *args):
    """Walks every sub-jaxpr, but each one once, however many equations use it."""
    counts, seen = Counter(), set()

    def walk(jaxpr):
        if id(jaxpr) in seen:
            return
        seen.add(id(jaxpr))
        for eqn in jaxpr.eqns:
            counts[eqn.primitive.name] += 1
            for sub in jax.extend.core.jaxprs_in_params(eqn.params):
                walk(sub)

    walk(jax.make_jaxpr(f)(*args))
    return counts


def test_a_histogram_that_counts_a_shared_sub_jaxpr_once_is_rejected():
    result = exercises.check_histogram(memoised_walk)
    assert result.passed is False
    assert "which sits in a jitted function called twice" in result.sentence
    assert "count a sub-jaxpr again for every equation that uses it?" in result.sentence


def by_primitive(jaxpr, counts=None):
    """The right counts, keyed by the Primitive objects rather than their names."""
    counts = Counter() if counts is None else counts
    for eqn in jaxpr.eqns:
        counts[eqn.primitive] += 1
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            by_primitive(sub, counts)
    return counts


def test_a_right_histogram_keyed_by_primitive_objects_passes():
    result = exercises.check_histogram(lambda f, *args: by_primitive(jax.make_jaxpr(f)(*args)))
    assert result.passed is True, result.sentence


# --- exercise 2 ------------------------------------------------------------------------------


@pytest.mark.parametrize("wrong", [3, 5, 6])
def test_a_prediction_off_by_some_is_rejected_with_both_numbers(wrong):
    result = exercises.check_prediction(wrong)
    assert result.passed is False
    assert f"you predicted {wrong} compilations and JAX compiled 4 times" in result.sentence


@pytest.mark.parametrize("wrong", ["4", 4.5, True])
def test_a_prediction_that_is_not_a_whole_number_is_rejected(wrong):
    result = exercises.check_prediction(wrong)
    assert result.passed is False
    assert "should be a whole number" in result.sentence


@pytest.mark.parametrize("right", [np.int64(4), np.int32(4), 4.0, np.float32(4)])
def test_the_right_prediction_written_another_way_passes(right):
    result = exercises.check_prediction(right)
    assert result.passed is True
    assert result.sentence == "4 compilations, as you predicted."


# --- exercise 3 ------------------------------------------------------------------------------


def bytes_of_the_unoptimized_program(f, *args):
    """The right fusions, but the bytes XLA estimates for the program before optimization."""
    lowered = jax.jit(f).lower(*args)
    return count_fusions(lowered.compile().as_text()), lowered.cost_analysis()["bytes accessed"]


def lines_of_hlo(f, *args):
    """Every line of the optimized HLO counted as a fusion."""
    compiled = jax.jit(f).lower(*args).compile()
    return len(clean_hlo(compiled.as_text()).splitlines()), solutions.fusion_report(f, *args)[1]


def times_the_word_fusion_appears(f, *args):
    compiled = jax.jit(f).lower(*args).compile()
    return compiled.as_text().count("fusion"), solutions.fusion_report(f, *args)[1]


def fusions_of_the_unoptimized_hlo(f, *args):
    lowered = jax.jit(f).lower(*args)
    return count_fusions(lowered.as_text()), solutions.fusion_report(f, *args)[1]


def reports_flops(f, *args):
    compiled = jax.jit(f).lower(*args).compile()
    return count_fusions(compiled.as_text()), compiled.cost_analysis()["flops"]


@pytest.mark.parametrize(
    ("wrong", "said"),
    [
        (bytes_of_the_unoptimized_program, "not of the lowered one"),
        (reports_flops, "read 'bytes accessed'"),
        (lines_of_hlo, "not lines or words"),
        (times_the_word_fusion_appears, "not lines or words"),
        (fusions_of_the_unoptimized_hlo, "`fusion` instructions"),
    ],
)
def test_a_report_that_is_not_what_xla_says_is_rejected(wrong, said):
    t = jax.random.normal(jax.random.key(123), (256, 384))
    assert wrong(exercises.h1, t) != exercises.fusions_and_bytes(exercises.h1, t)  # truly wrong
    assert wrong(solutions.h2, t) != exercises.fusions_and_bytes(solutions.h2, t)
    result = exercises.check_fusion_report(wrong, solutions.h2)
    assert result.passed is False
    assert said in result.sentence


def barrier_in_the_wrong_place(t):
    """The barrier around the input: nothing is split, no fusion is added."""
    return jnp.tanh(lax.optimization_barrier(t) * 3.0 + 1.0) ** 2


def barrier_that_changes_values(t):
    return jnp.tanh(lax.optimization_barrier(t * 2.0 + 1.0)) ** 2


def barrier_after_the_tanh(t):
    return lax.optimization_barrier(jnp.tanh(t * 3.0 + 1.0)) ** 2


@pytest.mark.parametrize("wrong", [barrier_in_the_wrong_place, barrier_after_the_tanh])
def test_an_h2_with_its_barrier_elsewhere_is_rejected(wrong):
    result = exercises.check_fusion_report(solutions.fusion_report, wrong)
    assert result.passed is False
    assert "around t * 3.0 + 1.0" in result.sentence


def test_a_report_that_counts_fusions_wrongly_on_h2_is_rejected():
    def report_h2_badly(f, *args):
        fusions, moved = solutions.fusion_report(f, *args)
        return (1, moved) if f is solutions.h2 else (fusions, moved)

    result = exercises.check_fusion_report(report_h2_badly, solutions.h2)
    assert result.passed is False
    assert "optimized HLO has" in result.sentence


@jax.jit
def h2_jitted(t):
    """The reference h2 written with `@jax.jit`: its barrier sits inside a `jit` equation."""
    return jnp.tanh(lax.optimization_barrier(t * 3.0 + 1.0)) ** 2


def h2_jitted_inside(t):
    """The barrier inside an inner jitted function."""
    return jnp.tanh(jax.jit(lambda u: lax.optimization_barrier(u * 3.0 + 1.0))(t)) ** 2


affine = jax.jit(lambda t: t * 3.0 + 1.0)


def h2_with_a_jitted_helper(t):
    """The affine step a jitted helper of its own, the barrier outside it."""
    return jnp.tanh(lax.optimization_barrier(affine(t))) ** 2


@pytest.mark.parametrize("right", [h2_jitted, h2_jitted_inside, h2_with_a_jitted_helper])
def test_an_h2_written_with_jit_passes(right):
    result = exercises.check_fusion_report(solutions.fusion_report, right)
    assert result.passed is True, result.sentence


def test_a_jitted_h2_with_its_barrier_elsewhere_is_still_rejected():
    result = exercises.check_fusion_report(solutions.fusion_report, jax.jit(barrier_after_the_tanh))
    assert result.passed is False
    assert "around t * 3.0 + 1.0" in result.sentence


def test_an_h2_that_computes_other_values_is_rejected():
    result = exercises.check_fusion_report(solutions.fusion_report, barrier_that_changes_values)
    assert result.passed is False
    assert "a barrier must not change what is computed" in result.sentence


# --- exercise 4 ------------------------------------------------------------------------------


def single_where(X, Y):
    squared = jnp.sum((X[:, None, :] - Y[None, :, :]) ** 2, axis=-1)
    return jnp.where(squared == 0.0, 0.0, jnp.sqrt(squared))


def squared_only(X, Y):
    return jnp.sum((X[:, None, :] - Y[None, :, :]) ** 2, axis=-1)


@pytest.mark.parametrize("wrong", [distances_v1, single_where])
def test_a_distance_whose_gradient_has_nan_is_rejected(wrong):
    result = exercises.check_safe_distance(wrong)
    assert result.passed is False
    assert "the gradient holds nan or inf" in result.sentence


def safe_for_self_distances_only(X, Y):
    """Safe when both arguments are the same array (as in D(X, X)), plain v1 otherwise."""
    return solutions.safe_pairwise_distance(X, Y) if X is Y else distances_v1(X, Y)


def no_gradient_in_y(X, Y):
    """Right values and a right gradient in X, but a gradient of 0 in Y."""
    D = solutions.safe_pairwise_distance(X, jax.lax.stop_gradient(Y))
    return 2 * D - jax.lax.stop_gradient(D)


def test_a_distance_with_a_wrong_gradient_in_y_is_rejected():
    result = exercises.check_safe_distance(no_gradient_in_y)
    assert result.passed is False
    assert "the gradient with respect to Y is finite but differs" in result.sentence


def test_a_distance_safe_only_for_d_of_x_x_is_rejected():
    result = exercises.check_safe_distance(safe_for_self_distances_only)
    assert result.passed is False
    assert "the gradient with respect to Y" in result.sentence


def zero_below_a_tenth(X, Y):
    """Right wherever points are far apart or equal, and 0 for any distance below 0.1."""
    D = solutions.safe_pairwise_distance(X, Y)
    return jnp.where(D < 0.1, 0.0, D)


def test_a_distance_that_zeroes_small_distances_is_rejected():
    result = exercises.check_safe_distance(zero_below_a_tenth)
    assert result.passed is False
    assert "the distances themselves are wrong" in result.sentence


def test_squared_distances_are_rejected_as_wrong_values():
    result = exercises.check_safe_distance(squared_only)
    assert result.passed is False
    assert "the distances themselves are wrong" in result.sentence


@pytest.mark.parametrize(
    "epsilon_answer",
    [
        lambda X, Y: jnp.sqrt(jnp.sum((X[:, None] - Y[None]) ** 2, axis=-1) + 1e-12),
        lambda X, Y: jnp.sqrt(jnp.maximum(jnp.sum((X[:, None] - Y[None]) ** 2, axis=-1), 1e-12)),
    ],
    ids=["sqrt of sq + eps", "sqrt of max(sq, eps)"],
)
def test_a_distance_that_is_not_zero_where_points_coincide_is_rejected(epsilon_answer):
    result = exercises.check_safe_distance(epsilon_answer)
    assert result.passed is False
    assert "exactly 0" in result.sentence


@pytest.mark.parametrize(
    ("waits", "recompiles_at"),
    [([4, 3], 8), ((3, 4), 8.0), (frozenset({3, 4}), np.int64(8)), (np.array([3, 4]), 8)],
)
def test_the_right_loop_answer_written_another_way_passes(waits, recompiles_at):
    assert exercises.check_loop(waits, recompiles_at).passed is True


@pytest.mark.parametrize(
    ("waits", "recompiles_at", "said"),
    [
        ({3}, 8, "the host also waits at line 4"),
        ({2, 3, 4}, 8, "the host does not wait at line 2"),
        ({1, 3, 4, 5}, 8, "the host does not wait at lines 1, 5"),
        ({3, 4}, 7, "does not compile again at batch 7"),
        ({3, 4}, 0, "does not compile again at batch 0"),
    ],
)
def test_a_wrong_loop_answer_is_rejected_with_what_is_wrong(waits, recompiles_at, said):
    result = exercises.check_loop(waits, recompiles_at)
    assert result.passed is False
    assert said in result.sentence


@pytest.mark.parametrize(
    ("waits", "recompiles_at"),
    [("34", 8), (3, 8), ({3.5, 4}, 8), ({3, 4}, "8"), ({3, 4}, True), ({3, 4}, 8.5)],
)
def test_a_loop_answer_of_the_wrong_kind_is_rejected_before_running(waits, recompiles_at):
    result = exercises.check_loop(waits, recompiles_at)
    assert result.passed is False
    assert "should" in result.sentence
