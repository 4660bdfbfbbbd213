"""Version-tolerant access to JAX APIs that moved between releases.

A claim is about what JAX does, not about where an API lives. A check reaches a moved API
through these accessors, so under a release where the behaviour existed behind another name
the claim is checked, not reported as drifted.
"""

import jax

from chapter2.cannot_check import CannotCheck


def jaxprs_in_params(params) -> list:
    """The sub-jaxprs an equation's params hold (`jax.extend.core.jaxprs_in_params`; older JAX
    had it only as `jax.core.jaxprs_in_params`)."""
    import jax.extend as jex  # noqa: PLC0415 - jax.extend is imported on first use

    found = getattr(jex.core, "jaxprs_in_params", None) or jax.core.jaxprs_in_params
    return list(found(params))


def constvars(jaxpr) -> list:
    """The constvars of what `make_jaxpr` returned: on the object itself, or on the inner
    `.jaxpr` of the ClosedJaxpr that older JAX returned."""
    return list(jaxpr.constvars if hasattr(jaxpr, "constvars") else jaxpr.jaxpr.constvars)


def cost_analysis(compiled) -> dict:
    """`compiled.cost_analysis()` as a dict: older JAX returned a list holding one dict."""
    costs = compiled.cost_analysis()
    return costs[0] if isinstance(costs, list) else costs


def major_to_minor(thing) -> tuple[int, ...]:
    """The layout, major to minor dimension, of a jax.Array or of a format a compiled function
    reports, wherever this JAX keeps it (`.format.layout`; earlier `.format.device_local_layout`
    or `.layout.device_local_layout`)."""
    if isinstance(thing, jax.Array):
        thing = thing.format if hasattr(type(thing), "format") else thing.layout
    for name in ("layout", "device_local_layout"):
        found = getattr(thing, name, None)
        if hasattr(found, "major_to_minor"):
            return tuple(found.major_to_minor)
    msg = f"no layout with major_to_minor on {type(thing).__name__}"
    raise AttributeError(msg)


def input_output_formats(compiled) -> tuple[tuple, object]:
    """The formats of a compiled function's positional inputs and of its output
    (`input_formats`/`output_formats`; earlier `input_layouts`/`output_layouts`)."""
    inputs = getattr(compiled, "input_formats", None) or compiled.input_layouts
    output = getattr(compiled, "output_formats", None) or compiled.output_layouts
    return inputs[0], output


def auto_format():
    """The format that leaves an array's layout to the compiler: `Format(Layout.AUTO)`;
    earlier `Format(DeviceLocalLayout.AUTO)`, first `Layout(DeviceLocalLayout.AUTO)`."""
    from jax.experimental import layout  # noqa: PLC0415 - experimental, imported on use

    if hasattr(layout.Layout, "AUTO"):
        return layout.Format(layout.Layout.AUTO)
    outer = getattr(layout, "Format", layout.Layout)
    return outer(layout.DeviceLocalLayout.AUTO)


def compile_with(lowered, options: dict):
    """`lowered.compile(options)`, or CannotCheck where this JAX cannot pass these XLA options
    to one compilation (older releases reject a list-valued option such as
    `xla_disable_hlo_passes`)."""
    try:
        return lowered.compile(options)
    except (RuntimeError, TypeError) as err:
        msg = f"this JAX cannot pass the XLA options {sorted(options)} to one compilation"
        raise CannotCheck(msg) from err
