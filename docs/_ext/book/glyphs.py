"""Words for the ✅ and ❌ of myst-nb's execution table, which fonts without emoji show as
empty boxes: a text node that is one of them alone, on any page (the table's cells are)."""

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from book import SERIAL

WORDS = {"✅": "ran", "❌": "failed"}


class EmojiAsWords(SphinxPostTransform):
    default_priority = 9  # after myst-nb's execution table (8)

    def run(self, **kwargs) -> None:
        for text in list(self.document.findall(nodes.Text)):
            if text.astext() in WORDS:
                text.parent.replace(text, nodes.Text(WORDS[text.astext()]))


def setup(app):
    app.add_post_transform(EmojiAsWords)
    return SERIAL
