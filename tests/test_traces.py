import socket

import jax
import jax.numpy as jnp
import matplotlib
import pytest

from chapter2.traces import (
    durations,
    generic_name,
    plot_timeline,
    read_trace,
    row_labels,
    trace_file,
    trace_files,
)

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
    ax = plot_timeline(trace, {"unit_": ("annotations", "tab:red")})
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0].startswith("host (") and len(labels) == len(set(labels))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["annotations"]
    assert len(ax.patches) == 2  # only the highlighted events are drawn


def test_row_labels_number_repeated_roles():
    threads = ["python", "tf_XLAExecute/1", "tf_XLAExecute/2", "tf_XLAEigen/3", "other/4"]
    assert row_labels(threads) == [
        "host (python)",
        "XLA execute 1",
        "XLA execute 2",
        "XLA pool",
        "host (other)",
    ]


def test_durations_are_milliseconds(log_dir):
    found = durations(read_trace(log_dir), "unit_")
    assert len(found) == 2 and all(0 < d < 10_000 for d in found)
