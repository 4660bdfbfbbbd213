"""Text put into Markdown that shows as it was given: the drift report and the marks' panels
quote what JAX said (`<lambda>`, `a*b`), which Markdown would read as markup. A sentence can
be built as pieces (`Inline`), written as Markdown here or as nodes by the docs layer. A
note's sentence takes values from a record (`with_recorded`)."""

import re


def escape(text: str) -> str:
    """Text that Markdown shows as it is: `<host>` stays visible, `a*b*c` is not emphasis."""
    return re.sub(r"([\\`*_<>\[\]|{}#~$])", r"\\\1", text)


# A sentence as pieces, each ("text" | "code" | "strong", what it shows): Markdown here, or
# document nodes (book.drift_page).
Inline = tuple[str, str]


def quoted(text: str) -> list[Inline]:
    """Words with what they quote in backticks as code."""
    return [("code" if n % 2 else "text", part) for n, part in enumerate(text.split("`")) if part]


def as_markdown(pieces: list[Inline]) -> str:
    """Pieces as Markdown that shows them as they are."""
    marks = {"text": escape, "strong": lambda t: f"**{escape(t)}**"}
    return "".join(marks[kind](t) if kind in marks else _code_span(t) for kind, t in pieces)


def _code_span(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def with_code(text: str) -> str:
    """Words in Markdown as they are, but what they quote in backticks stays code."""
    return as_markdown(quoted(text))


def formatted(value, spec: str = ""):
    """A recorded value formatted by `spec` ("len", "join", "and" to join with "and", "on"
    for a flag's on or off, or a format)."""
    if spec == "len":
        return len(value)
    if spec == "on":
        return "on" if value else "off"
    if spec == "and":
        return " and ".join(map(str, value))
    return ", ".join(map(str, value)) if spec == "join" else format(value, spec)


def with_recorded(text: str, value_of) -> str:
    """`text` with each {{key|format}} replaced by `value_of(key)`, formatted."""
    return re.sub(
        r"\{\{([^|}]+)(?:\|([^}]+))?\}\}",
        lambda m: str(formatted(value_of(m[1]), m[2] or "")),
        text,
    )
