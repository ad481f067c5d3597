"""The ``clad`` command line.

``clad run SPEC.toml --out DIR``   run every combination of a spec, write ``DIR/results.json``
``clad run SPEC.toml --dry-run``   print the expanded grid and its size, run nothing
``clad report DIR``                figures, tables and statistics of a results folder in ``DIR/report``
``clad datasets list``             registered dataset loaders and dataset cards
``clad datasets info NAME``        a dataset card (source, sha256, license, citation, recipe) or a loader
``clad datasets convert SRC DST``  a pyCLAD concept file -> clad's pickle-free .npz (needs --allow-pickle)
``clad check NAME|module:Class``   conformance checks for a detector or strategy plug-in
``clad version``                   versions of clad and the libraries behind the numbers
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from . import __version__
from .errors import CladError

log = logging.getLogger("clad")


def _summary_table(results) -> str:
    import numpy as np
    import pandas as pd

    rows = []
    for r in results:
        if not r.ok:
            continue
        for m, vals in r.metrics.items():
            rows.append({"dataset": r.dataset, "scenario": r.scenario, "strategy": r.strategy,
                         "detector": r.detector, "base_metric": m, "seed": r.seed,
                         "CA": vals["continual_average"], "BWT": vals["backward_transfer"],
                         "FWT": vals["forward_transfer"]})
    if not rows:
        return "no finished runs"
    df = pd.DataFrame(rows)
    keys = ["dataset", "scenario", "base_metric", "detector", "strategy"]

    def fmt(s):
        s = s.dropna()
        if s.empty:
            return "n/a"
        return f"{s.mean():.3f} ± {s.std(ddof=1):.3f}" if len(s) > 1 else f"{s.mean():.3f}"

    table = df.groupby(keys, sort=False)[["CA", "BWT", "FWT"]].agg(fmt).reset_index()
    return table.to_string(index=False)


def _cmd_run(args) -> int:
    from .results import write_results
    from .runner import run_safely
    from .spec import load_spec

    spec = load_spec(args.spec)
    for msg in spec.skipped:
        log.info("skipped: %s", msg)
    if args.dry_run:
        print(f"{spec.name}: {len(spec)} runs")
        for cfg in spec.configs:
            print(f"  {cfg.run_id}  {cfg.describe()}")
        return 0
    if args.out is None:
        print("clad run: --out DIR is required (or use --dry-run)", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.json"
    results = []
    bar = None
    show_bar = not args.quiet and sys.stderr.isatty()
    if show_bar:
        from tqdm import tqdm

        bar = tqdm(total=len(spec), unit="run", desc=spec.name, file=sys.stderr)
    failed = 0
    for i, cfg in enumerate(spec.configs, start=1):
        if bar is not None:
            bar.set_postfix_str(cfg.describe()[:60])
        result = run_safely(cfg)
        results.append(result)
        if not result.ok:
            failed += 1
            log.error("run %d/%d failed: %s\n%s", i, len(spec), cfg.describe(), result.error)
        elif bar is None and not args.quiet:
            log.info("run %d/%d done: %s (%.1fs)", i, len(spec), cfg.describe(), result.timings.get("total", 0.0))
        write_results(results_path, results, spec=spec.raw)  # after every run: a crash loses nothing
        if bar is not None:
            bar.update(1)
            bar.set_description(f"{spec.name} ({failed} failed)" if failed else spec.name)
    if bar is not None:
        bar.close()
    if not args.quiet:
        print(_summary_table(results))
        print(f"\n{len(results) - failed} runs finished, {failed} failed; results in {results_path}")
    return 1 if failed else 0


def _cmd_report(args) -> int:
    import warnings

    from .report import load_results, load_spec_record, make_report

    results = load_results(args.dir)
    out = Path(args.out) if args.out else Path(args.dir) / "report"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = make_report(results, out, spec=load_spec_record(args.dir))
    for w in caught:
        log.warning("%s", w.message)
    print(f"report: {report.index} ({len(report.figures)} figures; tables: "
          f"{', '.join(str(p.name) for p in report.tables.values())})")
    return 0


def _cmd_datasets(args) -> int:
    from .datasets import cli as datasets_cli

    return datasets_cli.run(args)


def _cmd_check(args) -> int:
    from .detectors import DETECTORS
    from .strategies import STRATEGIES
    from .testing import check_detector, check_strategy

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
    if args.target in STRATEGIES:
        factory = STRATEGIES.resolve(args.target)
    else:
        factory = DETECTORS.resolve(args.target)
    if isinstance(factory, type) and callable(getattr(factory, "learn", None)):
        from sklearn.ensemble import IsolationForest

        strategy = STRATEGIES.build(args.target, {"detector": IsolationForest(n_estimators=20), **params}) \
            if args.target in STRATEGIES else factory(detector=IsolationForest(n_estimators=20), **params)
        report = check_strategy(strategy, raise_on_failure=False)
    else:
        detector = DETECTORS.build(args.target, params)
        report = check_detector(detector, raise_on_failure=False)
    print(report)
    return 0 if report.ok else 1


def _cmd_version(args) -> int:
    from .results import versions

    print(json.dumps(versions(), indent=1))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="clad", description="Benchmarks for continual anomaly detection.")
    p.add_argument("--version", action="version", version=f"clad {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run a spec file")
    r.add_argument("spec", help="TOML spec file, e.g. scenarios/quickstart.toml")
    r.add_argument("--out", help="output folder (results.json is written there)")
    r.add_argument("--dry-run", action="store_true", help="print the expanded grid and exit")
    r.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    r.set_defaults(func=_cmd_run)

    rp = sub.add_parser("report", help="figures, tables and statistics of a results folder")
    rp.add_argument("dir", help="results folder written by `clad run --out DIR`")
    rp.add_argument("--out", help="report folder (default DIR/report)")
    rp.set_defaults(func=_cmd_report)

    from .datasets.cli import add_arguments as _dataset_arguments

    d = sub.add_parser("datasets", help="dataset loaders and cards: list, info NAME, convert SRC DST")
    _dataset_arguments(d)
    d.set_defaults(func=_cmd_datasets)

    c = sub.add_parser("check", help="run the conformance checks on a detector or strategy")
    c.add_argument("target", help="a registered name or 'package.module:Class'")
    c.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="a constructor parameter (value parsed as JSON when it can be)")
    c.set_defaults(func=_cmd_check)

    v = sub.add_parser("version", help="versions of clad and its libraries")
    v.set_defaults(func=_cmd_version)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # like `python -m`, make modules in the current folder importable, so that a spec or
    # `clad check` can name a plug-in as 'my_module:MyDetector'
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    logging.basicConfig(level=logging.WARNING if getattr(args, "quiet", False) else logging.INFO,
                        format="%(levelname)s %(message)s", stream=sys.stderr)
    try:
        return int(args.func(args) or 0)
    except CladError as exc:
        print(f"clad: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("clad: interrupted; finished runs are kept in the results file", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
