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
