"""Pure aggregation of run results over seeds: what the plots and tables show.

This module holds what they share (configurations computed once shown once, value bounds, the
order of base metrics, the dataset of a run); the figures' data is in
:mod:`clad.report.figure_data`, the leaderboard in :mod:`clad.report.leaderboard` and the chance
levels in :mod:`clad.report.chance`. Nothing here plots or writes files. Means, standard deviations,
counts and intervals over seeds are those of :mod:`clad.report.describe` (the rule's one home);
which scalar metrics exist, and their direction, is read from :data:`clad.metrics.REGISTRY`.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..metrics import REGISTRY, get_metric
from ..metrics.base import base_metric_bounds as base_bounds
from ..results.record import RunResult
from .cost import COST
from .describe import CONFIG_KEYS, UNBOUNDED

__all__ = ["dataset_of", "merge_shared", "spec_base_metrics"]


def merge_shared(results: Iterable[RunResult]) -> list[RunResult]:
    """``results`` with every configuration that is the same computation as another shown once.

    A configuration whose runs all record ``shared_from`` (see :mod:`clad.engine.identity`)
    pointing at the runs of one other configuration with as many runs is dropped; the configuration
    that computed them keeps its runs, relabelled with every value it stands for, joined by
    ``" = "`` (``concept_aware = concept_incremental``). Other runs are returned as they are, in order.

    >>> from clad.results.record import RunResult
    >>> rs = [RunResult("d", "aware", "naive", "if", s, run_id=f"a{s}") for s in (0, 1)]
    >>> rs += [RunResult("d", "incremental", "naive", "if", s, run_id=f"b{s}", shared_from=f"a{s}") for s in (0, 1)]
    >>> [(r.scenario, r.seed) for r in merge_shared(rs)]
    [('aware = incremental', 0), ('aware = incremental', 1)]
    """
    import dataclasses

    results = list(results)
    key_of = {
        r.run_id: (tuple(getattr(r, k) for k in CONFIG_KEYS), r.seed)
        for r in results
        if r.run_id and r.ok
    }
    groups: dict[tuple, list[RunResult]] = {}
    for r in results:
        if r.ok:
            groups.setdefault(tuple(getattr(r, k) for k in CONFIG_KEYS), []).append(r)
    stands_for: dict[tuple, list[tuple]] = {}
    copies: set[tuple] = set()
    for key, runs in groups.items():
        origins = {key_of.get(r.shared_from, (None, None))[0] for r in runs}
        if len(origins) != 1 or None in origins:
            continue
        (origin,) = origins
        if origin == key or origin not in groups or origin in copies:
            continue
        if len(groups[origin]) == len(runs):  # every run of this configuration is one of origin's
            copies.add(key)
            stands_for.setdefault(origin, [origin]).append(key)
    if not copies:
        return results
    relabel = {}
    for origin, keys in stands_for.items():
        relabel[origin] = {
            k: " = ".join(dict.fromkeys(key[i] for key in keys))
            for i, k in enumerate(CONFIG_KEYS)
            if len({key[i] for key in keys}) > 1
        }
    out = []
    for r in results:
        key = tuple(getattr(r, k) for k in CONFIG_KEYS)
        if r.ok and key in copies:
            continue
        out.append(dataclasses.replace(r, **relabel[key]) if r.ok and key in relabel else r)
    return out


def value_bounds(name: str, base_metric: str | None = None) -> tuple[float, float]:
    """The range of scalar metric or cost ``name`` computed from base metric ``base_metric``: from
    the declarations (:meth:`clad.metrics.Metric.bounds` of the base metric's declared bounds, or
    the cost's :attr:`clad.report.cost.Cost.bounds`); unbounded for anything undeclared.

    >>> value_bounds("continual_average", "roc_auc"), value_bounds("forgetting", "f1")
    ((0.0, 1.0), (-1.0, 1.0))
    >>> value_bounds("fit_seconds")
    (0.0, inf)
    """
    if name in COST:
        return COST[name].bounds
    if name in REGISTRY:
        # a mean of values in the base's range
        if base_metric and base_metric.endswith("_per_series_mean"):
            base_metric = base_metric[: -len("_per_series_mean")]
        return get_metric(name).bounds(base_bounds(base_metric) if base_metric else UNBOUNDED)
    return UNBOUNDED


def base_order(names, first: Sequence[str] = ()) -> list[str]:
    """Base metric names in the order ``first`` gives (the spec's ``base_metrics``, a headline
    chosen on the command line), then in their declaration order
    (:data:`clad.metrics.base.BASE_METRIC_REGISTRY`: ROC-AUC, F1, AP, ...), others (a plug-in's,
    named by import path) after them as found; a results file may store them sorted.

    >>> base_order(["average_precision", "roc_auc", "x", "f1"])
    ['roc_auc', 'f1', 'average_precision', 'x']
    >>> base_order(["average_precision", "roc_auc", "vus_pr"], first=["vus_pr", "roc_auc"])
    ['vus_pr', 'roc_auc', 'average_precision']
    """
    from ..metrics.base import base_metric_names

    names = list(dict.fromkeys(names))
    suffix = "_per_series_mean"  # a derived per-series mean follows its base metric
    plain = [n[: -len(suffix)] if n.endswith(suffix) else n for n in names]
    declared = list(dict.fromkeys([*first, *base_metric_names()]))
    if any(n.endswith(suffix) for n in names):

        def key(m):
            base = m[: -len(suffix)] if m.endswith(suffix) else m
            return (
                declared.index(base) if base in declared else len(declared),
                plain.index(base),
                m != base,
            )

        return sorted(names, key=key)
    return sorted(
        names, key=lambda m: (declared.index(m) if m in declared else len(declared), names.index(m))
    )


def spec_base_metrics(runs: Iterable[RunResult]) -> list[str]:
    """The base metrics in the order the runs' spec lists them (``config["base_metrics"]``; the
    first is the spec's headline), first-seen over the runs.

    >>> spec_base_metrics([RunResult("d", "s", "n", "i", 0, config={"base_metrics": ["vus_pr", "roc_auc"]})])
    ['vus_pr', 'roc_auc']
    """
    out: dict[str, None] = {}
    for r in runs:
        for m in (r.config or {}).get("base_metrics") or ():
            out.setdefault(str(m) if not isinstance(m, dict) else str(m.get("name")), None)
    return list(out)


def dataset_of(r: RunResult) -> str:
    """The dataset a run learned, without its concept order: a spec's ``orders`` label each
    dataset ``<label>[order=<name>]`` (:mod:`clad.engine.spec`), and the orders of one dataset are
    one source of data, never independent blocks of a test (:mod:`clad.report.blocks`). The suffix
    is removed only when it names the order the run's configuration gave the loader.

    >>> cfg = {"dataset": {"name": "adbench", "params": {"order": "random:42"}}}
    >>> dataset_of(RunResult("cardio[order=random]", "s", "n", "i", 0, config=cfg))
    'cardio'
    >>> dataset_of(RunResult("cardio[order=random]", "s", "n", "i", 0))  # no order given: a label like any other
    'cardio[order=random]'
    """
    order = (((r.config or {}).get("dataset") or {}).get("params") or {}).get("order")
    if isinstance(order, str):
        suffix = f"[order={order.split(':')[0]}]"
        if r.dataset.endswith(suffix) and len(r.dataset) > len(suffix):
            return r.dataset[: -len(suffix)]
    return r.dataset
