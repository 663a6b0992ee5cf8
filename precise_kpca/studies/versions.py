"""Code versions of the computing routes: what the results store compares before it reuses a point.

A stored point is reusable only if the code that computed it is the code that would compute it now. The version of
a route is the sha256 of the source text of every module it can run: the route's own module and, transitively, the
modules defining the names it imports from ``precise_kpca`` (resolved to the defining module, so a package's
``__init__`` re-exports do not pull in the whole package), plus the modules every route goes through (the route
table, the engines, the Measurement builders). Any edit to that code — a fix, a new bound — makes the stored points
of that route stale; an edit elsewhere (another route, the CLI, the plots) does not.

Hand-written because the reuse rule needs the import closure inside this package only, and at the granularity of
defining modules; ``modulefinder`` follows every import and stops at packages.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
from functools import lru_cache

PACKAGE = "precise_kpca"
COMMON = ("precise_kpca.measures.certified", "precise_kpca.measures.routes", "precise_kpca.measures.engines",
          "precise_kpca.measures.results", "precise_kpca.measures.measurement", "precise_kpca.studies.curves")
"""Modules every route's points pass through (hashed as they are; their imports are not followed: the engines
module imports every engine)."""
ENGINE_MODULES = {
    "arb-ball": "precise_kpca.measures.metric",
    "structured-enclosure": "precise_kpca.measures.structured_enclosed",
    "binary128-enclosure": "precise_kpca.measures.enclosed",
    "float64-enclosure": "precise_kpca.measures.enclosed",
    "refined-enclosure": "precise_kpca.measures.refined_enclosed",
    "frobenius-enclosure": "precise_kpca.measures.cka_enclosed",
    "agreement": "precise_kpca.measures.agreement",
    "naive": "precise_kpca.measures.agreement",
}
"""The module holding each engine's algorithm (:data:`precise_kpca.measures.engines.ENGINES`)."""
ALL_ROUTES = "precise_kpca.measures.engines"
"""Entry of a point no single route computed (undetermined after every route was tried) or of an unknown engine."""


def route_version(engine: str | None) -> str:
    """``"<engine>@<16 hex digits>"``: the version of the code that computes points of ``engine``.

    Parameters
    ----------
    engine : str or None
        An engine name of :data:`ENGINE_MODULES`; None or an unknown name means every route.
    """
    entry = ENGINE_MODULES.get(engine or "", ALL_ROUTES)
    return f"{engine or 'routes'}@{_digest(entry)}"


def engine_of(route_text: str) -> str | None:
    """The engine name at the start of a stored route text (``str(Route)``), None for an empty one."""
    return route_text.split(" ", 1)[0] if route_text else None


@lru_cache(maxsize=None)
def _digest(entry: str) -> str:
    modules = sorted(closure(entry) | set(COMMON))
    digest = hashlib.sha256()
    for name in modules:
        digest.update(name.encode() + b"\0" + _source(name) + b"\0")
    return digest.hexdigest()[:16]


@lru_cache(maxsize=None)
def closure(entry: str) -> frozenset:
    """Every ``precise_kpca`` module the module ``entry`` depends on, itself included (see the module docstring)."""
    seen, todo = set(), [entry]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_imports(name) - seen)
    return frozenset(seen)


@lru_cache(maxsize=None)
def _source(name: str) -> bytes:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return b""
    with open(spec.origin, "rb") as handle:
        return handle.read()


_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.MULTILINE)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+(precise_kpca[\w.]*)", re.MULTILINE)


def _imports(name: str) -> set:
    """The package modules that define what ``name`` imports (a text scan of its import statements, lazy ones in
    functions included: parsing every module's syntax tree costs seconds, the scan milliseconds)."""
    text = _source(name).decode()
    package = name if importlib.util.find_spec(name).submodule_search_locations else name.rpartition(".")[0]
    found = set(_IMPORT.findall(text))
    for base, names in _FROM.findall(text):
        base = importlib.util.resolve_name(base, package) if base.startswith(".") else base
        if base.startswith(PACKAGE):
            found |= {_defining_module(base, alias.split(" as ")[0].strip())
                      for alias in names.strip("()").replace("\n", " ").split(",") if alias.strip()}
    return found


def _defining_module(base: str, attribute: str) -> str:
    """The module that defines ``base.attribute``: a submodule, the defining module of a re-export, or ``base``."""
    candidate = f"{base}.{attribute}"
    if importlib.util.find_spec(base).submodule_search_locations and importlib.util.find_spec(candidate):
        return candidate
    value = getattr(importlib.import_module(base), attribute, None)
    defined = getattr(value, "__module__", None)
    return defined if isinstance(defined, str) and defined.startswith(PACKAGE) else base


__all__ = ["ENGINE_MODULES", "closure", "engine_of", "route_version"]
