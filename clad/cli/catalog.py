"""What clad knows: ``clad check`` (the conformance checks of a detector, strategy or base metric
plug-in), ``clad list`` (the registered names with their parameters) and ``clad version``."""

from __future__ import annotations

import json
import sys
import textwrap

from ..errors import CladError

__all__ = ["add_check", "add_list", "add_version"]


def _base_metric_target(target: str):
    """The base metric declaration ``clad check`` was named (a built-in name or an import path to a
    :class:`~clad.metrics.BaseMetric`), or None for a detector or strategy."""
    from ..detectors import DETECTORS
    from ..metrics.base import BaseMetric, base_metric_names, find_base_metric
    from ..strategies import STRATEGIES

    if target in base_metric_names():
        return find_base_metric(target)
    if (
        target in DETECTORS.names()
        or target in STRATEGIES.names()
        or not (":" in target or "." in target)
    ):
        return None
    try:
        from ..registry import import_object

        obj = import_object(target, "plug-in")
    except CladError:
        return None
    return obj if isinstance(obj, BaseMetric) else None


def run_check(args) -> int:
    """Run the conformance checks on the plug-in ``args.target``; 1 when one fails."""
    from ..detectors import DETECTORS
    from ..strategies import STRATEGIES
    from ..testing import check_detector, check_strategy

    params = {}
    for item in args.param or []:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"clad check: --param {item!r}; expected KEY=VALUE", file=sys.stderr)
            return 2
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    metric = _base_metric_target(args.target)
    if metric is not None:
        from ..testing import check_base_metric

        report = check_base_metric(metric, raise_on_failure=False)
        print(report)
        return 0 if report.ok else 1
    factory = (STRATEGIES if args.target in STRATEGIES else DETECTORS).resolve(args.target)
    if isinstance(factory, type) and callable(getattr(factory, "learn", None)):
        from sklearn.ensemble import IsolationForest

        strategy = (
            STRATEGIES.build(args.target, {"detector": IsolationForest(n_estimators=20), **params})
            if args.target in STRATEGIES
            else factory(detector=IsolationForest(n_estimators=20), **params)
        )
        report = check_strategy(strategy, raise_on_failure=False)
    else:
        detector = DETECTORS.build(args.target, params)
        report = check_detector(detector, raise_on_failure=False)
    print(report)
    return 0 if report.ok else 1


def run_list(args) -> int:
    """Print the registered names of one kind (or of every kind) with their parameters and defaults."""
    import shutil

    from ..datasets import DATASETS
    from ..detectors import DETECTORS
    from ..scenarios import SCENARIOS
    from ..strategies import STRATEGIES

    kinds = dict(detectors=DETECTORS, strategies=STRATEGIES, scenarios=SCENARIOS, datasets=DATASETS)
    width = max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
    if args.kind == "base_metrics":
        _list_base_metrics(args.names, width)
        return 0
    for kind in [args.kind] if args.kind else list(kinds):
        _list_kind(kind, kinds[kind], width)
    if args.kind is None:
        _list_base_metrics(args.names, width)
    return 0


def _list_kind(kind: str, registry, width: int) -> None:
    """Print one registry's names, each with its parameters (and a strategy's replicas)."""
    path = "package.module:function" if kind == "datasets" else "package.module:Class"
    print(f"{kind} (name in a spec, or any '{path}'), with their parameters and defaults:")
    for name in registry.names():
        print(f"  {name:20s} {registry.doc(name)}")
        print(_fill(_parameters(kind, registry, name), width, break_on_hyphens=False))
        if kind == "strategies":  # whether runs of it can be trained as replicas of one torch model
            problem = getattr(registry.resolve(name), "replicas_problem", "not said")
            text = (
                "replicas: yes"
                if problem is None
                else f"replicas: no, one model at a time ({problem})"
            )
            print(_fill(text, width))


def _fill(text: str, width: int, **options) -> str:
    """``text`` wrapped to ``width`` in the column after the names."""
    pad = " " * 23
    return textwrap.fill(text, width, initial_indent=pad, subsequent_indent=pad, **options)


def _toml_value(v) -> str:
    """A default as it would be written in a spec (None: left unset).

    >>> _toml_value(None), _toml_value(0.5), _toml_value("a")
    ('none', '0.5', '"a"')
    """
    if v is None:
        return "none"
    try:
        return json.dumps(v)
    except (TypeError, ValueError):
        return repr(v)


def _parameters(kind: str, registry, name: str) -> str:
    """The parameters of a registered name, with their defaults, as a spec writes them."""
    import inspect

    try:
        sig = inspect.signature(registry.resolve(name))
    except (ImportError, CladError, TypeError, ValueError) as exc:
        return f"(parameters not shown: {exc})"
    defaults = registry.defaults(name)
    parts = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or (
            kind == "strategies" and p.name == "detector"
        ):
            continue  # a strategy's detector comes from the spec's [[detectors]]
        value = defaults.get(p.name, p.default)
        parts.append(
            f"{p.name} (required)" if value is p.empty else f"{p.name}={_toml_value(value)}"
        )
    return ", ".join(parts) or "no parameters"


def _list_base_metrics(names, width: int) -> None:
    """Print the declared base metrics and those named by import path in ``names``."""
    import inspect

    from ..metrics.base import base_metric_names, get_base_metric

    print(
        "base_metrics (name in a spec, or any 'package.module:NAME' declaring a clad.metrics.BaseMetric), "
        "with their declarations:"
    )
    for name in [*base_metric_names(), *(n for n in names or () if n not in base_metric_names())]:
        m = get_base_metric(name)
        lo, hi = m.bounds
        try:
            sig = inspect.signature(m.function)
            defaults = {
                p.name: p.default for p in sig.parameters.values() if p.default is not p.empty
            }
        except (TypeError, ValueError):
            defaults = {}
        params = ", ".join(
            f"{k}={json.dumps(defaults[k]) if k in defaults else '(declared)'}" for k in m.params
        )
        facts = (
            [
                f"reads the {m.input}",
                f"in [{lo:g}, {hi:g}]",
                "higher is better" if m.higher_is_better else "lower is better",
            ]
            + (["time axis"] if m.time_axis else [])
            + (["optimistic"] if m.optimistic else [])
        )
        print(f"  {name:20s} {m.label}")
        text = "; ".join(facts) + (f"; parameters: {params}" if params else "")
        print(_fill(text, width, break_on_hyphens=False))


def run_version(args) -> int:
    """Print the versions of clad and of the libraries behind the numbers."""
    from ..results.record import versions

    print(json.dumps(versions(), indent=1))
    return 0


def add_check(sub) -> None:
    """Declare ``clad check`` and its options."""
    c = sub.add_parser("check", help="run the conformance checks on a detector or strategy")
    c.add_argument("target", help="a registered name or 'package.module:Class'")
    c.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="a constructor parameter (value parsed as JSON when it can be)",
    )
    c.set_defaults(func=run_check)


def add_list(sub) -> None:
    """Declare ``clad list`` and its arguments."""
    ls = sub.add_parser(
        "list", help="registered detectors, strategies, scenarios, datasets and base metrics"
    )
    ls.add_argument(
        "kind",
        nargs="?",
        choices=["detectors", "strategies", "scenarios", "datasets", "base_metrics"],
    )
    ls.add_argument(
        "names",
        nargs="*",
        metavar="IMPORT_PATH",
        help="base_metrics: also show these declarations ('package.module:NAME')",
    )
    ls.set_defaults(func=run_list)


def add_version(sub) -> None:
    """Declare ``clad version``."""
    v = sub.add_parser("version", help="versions of clad and its libraries")
    v.set_defaults(func=run_version)
