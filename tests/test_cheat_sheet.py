"""chapter2.cheat_sheet: the training-loop checklist the cheat sheet shows, at most ten lines,
each name it uses found in the installed JAX and optax."""

from chapter2.cheat_sheet import CHECKLIST, missing


def test_the_checklist_holds_at_most_ten_lines_each_one_line_of_prose():
    assert 0 < len(CHECKLIST) <= 10
    assert all(line.strip() and "\n" not in line for line, _ in CHECKLIST)


def test_every_name_of_the_checklist_is_found_and_a_missing_one_is_named():
    assert [name for _, where in CHECKLIST for name in missing(where)] == []
    assert missing("optax.MultiSteps optax.NoSuchWrapper") == ["optax.NoSuchWrapper"]
