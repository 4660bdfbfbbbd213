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


def timings_dot_plot(timings: dict, colours: list[str], log: bool = True) -> Figure:
    """Each timing's median as a dot (on a log scale unless `log` is false), with whiskers
    over the middle half of its runs; the alt text gives every median."""
    from chapter2.timing import milliseconds  # noqa: PLC0415 - a formatter of the timings

    fig, ax = plt.subplots(figsize=(7, 0.3 + 0.4 * len(timings)))
    for row, (t, colour) in enumerate(zip(timings.values(), colours, strict=True)):
        spread = [[(t.median - t.low) * 1e3], [(t.high - t.median) * 1e3]]
        ax.errorbar(t.median * 1e3, row, xerr=spread, fmt="o", color=colour, capsize=3)
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
        "Whiskers cover the middle half of the runs.",
    )
