"""Importing a bundle's runs: ``clad pull SOURCE --out DIR`` and ``clad run SPEC --from SOURCE``.

A row is imported only when it is the same computation here: its result key, recomputed from its
configuration with this machine's data files, libraries, base metric versions, numbers-version and
plug-in code (:func:`clad.engine.result_key.local_parts`), must equal the bundle's. Every other row
is refused with its reasons, never mixed in; one that differs only by a plug-in's code missing here
may be imported as *unverified*, kept apart (:data:`clad.bundle.format.UNVERIFIED`). The bundle is
read and checked whole before anything is written. What a user sees: docs/guides/bundles.md.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ..engine.config import RunConfig, canonical
from ..engine.identity import module_fingerprint, seed_reach
from ..engine.result_key import canonical_config, differences, key_of, local_inputs, local_parts
from ..results.record import RunResult
from .format import UNVERIFIED, Bundle, read_bundle, result_of, said
from .sources import opened

__all__ = ["Pulled", "plan", "pull", "missing_code", "kept_apart"]

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


#: a registered component in place of a plug-in whose code is missing, to find a run's data here
_STAND_INS = {"scenario": "concept_incremental", "strategy": "naive", "detector": "hbos"}


def _inputs_here(config: Mapping, missing: Sequence[str] = ()) -> dict:
    """:func:`~clad.engine.result_key.local_inputs` of ``config``; with ``missing`` (plug-in
    modules not available here), its data files read with a stand-in for each such plug-in, and
    their code ``missing``."""
    if not missing:
        return local_inputs(config)
    stand_in = {
        **config,
        **{
            kind: {"name": name, "params": {}}
            for kind, name in _STAND_INS.items()
            if config[kind]["name"].partition(":")[0] in missing
        },
    }
    return {**local_inputs(stand_in), **{f"code {m}": "missing" for m in missing}}


def _here(
    config: Mapping, missing: Sequence[str] = ()
) -> tuple[dict | None, dict | None, str | None]:
    """``(inputs, parts, None)`` of ``config`` here (see :func:`_inputs_here`), or ``(None, None,
    why not)``."""
    try:
        inputs = _inputs_here(config, missing)
        return inputs, local_parts(config, inputs), None
    except Exception as exc:  # noqa: BLE001 - a row this machine cannot recompute is refused, with why
        first = str(exc).splitlines()[0] if str(exc) else ""
        return None, None, f"cannot be recomputed here ({type(exc).__name__}: {first})"


def missing_code(parts: Mapping) -> list[str]:
    """The plug-in modules named by key ``parts`` whose code cannot be found here.

    >>> missing_code({"code": {"code no_such_module_here": "sha256:ab", "code json": "x"}})
    ['no_such_module_here']
    """
    modules = [k.partition(" ")[2] for k in (parts.get("code") or {})]
    return sorted(m for m in modules if module_fingerprint(m) == "missing")


def _verifiable_but_code(row: Mapping, parts: Mapping) -> bool:
    """Whether ``row`` is the same computation as ``parts`` (computed here) once its plug-ins'
    missing code is taken as the bundle says: the only thing that cannot be checked here."""
    missing = missing_code(row["parts"])
    code = {
        **parts.get("code", {}),
        **{f"code {m}": row["parts"]["code"][f"code {m}"] for m in missing},
    }
    return bool(missing) and key_of({**parts, "code": code}) == row["key"]


def kept_apart(config: Mapping) -> dict:
    """``config`` with its scenario's label marked :data:`~clad.bundle.format.UNVERIFIED`.

    >>> kept_apart({"scenario": {"name": "concept_aware"}})["scenario"]["label"]
    'concept_aware (unverified)'
    """
    scenario = dict(config["scenario"])
    scenario["label"] = (scenario.get("label") or scenario["name"]) + UNVERIFIED
    return {**config, "scenario": scenario}


def _labels(config: Mapping) -> dict:
    return {
        k: (config[k].get("label") or config[k]["name"])
        for k in ("dataset", "scenario", "strategy", "detector")
    }


def _imported(
    row: Mapping, config: Mapping, inputs: Mapping, sha256: str, verified: bool = True
) -> RunResult:
    config = config if verified else kept_apart(config)
    cfg = RunConfig.from_dict(dict(config))
    origin = f"bundle sha256:{sha256}" + ("" if verified else UNVERIFIED)
    result = result_of(row, config, run_id=cfg.run_id, inputs=dict(inputs), origin=origin)
    return dataclasses.replace(
        result, **_labels(config), seed=int(config["seed"]), seed_reach=seed_reach(cfg)
    )


def _reasons(row: Mapping, parts: Mapping | None, why: str | None) -> list[str]:
    """Why bundle ``row`` is not the computation ``parts`` here (``why``: it cannot be recomputed)."""
    theirs = {**row["parts"], "config": canonical_config(row["config"])}
    return [why] if parts is None else differences(theirs, parts)


def _plan_rows(bundle: Bundle, unverified: bool) -> tuple[list[RunResult], list[str]]:
    accepted, refused = [], []
    for row in bundle.rows:
        inputs, parts, why = _here(row["config"], missing_code(row["parts"]))
        if parts is not None and key_of(parts) == row["key"]:
            accepted.append(_imported(row, row["config"], inputs, bundle.sha256))
        elif parts is not None and _verifiable_but_code(row, parts) and unverified:
            accepted.append(_imported(row, row["config"], inputs, bundle.sha256, verified=False))
        else:
            reasons = _reasons(row, parts, why)
            if parts is not None and _verifiable_but_code(row, parts):
                reasons.append("importable as unverified (--unverified)")
            refused.append(
                f"{said({**_labels(row['config']), 'seed': row['config']['seed']})}: {'; '.join(reasons)}"
            )
    return accepted, refused


def plan(
    bundle: Bundle, configs: Iterable[RunConfig] | None = None, unverified: bool = False
) -> tuple[list[RunResult], list[str]]:
    """``(runs to import, refusals)``: every row of ``bundle`` that is the same computation here
    (with ``unverified``, also every row that would be but for a plug-in's code not available here,
    imported as unverified: see the module docstring), or with ``configs`` (a spec's runs) the row
    of each configuration whose key here is in the bundle, recorded under that configuration (its
    labels, its run_id). A configuration the bundle holds under another key is refused with the
    reasons; one it does not hold is left to compute."""
    if configs is None:
        return _plan_rows(bundle, unverified)
    rows = bundle.by_key
    accepted, refused = [], []
    by_config = {canonical(canonical_config(r["config"])): r for r in bundle.rows}
    for cfg in configs:
        config = cfg.to_dict()
        same = by_config.get(canonical(canonical_config(config)))
        inputs, parts, why = _here(config)
        if parts is not None and key_of(parts) in rows:
            accepted.append(_imported(rows[key_of(parts)], config, inputs, bundle.sha256))
        elif same is not None:
            refused.append(f"{cfg.describe()}: {'; '.join(_reasons(same, parts, why))}")
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
    unverified: bool = False,
) -> Pulled:
    """Import the runs of bundle ``source`` (see :mod:`clad.bundle.sources`) that are the same
    computation here into results folder ``out`` (None: only plan and check); ``configs`` limits
    them to a spec's runs, ``unverified`` adds those only a plug-in's missing code keeps from being
    checked (:func:`plan`). A bundle that cannot be read writes nothing."""
    with opened(source, sha256) as (path, pin):
        bundle = read_bundle(path, pin)
    accepted, refused = plan(bundle, None if configs is None else list(configs), unverified)
    already = 0
    if out is not None and accepted:
        already = _write(accepted, Path(out))
    for why in refused:
        log.info("refused: %s", why)
    return Pulled(
        bundle.sha256, tuple(accepted), already, tuple(refused), None if out is None else Path(out)
    )
