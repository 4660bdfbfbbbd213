"""Walking a jaxpr and the sub-jaxprs that higher-order primitives hide in their params."""

from collections import Counter
from collections.abc import Iterator

from chapter2.compat import jaxprs_in_params


def walk_eqns(jaxpr, depth: int = 0) -> Iterator[tuple[int, object]]:
    """Yield `(depth, eqn)` for every equation of `jaxpr` and, recursively, of its sub-jaxprs."""
    for eqn in jaxpr.eqns:
        yield depth, eqn
        for sub in jaxprs_in_params(eqn.params):
            yield from walk_eqns(sub, depth + 1)


def count_primitives(jaxpr) -> Counter:
    """How often each primitive occurs in `jaxpr`, sub-jaxprs included."""
    return Counter(eqn.primitive.name for _, eqn in walk_eqns(jaxpr))


def function_name(eqn) -> str | None:
    """The function behind a `jit` or `custom_jvp_call` equation, as the jaxpr printer names
    it (a `custom_jvp_call` has no `name` parameter: its call_jaxpr's debug info has it)."""
    if eqn.primitive.name == "jit":
        return eqn.params["name"]
    if eqn.primitive.name == "custom_jvp_call":
        return eqn.params["call_jaxpr"].debug_info.func_name
    return None
