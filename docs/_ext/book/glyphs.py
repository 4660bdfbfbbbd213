"""Words for the emoji other packages print, which not every reader's fonts can show.

myst-nb's `{nb-exec-table}` marks each page's execution with ✅ or ❌; where no emoji font is
installed (Debian's Chromium, say) both are empty boxes. This post-transform, which runs after
myst-nb has built the table, writes them as words.
"""

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

WORDS = {"✅": "ran", "❌": "failed"}


class EmojiAsWords(SphinxPostTransform):
    default_priority = 9  # after myst-nb's execution table (8)

    def run(self, **kwargs) -> None:
        for text in list(self.document.findall(nodes.Text)):
            if text.astext() in WORDS:
                text.parent.replace(text, nodes.Text(WORDS[text.astext()]))
