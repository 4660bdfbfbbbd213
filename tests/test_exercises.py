"""Each self-check accepts the reference solution and rejects plausible wrong answers, saying
why in the sentence the reader sees."""

from collections import Counter

import jax
import jax.numpy as jnp
import pytest

from chapter2 import exercises, solutions
from chapter2.cases.distances import distances_v1
from chapter2.hlo import count_fusions


def test_unanswered_exercises_say_so():
    for number, check in enumerate(
        [
            exercises.check_histogram,
            exercises.check_prediction,
            exercises.check_fusion_report,
            exercises.check_safe_distance,
        ],
        start=1,
    ):
        result = check(None)
        assert result.passed is None and str(result).startswith(
            f"⏳ Exercise {number}: not answered"
        )


@pytest.mark.parametrize(
    ("check", "solution"),
    [
        (exercises.check_histogram, solutions.primitive_histogram),
        (exercises.check_prediction, solutions.predicted_compiles),
        (exercises.check_fusion_report, solutions.fusion_report),
        (exercises.check_safe_distance, solutions.safe_pairwise_distance),
    ],
)
def test_reference_solutions_pass(check, solution):
    result = check(solution)
    assert result.passed is True and str(result).startswith("✅")


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


@pytest.mark.parametrize("wrong", [top_level_only, only_jit_bodies])
def test_a_histogram_that_misses_sub_jaxprs_is_rejected(wrong):
    result = exercises.check_histogram(wrong)
    assert result.passed is False
    assert "your histogram counts 0" in result.sentence and "sub-jaxprs" in result.sentence


# --- exercise 2 ------------------------------------------------------------------------------


@pytest.mark.parametrize("wrong", [3, 5, 6])
def test_a_prediction_off_by_some_is_rejected_with_both_numbers(wrong):
    result = exercises.check_prediction(wrong)
    assert result.passed is False
    assert f"you predicted {wrong} compilations and JAX compiled 4 times" in result.sentence


@pytest.mark.parametrize("wrong", ["4", 4.0, True])
def test_a_prediction_that_is_not_a_whole_number_is_rejected(wrong):
    result = exercises.check_prediction(wrong)
    assert result.passed is False and "should be a whole number" in result.sentence


# --- exercise 3 ------------------------------------------------------------------------------


def counts_unoptimized_hlo(f, *args):
    lowered = jax.jit(f).lower(*args)
    return count_fusions(lowered.as_text()), lowered.compile().cost_analysis()["bytes accessed"]


def reports_flops(f, *args):
    compiled = jax.jit(f).lower(*args).compile()
    return count_fusions(compiled.as_text()), compiled.cost_analysis()["flops"]


def test_a_report_on_the_unoptimized_hlo_is_rejected():
    result = exercises.check_fusion_report(counts_unoptimized_hlo)
    assert result.passed is False and "are you reading the optimized HLO?" in result.sentence


def test_a_report_of_flops_instead_of_bytes_is_rejected():
    result = exercises.check_fusion_report(reports_flops)
    assert result.passed is False and "is it XLA's 'bytes accessed'?" in result.sentence


# --- exercise 4 ------------------------------------------------------------------------------


def single_where(X, Y):
    squared = jnp.sum((X[:, None, :] - Y[None, :, :]) ** 2, axis=-1)
    return jnp.where(squared == 0.0, 0.0, jnp.sqrt(squared))


def squared_only(X, Y):
    return jnp.sum((X[:, None, :] - Y[None, :, :]) ** 2, axis=-1)


@pytest.mark.parametrize("wrong", [distances_v1, single_where])
def test_a_distance_whose_gradient_has_nan_is_rejected(wrong):
    result = exercises.check_safe_distance(wrong)
    assert result.passed is False and "the gradient holds nan or inf" in result.sentence


def test_squared_distances_are_rejected_as_wrong_values():
    result = exercises.check_safe_distance(squared_only)
    assert result.passed is False and "the distances themselves are wrong" in result.sentence
