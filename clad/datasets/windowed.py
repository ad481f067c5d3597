"""The ``windowed`` loader: a registered loader's concepts cut into sliding windows
(:mod:`clad.datasets.windows`). It builds another registered loader, so it reads the registry and is
registered by its import path (the registry's module does not import this one)."""

from __future__ import annotations

import inspect

from ..errors import DataError
from . import DATASETS, load_dataset
from ..core.concepts import ConceptDataset
from ..validation import Integral, Interval, StrOptions, arguments
from .windows import LABELS, check_window_params, window_dataset

__all__ = ["load_windowed"]


def load_windowed(
    dataset: str = "synthetic",
    params: dict | None = None,
    window: int = 16,
    stride: int = 1,
    window_label: str = "any",
    window_score: str = "max",
    random_state: int | None = None,
) -> ConceptDataset:
    """The dataset registered as ``dataset`` (built with ``params``), windowed by :func:`window_dataset`
    (``window_label`` is its ``label``, named apart from a spec entry's display ``label``;
    ``window_score`` its ``score_rule``, how a time point's score comes from its windows).

    ``random_state`` goes to the inner loader when it takes one and ``params`` does not set it. In a
    spec file::

        [[datasets]]
        name = "windowed"
        dataset = "clad_npz"                # concepts holding series in time order
        params = { file = "machines.npz" }
        window = 32
        stride = 8
        window_label = "last"
    """
    check_window_params("windowed", window, stride, window_label, window_score)
    if params is not None and not isinstance(params, dict):
        raise DataError(
            f"windowed: params={params!r}; expected a table of the inner loader's parameters"
        )
    params = dict(params or {})
    if random_state is not None and "random_state" not in params:
        try:
            takes_seed = "random_state" in inspect.signature(DATASETS.resolve(dataset)).parameters
        except (TypeError, ValueError):
            takes_seed = False
        if takes_seed:
            params["random_state"] = random_state
    return window_dataset(
        load_dataset(dataset, params),
        window=window,
        stride=stride,
        label=window_label,
        score_rule=window_score,
    )


def _windowed_nbytes(args: dict) -> int | None:
    """the inner data set's bytes x window / stride"""
    window, stride, inner = args.get("window"), args.get("stride", 1), args.get("dataset")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (window, stride)):
        return None
    loader = DATASETS.resolve(inner)
    size = getattr(loader, "_data_nbytes", None)
    if size is None:
        return None
    base = size(arguments(loader, {**DATASETS.defaults(inner), **(args.get("params") or {})}))
    return None if base is None else base * window // stride


load_windowed._data_nbytes = _windowed_nbytes
# what a spec checks before anything is loaded (the loader checks the same on its call); the
# wrapped dataset is resolved and checked as a spec's own entry
load_windowed._parameter_constraints = {
    "dataset": [str],
    "params": [None, dict],
    "window": [Interval(Integral, 1, None, closed="left")],
    "stride": [Interval(Integral, 1, None, closed="left")],
    "window_label": [StrOptions(LABELS)],
}
load_windowed._nested_datasets = lambda a: [(a["dataset"], a.get("params") or {})]
