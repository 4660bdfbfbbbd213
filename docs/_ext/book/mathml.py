"""Math written as MathML while the book is built, so that no page loads a math script:
current browsers lay MathML out themselves, in the reader's math font and text colour, and
read it to a screen reader. The converter is docutils' own, the one its HTML writer runs for
`math_output: MathML`; Sphinx's translator asks the renderer that `html_math_renderer` names
instead, so this registers one (Sphinx's public `add_html_math_renderer`)."""

from docutils import nodes
from docutils.utils.math import MathError
from docutils.utils.math.latex2mathml import tex2mathml
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

from book import SERIAL

RENDERER = "mathml"  # docs/conf.py names it: html_math_renderer
logger = logging.getLogger(__name__)


def mathml(tex: str, block: bool = False) -> str:
    """`tex` as a MathML `<math>` element (displayed when `block`); MathError where docutils
    cannot write it. A block's parts (separated by a blank line) are the rows of one table."""
    if block:
        tex = r" \\ ".join(part for part in tex.split("\n\n") if part.strip())
    return tex2mathml(tex, as_block=block)


def _write(self, node: nodes.Element, block: bool) -> None:
    try:
        self.body.append(mathml(node.astext(), block))
    except MathError as error:
        logger.warning("cannot write this math as MathML: %s", error, location=node)
        self.body.append(self.encode(node.astext()))


def visit_math(self, node: nodes.math) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate"))
    _write(self, node, block=False)
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_math_block(self, node: nodes.math_block) -> None:
    # A formula wider than a phone scrolls (book.css): the keyboard reaches it, as MathJax's did.
    self.body.append(self.starttag(node, "div", CLASS="math notranslate", tabindex="0"))
    if node["number"]:  # as Sphinx's MathJax renderer numbers an equation
        self.body.append(f'<span class="eqno">({get_node_equation_number(self, node)})</span>')
    _write(self, node, block=True)
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer(RENDERER, (visit_math, None), (visit_math_block, None))
    return SERIAL
