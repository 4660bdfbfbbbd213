"""Timing comparisons in the prose: the sentence a cell chose, in a span whose data
attributes hold its numbers, so a test of the site can check each against them."""

import html

from docutils import nodes

from chapter2.timing import COMPARISON_MIME


def comparison_html(data: dict) -> str:
    attributes = {"verdict": data["verdict"], "ratio": repr(data["ratio"])}
    for side in ("a", "b"):
        for key in ("name", "median", "median_low", "median_high", "low", "high", "n"):
            attributes[f"{side}-{key}"] = str(data[side][key])
    marked = " ".join(f'data-{k}="{html.escape(v)}"' for k, v in attributes.items())
    return f'<span class="comparison" {marked}>{html.escape(data["text"])}</span>'


class ComparisonRenderer:
    """myst-nb mime renderer plugin for COMPARISON_MIME outputs (registered as an entry point)."""

    mime_priority_overrides = (("*", COMPARISON_MIME, 1),)

    @staticmethod
    def handle_mime(renderer, data, inline):
        if data.mime_type != COMPARISON_MIME:
            return None
        node = nodes.raw("", comparison_html(dict(data.content)), format="html")
        return [node] if inline else [nodes.paragraph("", "", node)]
