"""myst-nb mime renderer plugins (entry points in docs/_ext/pyproject.toml) for what a cell
computes beside its output: a timing comparison's sentence, and a figure's alt text."""

from docutils import nodes

from chapter2.records import ComparisonRecord
from chapter2.timing import COMPARISON_MIME


class ComparisonRenderer:
    """COMPARISON_MIME outputs: the sentence a cell chose, in a span of its own class (its
    numbers are in the build's record, where a test of the site reads them)."""

    mime_priority_overrides = (("*", COMPARISON_MIME, 1),)

    @staticmethod
    def handle_mime(renderer, data, inline):
        if data.mime_type != COMPARISON_MIME:
            return None
        text = ComparisonRecord.from_dict(data.content).text
        node = nodes.inline("", text, classes=["comparison"])
        return [node] if inline else [nodes.paragraph("", "", node)]


class AltTextRenderer:
    """Images whose alt text was computed with the figure (`chapter2.figures`): read from the
    output's metadata, where myst-nb reads only the cell's, which a cell cannot compute."""

    mime_priority_overrides = ()

    @staticmethod
    def handle_mime(renderer, data, inline):
        alt = data.output_metadata.get(data.mime_type, {}).get("alt")
        if inline or not alt or not data.mime_type.startswith("image/"):
            return None
        rendered = renderer.render_image(data)
        for image in rendered:
            for node in image.findall(nodes.image):
                node["alt"] = alt
        return rendered
