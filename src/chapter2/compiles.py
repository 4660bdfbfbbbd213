"""Counting the compilations JAX starts (a "Compiling ..." log record each, a persistent-cache
hit included) and collecting JAX's cache-miss explanations.

Both read JAX's own log records, so they count what JAX did, not what a timing suggests.
"""

import logging
import re
from contextlib import contextmanager

import jax

# "Compiling jit(f) with global shapes ..."; older JAX releases log "Compiling f with ...",
# and name a functools.partial "<unnamed wrapped function>".
_COMPILING = re.compile(
    r"^Compiling (?:jit\((?P<jit>[^)]*)\)|(?P<name>.+?)) with global shapes and types "
    r"(?P<sig>.*?)\. Argument mapping"
)


class _Collect(logging.Handler):
    """A handler that keeps the records it is given."""

    def __init__(self, records: list[logging.LogRecord]):
        super().__init__()
        self.records = records

    def emit(self, record):
        self.records.append(record)


@contextmanager
def jax_log_records():
    """Collect every record of the `jax` logger; JAX's own handlers stay quiet meanwhile (an
    enclosing collection goes on collecting)."""
    records: list[logging.LogRecord] = []
    logger = logging.getLogger("jax")
    quieted = [(h, h.level) for h in logger.handlers if not isinstance(h, _Collect)]
    for handler, _ in quieted:
        handler.setLevel(logging.CRITICAL)
    collect = _Collect(records)
    logger.addHandler(collect)
    try:
        yield records
    finally:
        logger.removeHandler(collect)
        for handler, level in quieted:
            handler.setLevel(level)


class CompileCounter:
    """`with CompileCounter("f") as cc: ...` then `cc.count` is how often jit(f) compiled.

    Without a name every jitted function counts. `cc.signatures` lists the argument
    types of each compilation, as JAX logged them. Both can be read inside the block too.
    """

    def __init__(self, name: str | None = None):
        self.name = name
        self._log: list[logging.LogRecord] = []

    def __enter__(self):
        self._records = jax_log_records()
        self._log = self._records.__enter__()
        self._compiles = jax.log_compiles(True)
        self._compiles.__enter__()
        return self

    def __exit__(self, *exc):
        self._compiles.__exit__(*exc)
        self._records.__exit__(*exc)
        return False

    @property
    def signatures(self) -> list[str]:
        found = []
        for record in self._log:
            match = _COMPILING.match(record.getMessage())
            if match and self.name in (None, match["jit"] or match["name"]):
                found.append(match["sig"])
        return found

    @property
    def count(self) -> int:
        return len(self.signatures)


@contextmanager
def explained_cache_misses():
    """Turn on `jax_explain_cache_misses` and yield the list of explanations JAX logs."""
    explanations: list[str] = []
    with jax_log_records() as records, jax.explain_cache_misses(True):
        try:
            yield explanations
        finally:
            explanations.extend(r.getMessage() for r in records if "CACHE MISS" in r.getMessage())
