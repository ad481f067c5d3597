"""A run's result key: the same key means the same computation, here or on another machine.

The key is the sha256 of the run's *key parts*, everything that can change its R and nothing else:

* ``config``: the canonical configuration (components with their parameters, seed, base metrics and
  their parameters, data view, threshold policy), without display labels and without where the data
  lies (``data_dir``);
* ``data``: the sha256 of every data file the run read (generated data has none: its generator's
  parameters are in ``config``);
* ``numbers``: clad's numbers-version (:data:`clad._version.NUMBERS_VERSION`), not its release;
* ``metrics``: each base metric's own ``version`` (:class:`clad.metrics.base.BaseMetric`);
* ``libraries``: the versions of the libraries that compute scores, cut by :data:`LIBRARY_POLICY`
  (torch only for a run whose detector or strategy is a PyTorch one, see :func:`uses_torch`);
* ``code``: the fingerprint of each plug-in named by import path (detector, strategy, scenario,
  loader, base metric): its distribution's version, else its file's sha256.

``--jobs``, the executor, the order runs are computed in, the machine and clad's release are not
in it. A finished run records its key and parts in ``RunResult.result_key`` (computed from what the
run itself recorded: its inputs and library versions); :func:`local_parts` recomputes the parts of
a configuration here, and :func:`differences` says which part two sets of parts disagree on. The
``run_id`` is left as it is: it names a run in its results folder (resume, retire), the result
key says whether two runs anywhere are one computation.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Any, Mapping

from .._version import NUMBERS_VERSION
from ..results.record import RunResult, versions
from .config import RunConfig, canonical
from .identity import code_inputs, module_fingerprint

__all__ = [
    "LIBRARY_POLICY",
    "LOCATION_PARAMS",
    "KEY_FORMAT",
    "cut_version",
    "canonical_config",
    "key_of",
    "recorded_parts",
    "local_inputs",
    "local_parts",
    "with_result_key",
    "differences",
    "uses_torch",
    "r_digest",
]

#: the version of the key's recipe (raised when what the parts hold changes)
KEY_FORMAT = 1

#: how much of each score-computing library's version enters the key: ``"exact"`` (the whole
#: version, local build tag included: ``2.3.1+cpu``), ``"minor"`` (``major.minor``: patch releases
#: are taken to keep numbers) or ``"major"``. scikit-learn and PyOD compute the scores and break
#: ties differently between patch releases, so they are exact; numpy's patch releases keep results.
LIBRARY_POLICY: Mapping[str, str] = {
    "numpy": "minor",
    "scikit-learn": "exact",
    "pyod": "exact",
    "torch": "exact",
}

_IMPORTS_TORCH = re.compile(r"^\s*(import torch\b|from torch\b)", re.MULTILINE)


def cut_version(version: str | None, policy: str) -> str | None:
    """The part of ``version`` that ``policy`` keeps.

    >>> cut_version("1.5.2", "exact"), cut_version("1.5.2", "minor"), cut_version("2.3.1+cpu", "major")
    ('1.5.2', '1.5', '2')
    >>> cut_version(None, "minor") is None
    True
    """
    if version is None or policy == "exact":
        return version
    numbers = version.split("+")[0].split(".")
    return ".".join(numbers[:2] if policy == "minor" else numbers[:1])


#: parameters that say where data lies, not what it is (its bytes are in the key by sha256)
LOCATION_PARAMS = frozenset({"data_dir"})


def _without_locations(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_locations(v) for k, v in value.items() if k not in LOCATION_PARAMS}
    if isinstance(value, list):
        return [_without_locations(v) for v in value]
    return value


def canonical_config(config: Mapping) -> dict:
    """A run's configuration (``RunResult.config``) without its display labels and without where
    its data lies (``data_dir``, at any depth of the dataset's parameters: the data's bytes are in
    the key by their sha256, so the same files elsewhere are the same computation).

    >>> canonical_config({"detector": {"name": "lof", "params": {}, "label": "LOF"}, "seed": 1,
    ...                   "dataset": {"name": "adbench", "params": {"file": "a.npz", "data_dir": "/d"}}})
    {'detector': {'name': 'lof', 'params': {}}, 'seed': 1, 'dataset': {'name': 'adbench', 'params': {'file': 'a.npz'}}}
    """
    out = {
        k: (
            {n: x for n, x in v.items() if n != "label"}
            if isinstance(v, Mapping) and "name" in v
            else v
        )
        for k, v in config.items()
    }
    if isinstance(out.get("dataset"), Mapping):
        out["dataset"] = _without_locations(out["dataset"])
    return out


def key_of(parts: Mapping) -> str:
    """The result key of a run's parts: 32 hex digits of their canonical JSON's sha256."""
    return hashlib.sha256(canonical({"result_key": KEY_FORMAT, **parts}).encode()).hexdigest()[:32]


@functools.lru_cache(maxsize=None)
def _module_imports_torch(module: str) -> bool:
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.origin or not spec.has_location or not spec.origin.endswith(".py"):
        return False
    with open(spec.origin, encoding="utf-8", errors="replace") as f:
        return bool(_IMPORTS_TORCH.search(f.read()))


def _component_modules(kind: str, name: str) -> list[str]:
    """The modules that define a component's class and the classes it builds on (a registered
    name or a ``module:Name`` path; none when it cannot be resolved here)."""
    import importlib

    from ..detectors import DETECTORS
    from ..strategies import STRATEGIES

    module, sep, attr = name.partition(":")
    try:
        if sep:
            cls = getattr(importlib.import_module(module), attr)
        else:
            registry = DETECTORS if kind == "detector" else STRATEGIES
            if name not in registry:
                return []
            cls = registry.resolve(name)
    except Exception:  # noqa: BLE001 - a component that does not resolve here: the run says why
        return [module] if sep else []
    return [c.__module__ for c in getattr(cls, "__mro__", (cls,)) if c.__module__ != "builtins"]


def uses_torch(config: Mapping) -> bool:
    """Whether a run's detector or strategy is a PyTorch one: a module defining its class or a class
    it builds on imports torch."""
    for kind in ("detector", "strategy"):
        name = (config.get(kind) or {}).get("name")
        modules = _component_modules(kind, name) if isinstance(name, str) else []
        if any(_module_imports_torch(m) for m in modules):
            return True
    return False


def _metric_parts(config: Mapping) -> tuple[dict, dict]:
    """``({base metric: version}, {"metric MODULE": fingerprint})`` of a configuration's base metrics
    (version None where this process cannot resolve the metric)."""
    from ..metrics.base import find_base_metric

    out, code = {}, {}
    for name in config.get("base_metrics") or ():
        metric = find_base_metric(name)
        out[name] = None if metric is None else metric.version
        module, sep, _ = name.partition(":")
        if sep and module.split(".")[0] != "clad":
            code[f"code {module}"] = module_fingerprint(module)
    return out, code


def _parts(config: Mapping, inputs: Mapping[str, str], libraries: Mapping[str, str | None]) -> dict:
    metrics, metric_code = _metric_parts(config)
    torch = uses_torch(config)
    return {
        "config": canonical_config(config),
        "data": sorted(v for k, v in inputs.items() if k.startswith("data file ")),
        "numbers": NUMBERS_VERSION,
        "metrics": metrics,
        "libraries": {
            lib: cut_version(libraries.get(lib), policy)
            for lib, policy in LIBRARY_POLICY.items()
            if lib != "torch" or torch
        },
        "code": dict(
            sorted(
                {
                    **{k: v for k, v in inputs.items() if k.startswith("code ")},
                    **metric_code,
                }.items()
            )
        ),
    }


def recorded_parts(result: RunResult) -> dict:
    """The key parts of a finished run from what it recorded (its inputs, its library versions)."""
    return _parts(result.config, result.inputs, result.versions)


def local_inputs(config: Mapping) -> dict[str, str]:
    """The inputs a run of ``config`` would record here now: the data files it would read here (the
    dataset is loaded) and its plug-ins' code (see ``RunResult.inputs``)."""
    from .run import data_inputs

    cfg = RunConfig.from_dict(dict(config))
    return {**data_inputs(cfg), **code_inputs(cfg)}


def local_parts(config: Mapping, inputs: Mapping[str, str] | None = None) -> dict:
    """The key parts a run of ``config`` would have if it were computed here now: the data files it
    would read here, this installation's libraries and plug-in code (``inputs``: its
    :func:`local_inputs`, when already known)."""
    return _parts(config, local_inputs(config) if inputs is None else inputs, versions())


def with_result_key(result: RunResult) -> RunResult:
    """``result`` with its ``result_key`` (``{"key": ..., "parts": {...}}``, the parts without the
    configuration, which the record holds); a failed run has none."""
    import dataclasses

    if not result.ok or not result.config:
        return result
    parts = recorded_parts(result)
    stored = {k: v for k, v in parts.items() if k != "config"}
    return dataclasses.replace(result, result_key={"key": key_of(parts), "parts": stored})


def differences(theirs: Mapping, ours: Mapping) -> list[str]:
    """What two runs' key parts disagree on, each as ``"PART: THEIRS -> OURS"`` (data first).

    >>> differences({"numbers": 1, "data": ["ab"]}, {"numbers": 2, "data": ["ab"]})
    ['numbers-version: 1 -> 2']
    """
    names = {
        "data": "data bytes",
        "numbers": "numbers-version",
        "metrics": "base metric version",
        "libraries": "library version",
        "code": "plug-in code",
        "config": "configuration",
    }
    out = []
    for part, label in names.items():
        a, b = theirs.get(part), ours.get(part)
        if a == b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            for k in sorted(set(a) | set(b)):
                if a.get(k) != b.get(k):
                    out.append(f"{label}: {k} {_said(a.get(k))} -> {_said(b.get(k))}")
        else:
            out.append(f"{label}: {_said(a)} -> {_said(b)}")
    return out


def _said(v: Any) -> str:
    text = "missing" if v is None else ", ".join(v) if isinstance(v, list) else str(v)
    return text if len(text) <= 40 else text[:39] + "…"


def r_digest(results) -> str:
    """The sha256 of the R matrices of ``results`` (finished runs, in the order of their labels and
    seed; every value as its exact hexadecimal float): :data:`clad._version.NUMBERS_DIGEST` holds
    the quickstart's, which changes only with a change of ``NUMBERS_VERSION``."""
    import json

    def labels(r) -> list:
        return [r.dataset, r.scenario, r.strategy, r.detector, r.seed]

    rows = [
        [
            *labels(r),
            {m: [[float(v).hex() for v in row] for row in R] for m, R in sorted(r.R.items())},
        ]
        for r in sorted((r for r in results if r.ok), key=lambda r: tuple(labels(r)))
    ]
    return hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest()
