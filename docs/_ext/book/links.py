"""Names in a page's code link to their references (sphinx-codeautolink): a link says on its
face what it opens, on every page a build writes.

sphinx-codeautolink also links a variable to the type it infers (`x` to jax.Array, an array
`big` to numpy.ndarray.T through `.T`, a class's second documented name to its first): the
text names nothing the link opens, so those links go, their code kept (`named_links_only`).

It parses a page's code as the page is read and keeps what it parsed for the next build only
for .rst sources (its DataCache.read looks for `<page>.rst`): a MyST page that a build writes
without reading it would lose its links. A change of configuration that only the HTML depends
on does that to every page (the versioned site's switcher, the site's address). So the pages
whose HTML is out of date are read again first.
"""

import html
import re

from book import SERIAL

# A link as sphinx-codeautolink leaves it in a page's body (block.link_html), and its address.
CODE_LINK = re.compile(r'<a (?P<attrs>[^>]*class="sphinx-codeautolink-a"[^>]*)>(?P<code>.*?)</a>')
HREF = re.compile(r'href="(?P<href>[^"]*)"')


def last_name(text: str) -> str:
    """The last name of a dotted name or call: `jnp.linalg.norm(x)` → norm."""
    return re.sub(r"\(.*", "", text).rstrip(".").rsplit(".", 1)[-1].strip()


def names_its_target(href: str, code_html: str) -> bool:
    """Whether a link's code ends in the name of what it opens (`#module-jax.numpy`, numpy)."""
    target = href.rpartition("#")[2].removeprefix("module-")
    code = html.unescape(re.sub(r"<[^>]+>", "", code_html))
    return last_name(code) == last_name(target)


def named_links_only(app, pagename, templatename, context, doctree) -> None:
    """`html-page-context`, after sphinx-codeautolink's: unwrap the links whose code does not
    name what they open."""
    if "body" in context:
        context["body"] = CODE_LINK.sub(_named_or_unwrapped, context["body"])


def _named_or_unwrapped(link: re.Match) -> str:
    href = HREF.search(link["attrs"])["href"]
    return link[0] if names_its_target(href, link["code"]) else link["code"]


class WrittenPages:
    """The pages whose HTML this build writes again, read again too (one per build)."""

    def __init__(self) -> None:
        self.outdated: list[str] = []

    def note(self, app) -> None:
        """`builder-inited`: the pages whose HTML is out of date, as the HTML builder judges
        them (asked before the build asks: the builder notes a changed configuration as it
        finds it)."""
        if app.builder.format == "html":
            self.outdated = sorted(app.builder.get_outdated_docs())

    def read_again(self, app, env, added, changed, removed) -> list[str]:
        """`env-get-outdated`: those pages are read again."""
        return sorted(set(self.outdated) & env.found_docs)


def setup(app):
    written = WrittenPages()
    app.connect("builder-inited", written.note)
    app.connect("env-get-outdated", written.read_again)
    app.connect("html-page-context", named_links_only, priority=600)  # after its links
    return SERIAL
