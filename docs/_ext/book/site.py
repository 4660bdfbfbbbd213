"""The book as each JAX release runs it: one site, the baseline at its root and a folder per
other release, with a version switcher. A drift build's own page and banner are
`book.drift_page`'s.
"""

import json
import os
import shutil
import sys
from pathlib import Path
from urllib.parse import urlparse

from book import SERIAL
from chapter2.records import SitePlan
from chapter2.releases import release_key


def release_folder(version: str) -> str:
    """The folder of the site that holds the book as JAX `version` built it."""
    return f"jax-{version}"


def page_in_site(page: str, release: str, this: str, versions: list[str]) -> str:
    """The link from a page of the build of JAX `this` to `page` as JAX `release` built it, in
    a site of `versions` (the baseline first, at the site's root; each other in its folder)."""
    up = "" if this == versions[0] else "../"
    return f"{up}{'' if release == versions[0] else release_folder(release) + '/'}{page}.html"


def assemble(site: Path, builds: dict[str, Path], baseline: str, root: str = "/") -> None:
    """One site: the baseline's build at its root, each other release's in `jax-<version>/`,
    and the switcher's JSON, its links starting at the site's path on its server (`root`)."""
    if site.exists():
        shutil.rmtree(site)
    shutil.copytree(builds[baseline], site)
    others = sorted((v for v in builds if v != baseline), key=release_key, reverse=True)
    for version in others:
        shutil.copytree(builds[version], site / release_folder(version))
    root = root if root.endswith("/") else f"{root}/"
    switcher = [
        {"name": f"JAX {baseline} (baseline)", "version": baseline, "url": root, "preferred": True},
        *({"name": f"JAX {v}", "version": v, "url": f"{root}{release_folder(v)}/"} for v in others),
    ]
    (site / "switcher.json").write_text(json.dumps(switcher, indent=2) + "\n")


def setup(app):
    app.add_config_value("book_site_versions", [], "env", types=[list])
    return SERIAL


def main(argv: list[str] | None = None) -> int:
    """Arguments SITE PLAN: assemble the builds the site plan (`chapter2.records.SitePlan`, as
    nox -s site writes it) names into SITE; the site's address (BOOK_BASEURL) gives the path
    its switcher's links start at."""
    site, plan_path = sys.argv[1:] if argv is None else argv
    plan = SitePlan.load(plan_path)
    assemble(
        Path(site), plan.builds, plan.baseline, urlparse(os.environ.get("BOOK_BASEURL", "")).path
    )
    return 0
