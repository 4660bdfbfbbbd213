"""The transformer case study (`chapter2.cases.transformer`) and what the TPU record keeps of
training it (`chapter2.training_numbers`), checked on the CPU."""

import dataclasses
import gzip
import json
import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from chapter2 import training_numbers as tn
from chapter2.cases import transformer as tf

PAGE_STEPS = 200  # the steps the page trains the CPU config for
TINY = tf.Config(vocab=32, width=16, layers=2, heads=2, seq=8, batch=4, lr=1e-2)


@pytest.fixture(scope="module")
def quick_record():
    return tn.record(quick=True)


@pytest.fixture(scope="module")
def page_losses():
    _, losses = tf.train(tf.CPU, PAGE_STEPS)
    return losses


def test_loss_falls_from_ln_vocab_toward_the_entropy_rate(page_losses):
    assert len(page_losses) == PAGE_STEPS
    first, last = np.mean(page_losses[:5]), np.mean(page_losses[-10:])
    assert abs(first - math.log(tf.CPU.vocab)) < 0.3
    assert last < 0.5 * math.log(tf.CPU.vocab)
    assert last > tf.entropy_rate() - 0.05  # no model beats the chain's own randomness


def test_the_loop_flags_change_no_loss(page_losses):
    """Donation, prefetching and late fetches change when things happen, not what: the same
    losses, in order, all of them."""
    fast = dataclasses.replace(tf.CPU, donate=True, prefetch=True, log_every=4)
    _, losses = tf.train(fast, 25)
    assert losses == page_losses[:25]


def test_the_chain_has_distinct_successors_and_its_entropy_rate():
    successors = tf.chain(tf.CPU.vocab)
    assert successors.shape == (tf.CPU.vocab, tf.SUCCESSORS)
    assert all(len(set(row)) == tf.SUCCESSORS for row in successors)
    batch = next(tf.batches(tf.CPU, seed=3))
    assert batch.shape == (tf.CPU.batch, tf.CPU.seq + 1)
    assert batch.dtype == np.int32
    follows = successors[batch[:, :-1]] == batch[:, 1:, None]
    assert follows.any(-1).all()  # every token is one of its predecessor's successors
    assert tf.entropy_rate() == pytest.approx(1.2079737, abs=1e-6)


def test_a_layer_sees_no_later_position():
    params = tf.init(TINY, jax.random.key(0))
    layer = jax.tree.map(lambda w: w[0], params["layers"])
    x = jax.random.normal(jax.random.key(1), (TINY.batch, TINY.seq, TINY.width))
    changed = x.at[:, -1].add(1.0)  # only the last position
    block = jax.jit(tf.block, static_argnums=2)
    before, after = block(x, layer, TINY), block(changed, layer, TINY)
    np.testing.assert_array_equal(after[:, :-1], before[:, :-1])
    assert not np.allclose(after[:, -1], before[:, -1])


def test_bf16_and_float32_losses_agree(quick_record):
    mixed = quick_record["mixed_precision"]
    losses = {name: run["final_loss"] for name, run in mixed["variants"].items()}
    assert mixed["largest_final_difference"] <= mixed["tolerance"]
    assert abs(losses["bfloat16"] - losses["float32 highest"]) <= tn.LOSS_TOLERANCE
    assert losses["bfloat16"] != losses["float32"]  # the flag changed the arithmetic
    assert mixed["loss_fell_well_below_ln_vocab"]
    assert all(len(run["losses"]) == mixed["steps"] for run in mixed["variants"].values())


def test_remat_changes_no_loss_or_gradient():
    tokens = jnp.asarray(next(tf.batches(TINY, seed=1)))
    params = tf.init(TINY, jax.random.key(0))
    with_remat = dataclasses.replace(TINY, remat=True)
    jaxpr = jax.make_jaxpr(tf.loss_fn, static_argnums=2)(params, tokens, with_remat)
    assert "checkpoint" in str(jaxpr) or "remat" in str(jaxpr)
    grad = jax.jit(jax.value_and_grad(tf.loss_fn), static_argnums=2)
    loss, grads = grad(params, tokens, TINY)
    loss_remat, grads_remat = grad(params, tokens, with_remat)
    assert loss_remat == pytest.approx(float(loss), rel=1e-6)
    for a, b in zip(jax.tree.leaves(grads), jax.tree.leaves(grads_remat), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)


def test_multisteps_equals_the_large_batch_and_the_check_catches_a_wrong_one(quick_record):
    """The CPU config's accumulation, k = 4 micro-batches of 2 (compiled by the record)."""
    found = quick_record["accumulation"]
    assert (found["k"], found["micro_batch"]) == (4, 2)
    assert found["within_tolerance"]
    assert found["relative_difference"] < tn.ACCUMULATION_TOLERANCE
    rows = next(tf.batches(dataclasses.replace(tf.CPU, batch=2 * tf.CPU.batch), seed=5))
    large, other = rows[: tf.CPU.batch], rows[tf.CPU.batch :]
    same = tn.accumulation_gap(tf.CPU, large.reshape(4, 2, -1), large)
    assert same["relative_difference"] < tn.ACCUMULATION_TOLERANCE
    # Micro-batches of other examples than the large batch's: the check must see it.
    wrong = tn.accumulation_gap(tf.CPU, other.reshape(4, 2, -1), large)
    assert wrong["relative_difference"] > 100 * tn.ACCUMULATION_TOLERANCE


def test_flops_per_step_against_a_hand_count():
    c = tf.Config(vocab=10, width=4, layers=1, heads=2, seq=3, batch=2, lr=1e-3)
    # Forward, per token: 2 flops per multiply-add of each weight matrix.
    matrices = 2 * (4 * 12 + 4 * 4 + 4 * 16 + 16 * 4) + 2 * 4 * 10  # qkv, out, up, down; logits
    # Forward, per token and head: q·k over 3 keys and the weighted sum of 3 values, 2 wide.
    attention = 2 * (2 * 3 * 2 + 2 * 3 * 2)
    per_token = 3 * (matrices + attention)  # the backward pass costs twice the forward
    assert tf.flops_per_step(c) == per_token * c.batch * c.seq == 9216
    params = jax.eval_shape(partial(tf.init, c), jax.random.key(0))
    # embed 40, pos 12, per layer: LN 8 + qkv 48 + out 16 + LN 8 + up 64 + down 64, final LN 8
    assert tf.parameter_count(params) == 40 + 12 + 208 + 8


def test_the_compilers_count_agrees_with_the_model_count(quick_record):
    count = quick_record["hardware_count"]
    assert count["palm_flops"] == tf.flops_per_step(tf.CPU)
    assert count["compiled_step_flops"] < count["compiled_flops_all_layers"]
    assert 1.0 < count["ratio_all_layers_to_palm"] < 1.2


def _lane(pid, tid, process, thread):
    return [
        {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": process}},
        {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": thread}},
    ]


def _events(pid, tid, spans, name="jit_step"):
    return [
        {"ph": "X", "pid": pid, "tid": tid, "name": name, "ts": start, "dur": end - start}
        for start, end in spans
    ]


SYNTHETIC = [
    *_lane(1, 2, "/device:TPU:0", "XLA Modules"),
    *_lane(1, 3, "/device:TPU:0", "XLA Ops"),
    *_lane(7, 8, "/host:CPU", "python"),
    *_events(1, 2, [(1000, 1010), (1015, 1020), (1020, 1030), (1040, 1050)]),
    *_events(1, 3, [(1001, 1009), (1060, 1100)], name="fusion"),  # another lane: left out
    *_events(7, 8, [(900, 1200)], name="host"),
]


def test_device_idle_reads_the_modules_lane(tmp_path):
    folder = tmp_path / "plugins" / "profile" / "2026_01_01_00_00_00"
    folder.mkdir(parents=True)
    with gzip.open(folder / "host.trace.json.gz", "wt") as fh:
        json.dump({"traceEvents": SYNTHETIC}, fh)
    found = tn.device_idle(tn.read_trace_events(tmp_path))
    assert found["modules"] == 4
    assert found["span_ms"] == pytest.approx(0.050)
    assert found["busy_ms"] == pytest.approx(0.035)
    assert found["idle_ms"] == pytest.approx(0.015)
    assert found["gaps"] == 2
    assert found["largest_gap_ms"] == pytest.approx(0.010)


def test_device_idle_says_when_there_is_no_device_lane():
    host_only = [e for e in SYNTHETIC if e["pid"] == 7]
    with pytest.raises(tn.NoDeviceLane, match="no process named '/device:TPU:0'"):
        tn.device_idle(host_only)
    no_modules = [e for e in SYNTHETIC if e.get("tid") != 2]
    with pytest.raises(tn.NoDeviceLane, match="XLA Modules"):
        tn.device_idle(no_modules)


SECTION_KEYS = {
    "loops": {
        "examples_per_epoch",
        "batch",
        "first_epoch_compilations",
        "epoch_seconds",
        "steps_per_epoch",
        "seconds_per_step",
        "tokens_per_second",
        "mfu",
        "timed",
        "note",
    },
    "hardware_count": {
        "compiled_step_flops",
        "one_layer_forward_backward_flops",
        "compiled_flops_all_layers",
        "palm_flops",
        "ratio_all_layers_to_palm",
        "ratio_step_to_palm",
        "note",
    },
    "traces": {"steps", "as written", "made fast"},
    "mixed_precision": {
        "steps",
        "variants",
        "reference",
        "final_loss_is",
        "largest_final_difference",
        "tolerance",
        "within_tolerance",
        "ln_vocab",
        "entropy_rate",
        "loss_fell_well_below_ln_vocab",
        "well_below_means",
        "peak_flops",
    },
    "remat": {
        "policy",
        "memory_bytes",
        "compiled_step_flops",
        "seconds_per_step",
        "step_seconds",
        "saved_residuals_one_layer",
    },
    "largest_batch": {"skipped"},  # the CPU reports no memory limit
    "accumulation": {
        "k",
        "micro_batch",
        "largest_difference",
        "largest_update",
        "relative_difference",
        "optimizer",
        "precision",
        "tolerance",
        "within_tolerance",
    },
}


def test_the_quick_record_has_every_section(quick_record):
    json.dumps(quick_record)  # plain JSON
    assert quick_record["quick"]
    assert quick_record["device"]["platform"] == "cpu"
    assert quick_record["peak_source"] == "https://cloud.google.com/tpu/docs/v5e"
    assert quick_record["flops_per_step"] == tf.flops_per_step(tf.CPU)
    for name, keys in SECTION_KEYS.items():
        assert set(quick_record[name]) == keys, name
    assert set(quick_record["section_seconds"]) == set(SECTION_KEYS)


def test_the_quick_record_of_the_seven_loops(quick_record):
    loops = quick_record["loops"]
    assert list(loops["epoch_seconds"]) == list(tn.LOOP_NAMES)
    compiles = loops["first_epoch_compilations"]
    # The gradient and the optimizer's ops, each for two batch shapes; the jitted step for
    # both shapes; later loops reuse what the earlier ones compiled.
    assert compiles["as written"] > 2
    assert compiles == compiles | {
        "one jit": 2,
        "no wait": 0,
        "one shape": 0,
        "donated": 1,
        "prefetched": 0,
        "scanned": 1,
    }
    assert loops["steps_per_epoch"] == {
        "as written": 3,
        "one jit": 3,
        "no wait": 3,
        "one shape": 2,
        "donated": 2,
        "prefetched": 2,
        "scanned": 2,
    }
    assert all(0 < mfu < 1 for mfu in loops["mfu"].values())


def test_the_quick_record_of_traces_and_remat(quick_record):
    traces = quick_record["traces"]
    for loop in ("as written", "made fast"):
        assert "no process named '/device:TPU:0'" in traces[loop]["unreadable"]
    remat = quick_record["remat"]
    assert set(remat["memory_bytes"]) == {"with", "without"}
    assert remat["compiled_step_flops"]["with"] > remat["compiled_step_flops"]["without"]
    residuals = remat["saved_residuals_one_layer"].splitlines()
    assert 0 < len(residuals) <= 30
    assert any("from the argument" in line for line in residuals)
