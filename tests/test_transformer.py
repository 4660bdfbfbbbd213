"""The transformer case study (`chapter2.cases.transformer`) and what the TPU record keeps of
training it (`chapter2.training_numbers`), checked on the CPU."""

import ast
import dataclasses
import fcntl
import gzip
import itertools
import json
import math
import re
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import DOCS, ROOT

from chapter2 import training_numbers as tn
from chapter2.cases import transformer as tf
from chapter2.runs import recorded_run

PAGE_STEPS = 60  # the steps the page trains the CPU config for: the cell's own run
TINY = tf.Config(vocab=32, width=16, layers=2, heads=2, seq=8, batch=4, lr=1e-2)
TPU_RUN = recorded_run(ROOT / "data" / "backends", "tpu-v5e-jax-0.10.2")
# What the page's cell may import: the standard library's and these, nothing of the book.
CELL_IMPORTS = {"dataclasses", "functools", "math", "jax", "jax.numpy", "numpy", "optax"}


@pytest.fixture(scope="session")
def quick_record(tmp_path_factory, worker_id):
    """One quick record for the whole session, made by whichever worker asks first and read
    by the others (pytest-xdist's pattern: a file and a lock where the workers' folders are):
    it compiles the model a dozen times over."""
    if worker_id == "master":  # not distributed
        return tn.record(quick=True)
    shared = tmp_path_factory.getbasetemp().parent
    path = shared / "quick-record.json"
    with (shared / "quick-record.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            path.write_text(json.dumps(tn.record(quick=True)))
        return json.loads(path.read_text())


@pytest.fixture(scope="module")
def page_losses(tmp_path_factory):
    """The page's cell run as the reader check runs it, alone, as `__main__`: the losses it
    trained through."""
    script = tmp_path_factory.mktemp("cell") / "cell.py"
    script.write_text(module_cell())
    namespace = {"__name__": "__main__"}
    exec(compile(script.read_text(), str(script), "exec"), namespace)
    return namespace["losses"]


def test_loss_falls_from_ln_vocab_toward_the_entropy_rate(page_losses):
    assert len(page_losses) == PAGE_STEPS
    first, last = np.mean(page_losses[:5]), np.mean(page_losses[-10:])
    assert abs(first - math.log(tf.CPU.vocab)) < 0.3
    assert last < tn.WELL_BELOW * math.log(tf.CPU.vocab)
    assert last > tf.entropy_rate() - 0.05  # no model beats the chain's own randomness


def test_the_loop_flags_change_no_loss(page_losses):
    """Donation, prefetching and late fetches change when things happen, not what: the same
    losses, in order, all of them."""
    assert (tf.CPU.donate, tf.CPU.prefetch, tf.CPU.log_every) == (True, True, 10)
    plain = dataclasses.replace(tf.CPU, donate=False, prefetch=False, log_every=1)
    _, losses = tf.train(plain, 25)
    assert losses == page_losses[:25]


def test_make_step_compiles_once_per_config():
    assert tf.make_step(TINY) is tf.make_step(dataclasses.replace(TINY))
    assert tf.make_step(TINY) is not tf.make_step(dataclasses.replace(TINY, donate=True))


def test_accumulate_updates_once_every_k_batches():
    """With accumulate=2, AdamW updates on the 2nd and 4th batch; its warmup starts at a
    learning rate of 0, so its first update leaves the parameters as they were."""
    config = dataclasses.replace(TINY, accumulate=2, warmup=1)
    params = tf.init(config, jax.random.key(0))
    state, data = (params, tf.make_optimizer(config).init(params)), tf.batches(config)
    step, seen = tf.make_step(config), []
    for _ in range(4):
        state, _ = step(state, next(data))
        seen.append(jax.tree.leaves(state[0]))

    def equal(x, y):
        return all(np.array_equal(a, b) for a, b in zip(x, y, strict=True))

    assert [equal(x, y) for x, y in itertools.pairwise(seen)] == [True, True, False]
    assert equal(seen[0], jax.tree.leaves(params))


def module_cell() -> str:
    """The module's body below its docstring: the page's cell, as it must read."""
    source = (ROOT / "src" / "chapter2" / "cases" / "transformer.py").read_text()
    return source[source.index('"""', 3) + 3 :].lstrip("\n")


def page_cells(markdown: str) -> list[str]:
    """The source of each code cell of a page, its options left out."""
    cells = re.findall(r"^```\{code-cell\} ipython3\n(.*?)^```$", markdown, re.M | re.S)
    return [re.sub(r"\A(?::tags:.*\n|---\n.*?\n---\n)", "", cell, flags=re.S) for cell in cells]


def the_models_cell(markdown: str) -> str | None:
    """The page's cell that defines the model (its `class Config`), or None."""
    found = [cell for cell in page_cells(markdown) if "\nclass Config:" in cell]
    return found[0] if len(found) == 1 else None


def test_the_pages_cell_is_the_module_and_a_changed_one_is_not():
    page = (DOCS / "training-step.md").read_text()
    cell = the_models_cell(page)
    assert cell == module_cell(), (
        "copy src/chapter2/cases/transformer.py, below its docstring, into the page's cell"
    )
    changed = page.replace("lr=5e-3", "lr=4e-3", 1)
    assert the_models_cell(changed) not in (None, module_cell())


def cell_imports(cell: str) -> set[str]:
    """The modules a cell imports, by their full names."""
    found = set()
    for node in ast.walk(ast.parse(cell)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module or "")
    return found


def test_the_cell_imports_nothing_of_the_book_and_the_test_sees_an_import():
    assert cell_imports(module_cell()) <= CELL_IMPORTS
    assert cell_imports("import jax\nfrom chapter2.timing import bench\n") - CELL_IMPORTS == {
        "chapter2.timing"
    }


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


def test_bf16_copies_keep_the_named_parameters_in_float32():
    params = tf.init(TINY, jax.random.key(0))
    dtypes = jax.tree_util.tree_map_with_path(
        lambda path, w: (jax.tree_util.keystr(path), w.dtype),
        tf.bf16_copies(params, keep=("embed", "ln1")),
    )
    kept = {
        name
        for name, dtype in jax.tree.leaves(dtypes, is_leaf=lambda x: isinstance(x, tuple))
        if dtype == jnp.float32
    }
    assert kept == {"['embed']", "['layers']['ln1']['bias']", "['layers']['ln1']['scale']"}
    assert all(w.dtype == jnp.bfloat16 for w in jax.tree.leaves(tf.bf16_copies(params)))


@pytest.mark.parametrize("recipe", ["precision_kept", "precision_results"])
def test_the_other_recipes_run_from_the_first_ones_starts(quick_record, recipe):
    kept, mixed = quick_record[recipe], quick_record["mixed_precision"]
    seeds, longer = quick_record["precision_seeds"], quick_record["precision_long"]
    every = {"0": mixed["variants"]["bfloat16"]["losses"]}
    every |= {seed: run["losses"]["bfloat16"] for seed, run in seeds["seeds"].items()}
    every |= {seed: run["losses"]["bfloat16"] for seed, run in longer["seeds"].items()}
    assert set(kept["seeds"]) == set(every)
    for seed, run in kept["seeds"].items():
        assert len(run["losses"]) == len(every[seed])
        assert run["losses"][0] == pytest.approx(every[seed][0], abs=0.05)  # the same start
        assert run["losses"] != every[seed]  # and another recipe


def test_the_kept_recipe_keeps_its_names_and_repeats_a_run(quick_record):
    kept, mixed = quick_record["precision_kept"], quick_record["mixed_precision"]
    assert kept["kept_float32"] == list(tn.KEPT_F32)
    # the CPU repeats a run exactly
    assert kept["all_bfloat16_again"]["losses"] == mixed["variants"]["bfloat16"]["losses"]


def _product_results(config) -> list[str]:
    """The element type of every dot_general's result in the loss's jaxpr and its gradient's."""
    params = tf.init(config, jax.random.key(0))
    tokens = jnp.asarray(next(tf.batches(config, seed=1)))
    text = str(jax.make_jaxpr(jax.grad(tf.loss_fn), static_argnums=2)(params, tokens, config))
    return re.findall(r":(\w+)\[[^\]]*\] = dot_general", text)


def test_float32_results_leave_no_product_writing_bfloat16():
    every = dataclasses.replace(TINY, bf16=True)
    results = dataclasses.replace(every, f32_results=True)
    assert set(_product_results(TINY)) == {"f32"}  # float32 throughout
    assert "bf16" in _product_results(every)  # products write bfloat16 in both passes
    assert set(_product_results(results)) == {"f32"}  # the products write float32


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


def test_multisteps_equals_the_large_batch_and_the_check_catches_a_wrong_one(
    quick_record, monkeypatch
):
    """The CPU config's accumulation with the page's AdamW: k = 4 micro-batches of 2, three
    updates (compiled by the record); then an optimizer that ignores `accumulate`."""
    found = quick_record["multisteps"]
    assert (found["k"], found["micro_batch"], found["updates"]) == (4, 2, tn.ACCUMULATED_UPDATES)
    assert found["within_tolerance"]
    assert found["relative_difference"] == pytest.approx(found["distance"] / found["moved"])
    assert found["relative_difference"] < tn.ACCUMULATION_TOLERANCE
    assert found["moved"] > 0  # the warmup's later updates moved the parameters
    assert found["moved_before_a_groups_last_batch"] == 0.0
    # An accumulation that updates at every micro-batch: the check must see it.
    plain = tf.make_optimizer
    every_batch = lambda config: plain(dataclasses.replace(config, accumulate=1))  # noqa: E731
    monkeypatch.setattr(tf, "make_optimizer", every_batch)  # in make_step
    monkeypatch.setattr(tn, "make_optimizer", every_batch)  # the state it starts from
    tf.make_step.cache_clear()
    try:
        rows = tn.token_rows(tf.CPU, 3 * tf.CPU.batch, seed=6).reshape(3, tf.CPU.batch, -1)
        wrong = tn.multisteps_gap(tf.CPU, 4, rows)  # the CPU config: compiled programs reused
    finally:
        tf.make_step.cache_clear()  # no step of the wrong optimizer outlives the test
    assert wrong["relative_difference"] > 100 * tn.ACCUMULATION_TOLERANCE
    assert wrong["moved_before_a_groups_last_batch"] > 0


def test_multisteps_cost_compares_the_same_tokens_per_update(quick_record):
    cost = quick_record["multisteps"]["cost"]
    k = quick_record["multisteps"]["k"]
    assert cost["micro_batch"] * k == cost["batch"]
    held = cost["held_at_once"]
    assert held == {n: tn.held_at_once(m) for n, m in cost["memory_bytes"].items()}
    assert held["accumulated"] < held["whole batch"]  # a quarter of the activations
    per_call = cost["seconds_per_call"]
    assert cost["seconds_per_update"] == {
        "whole batch": per_call["whole batch"],
        "accumulated": k * per_call["accumulated"],
    }


def test_precision_seeds_start_from_their_own_parameters(quick_record):
    seeds = quick_record["precision_seeds"]
    assert set(seeds["seeds"]) == {str(s) for s in tn.PRECISION_SEEDS}
    first = [run["losses"]["float32"][0] for run in seeds["seeds"].values()]
    reference = quick_record["mixed_precision"]["variants"]["float32"]["losses"][0]
    assert len({*first, reference}) == 3  # other starts, other batches: other first losses
    for run in seeds["seeds"].values():
        final = run["final_loss"]
        assert run["difference"] == pytest.approx(abs(final["bfloat16"] - final["float32"]))
        assert all(len(losses) == seeds["steps"] for losses in run["losses"].values())
    longer = quick_record["precision_long"]
    assert longer["steps"] == quick_record["plan"]["precision_long_times"] * seeds["steps"]
    for seed in map(str, tn.PRECISION_LONG_SEEDS):  # the same start, run further
        shorter, run = seeds["seeds"][seed]["losses"], longer["seeds"][seed]["losses"]
        assert {name: losses[:3] for name, losses in run.items()} == {
            name: losses[:3] for name, losses in shorter.items()
        }


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


# Optimized HLO as a TPU writes a step's: a loop whose body runs a product, a reduction and
# a copy; a reduction's scalar function and fused bodies, which no device runs by name.
STEP_HLO = """HloModule jit_step

%add.1 (x: f32[], y: f32[]) -> f32[] {
  ROOT %sum.1 = f32[] add(%x, %y)
}

%fused_product (p0: f32[8,8], p1: f32[8,8]) -> f32[8,8] {
  ROOT %dot.1 = f32[8,8]{1,0} dot(%p0, %p1)
}

%fused_norm (p0.1: f32[8,8]) -> f32[8] {
  %zero = f32[] constant(0)
  ROOT %reduce.1 = f32[8]{0} reduce(%p0.1, %zero), to_apply=%add.1
}

%body (carry: (s32[], f32[8,8])) -> (s32[], f32[8,8]) {
  %carry = (s32[], f32[8,8]) parameter(0)
  %w = f32[8,8]{1,0} get-tuple-element(%carry), index=1
  %product_fusion = f32[8,8]{1,0} fusion(%w, %w), kind=kOutput, calls=%fused_product
  %norm_fusion = f32[8]{0} fusion(%product_fusion), kind=kInput, calls=%fused_norm
  %copy.2 = f32[8,8]{0,1} copy(%product_fusion)
  ROOT %next = (s32[], f32[8,8]) tuple(%i, %copy.2)
}

ENTRY %main (a: f32[8,8]) -> (s32[], f32[8,8]) {
  %a = f32[8,8]{1,0} parameter(0)
  %start = (s32[], f32[8,8]) tuple(%zero.1, %a)
  %scale = f32[8,8]{1,0} multiply(%a, %a)
  ROOT %while.1 = (s32[], f32[8,8]) while(%start), condition=%cond, body=%body
}
"""


def test_instruction_kinds_name_what_each_run_instruction_computes():
    assert tn.instruction_kinds(STEP_HLO) == {
        "product_fusion": "matrix products",
        "norm_fusion": "reductions",
        "copy.2": "copies",
        "scale": "elementwise and other",
        "while.1": "control",
    }


def test_the_step_ops_sum_each_kind_a_step_and_leave_containers_out():
    trace = [
        *_lane(1, 3, "/device:TPU:0", "XLA Ops"),
        *_lane(1, 2, "/device:TPU:0", "XLA Modules"),
        *_events(1, 2, [(0, 1000)]),  # a program: not an instruction
        *_events(1, 3, [(0, 1000)], name="while.1"),
        *_events(1, 3, [(10, 410), (500, 900)], name="product_fusion"),
        *_events(1, 3, [(420, 440), (910, 930)], name="norm_fusion"),
        *_events(1, 3, [(450, 460)], name="copy.2"),
        *_events(1, 3, [(940, 970)], name="fusion.99"),
    ]
    ran = tn.device_ops(trace)
    assert ran["product_fusion"] == [400.0, 400.0]
    summary = tn.ops_summary(ran, tn.instruction_kinds(STEP_HLO), steps=2)
    assert summary["ms_by_kind"] == pytest.approx(
        {
            "matrix products": 0.4,
            "reductions": 0.02,
            "not in the step's HLO": 0.015,
            "copies": 0.005,
        }
    )
    assert list(summary["ms_by_kind"]) == [
        "matrix products",
        "reductions",
        "not in the step's HLO",
        "copies",
    ]
    assert [op["name"] for op in summary["top"]] == [
        "product_fusion",
        "norm_fusion",
        "fusion.99",
        "copy.2",
    ]
    assert summary["top"][0]["runs"] == 1.0
    with pytest.raises(tn.NoDeviceLane, match="XLA Ops"):
        tn.device_ops([e for e in trace if e.get("tid") != 3])


def test_batch_fits_predicts_from_one_count_and_runs_each_batch():
    tiny = dataclasses.replace(tf.CPU, vocab=64, width=32, layers=1, heads=2, seq=16, batch=2)
    loops = tn.Loops(tiny)
    two = tn.batch_fits(loops, print, limit=10**7)
    a, b = two["fit"]["held"]
    slope = (b - a) / 2
    assert two["fit"]["b"] == pytest.approx(slope)
    assert two["predicted"] == int((10**7 - (a - 2 * slope)) / slope)
    runs = {run["batch"]: run for run in two["runs"]}
    beyond = max(two["predicted"], 4) + 2  # the next batch of the series past both
    assert set(runs) == {2, 4, two["predicted"], beyond}
    assert [tn.held_at_once(runs[n]["memory_bytes"]) for n in (2, 4)] == [a, b]
    assert all(math.isfinite(run["loss"]) for run in runs.values())
    for batch, run in runs.items():
        timed = run["timed"]
        flops = tf.flops_per_step(dataclasses.replace(tiny, batch=batch))
        assert timed["mfu"] == pytest.approx(flops / timed["seconds_per_step"] / tn.PEAK_FLOPS)
    assert tn.batch_fits(loops, print, limit=None) == {
        "skipped": "this device reports no bytes_limit in memory_stats()"
    }


SECTION_KEYS = {
    "batch_fits": {"skipped"},  # the CPU reports no memory limit
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
    "multisteps": {
        "k",
        "micro_batch",
        "updates",
        "distance",
        "moved",
        "relative_difference",
        "largest_difference",
        "largest_move",
        "moved_before_a_groups_last_batch",
        "optimizer",
        "precision",
        "tolerance",
        "within_tolerance",
        "cost",
    },
    "step_ops": {"unreadable"},  # the CPU's trace has no device lane
    "precision_seeds": {"steps", "seeds", "tolerance", "final_loss_is", "batches_seed"},
    "precision_long": {"steps", "seeds", "tolerance", "final_loss_is", "batches_seed"},
    "precision_kept": {
        "kept_float32",
        "seeds",
        "all_bfloat16_again",
        "steps",
        "long_steps",
        "batches_seed",
    },
    "precision_results": {"seeds", "steps", "long_steps", "batches_seed"},
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


TPU_TRAINING = TPU_RUN.read("training")


def test_the_tpu_record_ran_the_tpu_config():
    recorded = TPU_TRAINING["config"]
    now = json.loads(json.dumps(dataclasses.asdict(tf.TPU)))  # as JSON writes it
    assert recorded == {k: v for k, v in now.items() if k in recorded}
    added = {f.name: f.default for f in dataclasses.fields(tf.Config) if f.name not in recorded}
    assert added == {"accumulate": 1, "f32_params": (), "f32_results": False}  # added since
    assert all(getattr(tf.TPU, name) == off for name, off in added.items())  # as the chip ran
    assert TPU_TRAINING["flops_per_step"] == tf.flops_per_step(tf.TPU)
    assert TPU_TRAINING["device"]["device"] == "TPU v5 lite"


def test_the_recorded_mfu_is_the_model_flops_over_the_vendor_peak():
    vendor = TPU_RUN.read("vendor figures")["bfloat16"]
    per_token = tf.flops_per_step(tf.TPU) / (tf.TPU.batch * tf.TPU.seq)
    loops = TPU_TRAINING["loops"]
    for name, rate in loops["tokens_per_second"].items():
        assert loops["mfu"][name] == pytest.approx(rate * per_token / vendor), name
    for name, run in TPU_TRAINING["mixed_precision"]["variants"].items():
        mfu = tf.flops_per_step(tf.TPU) / run["seconds_per_step"] / vendor
        assert run["mfu"] == pytest.approx(mfu), name
        assert run["final_loss"] == pytest.approx(np.mean(run["losses"][-tn.LAST :])), name


def test_the_recorded_bfloat16_loss_agrees_with_one_float32_and_not_the_other():
    """As the page reports it: the tolerance set before the run holds against float32 at the
    default precision, not against "highest", the reference the record named."""
    mixed = TPU_TRAINING["mixed_precision"]
    final = {name: run["final_loss"] for name, run in mixed["variants"].items()}
    assert mixed["tolerance"] == tn.LOSS_TOLERANCE
    assert abs(final["bfloat16"] - final["float32"]) <= mixed["tolerance"]
    assert abs(final["bfloat16"] - final["float32 highest"]) > mixed["tolerance"]
    assert not mixed["within_tolerance"]
    assert mixed["loss_fell_well_below_ln_vocab"]


def test_the_recorded_batch_fits_follows_from_one_count_and_ran_each_batch():
    fits = TPU_TRAINING["batch_fits"]
    a, b, limit = fits["fit"]["a"], fits["fit"]["b"], fits["bytes_limit"]
    assert fits["predicted"] == int((limit - a) / b)
    runs = {run["batch"]: run for run in fits["runs"]}
    small, large = fits["fit"]["batches"]
    assert [tn.held_at_once(runs[n]["memory_bytes"]) for n in (small, large)] == fits["fit"]["held"]
    beyond = max(fits["predicted"], large) + small  # the next batch of the series
    assert set(runs) == {small, large, fits["predicted"], beyond}
    assert "RESOURCE_EXHAUSTED" in runs[beyond]["refused"]  # on the chip, refused
    ran = [run for run in runs.values() if "refused" not in run]
    assert all(math.isfinite(run["loss"]) for run in ran)
    for run in ran:
        flops = tf.flops_per_step(dataclasses.replace(tf.TPU, batch=run["batch"]))
        timed = run["timed"]
        assert timed["mfu"] == pytest.approx(flops / timed["seconds_per_step"] / tn.PEAK_FLOPS)


def test_the_recorded_accumulation_matches_the_large_batch():
    found = TPU_TRAINING["accumulation"]
    ratio = found["largest_difference"] / found["largest_update"]
    assert found["relative_difference"] == pytest.approx(ratio)
    assert found["within_tolerance"]
    assert found["relative_difference"] < tn.ACCUMULATION_TOLERANCE


def test_traffic_floor_reads_and_writes_the_state_once_and_each_temporary_twice():
    assert tn.traffic_floor({"argument": 10, "output": 7, "alias": 7, "temp": 100}) == 217
    memory = TPU_TRAINING["remat"]["memory_bytes"]["without"]
    floor = tn.traffic_floor(memory)
    assert floor == memory["argument"] + memory["output"] + 2 * memory["temp"]
    assert floor > memory["peak"]  # more than the step holds at once: the temporaries move


def test_step_costs_add_the_layers_a_scan_counts_once():
    params = jax.eval_shape(partial(tf.init, TINY), jax.random.key(0))
    state = (params, jax.eval_shape(tf.make_optimizer(TINY).init, params))
    batch = jax.ShapeDtypeStruct((TINY.batch, TINY.seq + 1), jnp.int32)
    compiled = tf.make_step(TINY).lower(state, batch).compile()
    counted_once = float(tn._costs(compiled)["flops"])
    whole = tn.step_costs(compiled, TINY)
    model = tf.flops_per_step(TINY)
    assert counted_once < model < whole["flops"]
    assert whole["bytes accessed"] > float(tn._costs(compiled)["bytes accessed"])
