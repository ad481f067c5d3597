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

import inspect
from typing import Any, Callable

from ..errors import CladError
from ..validation import arguments, constraints_of, problems

__all__ = ["dataset_problems", "estimator_problems", "detector_problems", "strategy_problems"]

#: PyOD detector -> the scikit-learn estimator it builds in ``fit`` (whose declarations check its parameters)
PYOD_WRAPS = {
    "pyod.models.iforest:IForest": "sklearn.ensemble:IsolationForest",
    "pyod.models.lof:LOF": "sklearn.neighbors:LocalOutlierFactor",
    "pyod.models.knn:KNN": "sklearn.neighbors:NearestNeighbors",
    "pyod.models.ocsvm:OCSVM": "sklearn.svm:OneClassSVM",
}


def _first_line(exc: BaseException) -> str:
    return str(exc).strip() or type(exc).__name__


def dataset_problems(who: str, loader: Callable, params: dict, located: dict) -> list[str]:
    """The loader's declared constraints, then every data file it names (``located`` remembers
    the files already found, so each is located and hashed once)."""
    from ..datasets.files import locate
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
    files = getattr(loader, "_data_files", None)
    if found or files is None:
        return found
    try:
        named = list(files(args))
    except CladError as exc:
        return [f"{who}: {exc}"]
    except (TypeError, ValueError, KeyError):
        return []  # the loader's own call reports an unusual argument
    data_dir = args.get("data_dir")
    for relpath, sha in named:
        key = (str(relpath), None if data_dir is None else str(data_dir), sha)
        if key not in located:
            try:
                locate(relpath, data_dir, sha256=sha)
                located[key] = None
            except DataError as exc:
                located[key] = str(exc)
        if located[key]:
            found.append(f"{who}: " + located[key].replace("\n", "\n      "))
    return found


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
    if path in PYOD_WRAPS and callable(getattr(obj, "get_params", None)):
        wrapped = import_object(PYOD_WRAPS[path])
        params = obj.get_params(deep=False)
        shared = {k: v for k, v in params.items() if k in inspect.signature(wrapped).parameters}
        found += problems(who, shared, constraints_of(wrapped))
    return found


def strategy_problems(who: str, cls: Any, params: dict) -> list[str]:
    """Build the strategy without a detector and check its declared constraints."""
    try:
        sig = inspect.signature(cls).parameters
        needs = "detector" in sig and sig["detector"].default is inspect.Parameter.empty and "detector" not in params
        obj = cls(**params, **({"detector": None} if needs else {}))
    except (TypeError, ValueError) as exc:
        return [f"{who}: {_first_line(exc)}"]
    except CladError as exc:
        return [f"{who}: {exc}"]
    return estimator_problems(who, obj)
