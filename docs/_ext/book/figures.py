"""Alt text computed with its figure: `chapter2.figures.Figure` sends it as output metadata.

myst-nb takes an image's alt text from the cell's metadata only, which a cell cannot compute.
This renderer reads `{"image/png": {"alt": ...}}` from the output's own metadata and puts it
on the image; the caption still comes from the cell (`mystnb: figure: caption:`).
"""

from docutils import nodes


class AltTextRenderer:
    """myst-nb mime renderer plugin for images that carry their alt text."""

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
