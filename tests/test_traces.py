import gzip
import json
import socket
import statistics
from pathlib import Path

import jax
import jax.numpy as jnp
import matplotlib as mpl
import pytest
from matplotlib.collections import LineCollection, PolyCollection

from chapter2.hlo import kernels
from chapter2.traces import (
    Series,
    Timeline,
    generic_name,
    milliseconds,
    named,
    outermost,
    read_trace,
    row_labels,
    step_timeline,
    trace_file,
    trace_files,
)

mpl.use("Agg")
FROZEN = Path(__file__).parent / "data" / "profile-step"  # five steps of profiling's example


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace")
    f = jax.jit(lambda v: jnp.tanh(v) * 2)
    x = jnp.ones(10_000)
    f(x).block_until_ready()
    with jax.profiler.trace(str(path)):
        for i in range(2):
            with jax.profiler.TraceAnnotation(f"unit_{i}"):
                f(x).block_until_ready()
    return path


def test_files_are_listed_relative_to_the_trace_folder(log_dir):
    files = trace_files(log_dir)
    assert files
    assert all(not f.startswith("/") and f.startswith("plugins/profile/") for f in files)
    assert trace_file(log_dir, ".xplane.pb").name.endswith(".xplane.pb")


def test_trace_file_refuses_zero_matches(log_dir):
    with pytest.raises(FileNotFoundError, match="found 0"):
        trace_file(log_dir, ".does-not-exist")


def test_generic_name_hides_host_and_time():
    host = socket.gethostname()
    name = f"plugins/profile/2026_01_02_03_04_05/{host}.xplane.pb"
    assert generic_name(name) == "plugins/profile/<timestamp>/<host>.xplane.pb"
    assert generic_name("plugins/profile/x/perfetto_trace.json.gz").endswith(
        "/perfetto_trace.json.gz"
    )


def test_events_hold_the_annotations(log_dir):
    trace = read_trace(log_dir)
    counts = trace.counts()
    assert counts["unit_0"] == 1
    assert counts["unit_1"] == 1
    assert all(e["ph"] == "X" for e in trace.events)
    annotation = next(e for e in trace.events if e["name"] == "unit_0")
    assert trace.thread_of(annotation) != str(annotation["tid"])  # the thread has a name


def drawn(ax) -> dict[str, int]:
    """How many bars and ticks a timeline's axes hold."""
    bars = [c for c in ax.collections if isinstance(c, PolyCollection)]
    ticks = [c for c in ax.collections if isinstance(c, LineCollection)]
    return {
        "bars": sum(len(c.get_paths()) for c in bars),
        "ticks": sum(len(c.get_segments()) for c in ticks),
    }


def test_a_timeline_draws_only_its_series_one_row_per_thread(log_dir):
    trace = read_trace(log_dir)
    annotations = [e for e in trace.events if e["name"].startswith("unit_")]
    timeline = Timeline(trace, [Series("annotations", "tab:red", annotations)])
    ax = timeline.draw()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [row_labels(timeline.rows)[0]]
    assert labels[0].startswith("host (")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["annotations"]
    assert drawn(ax) == {"bars": 2, "ticks": 0}  # only the series' events are drawn


@pytest.fixture(scope="module")
def frozen():
    """The frozen trace of five steps and the optimized HLO of the step they ran."""
    trace = read_trace(FROZEN)
    return trace, step_timeline(
        trace, "complex_computation", kernels(FROZEN.joinpath("step.hlo.txt").read_text())
    )


def test_the_step_timeline_reads_the_kernels_from_the_hlo(frozen):
    _, timeline = frozen
    assert [s.label for s in timeline.series] == [
        "call of the jitted function",
        "ynn_fusion = dot, sine, multiply, add, reduce",
        "wrapped_multiply = multiply",
    ]
    assert [len(s.events) for s in timeline.series] == [5, 5, 5]


def test_durations_are_medians_of_complete_events_not_markers(frozen):
    trace, timeline = frozen
    with gzip.open(FROZEN / "step.trace.json.gz") as fh:
        raw = json.load(fh)["traceEvents"]
    kernel = [e["dur"] / 1e3 for e in raw if e.get("ph") == "X" and e["name"] == "ynn_fusion"]
    markers = [e for e in raw if e.get("name") == "end: ynn_fusion"]
    assert len(kernel) == len(markers) == 5
    assert timeline.series[1].median_ms == statistics.median(kernel)
    assert milliseconds(named(trace, "ynn_fusion")) == kernel


def test_a_call_counts_once_though_the_host_records_it_twice(frozen):
    trace, _ = frozen
    events = named(trace, "PjitFunction(complex_computation)")
    assert len(events) == 10
    assert len(outermost(trace, events)) == 5


def test_events_under_a_pixel_are_ticks_and_the_alt_text_says_so(frozen):
    _, timeline = frozen
    host, fusion, scale = timeline.series
    assert [timeline.ticks(s) for s in timeline.series] == [True, False, True]
    ax = timeline.draw()
    assert drawn(ax) == {"bars": 5, "ticks": 10}
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        host.label + " (tick)",
        fusion.label,
        scale.label + " (tick)",
    ]
    alt = timeline.alt_text()
    assert "host (python) row: 5 ticks, call of the jitted function" in alt
    assert f"XLA execute row: 5 bars, {fusion.label}, {fusion.median_ms:.3g} ms each" in alt
    assert f"5 ticks, {scale.label}" in alt
    assert f"{scale.median_ms * 1e3:.3g} µs each" in alt  # under 0.1 ms: µs, never 4e-05 ms


def test_the_timeline_figure_carries_its_alt_text(frozen):
    _, timeline = frozen
    data, metadata = timeline.figure()._repr_mimebundle_()
    assert data["image/png"]
    assert metadata == {"image/png": {"alt": timeline.alt_text()}}


def test_row_labels_number_repeated_roles():
    threads = ["python", "tf_XLAExecute/1", "tf_XLAExecute/2", "tf_XLAEigen/3", "other/4"]
    assert row_labels(threads) == [
        "host (python)",
        "XLA execute 1",
        "XLA execute 2",
        "XLA pool",
        "host (other)",
    ]
