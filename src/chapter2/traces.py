"""Reading a profiler trace folder: its files, its events, and a timeline a static page can show."""

import gzip
import json
import re
import socket
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt


def trace_files(log_dir: str | Path) -> list[str]:
    """Every file a trace wrote, as a path relative to `log_dir`."""
    root = Path(log_dir)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def generic_name(relative_path: str) -> str:
    """A trace file's path with this machine's name and the capture time made generic."""
    host = re.escape(socket.gethostname())
    path = re.sub(r"(?<=plugins/profile/)[^/]+", "<timestamp>", relative_path)
    return re.sub(rf"(?<=/){host}(?=\.)", "<host>", path)


def trace_file(log_dir: str | Path, suffix: str) -> Path:
    """The one file under `log_dir` whose name ends with `suffix`."""
    found = [p for p in Path(log_dir).rglob(f"*{suffix}") if p.is_file()]
    if len(found) != 1:
        raise FileNotFoundError(f"expected one *{suffix} in the trace folder, found {len(found)}")
    return found[0]


@dataclass(frozen=True)
class Trace:
    """The complete events (`ph == "X"`) of a Chrome trace, and its thread names."""

    events: list[dict]
    threads: dict[tuple[int, int], str]

    def counts(self) -> Counter:
        """How often each event name occurs."""
        return Counter(e["name"] for e in self.events)

    def thread_of(self, event: dict) -> str:
        return self.threads.get((event["pid"], event["tid"]), str(event["tid"]))


def read_trace(log_dir: str | Path) -> Trace:
    """Parse the `*.trace.json.gz` (Chrome trace format) that a trace wrote under `log_dir`."""
    with gzip.open(trace_file(log_dir, ".trace.json.gz")) as fh:
        raw = json.load(fh)["traceEvents"]
    threads = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in raw
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    return Trace([e for e in raw if e.get("ph") == "X"], threads)


XLA_THREADS = {"tf_XLAExecute": "XLA execute", "tf_XLAEigen": "XLA pool"}


def row_labels(threads: list[str]) -> list[str]:
    """A distinct, readable label per thread: its role, numbered when a role repeats.

    XLA's threads are named after their pool; any other thread is the host's, named after the
    program that runs it (`python` in a notebook, `pytest` under pytest).
    """
    roles = [XLA_THREADS.get(t.split("/")[0], f"host ({t.split('/')[0]})") for t in threads]
    seen: Counter = Counter()
    labels = []
    for role in roles:
        seen[role] += 1
        labels.append(f"{role} {seen[role]}" if roles.count(role) > 1 else role)
    return labels


def durations(trace: Trace, name_part: str) -> list[float]:
    """Durations in milliseconds of the events whose name contains `name_part`."""
    return [e.get("dur", 0) / 1e3 for e in trace.events if name_part in e["name"]]


def plot_timeline(trace: Trace, highlight: dict[str, tuple[str, str]], ax=None):
    """Draw the highlighted events as bars, one row per thread, in the order threads start.

    `highlight` maps a substring of an event name to (legend label, colour); other events,
    and threads with none of these, are not drawn. Time is in milliseconds from the first
    event of the trace. The legend sits below the axes. Returns the matplotlib Axes.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 2.8))
    start = min(e["ts"] for e in trace.events)
    drawn = [
        (event, next(k for k in highlight if k in event["name"]))
        for event in sorted(trace.events, key=lambda e: e["ts"])
        if any(k in event["name"] for k in highlight)
    ]
    rows = list(dict.fromkeys(trace.thread_of(event) for event, _ in drawn))  # by first event
    for event, key in drawn:
        row = rows.index(trace.thread_of(event))
        left, width = (event["ts"] - start) / 1e3, max(event.get("dur", 0), 1) / 1e3
        ax.barh(row, width, left=left, height=0.6, color=highlight[key][1], edgecolor="none")
    ax.set_yticks(range(len(rows)), row_labels(rows))
    ax.invert_yaxis()
    ax.set_xlabel("time since the first event (ms)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour) for _, colour in highlight.values()]
    labels = [label for label, _ in highlight.values()]
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncols=2)
    return ax
