"""The claims of the page `recompilation` fail when JAX behaves otherwise."""

import contextlib
import functools
import json
import tempfile
from types import SimpleNamespace

import jax
from jax import lax

from breakers.jaxprs import weak_types_made_strong
from breakers.shared import config_option
from chapter2.claims.pages import recompilation as recompilation_claims

REAL_JIT = jax.jit


def static_argnums_ignored(mp):
    """A jit that ignores static_argnums (in both its call forms)."""

    def jit(fun=None, **kwargs):
        kwargs.pop("static_argnums", None)
        return REAL_JIT(fun, **kwargs) if fun is not None else lambda f: REAL_JIT(f, **kwargs)

    mp.setattr(jax, "jit", jit)


def cond_as_python_if(mp):
    """A lax.cond that branches in Python, as an if statement would."""
    mp.setattr(lax, "cond", lambda pred, t, f, *ops: t(*ops) if pred else f(*ops))


def cache_per_wrapper(mp):
    """A jit whose cache belongs to each wrapper: jax.jit(base) twice compiles twice."""

    def jit(f, **kw):
        fresh = functools.wraps(f)(lambda *a, **k: f(*a, **k))  # noqa: PLW0108 - a new wrapper
        return REAL_JIT(fresh, **kw)

    mp.setattr(jax, "jit", jit)


def trace_every_call(mp):
    """A jit that traces its function again on every call, so it sees every global afresh."""

    def jit(f, **kw):
        return lambda *a: REAL_JIT(lambda *b: f(*b), **kw)(*a)  # noqa: PLW0108 - traced anew

    mp.setattr(jax, "jit", jit)


def misses_unexplained(mp):
    """A JAX without cache-miss explanations."""
    mp.setattr(jax, "explain_cache_misses", lambda on=True: contextlib.nullcontext())


def caches_not_shared(mp):
    """Processes that do not find each other's cache entries."""
    real = recompilation_claims.run_probe

    def run_probe(name, folder, **kwargs):
        return real(name, tempfile.mkdtemp(prefix="other_cache_"), **kwargs)

    mp.setattr(recompilation_claims, "run_probe", run_probe)


def cache_follows_the_setting(mp):
    """A JAX that caches every compilation, and in the folder set at the time (as if the folder
    were read at each compilation, and the first one waited for it)."""
    real = recompilation_claims.run_probe

    def run_probe(name, *args, **kwargs):
        found = json.loads(real(name, *args, **kwargs))
        found["first folder"] = sorted(["before", "after_setting"])
        found["second folder"] = sorted(["after_changing", "after_reset"])
        return json.dumps(found)

    mp.setattr(recompilation_claims, "run_probe", run_probe)


def precision_outside_the_cache_key(mp):
    """A jax.default_matmul_precision that changes nothing JAX traces with."""
    mp.setattr(jax, "default_matmul_precision", lambda precision: contextlib.nullcontext())


def static_lists_accepted(mp):
    """A jit that takes a list as a static argument, turning it into a tuple."""
    real = jax.jit

    def jit(f, **kwargs):
        jitted, static = real(f, **kwargs), kwargs.get("static_argnums", ())
        static = (static,) if isinstance(static, int) else tuple(static)

        def call(*args):
            args = [
                tuple(a) if i in static and isinstance(a, list) else a for i, a in enumerate(args)
            ]
            return jitted(*args)

        return call

    mp.setattr(jax, "jit", jit)


def dtypes_cast_to_float32(mp):
    """A jit that casts every array argument to float32: a new dtype hits the cache."""

    def jit(f, **kw):
        jitted = REAL_JIT(f, **kw)
        return lambda *a: jitted(*(x.astype("float32") if hasattr(x, "astype") else x for x in a))

    mp.setattr(jax, "jit", jit)


def x64_never_on(mp):
    """A JAX whose jax_enable_x64 context changes nothing."""
    mp.setattr(jax, "enable_x64", lambda on=True: contextlib.nullcontext())


def partials_equal_by_contents(mp):
    """A functools.partial that compares equal, and hashes alike, by its contents."""

    class Partial(functools.partial):
        def __eq__(self, other):
            return isinstance(other, functools.partial) and (
                (self.func, self.args, self.keywords) == (other.func, other.args, other.keywords)
            )

        def __hash__(self):
            return hash((self.func, self.args, tuple(sorted(self.keywords.items()))))

    mp.setattr(recompilation_claims, "functools", SimpleNamespace(partial=Partial))


BREAKERS = {
    "static-arguments-hashed": static_lists_accepted,
    "tracing-context-recompiles": precision_outside_the_cache_key,
    "static-argnums-decorator-factory": static_argnums_ignored,
    "x32-weak-type-cache-keys": config_option("jax_enable_x64", True),
    "lax-cond-one-compilation": cond_as_python_if,
    "function-identity-cache": cache_per_wrapper,
    "global-change-not-retraced": trace_every_call,
    "explain-cache-misses": misses_unexplained,
    "persistent-cache-defaults": config_option("jax_persistent_cache_min_compile_time_secs", 0.0),
    "persistent-cache-across-processes": caches_not_shared,
    "cache-folder-read-at-first-use": cache_follows_the_setting,
}
PARTS = {
    "global-change-not-retraced": {
        "a new dtype": dtypes_cast_to_float32,
        "a new static value, 2": static_argnums_ignored,
    },
    "x32-weak-type-cache-keys": {
        "the float64 array's result": config_option("jax_enable_x64", True),
        "the scalars' types": weak_types_made_strong,
        "with jax_enable_x64 on, compilations after float32 then float64": x64_never_on,
    },
    "function-identity-cache": {"equal partials compare equal": partials_equal_by_contents},
}
