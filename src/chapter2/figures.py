"""A figure as a page shows it: the PNG and the alt text that says what it shows.

The alt text travels with the image as output metadata (`{"image/png": {"alt": ...}}`), so
whoever renders the notebook can put it on the image; the book's Sphinx layer does.
"""

import base64
import io
from dataclasses import dataclass

import matplotlib.pyplot as plt


@dataclass(frozen=True)
class Figure:
    """A drawn figure's PNG bytes and its alt text."""

    png: bytes
    alt: str

    @classmethod
    def of(cls, figure, alt: str) -> "Figure":
        """Render a matplotlib figure (and close it, so it is not shown twice)."""
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", bbox_inches="tight")
        plt.close(figure)
        return cls(buffer.getvalue(), alt)

    def _repr_mimebundle_(self, include=None, exclude=None):  # noqa: ARG002 - IPython's API
        data = {"image/png": base64.b64encode(self.png).decode(), "text/plain": self.alt}
        return data, {"image/png": {"alt": self.alt}}


WHISKERS_ALT = "Whiskers cover the range that holds each median."  # alt text of median_whiskers


def median_whiskers(timings) -> list[list[float]]:
    """Matplotlib's error bars, in ms, from each timing's median to the ends of the range that
    holds it (`median_range`: where two overlap, the timings could not be told apart)."""
    ranges = [(t.median, *t.median_range) for t in timings]
    return [[(m - low) * 1e3 for m, low, _ in ranges], [(high - m) * 1e3 for m, _, high in ranges]]


def timings_dot_plot(timings: dict, colours: list[str], log: bool = True) -> Figure:
    """Each timing's median as a dot (on a log scale unless `log` is false), with whiskers
    over the range that holds it (`median_whiskers`); the alt text gives every median."""
    from chapter2.timing import milliseconds  # noqa: PLC0415 - a formatter of the timings

    fig, ax = plt.subplots(figsize=(7, 0.3 + 0.4 * len(timings)))
    for row, (t, colour) in enumerate(zip(timings.values(), colours, strict=True)):
        ax.errorbar(
            t.median * 1e3, row, xerr=median_whiskers([t]), fmt="o", color=colour, capsize=3
        )
    ax.set_yticks(range(len(timings)), list(timings))
    ax.invert_yaxis()
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("median time (ms, log scale)" if log else "median time (ms)")
    ax.grid(axis="x", which="both", alpha=0.3)
    medians = "; ".join(f"{n} {milliseconds(t.median)} ms" for n, t in timings.items())
    return Figure.of(
        fig,
        alt=f"Dot plot{', on a log scale,' if log else ''} of the median time of each: {medians}. "
        + WHISKERS_ALT,
    )


def stream_sweep_figure(roofs) -> Figure:
    """The streams' bandwidth against their working set, in place and read only
    (`chapter2.roofline.Pattern`), on log axes, with the extent of each cache the sweep found
    (dotted) and the last-level cache the CPU reports (dashed). The alt text gives every
    point."""
    from chapter2.roofline import IN_PLACE_READS, Pattern, rate_text, size_text  # noqa: PLC0415

    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    streams = {p: roofs.sweep_of(p) for p in (Pattern.IN_PLACE, Pattern.READ) if roofs.sweep_of(p)}
    for (pattern, swept), style in zip(streams.items(), ("o-", "s--"), strict=False):
        sizes = [size / 2**20 for size, _ in swept]
        ax.plot(sizes, [rate / 1e9 for _, rate in swept], style, label=str(pattern))
    edge = max((c.extent for c in roofs.caches), default=0)
    past = [(size, rate) for size, rate in roofs.sweep if size > edge]
    if roofs.read_sweep and past:  # the roof of reading past the caches, with the read-only one
        sizes = [size / 2**20 for size, _ in past]
        reads = [IN_PLACE_READS * rate / 1e9 for _, rate in past]
        ax.plot(sizes, reads, "-", lw=0.8, color="tab:blue", alpha=0.6, label="in place, its reads")
    for cache in roofs.caches:
        ax.axvline(cache.extent / 2**20, ls=":", color="black", label=f"{cache.name}' edge")
    if roofs.reported_cache:
        ax.axvline(roofs.reported_cache / 2**20, ls="--", color="tab:gray", label="reported cache")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("working set (MiB, log scale)")
    ax.set_ylabel("bandwidth (GB/s, log scale)")
    ax.grid(which="both", alpha=0.25)
    ax.legend(fontsize=8)
    fig.tight_layout()
    edges = "".join(f" {c.name.capitalize()} end at {size_text(c.extent)}." for c in roofs.caches)
    reported = (
        f" The CPU reports a {size_text(roofs.reported_cache)} last-level cache."
        if roofs.reported_cache
        else ""
    )
    points = " ".join(
        f"{str(pattern).capitalize()}: "
        + "; ".join(f"{size_text(size)}: {rate_text(rate, 'B')}" for size, rate in swept)
        + "."
        for pattern, swept in streams.items()
    )
    reads = (
        " A thin line gives the in-place stream's reads past the caches, two thirds of its "
        "rate." * bool(roofs.read_sweep and past)
    )
    return Figure.of(
        fig,
        alt=f"Log-log plot of the streams' bandwidth by working set. {points}{reads}{edges}"
        f"{reported}",
    )


# The line styles of the roofs programs are held to besides memory's, one each: dotted, then
# dash-dotted and sparser dots, so that two such roofs are told apart in the legend.
HELD_DASHES = [":", "-.", (0, (1, 4)), (0, (3, 1, 1, 1, 1, 1))]


def held_as(p) -> str:
    """Where a placed program's bandwidth roof comes from, in words: "in the caches at their
    size", "past the caches, the read-only stream from memory"."""
    if p.in_cache:
        return "in the caches at their size"
    return f"past the caches, the {p.roofs.roof_name(p.held, p.pattern)} from memory"


def roofline_figure(
    series: dict[str, dict], roof_names: dict | None = None, overhead: frozenset = frozenset()
) -> Figure:
    """Placed programs (`chapter2.roofline.Placement`) as points of intensity against the rate
    they reached, on log axes, under the roofs they were placed under: a marker per series (a
    size, a machine), a colour per program, each program's smaller than the one before so
    that points that coincide show as rings; a dotted line (each in a style of its own) is the
    roof of programs held to another rate than main memory's in-place stream: the stream's
    rate at their size in the caches, or past them the stream of their pattern
    (`Placement.bandwidth`). A hollow
    point is far under both of its roofs, or one of the (series, program) pairs in
    `overhead`, timed mostly as the fixed cost of a call. The alt text gives every point and
    roof."""
    from chapter2.roofline import Bound, rate_text  # noqa: PLC0415

    placed = [p for points in series.values() for p in points.values()]
    every_roofs = list(dict.fromkeys(p.roofs for p in placed))
    names = roof_names or dict.fromkeys(every_roofs, "roofs")
    low = min(*(p.intensity / 3 for p in placed), *(r.ridge / 10 for r in every_roofs))
    high = max(*(p.intensity * 3 for p in placed), *(r.ridge * 10 for r in every_roofs))
    grid = [low * (high / low) ** (i / 200) for i in range(201)]
    # the bandwidths programs are held to besides memory's in-place rate
    held = {
        r: sorted(
            {
                (p.bandwidth, held_as(p))
                for p in placed
                if p.roofs == r and p.bandwidth != r.bandwidth
            }
        )
        for r in every_roofs
    }
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for roofs, style in zip(every_roofs, ["-", "--"], strict=False):
        roof = [min(roofs.peak, i * roofs.bandwidth) / 1e9 for i in grid]
        ax.plot(grid, roof, style, color="black", lw=1.2, label=names[roofs])
        for (rate, how), dashes in zip(held[roofs], HELD_DASHES * 3, strict=False):
            line = [min(roofs.peak, i * rate) / 1e9 for i in grid]
            said = f"{names[roofs]}, {how} ({rate_text(rate, 'B')})"
            ax.plot(grid, line, ls=dashes, color="black", lw=1.2, label=said)
    programs = list(dict.fromkeys(name for points in series.values() for name in points))
    colours = dict(zip(programs, plt.get_cmap("tab10").colors, strict=False))
    for (label, points), marker in zip(series.items(), "o^sD", strict=False):
        for name, p in points.items():
            hollow = p.bound is Bound.FAR_UNDER or (label, name) in overhead
            ax.plot(
                p.intensity,
                p.rate / 1e9,
                marker,
                ms=max(4, 12 - 2.5 * programs.index(name)),  # rings where points meet
                mew=2 if hollow else 1,
                mfc="white" if hollow else colours[name],
                mec=colours[name] if hollow else "black",
            )
        ax.plot([], [], marker, color="white", mec="black", label=label)
    for name in programs:
        ax.plot([], [], "s", color=colours[name], label=name)
    hollow_means = "hollow: far under both of its roofs" + (
        ", or mostly a call's cost" if overhead else ""
    )
    ax.plot([], [], "o", mfc="white", mec="black", label=hollow_means)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (flops per byte, log scale)")
    ax.set_ylabel("rate reached (GFLOP/s, log scale)")
    ax.grid(which="both", alpha=0.25)
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
    roofs_text = "; ".join(
        f"{names[r]}: {r}" + "".join(f", {rate_text(rate, 'B')} {how}" for rate, how in held[r])
        for r in every_roofs
    )
    points_text = "; ".join(
        f"{label}, {name}: {p.intensity:.3g} flops per byte at {rate_text(p.rate, 'FLOP')}, "
        + ("timed mostly as a call's cost" if (label, name) in overhead else p.position)
        for label, points in series.items()
        for name, p in points.items()
    )
    return Figure.of(
        fig,
        alt=f"Roofline on log axes, rate reached against flops per byte. Roofs: {roofs_text}. "
        f"Points: {points_text}.",
    )
