"""Lighthouse (npm's `lighthouse`, driving Debian's Chromium) over every reader page of a built
book, served as a static host serves it (tools/static_host.py): its mobile profile, each page
several times in turns, the median of each number kept with every run's.

    python tools/lighthouse.py HTML OUT.json --lighthouse BIN [--runs 3] [PAGE ...]

`nox -s lighthouse` installs Lighthouse and runs this; `nox -s record` keeps OUT.json in
data/benchmarks/, and MAINTAINING.md shows it as `markdown` writes it. Exit status 1 when a
page missed a target (the record is written all the same)."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml
from static_host import serving

from chapter2.environment import cpu_model

COMMAND = "nox -s lighthouse"
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]
# The targets of issue #69: what a phone's first view of a reader page needs.
TARGETS = {"performance": 0.9, "lcp_ms": 2500, "tbt_ms": 200}
WHOLE = ["accessibility", "best-practices", "seo"]  # each scores 1.0
HEADLESS = "--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage"


def reader_pages(docs: Path) -> list[str]:
    """The pages of `docs` in the reader's contents: all but the orphans (the maintainers'
    pages, which the overview and the footer link)."""
    pages = []
    for page in sorted(docs.glob("*.md")):
        text = page.read_text()
        front = yaml.safe_load(text.split("---")[1]) if text.startswith("---") else {}
        if not front.get("orphan"):
            pages.append(page.stem)
    return pages


def numbers(report: dict) -> dict:
    """What a run of Lighthouse measured (its JSON report): each category's score, the
    largest contentful paint and total blocking time (ms), the bytes transferred in all and
    of script."""
    audits = report["audits"]
    sizes = {
        i["resourceType"]: i["transferSize"] for i in audits["resource-summary"]["details"]["items"]
    }
    return {
        **{name: report["categories"][name]["score"] for name in CATEGORIES},
        "lcp_ms": round(audits["largest-contentful-paint"]["numericValue"]),
        "tbt_ms": round(audits["total-blocking-time"]["numericValue"]),
        "transfer_bytes": round(audits["total-byte-weight"]["numericValue"]),
        "script_bytes": sizes.get("script", 0),
        "font_bytes": sizes.get("font", 0),
        "benchmark_index": report["environment"]["benchmarkIndex"],
    }


def median(runs: list[dict]) -> dict:
    """Each number's median over the runs (a score's too)."""
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def missed(page: dict) -> list[str]:
    """The targets a page's medians miss; a category other than performance must score 1.0
    in every run."""
    m = page["median"]
    found = [f"performance {m['performance']}"] if m["performance"] < TARGETS["performance"] else []
    found += [f"{key} {m[key]}" for key in ("lcp_ms", "tbt_ms") if m[key] > TARGETS[key]]
    found += [f"{c} {r[c]}" for r in page["runs"] for c in WHOLE if r[c] < 1]
    return found


def run_once(lighthouse: str, url: str) -> dict:
    """One Lighthouse run of the page at `url`: its JSON report."""
    command = [lighthouse, url, "--output=json", "--output-path=stdout", "--quiet"]
    command += [f"--only-categories={','.join(CATEGORIES)}", f"--chrome-flags={HEADLESS}"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def measure(html: Path, pages: list[str], lighthouse: str, runs: int) -> tuple[dict, dict]:
    """Every page run `runs` times, in turns (a slow minute of the machine falls on every
    page alike): each page's runs, and the last report's facts of the run."""
    measured: dict[str, list[dict]] = {page: [] for page in pages}
    with serving(html) as site:
        for _ in range(runs):
            for page in pages:
                report = run_once(lighthouse, f"{site}/{page}.html")
                measured[page].append(numbers(report))
                got = measured[page][-1]
                print(f"{page}: {got['performance']} LCP {got['lcp_ms']} ms TBT {got['tbt_ms']} ms")
    about = {
        "lighthouse": report["lighthouseVersion"],
        "form_factor": report["configSettings"]["formFactor"],
        "throttling": report["configSettings"]["throttlingMethod"],
    }
    return measured, about


def browser() -> str:
    """The Chromium that Lighthouse drives ($CHROME_PATH), as it names itself (the user agent
    it sends names a reduced version)."""
    said = subprocess.run(
        [os.environ["CHROME_PATH"], "--version"], capture_output=True, text=True, check=True
    )
    return said.stdout.splitlines()[0].strip()


def markdown(record: dict) -> str:
    """The record as MAINTAINING.md shows it: a row a page (medians), then how it was run."""
    rows = [
        "| page | performance | LCP | TBT | transferred | accessibility | best practices | SEO |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for page, result in record["pages"].items():
        m = result["median"]
        rows.append(
            f"| {page} | {m['performance']:.2f} | {m['lcp_ms'] / 1000:.1f} s | "
            f"{m['tbt_ms']:.0f} ms | {m['transfer_bytes'] / 1024:,.0f} KiB | "
            f"{m['accessibility']:.2f} | {m['best-practices']:.2f} | {m['seo']:.2f} |"
        )
    missing = [
        f"{page}: {', '.join(r['missed'])}" for page, r in record["pages"].items() if r["missed"]
    ]
    how = (
        f"Medians of {record['runs']} runs a page, in turns: `{record['command']}`, Lighthouse "
        f"{record['lighthouse']} ({record['form_factor']}, {record['throttling']} throttling) "
        f"in {record['browser']}, the site served gzip-compressed from localhost, on "
        f"{record['cores']} cores ({record['cpu']}; benchmark index "
        f"{record['benchmark_index']:.0f}), recorded {record['recorded']}."
    )
    verdict = "Every target met." if not missing else "Missed: " + "; ".join(missing) + "."
    rows += ["", f"{how} {verdict}"]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path, help="the built book (docs/_build/html)")
    parser.add_argument("out", type=Path, help="the JSON record to write")
    parser.add_argument("--lighthouse", required=True, help="the lighthouse command")
    parser.add_argument("--runs", type=int, default=3, help="runs a page (at least 3)")
    parser.add_argument("pages", nargs="*", help="pages (default: every reader page)")
    args = parser.parse_intermixed_args(argv)
    pages = args.pages or reader_pages(Path(__file__).parents[1] / "docs")
    measured, about = measure(args.html, pages, args.lighthouse, args.runs)
    record = {
        "command": COMMAND,
        **about,
        "browser": browser(),
        "runs": args.runs,
        "cores": os.cpu_count(),
        "cpu": cpu_model(),
        "benchmark_index": statistics.median(
            r["benchmark_index"] for rs in measured.values() for r in rs
        ),
        "recorded": time.strftime("%Y-%m-%d"),
        "targets": TARGETS,
        "pages": {},
    }
    for page, runs in measured.items():
        result = {"median": median(runs), "runs": runs}
        record["pages"][page] = result | {"missed": missed(result)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(markdown(record))
    return 1 if any(r["missed"] for r in record["pages"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
