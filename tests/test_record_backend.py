"""tools/record_backend.py: the folder prepared here records, on a machine with JAX alone,
what `chapter2.runs` reads; parts recorded in separate calls make one run. Run here on the
CPU, with the notebook modules missing as they are on the device machine (their stand-ins
take over)."""

import importlib.util
import json
import tarfile

import jax
import pytest
import record_backend  # tools/ is on pytest's pythonpath (pyproject.toml)

from chapter2.claims import claims
from chapter2.claims.__main__ import main
from chapter2.claims.backends import status_there
from chapter2.runs import recorded_run


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A run of claims (one page's), three pages (one broken) and one part of the numbers."""
    tmp = tmp_path_factory.mktemp("record")
    work, out = tmp / "work", tmp / "out"
    record_backend.prepare(work, ["numpy-to-jax", "overview"])
    broken = {"cells": ["print('before')", "1 / 0", "print('after')"], "pins the CPU": True}
    (work / "pages" / "broken.json").write_text(json.dumps(broken))
    real = importlib.util.find_spec
    missing = {"myst_nb", "IPython"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            importlib.util,
            "find_spec",
            lambda name, *a: None if name in missing else real(name, *a),
        )
        patch.setenv("JAX_PLATFORMS", "cpu")
        record = record_backend.run(
            work,
            out,
            ["claims", "pages", "numbers"],
            quick=True,
            timeout=300,
            jobs=2,
            numbers=["layouts"],
            claims_page="jaxprs",
        )
    return work, out, record


@pytest.mark.slow  # it records (the `recorded` fixture)
def test_a_prepared_folder_holds_each_page_and_whether_it_pins_the_cpu(recorded):
    work, _, _ = recorded
    pages = {p.stem: json.loads(p.read_text()) for p in (work / "pages").glob("*.json")}
    assert pages["numpy-to-jax"]["pins the CPU"] is True
    assert pages["overview"]["pins the CPU"] is False
    assert (work / "data" / "backends").is_dir()  # what the pages read, from docs/../data
    # where nothing is installed, the package reads its baseline pin beside its source
    assert (
        (work / "src" / "chapter2" / "releases.py").parents[2].joinpath("pyproject.toml").exists()
    )
    with pytest.raises(SystemExit, match="no such page: no-such-page"):
        record_backend.prepare(work.parent / "other", ["jaxprs", "no-such-page"])


@pytest.mark.slow  # it records (the `recorded` fixture)
def test_every_page_runs_past_a_failing_cell(recorded):
    _, out, record = recorded
    with tarfile.open(out / "record.tar.gz") as tar:
        names = set(tar.getnames())
        pages = {p["page"]: p for p in json.load(tar.extractfile("pages.json"))}
        log = tar.extractfile("pages.log").read().decode()
    assert {"call.json", "claims.json", "claims-host.json", "numbers.json", "host.json"} <= names
    assert pages["broken"]["ran to the end"] is True
    assert [c["cell"] for c in pages["broken"]["failed cells"]] == [1]
    assert pages["broken"]["failed cells"][0]["error"] == "ZeroDivisionError: division by zero"
    assert "after" in log  # the cell after the failing one ran
    assert pages["numpy-to-jax"]["failed cells"] == [], pages  # Matplotlib, IPython's stand-in
    assert pages["numpy-to-jax"]["on"] == "host CPU"
    assert "[glue] " in log  # myst_nb's stand-in glued
    assert set(record) <= names  # run() names the files it recorded
    described = record_backend.describe(out / "record")  # here, as unpack does
    assert (described.platform, described.device, described.jax) == ("cpu", "cpu", jax.__version__)
    assert described.host.cores >= 1
    assert set(described.parts) == {"claims", "pages", "numbers"}


@pytest.mark.slow  # it records (the `recorded` fixture)
def test_a_record_is_never_mixed_with_an_older_one(recorded):
    work, out, _ = recorded
    with pytest.raises(SystemExit, match="is not empty"):
        record_backend.run(work, out, ["numbers"], True, 60, 1)


@pytest.mark.slow  # it records (the `recorded` fixture)
def test_parts_unpacked_in_turn_make_one_run_judged_as_the_claims_are_now(recorded, tmp_path):
    _, out, _ = recorded
    folder = tmp_path / "backends" / "cpu-here"
    record_backend.unpack(out / "record.tar.gz", folder)
    run = recorded_run(folder.parent, "cpu-here")
    home = {i for i, c in claims().items() if c.page == "jaxprs"}
    assert set(run.verdicts) == set(run.host_verdicts) == home
    for claim_id in home:
        assert status_there(claims()[claim_id], run).status == "holds", claim_id
    assert run.value("layouts/arrays/6 x 4 float32/major_to_minor") == [0, 1]
    with pytest.raises(SystemExit, match=r"already holds .*claims\.json"):
        record_backend.unpack(out / "record.tar.gz", folder)  # a recorded file is kept
    again = record_backend.unpack(out / "record.tar.gz", folder, again=["claims", "numbers"])
    assert set(again.parts) == {"claims", "pages", "numbers"}
    assert all(len(calls) == 2 for calls in again.parts.values())  # each call, oldest first


def test_the_page_step_writes_each_failing_cell_as_a_pages_file_keeps_it(tmp_path):
    """What the device's `page` step hands `run_page`: the failing cells, in the pages
    file's keys, read back as records."""
    from chapter2.records import PageRunFailure

    page = tmp_path / "broken.json"
    page.write_text(json.dumps({"cells": ["x = 1", "1 / 0", "y = x + 1"], "pins the CPU": True}))
    failed = tmp_path / "failed.json"
    assert record_backend.main(["page", str(page), str(failed)]) == 0
    written = json.loads(failed.read_text())
    assert written == [{"cell": 1, "error": "ZeroDivisionError: division by zero", "claims": []}]
    [failure] = [PageRunFailure.from_dict(c) for c in written]
    assert (failure.index, failure.claim_ids) == (1, [])


def test_the_claims_cli_names_a_page_without_claims(capsys):
    with pytest.raises(SystemExit):
        main(["--page", "no-such-page"])
    assert "no claim's home is the page 'no-such-page'" in capsys.readouterr().err


# What run() puts beside a later call's training: the call, and the host's software.
LATER = {
    "call.json": json.dumps({"made": "later", "parts": ["training"], "recorded": "2026-12-07"}),
    "host.json": json.dumps(
        {"jax": "0.10.2", "jaxlib": "0.10.2", "python": "3.11.7", "cpu": "x", "cores": 1}
    ),
}
ON_TPU = {"device": {"device": "TPU", "platform": "tpu"}}  # as a training file names it


def _archive(path, files: dict) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            file = path.parent / name
            file.write_text(text)
            tar.add(file, arcname=name)


def test_a_later_section_joins_a_run_whose_config_lacked_a_new_field(tmp_path):
    """A field added to `Config` after a run was recorded holds its default there; a field
    that differs refuses the archive, naming it, and leaves every recorded file as it was."""
    run = {"device": "TPU", "platform": "tpu", "jax": "0.10.2", "parts": {}, "files": {}}
    run |= {"recorded": "2026-12-06", "host": None}
    old = {"batch": 8, "bf16": True}  # recorded before `accumulate` existed
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps(run))
    (folder / "training.json").write_text(json.dumps({"config": old, "loops": {"a": 1}}))
    (folder / "training.log").write_text("first\n")
    later = tmp_path / "later"
    later.mkdir()
    new = {**old, "accumulate": 1}
    _archive(
        later / "record.tar.gz",
        {
            **LATER,
            "training.json": json.dumps({"config": new, "step_ops": {"b": 2}, **ON_TPU}),
            "training.log": "later\n",
        },
    )
    record_backend.unpack(later / "record.tar.gz", folder)
    kept = json.loads((folder / "training.json").read_text())
    assert kept["loops"] == {"a": 1}
    assert kept["step_ops"] == {"b": 2}

    before = {p.name: p.read_text() for p in folder.iterdir()}
    other = tmp_path / "other"
    other.mkdir()
    _archive(
        other / "record.tar.gz",
        {
            **LATER,
            "training.json": json.dumps(
                {"config": {**new, "batch": 16}, "more": {"c": 3}, **ON_TPU}
            ),
            "training.log": "other\n",
        },
    )
    with pytest.raises(SystemExit, match=r"another configuration \(batch\)"):
        record_backend.unpack(other / "record.tar.gz", folder)
    assert {p.name: p.read_text() for p in folder.iterdir()} == before


def test_a_section_recorded_anew_replaces_the_old_one_which_is_kept_beside_it(tmp_path):
    run = {"device": "TPU", "platform": "tpu", "jax": "0.10.2", "parts": {}, "files": {}}
    run |= {"recorded": "2026-12-06", "host": None}
    config = {"batch": 8, "f32_params": []}  # a tuple default, as JSON writes it
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps(run))
    old = {"config": config, "loops": {"a": 1}, "fits": {"b": 1}}
    (folder / "training.json").write_text(json.dumps(old))
    later = tmp_path / "later"
    later.mkdir()
    files = {
        **LATER,
        "training.json": json.dumps({"config": config, "fits": {"b": 2}, **ON_TPU}),
    }
    _archive(later / "record.tar.gz", files)
    with pytest.raises(SystemExit, match="already holds the training of fits"):
        record_backend.unpack(later / "record.tar.gz", folder)
    record_backend.unpack(later / "record.tar.gz", folder, sections=["fits"])
    kept = json.loads((folder / "training.json").read_text())
    assert (kept["fits"], kept["recorded before"], kept["loops"]) == (
        {"b": 2},
        {"fits": {"b": 1}},
        {"a": 1},
    )


def test_claims_recorded_anew_for_one_page_never_replace_every_claim(tmp_path):
    run = {"device": "TPU", "platform": "tpu", "jax": "0.10.2", "parts": {}, "files": {}}
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps(run | {"recorded": "2026-12-06"}))
    on_tpu = {"page": "p", "label": "l", "kind": "asserted", "status": "holds", "jax": "0.10.2"}
    on_tpu |= {"jaxlib": "0.10.2", "platform": "tpu", "device": "TPU"}
    report = {"jax": "0.10.2", "jaxlib": "0.10.2", "python": "3.11.7", "recorded": "today"}
    kept = json.dumps(report | {"claims": [on_tpu | {"id": "a"}, on_tpu | {"id": "b"}]})
    (folder / "claims.json").write_text(kept)
    claims_call = {**LATER, "call.json": LATER["call.json"].replace("training", "claims")}
    later = tmp_path / "later"
    later.mkdir()
    one_page = json.dumps(report | {"claims": [on_tpu | {"id": "a"}]})  # --claims-page
    _archive(later / "record.tar.gz", {**claims_call, "claims.json": one_page})
    with pytest.raises(SystemExit, match=r"the claims recorded anew lack 1 kept \(b, \.\.\.\)"):
        record_backend.unpack(later / "record.tar.gz", folder, again=["claims"])
    assert (folder / "claims.json").read_text() == kept  # nothing written


def test_pages_recorded_alone_join_the_run_that_names_the_device(tmp_path):
    run = {"device": "TPU", "platform": "tpu", "jax": "0.10.2", "parts": {}, "files": {}}
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps(run | {"recorded": "2026-12-06"}))
    (folder / "pages.json").write_text("[]")
    pages = {**LATER, "call.json": LATER["call.json"].replace("training", "pages")}
    later = tmp_path / "later"
    later.mkdir()
    page = {"page": "p", "on": "host CPU", "rc": 0, "seconds": 1.0, "cells": 2}
    page |= {"failed cells": [], "ran to the end": True}  # as run() writes it
    _archive(later / "record.tar.gz", {**pages, "pages.json": json.dumps([page])})
    joined = record_backend.unpack(later / "record.tar.gz", folder)
    assert (joined.device, joined.parts) == ("TPU", {"pages": ["later"]})
    assert json.loads((folder / "pages.json").read_text()) == [page | {"made": ["later"]}]
    with pytest.raises(SystemExit, match="names no device"):
        record_backend.unpack(later / "record.tar.gz", tmp_path / "new")


def test_a_section_that_failed_before_is_recorded_again_with_its_failure_kept(tmp_path):
    """A numbers or training section whose earlier call failed takes a later call's result,
    the failure kept under "failed before"; one that succeeded is never replaced unasked."""
    kept = {"loops": {"error": "RESOURCE_EXHAUSTED"}, "fits": {"b": 1}}
    added = tmp_path / "training.json"
    added.write_text(json.dumps({"loops": {"a": 2}, "section_seconds": {"loops": 9}}))
    merged = record_backend.merged_sections(kept, added, tmp_path)
    assert merged["loops"] == {"a": 2}
    assert merged["failed before"] == {"loops": {"error": "RESOURCE_EXHAUSTED"}}
    assert (merged["fits"], merged["section_seconds"]) == ({"b": 1}, {"loops": 9})
    added.write_text(json.dumps({"fits": {"b": 2}}))
    with pytest.raises(SystemExit, match="already holds the training of fits"):
        record_backend.merged_sections(merged, added, tmp_path)
