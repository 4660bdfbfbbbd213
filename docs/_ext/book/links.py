"""Names in a page's code link to their references (sphinx-codeautolink) on every page a
build writes.

sphinx-codeautolink parses a page's code as the page is read and keeps what it parsed for
the next build only for .rst sources (its DataCache.read looks for `<page>.rst`): a MyST page
that a build writes without reading it would lose its links. A change of configuration that
only the HTML depends on does that to every page (the versioned site's switcher, the site's
address). So the pages whose HTML is out of date are read again first.
"""

from book.record import book_data


def note_outdated_html(app) -> None:
    """`builder-inited`: the pages whose HTML is out of date, as the HTML builder judges them
    (asked before the build asks: the builder notes a changed configuration as it finds it)."""
    if app.builder.format == "html":
        book_data(app.env).data["html_outdated"] = sorted(app.builder.get_outdated_docs())


def read_what_is_written(app, env, added, changed, removed) -> list[str]:
    """`env-get-outdated`: those pages are read again."""
    return sorted(set(book_data(env).data.pop("html_outdated", [])) & env.found_docs)
