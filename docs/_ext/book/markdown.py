"""Text put into Markdown that shows as it was given: the drift report and the marks' panels
quote what JAX said (`<lambda>`, `a*b`), which Markdown would read as markup."""

import re


def escape(text: str) -> str:
    """Text that Markdown shows as it is: `<host>` stays visible, `a*b*c` is not emphasis."""
    return re.sub(r"([\\`*_<>\[\]|{}#~$])", r"\\\1", text)


def with_code(text: str) -> str:
    """Words in Markdown as they are, but what they quote in backticks stays code."""
    parts = text.split("`")
    return "`".join(part if quoted % 2 else escape(part) for quoted, part in enumerate(parts))
