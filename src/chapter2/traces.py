"""Reading a profiler trace folder: its files, its events, and a timeline a static page can show."""

import gzip
import json
import re
import socket
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt

from chapter2.figures import Figure


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
        msg = f"expected one *{suffix} in the trace folder, found {len(found)}"
        raise FileNotFoundError(msg)
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


# XLA's threads by name; JAX 0.10.2 and 0.11.2 (measured) ran a step on tf_XLAPjRtCpuClient.
XLA_THREADS = {
    "tf_XLAExecute": "XLA execute",
    "tf_XLAPjRtCpuClient": "XLA execute",
    "tf_XLAEigen": "XLA pool",
}


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


def named(trace: Trace, name: str) -> list[dict]:
    """The complete events called exactly `name`: a kernel `ynn_fusion`, not its marker
    `end: ynn_fusion`."""
    return [e for e in trace.events if e["name"] == name]


def outermost(trace: Trace, events: list[dict]) -> list[dict]:
    """The events not nested in another of them on the same thread (a call of a jitted
    function records two nested events of one name)."""

    def end(event: dict) -> float:
        return event["ts"] + event.get("dur", 0)

    kept, reach = set(), {}  # per thread: where the last event kept ends
    for i in sorted(range(len(events)), key=lambda i: (events[i]["ts"], -end(events[i]))):
        thread = trace.thread_of(events[i])
        if end(events[i]) > reach.get(thread, float("-inf")):
            kept.add(i)
            reach[thread] = end(events[i])
    return [e for i, e in enumerate(events) if i in kept]


def milliseconds(events: list[dict]) -> list[float]:
    """The durations of `events` in milliseconds."""
    return [e.get("dur", 0) / 1e3 for e in events]


@dataclass(frozen=True)
class Series:
    """Events drawn in one colour, with the legend label that says what they are."""

    label: str
    colour: str
    events: list[dict]

    @property
    def median_ms(self) -> float:
        return statistics.median(milliseconds(self.events))


@dataclass(frozen=True)
class Timeline:
    """What a timeline figure draws: series of events on the rows of their threads.

    The figure, its legend and its alt text are all read from here, so they agree. A series
    whose median event is shorter than TICK of the time span would be narrower than a pixel:
    all its events are drawn as ticks.
    """

    trace: Trace
    series: list[Series]
    TICK = 1 / 400

    @property
    def start(self) -> float:
        return min(e["ts"] for s in self.series for e in s.events)

    @property
    def span_ms(self) -> float:
        ends = [e["ts"] + e.get("dur", 0) for s in self.series for e in s.events]
        return (max(ends) - self.start) / 1e3

    @property
    def rows(self) -> list[str]:
        """The threads with an event drawn, in the order of their first drawn event."""
        events = sorted((e for s in self.series for e in s.events), key=lambda e: e["ts"])
        return list(dict.fromkeys(self.trace.thread_of(e) for e in events))

    def ticks(self, series: Series) -> bool:
        return series.median_ms < self.TICK * self.span_ms

    def draw(self, ax=None):
        """Bars (or ticks) per series on the rows of their threads, the legend below the axes.
        Time is in milliseconds from the first event drawn. Returns the matplotlib Axes."""
        if ax is None:
            _, ax = plt.subplots(figsize=(10, 2.8))
        rows = self.rows
        for series in self.series:
            for row, thread in enumerate(rows):
                events = [e for e in series.events if self.trace.thread_of(e) == thread]
                lefts = [(e["ts"] - self.start) / 1e3 for e in events]
                if not events:
                    continue
                if self.ticks(series):
                    ax.vlines(lefts, row - 0.3, row + 0.3, color=series.colour, linewidth=1.5)
                else:  # one call per row: a trace may hold thousands of events
                    spans = [
                        (left, e.get("dur", 0) / 1e3) for left, e in zip(lefts, events, strict=True)
                    ]
                    ax.broken_barh(spans, (row - 0.3, 0.6), color=series.colour, lw=0.5, ec="w")
        ax.set_yticks(range(len(rows)), row_labels(rows))
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlabel("time since the first event drawn (ms)")
        handles = [
            plt.Line2D([], [], color=s.colour, marker="|", linestyle="none", markersize=12)
            if self.ticks(s)
            else plt.Rectangle((0, 0), 1, 1, color=s.colour)
            for s in self.series
        ]
        labels = [s.label + (" (tick)" if self.ticks(s) else "") for s in self.series]
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncols=1)
        return ax

    def alt_text(self) -> str:
        """What the figure shows, row by row, in words."""
        labels = dict(zip(self.rows, row_labels(self.rows), strict=True))
        parts = []
        for series in self.series:
            rows = sorted({labels[self.trace.thread_of(e)] for e in series.events})
            drawn = "ticks" if self.ticks(series) else "bars"
            ms = series.median_ms  # under 0.1 ms in µs: 0.04 µs, not 4e-05 ms
            each = f"{ms:.3g} ms" if ms >= 0.1 else f"{ms * 1e3:.3g} µs"
            parts.append(
                f"{' and '.join(rows)} row{'s' if len(rows) > 1 else ''}: {len(series.events)} "
                f"{drawn}, {series.label}, "
                f"{each} each (median)"
            )
        return f"Timeline of {self.span_ms:.1f} ms, one row per thread. " + "; ".join(parts) + "."

    def figure(self) -> Figure:
        """The drawn timeline with its alt text."""
        ax = self.draw()
        return Figure.of(ax.figure, self.alt_text())


def step_timeline(trace: Trace, function: str, kernels: dict[str, list[str]]) -> Timeline:
    """The host's calls of the jitted `function` and the kernels it ran, one series each.

    `kernels` maps each kernel's name to what it computes (`chapter2.hlo.kernels` reads them
    from the optimized HLO); a kernel the trace did not record is left out.
    """
    colours = iter(["tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"])
    calls = outermost(trace, named(trace, f"PjitFunction({function})"))
    series = [Series("call of the jitted function", "tab:blue", calls)]
    for name, body in kernels.items():
        if named(trace, name):
            label = f"{name} = {', '.join(body)}"
            series.append(Series(label, next(colours), named(trace, name)))
    return Timeline(trace, series)
