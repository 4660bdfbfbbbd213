"""Timing comparisons in the prose: the sentence a cell chose, in a span of its own class (its
numbers are in the build's record, where a test of the site reads them)."""

from docutils import nodes

from chapter2.timing import COMPARISON_MIME


class ComparisonRenderer:
    """myst-nb mime renderer plugin for COMPARISON_MIME outputs (registered as an entry point)."""

    mime_priority_overrides = (("*", COMPARISON_MIME, 1),)

    @staticmethod
    def handle_mime(renderer, data, inline):
        if data.mime_type != COMPARISON_MIME:
            return None
        node = nodes.inline("", data.content["text"], classes=["comparison"])
        return [node] if inline else [nodes.paragraph("", "", node)]
