"""Record the book on an accelerator: one command, whatever the device.

    python tools/record_backend.py prepare WORK         # here, in the docs environment
    python WORK/record_backend.py run OUT [--part ...]  # there: JAX, SciPy, Matplotlib, optax
    python tools/record_backend.py unpack OUT/record.tar.gz data/backends/NAME   # here again
    python tools/record_backend.py report data/backends/NAME   # where it differs from the book

`prepare` writes WORK: the package's source, each page's code cells, the records the pages
read (`data/`), stand-ins for myst_nb and IPython, and this file. `run` records there, part
by part (`--part`), into a folder that it archives as OUT/record.tar.gz after each part:
- `claims`: every claim on the default device, and again on the machine's own CPU under the
  same JAX (the control that tells the device's difference from the release's);
- `pages`: every page's cells in order, past a failing one; a page that pins the CPU runs on
  the host (JAX_PLATFORMS=cpu, several at once), every other on the default device, one at a
  time (a TPU chip serves one process);
- `numbers`: what the chapter's sections measure on the device (`chapter2.accelerator`);
- `training`: the training page's model on the device (`chapter2.training_numbers`).
`unpack` adds an archive's files to a run's folder and describes them in its run.json
(`describe`), so that parts recorded in separate calls make one run, and `report` (which
`unpack` runs too) says claim by claim where that machine differs from the book, and why:
the device, the release, or a fact of the CPU.
"""

import argparse
import concurrent.futures
import dataclasses
import datetime as dt
import importlib.util
import json
import linecache
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where they are used, from WORK/src on the device (`run`)
    from chapter2.records import PageRun, PageRunFailure

ROOT = Path(__file__).resolve().parents[1]
# The last line of the setup cell of a page about the CPU (CONTRIBUTING.md, "Writing a page").
PIN_CPU = 'jax.config.update("jax_default_device", jax.devices("cpu")[0])'
SHIMS = {
    "myst_nb": '"""Stand-in: print what would be glued."""\n\n\n'
    "def glue(name, value, display=True):\n"
    '    print(f"[glue] {name} = {str(value)[:120]}")\n',
    "IPython": '"""Stand-in: no IPython runs here (Matplotlib asks)."""\n\n'
    "version_info = (0, 0, 0)\n\n\n"
    "def get_ipython():\n    return None\n",
    "IPython.display": '"""Stand-in: Markdown is text; display prints."""\n\n\n'
    "class Markdown(str):\n    pass\n\n\n"
    "def display(*objects):\n    print(*objects)\n",
}
PARTS = ("claims", "pages", "numbers", "training")
# What each file of a run holds: written into its run.json, read by chapter2.runs.
FILES = {
    "claims": "claims.json",
    "host claims": "claims-host.json",
    "pages": "pages.json",
    "numbers": "numbers.json",
    "training": "training.json",
}


def page_script(page: Path, prelude: str = "") -> str:
    """A page's code cells, in order, as one plain Python script, after `prelude`."""
    return "\n\n".join([prelude, *page_cells(page)]).lstrip() + "\n"


def page_cells(page: Path) -> tuple[str, ...]:
    """A page's code cells as myst-nb reads them for execution."""
    from book.dependencies import code_cells  # noqa: PLC0415 (the docs environment only)

    return code_cells(page.read_text())


def run_script(
    script: Path, cwd: Path, env: dict[str, str], timeout: float | None = None, python=None
) -> tuple[int | str, str, float]:
    """A page's script in a fresh interpreter (this one, or `python`): exit status (or
    "timeout"), output, seconds."""
    return run_command([str(python or sys.executable), str(script)], cwd, env, timeout)


def run_command(
    command: list[str], cwd: Path, env: dict[str, str], timeout: float | None = None
) -> tuple[int | str, str, float]:
    """`command` in `cwd`: exit status (or "timeout"), output, seconds."""
    start = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env={"MPLBACKEND": "Agg", **env},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        status, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        status, output = "timeout", f"stopped after {timeout:.0f} s"
    return status, output, time.perf_counter() - start


def notebook_pages() -> list[Path]:
    """The book's pages that have code cells."""
    return sorted(p for p in (ROOT / "docs").glob("*.md") if "```{code-cell}" in p.read_text())


def prepare(work: Path, pages: list[str] | None = None) -> None:
    """Write WORK: src/, data/, pages/<page>.json (its cells, and whether it pins the CPU),
    shim/ and this file."""
    if work.exists():
        msg = f"{work} exists: prepare writes a new folder"
        raise SystemExit(msg)
    shutil.copytree(ROOT / "src", work / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "data", work / "data")  # what the pages read, from docs/../data
    shutil.copy(ROOT / "pyproject.toml", work)  # the baseline pin, read where nothing is installed
    git = ["git", "describe", "--always", "--dirty"]
    commit = subprocess.run(git, cwd=ROOT, capture_output=True, text=True, check=False).stdout
    (work / "commit").write_text(commit.strip() or "unknown")
    (work / "pages").mkdir()
    sources = {p.stem: p for p in sorted((ROOT / "docs").glob("*.md"))}
    unknown = sorted(set(pages or []) - set(sources))
    if unknown:
        msg = f"no such page: {', '.join(unknown)}"
        raise SystemExit(msg)
    for page in notebook_pages():
        if pages is None or page.stem in pages:
            cells = page_cells(page)
            pinned = PIN_CPU in "\n".join(cells)
            text = json.dumps({"cells": list(cells), "pins the CPU": pinned}, indent=1)
            (work / "pages" / f"{page.stem}.json").write_text(text + "\n")
    for module, text in SHIMS.items():
        path = work / "shim" / Path(*module.split(".")) / "__init__.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    shutil.copy(__file__, work / "record_backend.py")


def environment(work: Path) -> dict[str, str]:
    """The package, a stand-in for each missing notebook module, no GPU memory taken ahead."""
    shims = work / "shims-used"
    shutil.rmtree(shims, ignore_errors=True)
    shims.mkdir()
    for top in ("myst_nb", "IPython"):
        if importlib.util.find_spec(top) is None:
            shutil.copytree(work / "shim" / top, shims / top)
    paths = [str(work / "src"), str(shims), os.environ.get("PYTHONPATH", "")]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
    }


def run_cells(page: str, cells: list[str]) -> list["PageRunFailure"]:
    """Run `cells` in order in one namespace, past any that fails, as a drift build does;
    each failing cell as a `PageRunFailure`, with the drifted claims that explain it."""
    from chapter2.claims import ClaimDrift  # noqa: PLC0415 - the package of WORK/src
    from chapter2.claims.attribution import explain  # noqa: PLC0415
    from chapter2.records import PageRunFailure  # noqa: PLC0415

    namespace, failed = {"__name__": "__main__"}, []
    for i, source in enumerate(cells):
        print(f"----- cell {i}", flush=True)
        name = f"<{page} cell {i}>"  # its lines kept, as IPython keeps them, for `inspect`
        linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
        try:
            exec(compile(source, name, "exec"), namespace)
        except Exception as err:
            traceback.print_exc()
            drift = err if isinstance(err, ClaimDrift) else explain(page, err)
            error = traceback.format_exception_only(err)[-1].strip().splitlines()[0]
            claims = [v.claim.id for v in drift.verdicts] if drift else []
            failed.append(PageRunFailure(i, error, claims))
    return failed


def run_page(work: Path, page: Path, env: dict[str, str], timeout: float) -> tuple["PageRun", str]:
    """One page in a fresh interpreter, in a scratch folder whose ../data is WORK/data: its
    `PageRun` and its log."""
    from chapter2.records import PageRun, PageRunFailure  # noqa: PLC0415 - from WORK/src (`run`)

    pinned = json.loads(page.read_text())["pins the CPU"]
    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / "docs").mkdir()
        (Path(scratch) / "data").symlink_to(work / "data")
        failed = Path(scratch) / "failed.json"
        command = [sys.executable, str(work / "record_backend.py"), "page", str(page), str(failed)]
        env = {**env, "JAX_PLATFORMS": "cpu"} if pinned else env
        status, output, seconds = run_command(command, Path(scratch) / "docs", env, timeout)
        cells = None
        if failed.exists():
            cells = [PageRunFailure.from_dict(c) for c in json.loads(failed.read_text())]
    on = "host CPU" if pinned else "default device"
    print(page.stem, on, status, f"{seconds:.1f}", flush=True)
    result = PageRun(
        page=page.stem,
        on=on,
        rc=status,
        seconds=round(seconds, 1),
        cells=len(json.loads(page.read_text())["cells"]),
        failed_cells=cells,
        ran_to_the_end=status == 0 and cells is not None,
    )
    return result, f"===== {page.stem} rc={status} {seconds:.1f} s\n{output}"


def run_pages(work: Path, out: Path, env: dict[str, str], timeout: float, jobs: int) -> list:
    """Every page: those that pin the CPU `jobs` at a time on the host, the others one at a
    time on the default device, the two groups at once."""
    pages = sorted((work / "pages").glob("*.json"))
    host = [p for p in pages if json.loads(p.read_text())["pins the CPU"]]
    device = [p for p in pages if p not in host]
    with concurrent.futures.ThreadPoolExecutor(jobs + 1) as pool:
        on_device = pool.submit(lambda: [run_page(work, p, env, timeout) for p in device])
        on_host = [pool.submit(run_page, work, p, env, timeout) for p in host]
        done = on_device.result() + [f.result() for f in on_host]
    done = [run for _, run in sorted(zip(device + host, done, strict=True))]  # by page
    (out / "pages.log").write_text("\n".join(log for _, log in done))
    return [result for result, _ in done]


def record_claims(out: Path, env: dict[str, str], page: str | None = None) -> None:
    """Every claim (of `page` alone, if given) on the default device and, at once, on this
    machine's CPU."""
    commands = {
        "claims": ({}, out / FILES["claims"]),
        "host claims": ({"JAX_PLATFORMS": "cpu"}, out / FILES["host claims"]),
    }
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        running = {
            name: pool.submit(
                run_command,
                [sys.executable, "-m", "chapter2.claims", "--json", str(path)]
                + (["--page", page] if page else []),
                out,
                {**env, **extra},
            )
            for name, (extra, path) in commands.items()
        }
    for name, future in running.items():
        status, output, seconds = future.result()
        log = out / f"{name.replace(' ', '-')}.log"
        log.write_text(output)
        if not commands[name][1].exists():
            msg = f"the claims CLI wrote nothing (exit {status}); its output is in {log}"
            raise SystemExit(msg)
        print(f"{name}: exit {status}, {seconds:.0f} s", flush=True)


def run_module(
    module: str, out: Path, env: dict[str, str], quick: bool, only: list[str] | None = None
) -> None:
    """`python -m module OUT/<file>` (with --quick, and --part `only`), its output logged
    beside it."""
    name = {"chapter2.accelerator": "numbers", "chapter2.training_numbers": "training"}[module]
    command = [sys.executable, "-m", module, str(out / FILES[name]), *(["--quick"] * quick)]
    command += ["--part", *only] if only else []
    status, output, seconds = run_command(command, out, env)
    (out / f"{name}.log").write_text(output)
    print(f"{name}: exit {status}, {seconds:.0f} s", flush=True)


HOST_FACTS = """
import platform, sys, jax, jaxlib
from chapter2.environment import cpu_model, xla_cores
from chapter2.records import HostFacts
HostFacts(jax.__version__, jaxlib.__version__, platform.python_version(), cpu_model(),
          xla_cores()).dump(sys.argv[1])
"""


def host_facts(folder: Path, env: dict[str, str]) -> None:
    """host.json: the software there and the host's CPU, read in the environment the parts
    run in (no device is opened)."""
    command = [sys.executable, "-c", HOST_FACTS, str(folder / "host.json")]
    status, output, _ = run_command(command, folder, {**env, "JAX_PLATFORMS": "cpu"})
    if status != 0:
        msg = f"could not read the host's facts (exit {status}):\n{output}"
        raise SystemExit(msg)


def describe(folder: Path, known=None):
    """The `chapter2.records.RunFile` of the parts recorded in `folder` (here, where the book
    is installed): the device and the software (as the claims, the numbers or the training
    recorded them, or else as `known`, the run they join, did), the host, the date, and the
    call that recorded them (call.json)."""
    from chapter2.records import (  # noqa: PLC0415 - here, where the book is installed
        ClaimsReport,
        Device,
        HostFacts,
        Machine,
        RecordingCall,
        RunFile,
    )

    call = RecordingCall.load(folder / "call.json")
    claims = (
        ClaimsReport.load(folder / FILES["claims"]) if (folder / FILES["claims"]).exists() else None
    )
    device = known and Device(known.device, known.platform)  # pages alone: the run's device
    for name in ("training", "numbers"):  # each names the device it ran on
        if (folder / FILES[name]).exists():
            device = Device.of_part(folder / FILES[name])
    if claims is not None:
        device = Device(claims.claims[0].device, claims.claims[0].platform)
    if not device:
        msg = f"{folder} names no device (pages alone): record claims, numbers or training first"
        raise SystemExit(msg)
    host = HostFacts.load(folder / "host.json") if (folder / "host.json").exists() else None
    software = host or claims  # the software in the environment the parts ran in
    return RunFile(
        device=device.device,
        platform=device.platform,
        jax=software.jax,
        jaxlib=software.jaxlib,
        python=software.python,
        host=Machine(host.cpu, host.cores) if host else None,
        recorded=call.recorded,
        parts={part: [call.made] for part in call.parts},
        files={k: v for k, v in FILES.items() if (folder / v).exists()},
    )


def run(
    work: Path,
    out: Path,
    parts: list[str],
    quick: bool,
    timeout: float,
    jobs: int,
    saved: Path | None = None,
    numbers: list[str] | None = None,
    claims_page: str | None = None,
    training: list[str] | None = None,
) -> list[str]:
    """Record `parts` into OUT/record/, archived after each part as `saved` (by default
    OUT/record.tar.gz), with the call that recorded them; the files recorded."""
    if not (work / "src" / "chapter2").is_dir():
        msg = f"{work} is not a folder made by `prepare`: run the copy of this file there"
        raise SystemExit(msg)
    if out.exists() and any(out.iterdir()):
        msg = f"{out} is not empty: run writes a new record"
        raise SystemExit(msg)
    if str(work / "src") not in sys.path:  # the copied package, whose records write the files
        sys.path.insert(0, str(work / "src"))
    from chapter2.records import PageRun, RecordingCall  # noqa: PLC0415

    folder = out / "record"
    folder.mkdir(parents=True)
    env = environment(work)
    saved = saved or out / "record.tar.gz"
    argv = ["run", "OUT", "--part", *parts, *(["--quick"] * quick)]
    argv += ["--numbers", *(repr(n) for n in numbers)] if numbers else []
    argv += ["--claims-page", claims_page] if claims_page else []
    argv += ["--training", *training] if training else []
    made = (
        f"python record_backend.py {' '.join(argv)}, made by tools/record_backend.py at "
        f"commit {(work / 'commit').read_text()}"
    )
    host_facts(folder, env)
    for part in parts:
        start = time.perf_counter()
        if part == "claims":
            record_claims(folder, env, claims_page)
        elif part == "pages":
            PageRun.write(run_pages(work, folder, env, timeout, jobs), folder / FILES["pages"])
        elif part == "numbers":
            run_module("chapter2.accelerator", folder, env, quick, numbers)
        else:
            run_module("chapter2.training_numbers", folder, env, quick, training)
        print(f"== {part}: {time.perf_counter() - start:.0f} s", flush=True)
        archive(folder, saved)
    today = dt.datetime.now(dt.UTC).date().isoformat()  # unpack describes the run (`describe`)
    RecordingCall(made, parts, today).dump(folder / "call.json")
    archive(folder, saved)
    return sorted(p.name for p in folder.iterdir())


def archive(folder: Path, path: Path) -> None:
    """`folder`'s files as one gzipped tar, written whole or not at all."""
    partial = path.with_suffix(".partial")
    with tarfile.open(partial, "w:gz") as tar:
        for file in sorted(folder.iterdir()):
            tar.add(file, arcname=file.name)
    partial.replace(path)


# The files a part writes: a part recorded again replaces them (`unpack --again`).
PART_FILES = {
    "claims": ["claims.json", "claims-host.json", "claims.log", "host-claims.log"],
    "numbers": ["numbers.json", "numbers.log"],
    "training": ["training.json", "training.log"],
}


# Keys of a numbers or training file that describe the recording, not a section of it.
ABOUT = {"device", "config", "plan", "section_seconds"}


def _config_differences(kept: dict | None, added: dict | None) -> list[str]:
    """The fields in which two recorded training configs differ; a field one of them lacks
    (added to `Config` after it was recorded) counts only where the other holds no default."""
    if kept is None or added is None:
        return []
    from chapter2.cases.transformer import Config  # noqa: PLC0415 - here, where the book is

    fields = dataclasses.fields(Config)  # the defaults as JSON writes them: a tuple a list
    default = json.loads(
        json.dumps({f.name: f.default for f in fields if f.default is not dataclasses.MISSING})
    )
    return sorted(
        name
        for name in kept.keys() | added.keys()
        if kept.get(name, default.get(name)) != added.get(name, default.get(name))
    )


def merged_sections(kept: dict, file: Path, folder: Path, again: list[str] | None = None) -> dict:
    """A numbers or training file with the sections of a later recording added: a section
    recorded before stays, unless it failed then or is named in `again` (recorded anew by a
    changed function); the earlier one is kept beside it, under "failed before" or "recorded
    before"."""
    added = json.loads(file.read_text())
    differ = _config_differences(kept.get("config"), added.get("config"))
    if differ:
        msg = f"{folder}: {file.name} was recorded with another configuration ({', '.join(differ)})"
        raise SystemExit(msg)
    sections = [k for k, v in added.items() if isinstance(v, dict) and k not in ABOUT]
    held = [k for k in sections if k in kept and "error" not in kept[k] and k not in (again or [])]
    if held:
        msg = f"{folder} already holds the {file.stem} of {', '.join(sorted(held))}"
        raise SystemExit(msg)
    for key in sections:
        if key in kept:
            before = "failed before" if "error" in kept[key] else "recorded before"
            kept.setdefault(before, {})[key] = kept[key]
        kept[key] = added[key]
    if "section_seconds" in added:
        kept["section_seconds"] = {**kept.get("section_seconds", {}), **added["section_seconds"]}
    return kept


def unpack(
    path: Path, folder: Path, again: list[str] | None = None, sections: list[str] | None = None
):
    """Add the files of the archive at `path` to the run in `folder`: the archive's run
    (`describe`) joins run.json's (`RunFile.joined`); a page run again is added to pages.json
    beside its earlier run (the later one counts), numbers of parts not yet recorded join
    numbers.json, logs are appended; no other recorded file is replaced, but the files of
    the parts in `again`, recorded anew by the same command; a numbers or training section
    named in `sections` replaces the one recorded before, which is kept beside it."""
    from chapter2.records import ClaimsReport, PageRun, RunFile  # noqa: PLC0415 - not on device

    folder.mkdir(parents=True, exist_ok=True)
    replaced = {name for part in again or [] for name in PART_FILES[part]}
    with tarfile.open(path) as tar, tempfile.TemporaryDirectory() as scratch:
        tar.extractall(scratch, filter="data")
        got = Path(scratch)
        old_path = folder / "run.json"
        old = RunFile.load(old_path) if old_path.exists() else None
        new = describe(got, old)
        if old and (old.device, old.jax) != (new.device, new.jax):
            msg = f"{folder} holds a run of {old.device} with JAX {old.jax}"
            raise SystemExit(msg)
        merged = {"call.json", "host.json", FILES["pages"], FILES["numbers"], FILES["training"]}
        merged |= {"pages.log", "numbers.log", "training.log"} | replaced
        claims_then, claims_now = folder / FILES["claims"], got / FILES["claims"]
        if "claims" in (again or []) and claims_then.exists():  # all of them, or none
            now = ClaimsReport.load(claims_now).by_id if claims_now.exists() else {}
            lost = sorted(set(ClaimsReport.load(claims_then).by_id) - set(now))
            if lost:  # as a call with --claims-page records them
                msg = f"{folder}: the claims recorded anew lack {len(lost)} kept ({lost[0]}, ...)"
                raise SystemExit(msg)
        clash = sorted(
            p.name for p in got.iterdir() if p.name not in merged and (folder / p.name).exists()
        )
        if clash:
            msg = f"{folder} already holds {', '.join(clash)}: a recorded file is never replaced"
            raise SystemExit(msg)
        # merged before anything is written: a refusal (a section recorded again, another
        # configuration) leaves the run as it was
        sections = {
            name: merged_sections(
                json.loads((folder / name).read_text()), got / name, folder, sections
            )
            for name in (FILES["numbers"], FILES["training"])
            if (got / name).exists() and (folder / name).exists() and name not in replaced
        }
        for name in replaced:
            (folder / name).unlink(missing_ok=True)
        for file in got.iterdir():
            if file.name == FILES["pages"] and (folder / file.name).exists():
                later = [replace(p, made=new.parts["pages"]) for p in PageRun.read(file)]
                PageRun.write(PageRun.read(folder / file.name) + later, folder / file.name)
            elif file.name in sections:
                (folder / file.name).write_text(json.dumps(sections[file.name], indent=1) + "\n")
            elif file.name.endswith(".log") and (folder / file.name).exists():
                with (folder / file.name).open("a") as log:
                    log.write("\n" + file.read_text())
            elif file.name != "call.json":  # what it says is in run.json
                shutil.copy(file, folder / file.name)
    joined = old.joined(new) if old else new  # each part lists every call, oldest first
    joined.dump(old_path)
    return joined


def differences(folder: Path) -> list[str]:
    """Claim by claim, where the run in `folder` differs from what the book says: each claim
    that reads otherwise there, or holds only by its device's own expectation, with the cause
    (the device, the release, a fact of the CPU) and the reason."""
    from chapter2.claims import claims  # noqa: PLC0415 - here, where the book is installed
    from chapter2.claims.backends import cause_there  # noqa: PLC0415
    from chapter2.claims.registry import Kind  # noqa: PLC0415
    from chapter2.records import Status  # noqa: PLC0415
    from chapter2.runs import read_run  # noqa: PLC0415

    run, found = read_run(folder), []
    for claim in claims().values():
        book = Status.AS_SPECIFIED if claim.kind is Kind.OBSERVED else Status.HOLDS
        there = cause_there(claim, run, book)
        if there.cause:
            status = "otherwise" if there.otherwise else there.status
            found.append(f"{status:>12}  {claim.id} ({there.cause}): {there.reason}")
        elif there.status is None:
            found.append(f"{'not judged':>12}  {claim.id}: {there.evidence}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    ready = steps.add_parser("prepare", help="write the folder to take to the other machine")
    ready.add_argument("work", type=Path)
    ready.add_argument("--pages", nargs="+", help="only these pages (all by default)")
    there = steps.add_parser("run", help="record, on the other machine, from the folder")
    there.add_argument("out", type=Path)
    there.add_argument("--part", nargs="+", choices=PARTS, default=list(PARTS))
    there.add_argument("--quick", action="store_true", help="small sizes, to try it out")
    there.add_argument("--timeout", type=float, default=300, help="seconds per page")
    there.add_argument("--jobs", type=int, default=4, help="pages run on the host at once")
    there.add_argument("--archive", type=Path, help="where (OUT/record.tar.gz by default)")
    there.add_argument("--numbers", nargs="+", help="only these parts of chapter2.accelerator")
    there.add_argument("--claims-page", help="only this page's claims (all by default)")
    there.add_argument("--training", nargs="+", help="only these sections of the training")
    page = steps.add_parser("page", help="(run's own) one page's cells, past failures")
    page.add_argument("cells", type=Path)
    page.add_argument("failed", type=Path)
    back = steps.add_parser("unpack", help="add a recorded archive to a run's folder")
    back.add_argument("archive", type=Path)
    back.add_argument("folder", type=Path)
    back.add_argument("--again", nargs="+", choices=list(PART_FILES), help="parts recorded anew")
    back.add_argument("--sections-again", nargs="+", help="sections recorded anew, old ones kept")
    said = steps.add_parser("report", help="where a recorded run differs from the book")
    said.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.step == "prepare":
        prepare(args.work, args.pages)
    elif args.step == "run":
        work = Path(__file__).resolve().parent
        record = run(
            work,
            args.out,
            args.part,
            args.quick,
            args.timeout,
            args.jobs,
            args.archive,
            args.numbers,
            args.claims_page,
            args.training,
        )
        print(json.dumps(record, indent=2))
    elif args.step == "page":
        cells = json.loads(args.cells.read_text())["cells"]
        failed = [c.to_dict() for c in run_cells(args.cells.stem, cells)]
        args.failed.write_text(json.dumps(failed) + "\n")
    elif args.step == "unpack":
        found = unpack(args.archive, args.folder, args.again, args.sections_again)
        print(json.dumps(dataclasses.asdict(found), indent=2))
    if args.step in ("unpack", "report"):
        print("\n".join(differences(args.folder)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
