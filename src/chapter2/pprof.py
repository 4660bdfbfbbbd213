"""Reading a device memory profile without the pprof tool: which live buffers it records, how
many bytes each holds, and the Python functions that allocated it.

`jax.profiler.device_memory_profile()` returns a gzip-compressed pprof protobuf
(github.com/google/pprof, proto/profile.proto). Only the few fields needed here are decoded:
the samples, their values and `kind` label, and each sample's stack of function names.
"""

import gzip
from collections.abc import Iterator
from dataclasses import dataclass


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of each field of one protobuf message: varints as int, the
    rest as bytes."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 2:
            size, at = _varint(data, at)
            value, at = data[at : at + size], at + size
        else:  # fixed 64 or 32 bits: not used by the fields read here
            size = 8 if wire == 1 else 4
            value, at = data[at : at + size], at + size
        yield number, value


def _packed(value: int | bytes) -> list[int]:
    """A repeated varint field, packed (bytes) or not (one int)."""
    if isinstance(value, int):
        return [value]
    numbers, at = [], 0
    while at < len(value):
        number, at = _varint(value, at)
        numbers.append(number)
    return numbers


@dataclass(frozen=True)
class Allocation:
    """One sample of the profile: what kind of memory, how much, and who allocated it."""

    kind: str  # "buffer" (an array) or "executable" (a compiled program)
    count: int
    bytes: int
    stack: tuple[str, ...]  # function names, innermost first


def read_profile(data: bytes) -> list[Allocation]:
    """Every sample of a gzip-compressed pprof profile such as device_memory_profile()."""
    fields = list(_fields(gzip.decompress(data)))
    strings = [v.decode() for n, v in fields if n == 6]
    functions = {}
    for message in (v for n, v in fields if n == 5):
        function = dict(_fields(message))
        functions[function[1]] = strings[function.get(2, 0)]
    locations = {}
    for message in (v for n, v in fields if n == 4):
        location = list(_fields(message))
        ids = [v for n, v in location if n == 1]
        lines = [dict(_fields(v)) for n, v in location if n == 4]
        locations[ids[0]] = [functions.get(line.get(1), "?") for line in lines]
    samples = []
    for message in (v for n, v in fields if n == 2):
        sample = list(_fields(message))
        ids = [i for n, v in sample if n == 1 for i in _packed(v)]
        count, size = [i for n, v in sample if n == 2 for i in _packed(v)]
        labels = [dict(_fields(v)) for n, v in sample if n == 3]
        kind = next((strings[la[2]] for la in labels if strings[la.get(1, 0)] == "kind"), "")
        stack = tuple(name for i in ids for name in locations.get(i, []))
        samples.append(Allocation(kind, count, size, stack))
    return samples


def buffer_bytes(profile: list[Allocation]) -> int:
    """The bytes of every live buffer (arrays, not compiled programs) the profile records."""
    return sum(a.bytes for a in profile if a.kind == "buffer")
