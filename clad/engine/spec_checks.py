"""Spec-time checks of every component's values and every data file, before anything runs.

Each function returns a list of problems (strings naming the spec key, the parameter, the value
and what is allowed) rather than raising, so that a spec reports every problem at once.

* datasets: the loader's declared constraints (:func:`clad.validation.declare`), and each data file
  it names located and checksum-verified (once per file);
* strategies and scenarios: built (without a detector) and checked against their declared
  ``_parameter_constraints``;
* detectors: built, then checked against the constraints scikit-learn declares for the estimator
  (``_parameter_constraints``); a PyOD detector against those of the scikit-learn estimator it wraps.

Nothing here fits, loads or runs anything.
"""

from __future__ import annotations

import contextvars
import inspect
from typing import Any, Callable

from ..errors import CladError
from ..validation import Integral, Interval, Real, arguments, constraints_of, problems

__all__ = [
    "dataset_problems",
    "estimator_problems",
    "detector_problems",
    "strategy_problems",
    "pair_problems",
    "device_problems",
]

#: the folder of the spec file being checked (a data file beside the spec is inside a data folder)
SPEC_FOLDER: contextvars.ContextVar = contextvars.ContextVar("clad_spec_folder", default=None)

#: PyOD detector -> the scikit-learn estimator it builds in ``fit`` (whose declarations check its parameters)
PYOD_WRAPS = {
    "pyod.models.iforest:IForest": "sklearn.ensemble:IsolationForest",
    "pyod.models.lof:LOF": "sklearn.neighbors:LocalOutlierFactor",
    "pyod.models.knn:KNN": "sklearn.neighbors:NearestNeighbors",
    "pyod.models.ocsvm:OCSVM": "sklearn.svm:OneClassSVM",
}


#: what scikit-learn checks only when the estimator is fitted, declared here so that a spec checks
#: it before anything runs (by the estimator's import path; PyOD's wrappers through PYOD_WRAPS)
CHECKED_AT_FIT = {
    "sklearn.ensemble._iforest:IsolationForest": {
        "max_features": [
            Interval(Integral, 1, None, closed="left"),
            Interval(Real, 0, 1, closed="right"),
        ]
    }
}


def _first_line(exc: BaseException) -> str:
    return str(exc).strip() or type(exc).__name__


def dataset_problems(who: str, loader: Callable, params: dict, located: dict) -> list[str]:
    """The loader's declared constraints, then every data file it names (inside a data directory,
    located and verified; ``located`` remembers the files already found, so each is located and
    hashed once), then the loader's declared rules (:func:`clad.validation.declare`) and the
    datasets it wraps (``_nested_datasets``, e.g. ``windowed``), each checked the same way."""
    from ..datasets.files import locate, outside_data_dirs
    from ..errors import DataError

    args = arguments(loader, params)
    found = problems(who, args, constraints_of(loader))
    rest = getattr(loader, "_check_rest", None)
    if rest is not None and not found:
        named = inspect.signature(loader).parameters
        try:
            rest(args, {k: v for k, v in args.items() if k not in named})
        except CladError as exc:
            found.append(f"{who}: {exc}")
    if found:
        return found
    found += _nested_problems(who, loader, args, located)
    files = getattr(loader, "_data_files", None)
    try:
        named = list(files(args)) if files is not None else []
    except CladError as exc:
        return found + [f"{who}: {exc}"]
    except (TypeError, ValueError, KeyError):
        named = []  # the loader's own call reports an unusual argument
    data_dir = args.get("data_dir")
    for relpath, sha in named:
        folder = SPEC_FOLDER.get()
        outside = outside_data_dirs(relpath, data_dir, also=(folder,) if folder else ())
        if outside:
            found.append(f"{who}: data file {outside}")
            continue
        key = (str(relpath), None if data_dir is None else str(data_dir), sha)
        if key not in located:
            try:
                locate(relpath, data_dir, sha256=sha)
                located[key] = None
            except DataError as exc:
                located[key] = str(exc)
        if located[key]:
            found.append(f"{who}: " + located[key].replace("\n", "\n      "))
    rules = getattr(loader, "_data_rules", None)
    if rules is not None and not found:
        try:
            found += [f"{who}: {p}" for p in rules(args)]
        except CladError as exc:
            found.append(f"{who}: {exc}")
    return found


def _nested_problems(who: str, loader: Callable, args: dict, located: dict) -> list[str]:
    """The datasets a loader wraps (``loader._nested_datasets(args) -> [(name, params)]``): each
    name resolved as the spec's own (an import path must name a dataset loader) and checked."""
    nested = getattr(loader, "_nested_datasets", None)
    if nested is None:
        return []
    from ..datasets import DATASETS

    out = []
    for name, params in nested(args):
        try:
            inner = DATASETS.resolve(name)
        except CladError as exc:
            out.append(f"{who}.dataset: {exc}")
            continue
        if not isinstance(params, dict):
            continue  # the loader's own constraint names it
        out += dataset_problems(
            f"{who} > {name}", inner, {**DATASETS.defaults(name), **params}, located
        )
    return out


def estimator_problems(who: str, obj: Any) -> list[str]:
    """``obj``'s parameters against the constraints its class declares (clad's or scikit-learn's)."""
    if hasattr(obj, "_all_constraints"):  # clad.validation.Validated
        constraints = obj._all_constraints()
    else:
        constraints = constraints_of(type(obj))
    if not constraints or not callable(getattr(obj, "get_params", None)):
        return []
    return problems(who, obj.get_params(deep=False), constraints)


def detector_problems(who: str, obj: Any) -> list[str]:
    """A built detector's parameters: scikit-learn's declarations for a scikit-learn estimator
    (or a clad one), those of the wrapped scikit-learn estimator for a PyOD detector."""
    from ..registry import import_object

    found = estimator_problems(who, obj)
    path = f"{type(obj).__module__}:{type(obj).__qualname__}"
    if not callable(getattr(obj, "get_params", None)):
        return found
    params = obj.get_params(deep=False)
    if path in PYOD_WRAPS:
        wrapped = import_object(PYOD_WRAPS[path])
        shared = {k: v for k, v in params.items() if k in inspect.signature(wrapped).parameters}
        found += problems(who, shared, constraints_of(wrapped))
        path = f"{wrapped.__module__}:{wrapped.__qualname__}"
    at_fit = CHECKED_AT_FIT.get(path)
    if at_fit:
        found += [
            p
            for p in problems(who, {k: v for k, v in params.items() if k in at_fit}, at_fit)
            if p not in found
        ]
    return found


def strategy_problems(who: str, cls: Any, params: dict) -> list[str]:
    """Build the strategy without a detector and check its declared constraints."""
    try:
        sig = inspect.signature(cls).parameters
        needs = (
            "detector" in sig
            and sig["detector"].default is inspect.Parameter.empty
            and "detector" not in params
        )
        obj = cls(**params, **({"detector": None} if needs else {}))
    except (TypeError, ValueError) as exc:
        return [f"{who}: {_first_line(exc)}"]
    except CladError as exc:
        return [f"{who}: {exc}"]
    return estimator_problems(who, obj)


def pair_problems(pairs, detectors, registries: dict) -> list[str]:
    """Every strategy x detector pair of a grid: the strategy (built without a detector) asked
    whether it can train the detector (:meth:`clad.strategies.base.Strategy.detector_problem`,
    e.g. ``incremental`` needs a detector that learns incrementally). What a strategy asks of a
    detector is what its class can do, so one detector per name is built (a grid of 10,000
    parameter combinations builds one), and only for strategies that ask anything."""
    from ..strategies.base import Strategy

    asking = []
    seen = set()
    for _, st in pairs:
        if st.display in seen:
            continue
        seen.add(st.display)
        try:
            cls = registries["strategies"].resolve(st.name)
            if (
                getattr(cls, "detector_problem", Strategy.detector_problem)
                is Strategy.detector_problem
            ):
                continue  # asks nothing of its detector
            sig = inspect.signature(cls).parameters
            needs = "detector" in sig and "detector" not in st.params
            asking.append((st, cls(**st.params, **({"detector": None} if needs else {}))))
        except (CladError, TypeError, ValueError):
            continue  # reported with the strategy's own values
    if not asking:
        return []
    built: dict[str, Any] = {}
    for d in detectors:
        if d.name not in built:
            try:
                built[d.name] = registries["detectors"].build(d.name, d.params)
            except CladError:
                built[d.name] = None  # reported with the detector's own values
    out: list[str] = []
    for st, strategy in asking:
        said = set()
        for d in detectors:
            if built.get(d.name) is None or d.name in said:
                continue
            try:
                problem = strategy.detector_problem(built[d.name])
            except (CladError, TypeError, ValueError) as exc:
                problem = _first_line(exc)
            if problem:
                said.add(d.name)
                out.append(
                    f"strategy {st.display!r} cannot train detector {d.display!r}: {problem}; remove one of "
                    "them from the spec"
                )
    return out


def device_problems(detectors) -> list[str]:
    """The torch ``device`` of each detector component, checked against this machine before runs
    are computed here (not on a cluster, whose machines may differ): a CUDA device this machine
    lacks, or an index past its devices, is named with what it has. Imports torch only when a
    detector names a CUDA or MPS device."""
    wanted = {}
    for c in detectors:
        device = (getattr(c, "params", None) or {}).get("device")
        if isinstance(device, str) and device.startswith(("cuda", "mps")):
            wanted.setdefault(device, c.display)
    if not wanted:
        return []
    try:
        import torch
    except ImportError:
        return [
            f"detectors ({who}): device={dev!r} needs torch: pip install 'clad[torch]'"
            for dev, who in wanted.items()
        ]
    out = []
    n_cuda = torch.cuda.device_count() if torch.cuda.is_available() else 0
    for dev, who in wanted.items():
        if dev.startswith("cuda"):
            index = int(dev.split(":")[1]) if ":" in dev else 0
            if n_cuda == 0:
                out.append(
                    f"detectors ({who}): device={dev!r}, but this machine has no CUDA device (torch "
                    f'{torch.__version__} sees none); use device = "cpu", or run where a GPU is'
                )
            elif index >= n_cuda:
                out.append(
                    f"detectors ({who}): device={dev!r}, but this machine has {n_cuda} CUDA device(s) "
                    f"(cuda:0 to cuda:{n_cuda - 1})"
                )
        elif dev == "mps" and not (
            getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()
        ):
            out.append(
                f"detectors ({who}): device='mps', but this machine has no Apple MPS device; use \"cpu\""
            )
    return out
