"""What the chapter's sections measure on an accelerator, for a recorded run.

    python -m chapter2.accelerator OUT.json [--part roofs layouts ...] [--quick]

Each part is a function of the programs and helpers the pages use (`softmax_by_hand`, the
distance versions, `jit_against_eager`, `Placement`, `bench_together`, `kernels`, the layout
helpers), run on JAX's default device. Programs are timed by the device's own clock
(`chapter2.device_time`), since on an accelerator a call timed from Python pays the host's
dispatch and wait; what the host itself does (dispatch, transfers, overlap) is timed from
Python. A part that fails records its error; the others still run. `--quick` shrinks every
size so that the command can be tried on a CPU, where the device's clock cannot be read.
"""

import argparse
import json
import math
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from chapter2.compat import cost_analysis
from chapter2.device_time import bench_device
from chapter2.hlo import clean_hlo, count_fusions, entry_layout, fusion_kinds, kernels
from chapter2.roofline import Placement, Roofs, footprint
from chapter2.timing import BenchResult, Comparison, bench_together

PRECISIONS = {"bfloat16": ("bfloat16", None), "float32": ("float32", None)}
PRECISIONS |= {f"float32 {p}": ("float32", p) for p in ("high", "highest")}


def by_clock(calls: dict[str, Callable[[], object]], n: int = 7) -> dict[str, BenchResult]:
    """`bench_device` on an accelerator; on the CPU, whose trace has no device lane, the same
    calls timed from Python (`bench_together`), so that the command can be tried there."""
    if jax.devices()[0].platform != "cpu":
        return bench_device(calls, n)
    return bench_together({name: (call, ()) for name, call in calls.items()}, n=n)


def timing(result: BenchResult) -> dict:
    """A timing as the record keeps it: every run, in seconds."""
    return {"median": result.median, "runs": list(result.times)}


def compared(a_name: str, a: BenchResult, b_name: str, b: BenchResult) -> dict:
    """A comparison as the record keeps it: the book's verdict, ratio and sentence."""
    said = Comparison(a_name, a, b_name, b)
    return {"verdict": said.verdict, "ratio": said.ratio, "text": str(said)}


def chained_products(n: int, dtype: str, precision: str | None, chain: int) -> Callable:
    """`chain` n x n products in one program, each on the last one's result, so that no
    product can be hoisted out of the loop: random normal operands, the weight scaled by
    1/sqrt(n) so that the values stay of order one. A zero-argument call."""
    kx, kw = jax.random.split(jax.random.key(0))
    x = jax.random.normal(kx, (n, n), dtype)
    w = (jax.random.normal(kw, (n, n), jnp.float32) / math.sqrt(n)).astype(dtype)

    @jax.jit
    def run(x, w):
        step = lambda _, x: jnp.matmul(x, w, precision=precision).astype(dtype)  # noqa: E731
        return lax.fori_loop(0, chain, step, x)

    return lambda: run(x, w)


def product_rates(sizes: dict[str, tuple], n: int = 7) -> dict:
    """Flops per second of chained products, `sizes` {name: (n, dtype, precision, chain)},
    timed in turns by the device's clock."""
    calls = {name: chained_products(*spec) for name, spec in sizes.items()}
    timed = by_clock(calls, n)
    return {
        name: {
            "n": size,
            "dtype": dtype,
            "precision": precision or "default",
            "chain": chain,
            "flops per call": 2 * size**3 * chain,
            "rates": [2 * size**3 * chain / t for t in timed[name].times],
        }
        for name, (size, dtype, precision, chain) in sizes.items()
    }


def stream_rates(sizes: list[int], n: int = 7) -> dict:
    """Bytes per second of the donated stream `2 * x + y` (read x and y, write x into x's
    buffer) over float32 arrays of each size in `sizes` (bytes per array), by the device's
    clock."""
    stream = jax.jit(lambda x, y: 2.0 * x + y, donate_argnums=0)
    calls = {}
    for size in sizes:
        arrays = {"x": jnp.ones(size // 4, jnp.float32), "y": jnp.ones(size // 4, jnp.float32)}

        def streamed(arrays=arrays):
            arrays["x"] = stream(arrays["x"], arrays["y"])
            return arrays["x"]

        calls[str(size)] = streamed
    timed = by_clock(calls, n)
    return {name: [3 * int(name) / t for t in timed[name].times] for name in calls}


def roofs(quick: bool) -> dict:
    """The device's roofs: chained products in bfloat16 and float32 at each precision, and
    the stream over arrays from 1 MiB to 1 GiB each, the largest the level of HBM."""
    n, chain = (256, 2) if quick else (8192, 8)
    sizes = {
        name: (n, dtype, precision, chain if precision is None else max(1, chain // 4))
        for name, (dtype, precision) in PRECISIONS.items()
    }
    streams = [2**k for k in (range(20, 23) if quick else range(20, 31, 2))]
    stream = stream_rates(streams)
    largest = str(max(streams))
    limit = jax.devices()[0].memory_stats() or {}
    return {
        "products": product_rates(sizes),
        "stream": stream,
        "levels": [
            {
                "name": "HBM",
                "bandwidth": max(stream[largest]),
                "stream bytes": 3 * int(largest),
                "extent": limit.get("bytes_limit"),
            }
        ],
    }


def fastest_products(record: dict) -> dict[str, dict]:
    """The fastest run of every recorded product, by dtype and precision (named as the roofs'
    products are: "bfloat16", "float32", "float32 high", ...), over every size the record
    holds (the roofs' and the layouts'): {name: {"rate", "n"}}."""
    found: dict[str, dict] = {}
    every = [*record["roofs"]["products"].values(), *record["layouts"]["products"].values()]
    for product in every:
        name = product["dtype"] + (
            "" if product["precision"] == "default" else f" {product['precision']}"
        )
        rate = max(product["rates"])
        if rate > found.get(name, {}).get("rate", 0):
            found[name] = {"rate": rate, "n": product["n"]}
    return found


def hbm_rates(record: dict) -> dict[str, float]:
    """How fast the record's programs moved bytes through HBM, each its fastest run: the
    stream over the largest arrays, which reads two and writes one, and the sums of the
    largest matrix, which only read (by XLA's count of their bytes)."""
    rates = {"stream": record["roofs"]["levels"][0]["bandwidth"]}
    largest = max(record.get("axis sums", {}).values(), key=lambda s: s["side"], default=None)
    for axis in ("axis=1", "axis=0") if largest else ():
        seconds = min(largest["times"][axis]["runs"])
        rates[f"sum over {axis}"] = largest["bytes accessed"][axis] / seconds
    return rates


def hbm_roof(record: dict, writes: bool = True) -> float:
    """HBM's roof as a program meets it: for one that writes, the stream's rate (it reads two
    arrays and writes one); for one that only reads, the fastest read-only sum's, which
    outruns the stream (the stream's where the record holds no sum)."""
    rates = hbm_rates(record)
    read_only = [rate for name, rate in rates.items() if name.startswith("sum over")]
    return rates["stream"] if writes or not read_only else max(read_only)


def device_roofs(record: dict, product: str = "float32", writes: bool = True) -> Roofs:
    """The device's roofs from its record: the fastest run of the products named `product`
    at any size recorded, and HBM's roof for a program that writes or only reads."""
    return Roofs(fastest_products(record)[product]["rate"], hbm_roof(record, writes))


def layouts(quick: bool) -> dict:
    """How the device lays out realistic arrays (order and tile), and products just under, at
    and just over a multiple of 128, chained, timed by the device's clock."""
    shapes = {
        f"1024 x 1024 {dtype}": jnp.ones((1024, 1024), dtype)
        for dtype in ("float32", "bfloat16", "int8")
    }
    shapes["6 x 4 float32"] = jnp.ones((6, 4), jnp.float32)
    found = {
        name: {
            "major_to_minor": list(a.format.layout.major_to_minor),
            "tiling": [list(t) for t in a.format.layout.tiling],
        }
        for name, a in shapes.items()
    }
    sides = (127, 128, 129) if quick else (2047, 2048, 2049, 4095, 4096, 4097)
    sizes = {
        f"{side} {dtype}": (side, dtype, None, 2 if quick else max(4, int(2**36 / side**3)))
        for side in sides
        for dtype in ("bfloat16", "float32")
    }
    operand = jnp.ones((sides[2], sides[2]), jnp.float32)
    padded = entry_layout(
        clean_hlo(jax.jit(jnp.matmul).lower(operand, operand).compile().as_text())
    )
    return {"arrays": found, "products": product_rates(sizes), "padded product layout": padded}


def axis_sums(quick: bool) -> dict:
    """The page memory-layout's pairs on the device: a sum along the rows against one across
    them, a copy against a transpose, by the device's clock, at 16 MB and at 256 MB."""
    found = {}
    for side in (64, 512) if quick else (2000, 8192):
        m = jax.random.normal(jax.random.key(1), (side, side))
        programs = {
            "axis=1": jax.jit(lambda a: a.sum(axis=1)),
            "axis=0": jax.jit(lambda a: a.sum(axis=0)),
            "copy": jax.jit(lambda a: a * 1.0 + 0.0),
            "transpose": jax.jit(lambda a: a.T),
        }
        timed = by_clock({name: (lambda f=f, m=m: f(m)) for name, f in programs.items()})
        found[f"{4 * side * side / 1e6:.0f} MB"] = {
            "side": side,
            "times": {name: timing(t) for name, t in timed.items()},
            "sums": compared("axis=1", timed["axis=1"], "axis=0", timed["axis=0"]),
            "copies": compared("the copy", timed["copy"], "the transpose", timed["transpose"]),
            "bytes accessed": {
                name: cost_analysis(f.lower(m).compile())["bytes accessed"]
                for name, f in programs.items()
            },
        }
    return found


def fusion(quick: bool) -> dict:
    """The page fusion's programs on the device: exp(log(x) + y) as XLA fuses it, with the
    fusion pass off (a backend may not honour it), and with an optimization barrier between
    its steps; its kernels and bytes; and the softmax's kernels."""
    from chapter2.cases.fusion import softmax_by_hand  # noqa: PLC0415

    side = 256 if quick else 1000
    kx, ky = jax.random.split(jax.random.key(0))
    x, y = jax.random.uniform(kx, (side, side)), jax.random.uniform(ky, (side, side))
    no_fusion = {"xla_disable_hlo_passes": "fusion"}
    programs = {
        "fused": jax.jit(lambda x, y: jnp.exp(jnp.log(x) + y)),
        "fusion pass off": jax.jit(
            lambda x, y: jnp.exp(jnp.log(x) + y), compiler_options=no_fusion
        ),
        "with barriers": jax.jit(
            lambda x, y: jnp.exp(lax.optimization_barrier(lax.optimization_barrier(jnp.log(x)) + y))
        ),
    }
    compiled = {name: f.lower(x, y).compile() for name, f in programs.items()}
    timed = by_clock({name: (lambda f=f: f(x, y)) for name, f in programs.items()})
    mat = jax.random.normal(jax.random.key(3), (side, side))
    softmax = {}
    for name, fn in [("softmax by hand", softmax_by_hand), ("jax.nn.softmax", jax.nn.softmax)]:
        hlo = jax.jit(fn).lower(mat).compile().as_text()
        softmax[name] = {
            "fusions": count_fusions(hlo),
            "kinds": fusion_kinds(hlo),
            "kernels": list(kernels(hlo).values()),
        }
    return {
        "side": side,
        "programs": {
            name: {
                "kernels": list(kernels(c.as_text()).values()),
                "bytes accessed": cost_analysis(c)["bytes accessed"],
                "temp bytes": c.memory_analysis().temp_size_in_bytes,
                "time": timing(timed[name]),
            }
            for name, c in compiled.items()
        },
        "fused against barriers": compared(
            "the fused program", timed["fused"], "the one with barriers", timed["with barriers"]
        ),
        "softmax": softmax,
    }


def dispatch(quick: bool) -> dict:
    """The page async-dispatch's measurements on the device, timed from Python: what a
    dispatch costs against the wait for the result, and a device step overlapped with work on
    the host (sorting a million numbers) against the two one after the other."""
    side = 256 if quick else 2000
    m = jax.random.normal(jax.random.key(0), (side, side))
    heavy = jax.jit(lambda m: jnp.dot(m, m.T))
    heavy(m).block_until_ready()
    dispatched, total = [], []
    for _ in range(10):
        start = time.perf_counter()
        result = heavy(m)
        dispatched.append(time.perf_counter() - start)
        result.block_until_ready()
        total.append(time.perf_counter() - start)
    steps = 200 if quick else 8000
    device_step = jax.jit(lambda v: lax.fori_loop(0, steps, lambda _, v: jnp.tanh(v @ v) * 0.5, v))
    v0 = jax.random.normal(jax.random.key(2), (64, 64))
    samples = np.random.default_rng(0).random(1_000_000)

    def host_work():
        return float(np.sort(samples)[1000])

    def device_work():
        device_step(v0).block_until_ready()

    def one_after_the_other():
        device_step(v0).block_until_ready()
        host_work()

    def overlapped():
        pending = device_step(v0)
        host_work()
        pending.block_until_ready()

    runs = bench_together(
        {
            "device": (device_work, ()),
            "host": (host_work, ()),
            "one after the other": (one_after_the_other, ()),
            "overlapped": (overlapped, ()),
        },
        n=19,
    )
    on_device = by_clock({"device step": lambda: device_step(v0)}, n=5)["device step"]
    return {
        "product side": side,
        "dispatch": timing(BenchResult(tuple(dispatched))),
        "dispatch and wait": timing(BenchResult(tuple(total))),
        "overlap": {name: timing(t) for name, t in runs.items()},
        "overlapped against one after the other": compared(
            "overlapped", runs["overlapped"], "one after the other", runs["one after the other"]
        ),
        "device step by the device's clock": timing(on_device),
        "device step": {"steps": steps, "side": 64},
    }


def transfers(quick: bool) -> dict:
    """Host to device (`jax.device_put`) and back (`np.asarray`) over float32 arrays of each
    size, timed from Python, against the device's own stream."""
    found = {}
    for size in [2**20, 2**22] if quick else [2**20, 2**24, 2**28]:
        host = np.random.default_rng(0).random(size // 4, dtype=np.float32)
        on_device = jax.device_put(host).block_until_ready()
        to = bench_together({"to": (jax.device_put, (host,))}, n=7)["to"]
        back = []
        for _ in range(7):
            fresh = on_device + 0  # a new result each time: nothing is kept on the host side
            fresh.block_until_ready()
            start = time.perf_counter()
            np.asarray(fresh)
            back.append(time.perf_counter() - start)
        found[str(size)] = {
            "to the device": [size / t for t in to.times],
            "back to the host": [size / t for t in back],
        }
    return found


def numpy_lessons(quick: bool) -> dict:
    """The page numpy-to-jax's host-memory lessons on a device with its own memory: whether
    `device_put` shares a NumPy buffer, what each order and alignment costs to put, and the
    fresh host pages a put or a computed result touches."""
    from chapter2.layout import aligned_empty, call_cost, misalignment, shares_buffer  # noqa: PLC0415

    shape = (256, 256) if quick else (2800, 2800)
    default = np.random.default_rng(0).random(shape, dtype=np.float32)
    aligned = aligned_empty(shape)
    aligned[...] = default
    inputs = {
        "C order, 64-byte aligned": aligned,
        "C order, NumPy default": default,
        "Fortran order, NumPy default": np.asfortranarray(default),
    }
    timed = bench_together({name: (jax.device_put, (a,)) for name, a in inputs.items()}, n=10)
    found = {}
    for name, a in inputs.items():
        put = jax.device_put(a).block_until_ready()
        found[name] = {
            "pointer mod 64": misalignment(a),
            "shared": shares_buffer(put, a),
            "put": timing(timed[name]),
            "fresh host bytes per put": call_cost(
                lambda a=a: jax.device_put(a).block_until_ready()
            ).fresh_bytes,
        }
    big = jnp.ones((4096, 4096) if not quick else (256, 256), jnp.float32)
    scale = jax.jit(lambda a: a * 2.0)
    return {
        "arrays": found,
        "c against fortran": compared(
            "the C-order array",
            timed["C order, NumPy default"],
            "the Fortran-order one",
            timed["Fortran order, NumPy default"],
        ),
        "result bytes": big.nbytes,
        "fresh host bytes per computed result": call_cost(
            lambda: scale(big).block_until_ready()
        ).fresh_bytes,
    }


def distances(quick: bool, roofs_record: dict | None) -> dict:
    """The page pairwise-distances' versions on the device: each timed by the device's clock
    at three sizes, with XLA's own cost analysis, placed under the device's roofs; their
    errors against float64 and their times at each matmul precision; v2 against v3 on data
    far from the origin."""
    from chapter2.cases.distances import (  # noqa: PLC0415
        VERSIONS,
        distances_v1_materialized,
        largest_error,
        largest_self_distance,
        reference,
    )

    sizes = [(100, 150, 64), (100, 150, 3)] if quick else [(1000, 1500, 64), (1000, 1500, 3)]
    sizes += [] if quick else [(4000, 6000, 64)]
    roofs_there = (
        device_roofs({"roofs": roofs_record, "layouts": {"products": {}}}) if roofs_record else None
    )
    found = {}
    for n, m, d in sizes:
        kx, ky = jax.random.split(jax.random.key(0))
        X, Y = jax.random.normal(kx, (n, d)), jax.random.normal(ky, (m, d))
        programs = {name: jax.jit(fn) for name, fn in VERSIONS.items()}
        programs["bare X @ Y.T"] = jax.jit(lambda X, Y: X @ Y.T)
        calls = {name: (lambda f=f, X=X, Y=Y: f(X, Y)) for name, f in programs.items()}
        timed = by_clock(calls)
        entry = {}
        for name, f in programs.items():
            compiled = f.lower(X, Y).compile()
            costs = cost_analysis(compiled)
            entry[name] = {
                "time": timing(timed[name]),
                "flops": costs.get("flops", 0.0),
                "bytes accessed": costs["bytes accessed"],
                "footprint": footprint(compiled.memory_analysis()),
                "kernels": list(kernels(compiled.as_text()).values()),
            }
            if roofs_there:
                placed = Placement(
                    entry[name]["flops"],
                    entry[name]["bytes accessed"],
                    timed[name].median,
                    roofs_there,
                )
                entry[name]["placed"] = {
                    "intensity": placed.intensity,
                    "share": placed.share,
                    "bound": str(placed.bound),
                    "verdict": placed.verdict,
                }
        found[f"N={n} M={m} d={d}"] = entry
    n, m, d = sizes[0]
    kx, ky = jax.random.split(jax.random.key(0))
    X, Y = jax.random.normal(kx, (n, d)), jax.random.normal(ky, (m, d))
    expected = reference(X, Y)
    precision = {}
    for level in ("default", "high", "highest"):
        chosen = nullcontext() if level == "default" else jax.default_matmul_precision(level)
        with chosen:
            errors = {name: largest_error(fn, X, Y, expected) for name, fn in VERSIONS.items()}
            far = {name: largest_self_distance(VERSIONS[name], X + 100.0) for name in ("v2", "v3")}
            programs = {name: jax.jit(fn) for name, fn in VERSIONS.items() if name in ("v2", "v3")}
            timed = by_clock({name: (lambda f=f: f(X, Y)) for name, f in programs.items()})
        precision[level] = {
            "largest errors": errors,
            "self-distance max, data +100": far,
            "times": {name: timing(t) for name, t in timed.items()},
        }
    barrier = jax.jit(distances_v1_materialized).lower(X, Y).compile()
    return {
        "sizes": found,
        "precision": precision,
        "precision size": f"N={n} M={m} d={d}",
        "v1 with a barrier": {
            "temp bytes": barrier.memory_analysis().temp_size_in_bytes,
            "(N, M, d) float32 bytes": 4 * n * m * d,
        },
    }


def rotating(f: Callable, args: tuple, copies: int = 4) -> Callable:
    """A zero-argument call of `f` on `copies` copies of `args` in turn, each copy its own
    buffers: no run of `f` reads what its run before read, which the device might still
    hold (XLA's TPU compiler prefetches a program's arguments)."""
    sets = [tuple(jnp.array(a, copy=True) for a in args) for _ in range(copies)]
    turn = iter(range(10**9))
    return lambda: f(*sets[next(turn) % copies])


def fresh_inputs(quick: bool) -> dict:
    """The memory-layout pairs, the fusion contrast and the distances timed twice in the same
    rounds by the device's clock: each run on arguments the device has just read ("same
    input"), and on copies that no run before it read ("fresh")."""
    from chapter2.cases.distances import VERSIONS  # noqa: PLC0415

    experiments = {}
    for side in (64, 512) if quick else (2000, 8192):
        m = jax.random.normal(jax.random.key(1), (side, side))
        sums = {
            "axis=1": jax.jit(lambda a: a.sum(axis=1)),
            "axis=0": jax.jit(lambda a: a.sum(axis=0)),
            "copy": jax.jit(lambda a: a * 1.0 + 0.0),
            "transpose": jax.jit(lambda a: a.T),
        }
        experiments[f"sums and copies of {side} x {side} float32"] = (sums, (m,))
    for side in (256, 512) if quick else (1000, 4096):
        kx, ky = jax.random.split(jax.random.key(0))
        x, y = jax.random.uniform(kx, (side, side)), jax.random.uniform(ky, (side, side))
        chain = {
            "fused": jax.jit(lambda x, y: jnp.exp(jnp.log(x) + y)),
            "with barriers": jax.jit(
                lambda x, y: jnp.exp(
                    lax.optimization_barrier(lax.optimization_barrier(jnp.log(x)) + y)
                )
            ),
        }
        experiments[f"exp(log(x) + y) on {side} x {side} float32"] = (chain, (x, y))
    sizes = [(100, 150, 64)] if quick else [(1000, 1500, 64), (1000, 1500, 3), (4000, 6000, 64)]
    for n, m, d in sizes:
        kx, ky = jax.random.split(jax.random.key(0))
        X, Y = jax.random.normal(kx, (n, d)), jax.random.normal(ky, (m, d))
        versions = {name: jax.jit(fn) for name, fn in VERSIONS.items()}
        experiments[f"distances N={n} M={m} d={d}"] = (versions, (X, Y))
    found = {}
    for label, (programs, args) in experiments.items():
        calls = {}
        for name, f in programs.items():
            calls[f"{name}, same input"] = lambda f=f, args=args: f(*args)
            calls[f"{name}, fresh"] = rotating(f, args)
        timed = by_clock(calls)
        found[label] = {name: timing(t) for name, t in timed.items()}
    return found


def case_study(quick: bool) -> dict:
    """The report jax-ml/jax#39103's program on the device: its rows under jit against eager."""
    from chapter2.cases.ynn import REPORTED_ROWS, jit_against_eager  # noqa: PLC0415

    return jit_against_eager(1025 if quick else REPORTED_ROWS)


def device_facts() -> dict:
    """The device and software this record was made on."""
    device = jax.devices()[0]
    return {
        "platform": device.platform,
        "device": device.device_kind,
        "jax": jax.__version__,
        "memory": device.memory_stats() or {},
        "clock": "host" if device.platform == "cpu" else "device",
    }


PARTS = {
    "roofs": roofs,
    "layouts": layouts,
    "axis sums": axis_sums,
    "fusion": fusion,
    "dispatch": dispatch,
    "transfers": transfers,
    "numpy": numpy_lessons,
    "case study": case_study,
    "fresh inputs": fresh_inputs,
}


def record(parts: list[str], quick: bool, out: Path) -> dict:
    """Measure `parts` in order (the distances after the roofs they are placed under),
    writing `out` after each one."""
    found = {"device": device_facts()}
    for part in parts:
        time.perf_counter()
        try:
            if part == "distances":
                found[part] = distances(quick, found.get("roofs"))
            else:
                found[part] = PARTS[part](quick)
        except Exception as err:  # one part's failure is recorded; the others still run
            lines = traceback.format_exception_only(err)[-1].strip().splitlines()
            found[part] = {"error": lines[0], "traceback": traceback.format_exc()[-3000:]}
        out.write_text(json.dumps(found, indent=1, default=str) + "\n")
    return found


def main(argv: list[str] | None = None) -> int:
    every = [*PARTS, "distances"]
    parser = argparse.ArgumentParser(prog="python -m chapter2.accelerator", description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--part", nargs="+", choices=every, default=every)
    parser.add_argument("--quick", action="store_true", help="small sizes, to try it on a CPU")
    args = parser.parse_args(argv)
    found = record(args.part, args.quick, args.out)
    failed = [part for part in args.part if "error" in found[part]]
    for _part in failed:
        pass
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
