"""Importing a bundle's runs: ``clad pull SOURCE --out DIR`` and ``clad run SPEC --from SOURCE``.

A row is imported only when it is the same computation here: its result key is recomputed from its
configuration with the data files, libraries, base metric versions, numbers-version and plug-in
code of this machine (:func:`clad.engine.result_key.local_parts`), and must equal the bundle's. Every
other row is refused with its reasons (``data bytes``, ``numbers-version``, ``base metric version``,
``library version``, ``plug-in code``, or that it cannot be recomputed here), never mixed in. The
bundle is read and checked whole before anything is written; the imported runs are written in one
go, each recording its ``origin`` (``bundle sha256:HEX``) and the inputs it has here (so a later
``clad run`` resumes them as finished and retires them if the data changes).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from ..engine.config import RunConfig, canonical
from ..engine.result_key import canonical_config, differences, key_of, local_inputs, local_parts
from ..results.record import RunResult
from .format import Bundle, read_bundle, result_of
from .sources import opened

__all__ = ["Pulled", "plan", "pull"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pulled:
    """What a pull did: the bundle's sha256, the runs imported, those already in the folder and every
    refusal (``"RUN: reason; reason"``)."""

    sha256: str
    imported: tuple[RunResult, ...]
    already: int
    refused: tuple[str, ...]
    out: Path | None = None


def _describe(config: Mapping) -> str:
    part = lambda k: (config.get(k) or {}).get("label") or (config.get(k) or {}).get("name")  # noqa: E731
    return f"{part('dataset')} / {part('scenario')} / {part('strategy')} / {part('detector')} / seed {config.get('seed')}"


def _here(config: Mapping) -> tuple[dict | None, dict | None, str | None]:
    """``(inputs, parts, None)`` of ``config`` here, or ``(None, None, why not)``."""
    try:
        inputs = local_inputs(config)
        return inputs, local_parts(config, inputs), None
    except Exception as exc:  # noqa: BLE001 - a row this machine cannot recompute is refused, with why
        return (
            None,
            None,
            f"cannot be recomputed here ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})",
        )


def _labels(config: Mapping) -> dict:
    return {
        k: (config[k].get("label") or config[k]["name"])
        for k in ("dataset", "scenario", "strategy", "detector")
    }


def _imported(row: Mapping, config: Mapping, inputs: Mapping, sha256: str) -> RunResult:
    result = result_of(
        row,
        config,
        run_id=RunConfig.from_dict(dict(config)).run_id,
        inputs=dict(inputs),
        origin=f"bundle sha256:{sha256}",
    )
    return dataclasses.replace(result, **_labels(config), seed=int(config["seed"]))


def plan(
    bundle: Bundle, configs: Iterable[RunConfig] | None = None
) -> tuple[list[RunResult], list[str]]:
    """``(runs to import, refusals)``: every row of ``bundle`` that is the same computation here, or
    with ``configs`` (a spec's runs) the row of each configuration whose key here is in the bundle,
    recorded under that configuration (its labels, its run_id). A configuration the bundle holds
    under another key is refused with the reasons; one it does not hold is left to compute."""
    rows = bundle.by_key
    accepted, refused = [], []
    if configs is None:
        for row in bundle.rows:
            inputs, parts, why = _here(row["config"])
            if parts is None:
                refused.append(f"{_describe(row['config'])}: {why}")
            elif key_of(parts) != row["key"]:
                reasons = differences(
                    {**row["parts"], "config": canonical_config(row["config"])}, parts
                )
                refused.append(f"{_describe(row['config'])}: {'; '.join(reasons)}")
            else:
                accepted.append(_imported(row, row["config"], inputs, bundle.sha256))
        return accepted, refused
    by_config = {canonical(canonical_config(r["config"])): r for r in bundle.rows}
    for cfg in configs:
        config = cfg.to_dict()
        same = by_config.get(canonical(canonical_config(config)))
        inputs, parts, why = _here(config)
        if parts is not None and key_of(parts) in rows:
            accepted.append(_imported(rows[key_of(parts)], config, inputs, bundle.sha256))
        elif same is not None:
            reasons = (
                [why]
                if parts is None
                else differences(
                    {**same["parts"], "config": canonical_config(same["config"])}, parts
                )
            )
            refused.append(f"{cfg.describe()}: {'; '.join(reasons)}")
    return accepted, refused


def _write(runs: list[RunResult], out: Path) -> int:
    """Write the runs not already finished in folder ``out`` (one transaction each, under the
    folder's lock); the number already there."""
    from ..engine.folder import FolderLock
    from ..results.record import write_results
    from ..results.reading import DEFAULT_NAME, JSON_NAME
    from ..results.store import ResultStore

    out.mkdir(parents=True, exist_ok=True)
    lock = FolderLock(out, "pull").acquire()
    try:
        with ResultStore(out / DEFAULT_NAME) as store:
            finished = store.finished_ids()
            new = [r for r in runs if r.run_id not in finished]
            for r in new:
                store.write(r)
            spec = store.get_meta("spec")
        from ..results.reading import load_results

        write_results(out / JSON_NAME, load_results(out / DEFAULT_NAME), spec or {})
    finally:
        lock.release()
    return len(runs) - len(new)


def pull(
    source: str,
    out: str | Path | None,
    sha256: str | None = None,
    configs: Iterable[RunConfig] | None = None,
) -> Pulled:
    """Import the runs of bundle ``source`` (see :mod:`clad.bundle.sources`) that are the same
    computation here into results folder ``out`` (None: only plan and check); ``configs`` limits
    them to a spec's runs (:func:`plan`). A bundle that cannot be read writes nothing."""
    with opened(source, sha256) as (path, pin):
        bundle = read_bundle(path, pin)
    accepted, refused = plan(bundle, None if configs is None else list(configs))
    already = 0
    if out is not None and accepted:
        already = _write(accepted, Path(out))
    for why in refused:
        log.info("refused: %s", why)
    return Pulled(
        bundle.sha256, tuple(accepted), already, tuple(refused), None if out is None else Path(out)
    )
