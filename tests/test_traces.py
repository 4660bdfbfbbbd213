import socket

import jax
import jax.numpy as jnp
import matplotlib
import pytest

from chapter2.traces import generic_name, plot_timeline, read_trace, trace_file, trace_files

matplotlib.use("Agg")


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
    assert files and all(not f.startswith("/") and f.startswith("plugins/profile/") for f in files)
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
    assert counts["unit_0"] == 1 and counts["unit_1"] == 1
    assert all(e["ph"] == "X" for e in trace.events)
    annotation = next(e for e in trace.events if e["name"] == "unit_0")
    assert trace.thread_of(annotation) != str(annotation["tid"])  # the thread has a name


def test_timeline_has_one_row_per_thread_main_thread_first(log_dir):
    trace = read_trace(log_dir)
    ax = plot_timeline(trace, {"unit_": "tab:red"})
    labels = [t.get_text() for t in ax.get_yticklabels()]
    annotation = next(e for e in trace.events if e["name"] == "unit_0")
    assert labels[0] == trace.thread_of(annotation).split("/")[0]
    assert len(labels) == len({trace.thread_of(e) for e in trace.events})
    red = [p for p in ax.patches if p.get_facecolor()[:3] == matplotlib.colors.to_rgb("tab:red")]
    assert len(red) >= 2  # the two annotations (the legend adds handles, not patches)
