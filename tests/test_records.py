"""The typed records: every committed file loads as it was written, and a record's JSON form
reads back equal."""

import json

import pytest
from conftest import ROOT

from chapter2.records import (
    ABSENT,
    BuildRecord,
    ClaimsReport,
    ComparisonRecord,
    DriftReport,
    FailingCell,
    Kind,
    PageRecord,
    PageRun,
    Problem,
    RunFile,
    Statement,
    Status,
    TimingRecord,
    VerdictRecord,
    compared,
    value_at,
)

DATA = ROOT / "data"
CLAIMS_FILES = sorted([*DATA.glob("matrix/jax-*.json"), *DATA.glob("backends/*/claims*.json")])


@pytest.mark.parametrize("path", CLAIMS_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_committed_claims_report_loads_with_its_page_named(path):
    report = ClaimsReport.load(path)
    written = json.loads(path.read_text())["claims"]
    assert [v.id for v in report.claims] == [v["id"] for v in written]
    for verdict, raw in zip(report.claims, written, strict=True):
        assert verdict.page == raw.get("page", raw.get("section"))  # the key before "page"
        assert isinstance(verdict.status, Status)
        assert verdict.status == raw["status"]


@pytest.mark.parametrize("path", sorted(DATA.glob("drift/*/report.json")))
def test_every_committed_drift_report_loads_every_part_typed(path):
    report = DriftReport.load(path)
    written = json.loads(path.read_text())
    for verdict in report.changed_claims:
        assert verdict.status is Status.DRIFTED
    assert all(isinstance(c, VerdictRecord) for cause in report.causes for c in cause.claims)
    assert [c.cell for c in report.failing_cells] == [c["cell"] for c in written["failing_cells"]]
    assert [c.diff for c in report.changed_outputs] == [
        c["diff"] for c in written["changed_outputs"]
    ]
    for key in ("failing_cells", "changed_outputs"):
        ids = [c.get("claims", c.get("claim_ids")) for c in written[key]]  # "claims" then
        assert [c.claim_ids for c in getattr(report, key)] == ids
    assert report.claim_ids == written.get("claim_ids")  # None: a report before it kept them


def test_a_drift_report_writes_and_reads_back_equal(tmp_path):
    for path in sorted(DATA.glob("drift/*/report.json")):
        report = DriftReport.load(path)
        report.dump(tmp_path / "report.json")
        assert DriftReport.load(tmp_path / "report.json") == report


def _verdict(**changes) -> VerdictRecord:
    fields = {
        "id": "demo",
        "page": "fusion",
        "label": "claim-demo",
        "kind": "observed",
        "status": "as specified",
        "jax": "0.12.0.1",
        "jaxlib": "0.12.0",
        "expected": {"n": 1},
        "observed": {"n": 1, "shape": [2, 3]},
    }
    return VerdictRecord(**(fields | changes))


def test_a_verdict_reads_back_equal_from_its_json_form():
    verdict = _verdict(rests_on=["other"], only_on=["cpu", "why"])
    text = json.dumps(verdict.to_dict())
    again = VerdictRecord.from_dict(json.loads(text))
    assert again == verdict
    assert (again.kind, again.status) == (Kind.OBSERVED, Status.AS_SPECIFIED)
    assert "section" not in json.loads(text)


def test_a_verdict_written_before_page_was_its_name_loads_with_its_page():
    old = _verdict().to_dict()
    old["section"] = old.pop("page")
    assert VerdictRecord.from_dict(old) == _verdict()


def test_a_verdict_with_a_field_no_verdict_has_is_refused_by_name():
    with pytest.raises(ValueError, match=r"verdict 'demo' has fields no verdict has: colour"):
        VerdictRecord.from_dict({**_verdict().to_dict(), "colour": "red"})
    with pytest.raises(ValueError, match="'perhaps' is not a valid Status"):
        _verdict(status="perhaps")


def test_a_claims_report_writes_and_reads_back_equal(tmp_path):
    report = ClaimsReport("0.12.0.1", "0.12.0", "3.12.1", "2026-12-06", [_verdict()])
    report.dump(tmp_path / "claims.json")
    assert ClaimsReport.load(tmp_path / "claims.json") == report
    assert report.by_id == {"demo": _verdict()}
    written = json.loads((tmp_path / "claims.json").read_text())
    assert written["claims"] == [_verdict().to_dict()]  # each verdict in its own JSON form


def test_a_build_record_writes_and_reads_back_equal_every_part_typed(tmp_path):
    error = "ZeroDivisionError: division by zero"
    cell = FailingCell("fusion", "docs/fusion.md", 12, "1 / 0", error, ["demo"], False, "Zero")
    page = PageRecord(
        path="docs/fusion.md",
        statements={"demo": Statement("XLA fuses the three.", 9)},
        verdicts={"demo": _verdict()},
        failing_cells=[cell],
        comparisons=[
            ComparisonRecord(
                "fused ran 1.2 × faster than unfused",
                "faster",
                1.2,
                TimingRecord("fused", 1.0, 0.9, 1.1, 0.95, 1.05, 7),
                TimingRecord("unfused", 1.2, 1.1, 1.3, 1.15, 1.25, 7),
            )
        ],
        checked_claims=["demo"],
        seconds=1.5,
        executed_at=1.7e9,
    )
    problem = Problem("docs/fusion.md", 20, "fusion", "undefined label: 'x'")
    record = BuildRecord("0.12.0.1", "0.12.0", "3.12.1", "2026-12-06", {"fusion": page}, [problem])
    record.dump(tmp_path / "record.json")
    loaded = BuildRecord.load(tmp_path / "record.json")
    assert loaded == record
    assert isinstance(loaded.pages["fusion"].verdicts["demo"].status, Status)
    assert loaded.failing_cells == [cell]
    assert loaded.pages["fusion"].statement("demo").line == 9
    assert loaded.pages["fusion"].statement("other") == Statement()  # says nothing of it
    old = json.loads((tmp_path / "record.json").read_text())  # as a build wrote it before
    old["pages"]["fusion"]["checks"] = old["pages"]["fusion"].pop("checked_claims")
    cell_then = old["pages"]["fusion"]["failing_cells"][0]
    cell_then["claims"] = cell_then.pop("claim_ids")
    (tmp_path / "record.json").write_text(json.dumps(old))
    assert BuildRecord.load(tmp_path / "record.json") == record


def test_a_value_is_found_by_its_path_and_a_missing_one_is_named():
    values = {"numbers": {"runs": [0.5, 0.25]}, "device": "TPU v5 lite"}
    assert value_at(values, "numbers/runs/1", "the run x") == 0.25
    assert value_at(values, "device", "the run x") == "TPU v5 lite"
    missing = [("numbers/runs/2", "2"), ("numbers/runs/-1", "-1"), ("numbers/median", "median")]
    for key, part in [*missing, ("device/0", "0")]:
        with pytest.raises(KeyError, match=rf"the run x holds no '{key}' \('{part}' is missing\)"):
            value_at(values, key, "the run x")


def test_every_committed_run_file_loads_typed_and_reads_back_equal(tmp_path):
    for path in sorted((DATA / "backends").glob("*/run.json")):
        run = RunFile.load(path)
        assert run.files["claims"], path
        assert run.parts, path
        assert all(isinstance(calls, list) for calls in run.parts.values()), path
        run.dump(tmp_path / "run.json")
        assert RunFile.load(tmp_path / "run.json") == run, path
    first = RunFile.load(DATA / "backends" / "h200-jax-0.11.2" / "run.json")  # its own keys
    assert (first.files, list(first.parts)) == (
        {
            "claims": "claims-gpu.json",
            "numbers": "gpu-numbers.json",
            "host claims": "claims-cpu-same-machine.json",  # files its run.json never named
            "pages": "pages-gpu.json",
            "training": "training-gpu.json",
            "vendor figures": "vendor-figures.json",
        },
        ["claims"],
    )


def test_a_later_call_joins_a_run_of_the_same_device_and_jax():
    run = RunFile("TPU", "tpu", "0.10.2", "2026-12-06", {"claims": "c.json"}, {"claims": ["a"]})
    later = RunFile(
        "TPU", "tpu", "0.10.2", "2026-12-07", {"pages": "p.json"}, {"claims": ["b"], "pages": ["b"]}
    )
    joined = run.joined(later)
    assert joined.parts == {"claims": ["a", "b"], "pages": ["b"]}  # every call, oldest first
    assert joined.files == {"claims": "c.json", "pages": "p.json"}
    assert joined.recorded == "2026-12-06"
    with pytest.raises(ValueError, match="not GPU"):
        run.joined(RunFile("GPU", "gpu", "0.10.2", "2026-12-07", {}, {}))


def test_every_committed_pages_file_loads_typed_and_the_devices_write_back_equal(tmp_path):
    for path in sorted((DATA / "backends").glob("*/run.json")):
        run = RunFile.load(path)
        pages = PageRun.read(path.parent / run.files["pages"])
        assert pages, path
        assert all(isinstance(p.seconds, float) for p in pages), path
        if run.platform == "tpu":  # written by tools/record_backend.py
            PageRun.write(pages, tmp_path / "pages.json")
            written = json.loads((tmp_path / "pages.json").read_text())
            assert written == json.loads((path.parent / run.files["pages"]).read_text())
    timed_out = PageRun(page="p", rc="timeout", seconds=300.0, cells=3, ran_to_the_end=False)
    PageRun.write([timed_out], tmp_path / "pages.json")
    assert json.loads((tmp_path / "pages.json").read_text())[0]["failed cells"] is None
    assert PageRun.read(tmp_path / "pages.json") == [timed_out]
    tpu = PageRun.read(DATA / "backends" / "tpu-v5e-jax-0.10.2" / "pages.json")
    failures = [c for p in tpu if p.page == "xla-compilation" for c in p.failed_cells or []]
    assert failures[0].index == 35  # the file's "cell"
    assert failures[0].error == "OSError: could not get source code"
    first = PageRun.read(DATA / "backends" / "h200-jax-0.11.2" / "pages-gpu.json")
    assert first[0].last == "[glue] overlap_ratio = 0.92"
    assert first[0].failed_cells is None


def test_each_status_has_a_verb_of_its_own():
    """A recorded run's reason says what the CPU beside the device did (`Status.did`): no two
    statuses may read alike there."""
    assert len({status.did for status in Status}) == len(Status)
    assert all(status.did for status in Status)


def test_compared_names_the_expected_values_first_in_the_checks_order_or_sorted():
    expected = {"y": 1, "x": 2}
    observed = {"z": 0, "x": 2, "y": 3, "c": 4}
    in_order = compared(expected, observed)
    assert [c.name for c in in_order] == ["y", "x", "z", "c"]
    assert [c.name for c in compared(expected, observed, ordered=True)] == ["x", "y", "c", "z"]
    assert [c.differs for c in in_order] == [True, False, False, False]
    assert [c.expects for c in in_order] == [True, True, False, False]
    missing = compared({"gone": 1}, {})[0]
    assert missing.differs
    assert missing.observed is ABSENT
