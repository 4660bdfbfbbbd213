"""The training page's seven loops, timed in turns on the default device: JSON to stdout."""

import json
import sys

import jax

from chapter2.cases import training
from chapter2.compiles import CompileCounter
from chapter2.timing import bench_together

loops = {
    "as written": training.loop_eager,
    "one jit": training.loop_jit,
    "no wait": training.loop_no_sync,
    "one shape": training.loop_one_shape,
    "donated": training.loop_donated,
    "prefetched": training.loop_prefetched,
    "scanned": training.loop_scanned,
}
epochs, compiles = {}, {}
for name, loop in loops.items():
    epochs[name] = training.epochs(loop)
    with CompileCounter() as counter:
        jax.block_until_ready(epochs[name]())
    compiles[name] = counter.count
timed = bench_together({name: (epoch, ()) for name, epoch in epochs.items()}, n=31, budget=30)
json.dump(
    {
        "jax": jax.__version__,
        "device": jax.devices()[0].device_kind,
        "platform": jax.devices()[0].platform,
        "first-epoch compilations": compiles,
        "epoch seconds": {name: list(t.times) for name, t in timed.items()},
    },
    sys.stdout,
    indent=1,
)
