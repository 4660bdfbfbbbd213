"""The version-notes table: every claim of the registry, checked against the installed JAX."""

import re

from chapter2.claims import registry
from chapter2.claims.registry import Verdict, evaluate


def _section_key(verdict: Verdict) -> tuple[int, ...]:
    return tuple(int(part) for part in verdict.claim.section.split("."))


def evaluate_all() -> list[Verdict]:
    """The verdict of every registered claim, in section order."""
    return sorted((evaluate(claim_id) for claim_id in registry.REGISTRY), key=_section_key)


def status(verdict: Verdict) -> str:
    if verdict.claim.kind == "observed":
        return "observed"
    return "holds" if verdict.holds else "**drifted**"


def escape(text: str) -> str:
    """Text that Markdown shows as it is: `<host>` stays visible, `a*b*c` is not emphasis."""
    return re.sub(r"([\\`*_<>\[\]|{}#~$])", r"\\\1", text)


def notes_table(verdicts: list[Verdict]) -> str:
    """A MyST table: section, statement (linked to its Note), status and what JAX did."""
    rows = ["| Section | What the book says | Status | What this JAX did |", "|---|---|---|---|"]
    for v in verdicts:
        cells = [
            v.claim.section,
            f"{escape(v.claim.statement)} ({{ref}}`details <{v.claim.label}>`)",
            status(v),
            escape(v.observation.observed),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)
