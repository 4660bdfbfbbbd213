"""Alt text computed with its figure: read from the output's metadata (`chapter2.figures`),
where myst-nb reads only the cell's, which a cell cannot compute."""

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
