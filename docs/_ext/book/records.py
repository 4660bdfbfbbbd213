"""The book layer's typed records, each a dataclass with one JSON load and dump. It imports
neither Sphinx nor docutils: a tool, a test or `docs/conf.py` reads a record through it."""

import dataclasses
import json
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class SitePlan:
    """What `nox -s site` builds and assembles: the baseline JAX's build at the site's root,
    each other release's in a folder of its own. `builds` maps a release to its HTML folder;
    `nox -s site` writes the file, each of its builds and the assembly read it."""

    baseline: str
    builds: dict[str, Path]

    def __post_init__(self) -> None:
        if self.baseline not in self.builds:
            msg = f"the site plan has no build of the baseline JAX {self.baseline}"
            raise ValueError(msg)

    @property
    def versions(self) -> list[str]:
        """The site's releases, the baseline first, the others as the plan lists them."""
        return [self.baseline, *(v for v in self.builds if v != self.baseline)]

    @classmethod
    def load(cls, path: str | Path) -> "SitePlan":
        found = json.loads(Path(path).read_text())
        return cls(found["baseline"], {v: Path(p) for v, p in found["builds"].items()})

    def dump(self, path: str | Path) -> None:
        builds = {v: str(p) for v, p in self.builds.items()}
        Path(path).write_text(json.dumps({"baseline": self.baseline, "builds": builds}) + "\n")
