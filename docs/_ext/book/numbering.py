"""Section numbers with the chapter's in front (2.1, 2.2, ...) from each page's place in the
toctree; a change of the contents reads and writes every page again (their numbers, their
previous and next links, and their code's links, which a page written unread would lose)."""

from sphinx import addnodes

from book import SERIAL


def strip_chapter(app, env) -> list[str]:
    """`env-get-updated`, before Sphinx numbers: last build's numbers without the chapter."""
    chapter = app.config.book_chapter
    for docname, numbers in env.toc_secnumbers.items():
        env.toc_secnumbers[docname] = {
            a: n[1:] if n and n[0] == chapter else n for a, n in numbers.items()
        }
    return []


def prefix_chapter(app, env) -> list[str]:
    """`env-get-updated`, after Sphinx numbered the toctree: put the chapter in front."""
    chapter = app.config.book_chapter
    for docname, numbers in env.toc_secnumbers.items():
        env.toc_secnumbers[docname] = {a: (chapter, *n) if n else n for a, n in numbers.items()}
        nodes = [env.titles[docname]]
        nodes += [n for ref in env.tocs[docname].findall(addnodes.compact_paragraph) for n in ref]
        for node in nodes:
            if node.get("secnumber"):
                node["secnumber"] = [chapter, *node["secnumber"]]
    return []


def read_all_after_contents_change(app, env, added, changed, removed) -> list[str]:
    """`env-get-outdated`: every page, when a page came or went or a page holding a toctree
    changed (reading executes nothing: outputs come from the cache)."""
    if added or removed or changed & set(env.toctree_includes):
        return sorted(env.found_docs)
    return []


def setup(app):
    app.add_config_value("book_chapter", 2, "env", types=[int])
    app.connect("env-get-updated", strip_chapter, priority=100)
    app.connect("env-get-updated", prefix_chapter, priority=900)
    app.connect("env-get-outdated", read_all_after_contents_change)
    return SERIAL
