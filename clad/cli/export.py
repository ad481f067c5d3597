"""Results that leave the folder: ``clad export`` (tidy tables, results.json, MLflow, a bundle),
``clad pull`` and ``clad verify-bundle`` (a bundle's runs imported or recomputed here) and ``clad
leaderboard`` (the report of bundles)."""

from __future__ import annotations

import sys

from .console import positive_int

__all__ = ["add_export", "add_pull", "add_verify_bundle", "add_leaderboard"]


def run_verify_bundle(args) -> int:
    """Recompute a sample of a bundle's runs and say whether they agree; 1 when one disagrees."""
    from ..bundle.format import read_bundle
    from ..bundle.sources import opened
    from ..bundle.verify import format_verdict, verify

    with opened(args.source, args.sha256) as (path, pin):
        bundle = read_bundle(path, pin)
    verdict = verify(bundle, args.sample, args.seed, tolerance=args.tolerance)
    print(format_verdict(verdict))
    return 0 if verdict.ok else 1


def run_leaderboard(args) -> int:
    """Write the report of one or more bundles and say where."""
    from ..bundle.leaderboard import leaderboard

    done = leaderboard(args.sources, args.out, previous=args.previous)
    for why in done.conflicts:
        print(f"conflict: {why}", file=sys.stderr)
    changed = (
        ""
        if done.changes is None
        else (
            f"; against the previous bundle: {done.changes['new']} new, {done.changes['gone']} gone, "
            f"{done.changes['moved']} moved (changes.csv)"
        )
    )
    print(
        f"leaderboard of {done.runs} runs from {len(done.bundles)} bundles written to {done.out / 'index.html'}{changed}"
    )
    return 0


def run_pull(args) -> int:
    """Import a bundle's runs that are the same computation here; each refusal with its reason."""
    from ..bundle.pull import pull

    done = pull(args.source, args.out, sha256=args.sha256, unverified=args.unverified)
    for why in done.refused:
        print(f"refused: {why}")
    print(
        f"{len(done.imported) - done.already} runs imported into {done.out} from bundle sha256:{done.sha256}"
        + (f" ({done.already} already there)" if done.already else "")
        + f", {len(done.refused)} refused"
    )
    return 0


def run_export(args) -> int:
    """Write the folder's tidy tables, results.json, MLflow runs or a bundle; what was written."""
    if args.bundle is not None:
        from ..bundle.format import export_bundle

        done = export_bundle(args.dir, args.bundle)
        for why in done.left_out:
            print(f"left out: {why}", file=sys.stderr)
        print(
            f"{done.runs} runs in {done.shards} shards written to {done.path} (bundle sha256 {done.sha256})"
        )
        if args.index:
            from ..bundle.index import write_index

            print(f"derived index written to {write_index(done.path)}")
        return 0
    if args.format == "mlflow":
        from ..engine.export_mlflow import export_mlflow

        done = export_mlflow(args.dir, tracking_uri=args.tracking_uri)
        why = "; ".join(f"{n} {reason}" for reason, n in done["reasons"].items())
        print(
            f"{done['exported']} runs logged to MLflow, {done['updated']} updated"
            + (f" ({why})" if why else "")
            + f", {done['skipped']} already there"
            + (f", {done['retired']} retired (no longer in the folder)" if done["retired"] else "")
            + ", experiment "
            f"{done['experiment_id']} at {done['tracking_uri']}"
        )
        return 0
    if args.tracking_uri is not None:
        print("clad export: --tracking-uri is for --format mlflow", file=sys.stderr)
        return 2
    from ..engine.export import export

    if args.per_series and args.format not in ("csv", "parquet"):
        print("clad export: --per-series is for --format csv or parquet", file=sys.stderr)
        return 2
    for path in export(args.dir, args.format, args.dest, per_series=args.per_series):
        print(path)
    return 0


def add_export(sub) -> None:
    """Declare ``clad export`` and its options."""
    e = sub.add_parser("export", help="export a results database as tidy CSV or Parquet tables")
    e.add_argument(
        "dir", help="output folder of 'clad run' (holding results.sqlite), or the database file"
    )
    e.add_argument(
        "--format",
        choices=["csv", "parquet", "json", "mlflow"],
        default="csv",
        help="csv or parquet: tidy tables r_cells, metrics, runs; json: results.json; mlflow: every "
        "run logged into an MLflow tracking store (pip install 'clad[mlflow]')",
    )
    e.add_argument(
        "--dest", default=None, help="folder to write into (default: next to the database)"
    )
    e.add_argument(
        "--per-series",
        action="store_true",
        help="also per_series.csv: for time-series datasets made of several series (channels), every "
        "base metric per run, step, test concept and series",
    )
    e.add_argument(
        "--tracking-uri",
        default=None,
        metavar="URI",
        help="with --format mlflow: the MLflow tracking store (default: a local store in DIR/mlruns)",
    )
    e.add_argument(
        "--bundle",
        default=None,
        metavar="OUT",
        help="write a bundle instead: every finished run with its result key, in sorted JSON Lines shards "
        "with a manifest (a folder, or one tar when OUT ends with .tar); see docs/guides/bundles.md",
    )
    e.add_argument(
        "--index",
        action="store_true",
        help="with --bundle OUT (a folder): also write its derived index.parquet (needs pyarrow)",
    )
    e.set_defaults(func=run_export)


def add_pull(sub) -> None:
    """Declare ``clad pull`` and its options."""
    pl = sub.add_parser("pull", help="import a bundle's runs that are the same computation here")
    pl.add_argument(
        "source",
        help="a bundle folder or tar, a file:// or https:// URL (pinned: URL#sha256=HEX or "
        "--sha256), or git+URL@COMMIT[#path=FOLDER]",
    )
    pl.add_argument(
        "--out", required=True, help="results folder to import into (created when missing)"
    )
    pl.add_argument(
        "--sha256",
        default=None,
        help="the sha256 pinning the bundle (a URL's file, or the bundle's)",
    )
    pl.add_argument(
        "--unverified",
        action="store_true",
        help="also import, kept apart as unverified, the runs only a plug-in's missing code keeps "
        "from being recomputed here",
    )
    pl.set_defaults(func=run_pull)


def add_verify_bundle(sub) -> None:
    """Declare ``clad verify-bundle`` and its options."""
    vb = sub.add_parser(
        "verify-bundle", help="recompute a stratified random sample of a bundle's runs and compare"
    )
    vb.add_argument("source", help="a bundle (as for clad pull)")
    vb.add_argument(
        "--sample", type=positive_int, default=100, help="how many runs to recompute (default 100)"
    )
    vb.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    vb.add_argument(
        "--tolerance",
        type=float,
        default=0.0,
        help="absolute tolerance of a value of R (default 0: bit for bit; at most 0.01)",
    )
    vb.add_argument("--sha256", default=None, help="the sha256 pinning the bundle")
    vb.set_defaults(func=run_verify_bundle)


def add_leaderboard(sub) -> None:
    """Declare ``clad leaderboard`` and its options."""
    lb = sub.add_parser(
        "leaderboard", help="a static report across bundles, offline (nothing computed)"
    )
    lb.add_argument("sources", nargs="+", help="bundles (as for clad pull)")
    lb.add_argument("-o", "--out", required=True, help="folder to write the site into")
    lb.add_argument(
        "--previous",
        default=None,
        help="an earlier bundle: changes.csv lists what is new, gone or moved",
    )
    lb.set_defaults(func=run_leaderboard)
