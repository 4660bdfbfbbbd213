from chapter2.claims import registry
from chapter2.claims.report import escape, evaluate_all, notes_table, status


def _verdict(holds, kind="asserted", statement="JAX does x.", observed="x | y"):
    entry = registry.Claim("c", "2.10", "note-c", statement, lambda: None, kind)
    return registry.Verdict(entry, registry.Observation(holds, observed))


def test_status_distinguishes_holding_drifted_and_observed():
    assert status(_verdict(True)) == "holds"
    assert status(_verdict(False)) == "**drifted**"
    assert status(_verdict(False, kind="observed")) == "observed"


def test_table_links_each_row_to_its_note_and_escapes_pipes():
    table = notes_table([_verdict(True)])
    header, rule, row = table.splitlines()
    assert header.count("|") == rule.count("|") == row.count("|") - 1 == 5
    assert "{ref}`details <note-c>`" in row and "x \\| y" in row


def test_every_claim_is_evaluated_in_section_order(monkeypatch):
    monkeypatch.setattr(registry, "REGISTRY", {})
    for cid, section in [("late", "2.10"), ("early", "2.2"), ("mid", "2.3")]:
        registry.claim(cid, section, "l", "s")(lambda: registry.Observation(True, ""))
    assert [v.claim.id for v in evaluate_all()] == ["early", "mid", "late"]


def test_escape_keeps_markup_characters_visible():
    assert escape("a*b <host> x_y [1] {z} $5") == r"a\*b \<host\> x\_y \[1\] \{z\} \$5"
    assert escape("plain words, dots.") == "plain words, dots."
