"""The bundle: finished runs in a form made for exchange (``clad export DIR --bundle OUT``).

A bundle is a folder (or the same files in an uncompressed tar, ``OUT.tar``): ``manifest.json``,
what the bundle holds with every shard's sha256 (the bundle's sha256 is the manifest's), and
``runs/<dataset>/<detector>.jsonl``, one run per line (``{"key", "parts", "config", "record"}``,
sorted by result key). Every JSON text is written by :func:`dumps`, so the same runs give the same
bytes. The contract (what a record leaves out, how values are written): docs/guides/bundles.md.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from .._version import NUMBERS_VERSION
from ..errors import DataError
from ..results.record import RECORD_FIELDS, UNVERIFIED, RunResult

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MANIFEST",
    "BundleError",
    "Bundle",
    "dumps",
    "row_of",
    "bundle_files",
    "write_bundle",
    "read_bundle",
    "result_of",
    "sha256_hex",
    "export_bundle",
    "Exported",
    "UNVERIFIED",
    "unverified",
    "said",
]

FORMAT = "clad-bundle"
#: raised when what a reader must understand changes (a reader refuses a newer one)
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
#: record fields a bundle leaves out: this folder's identities and paths, not the computation's, and
#: what a receiver derives from the configuration itself (the seed's reach)
LOCAL_FIELDS = frozenset(
    "run_id status error inputs shared_from result_key origin config seed_reach".split()
)
_ROW_KEYS = ("key", "parts", "config", "record")


class BundleError(DataError):
    """A bundle that cannot be read: truncated, corrupt, foreign or not the one pinned."""


def dumps(obj) -> str:
    """The bundle's one JSON writer: sorted keys, no spaces, ASCII, strict (no NaN).

    >>> dumps({"b": 0.1, "a": [1, None]})
    '{"a":[1,null],"b":0.1}'
    """
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def row_of(result: RunResult) -> dict:
    """The bundle row of a finished run that records its result key."""
    record = result.to_dict()
    return {
        "key": result.result_key["key"],
        "parts": record["result_key"]["parts"],
        "config": record["config"],
        "record": {k: v for k, v in record.items() if k not in LOCAL_FIELDS},
    }


def unverified(result: RunResult) -> bool:
    """Whether ``result`` was imported as unverified (see :data:`UNVERIFIED`).

    >>> unverified(RunResult("d", "s (unverified)", "x", "y", 0, (), (), origin="bundle sha256:ab (unverified)"))
    True
    """
    return bool(result.origin) and result.origin.endswith(UNVERIFIED)


def said(record) -> str:
    """A run in words, from its record (a bundle row's ``record``, or a :class:`RunResult`).

    >>> said({"dataset": "d", "scenario": "s", "strategy": "naive", "detector": "hbos", "seed": 1})
    'd / s / naive / hbos / seed 1'
    """
    get = record.get if isinstance(record, Mapping) else lambda k: getattr(record, k)
    return " / ".join(str(get(k)) for k in ("dataset", "scenario", "strategy", "detector")) + (
        f" / seed {get('seed')}"
    )


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "_", str(label).lower()).strip("._") or "_"


@dataclass(frozen=True)
class Bundle:
    """A bundle read and checked: its manifest, its rows (shard order, sorted by key in each) and
    its sha256 (the manifest's)."""

    manifest: dict
    rows: tuple[dict, ...]
    sha256: str

    @property
    def by_key(self) -> dict[str, dict]:
        return {row["key"]: row for row in self.rows}


def _dataset_entry(label: str, rows: list[dict]) -> dict:
    from ..datasets.cards import card_names, load_card

    data = sorted({h for r in rows for h in r["parts"]["data"]})
    cards = sorted(
        {
            name
            for name in card_names()
            for f in load_card(name)["files"].values()
            if f.get("sha256") in data
        }
    )
    configs = sorted(
        {dumps({k: v for k, v in r["config"]["dataset"].items() if k != "label"}) for r in rows}
    )
    return {
        "label": label,
        "configs": [json.loads(c) for c in configs],
        "sha256": data,
        "cards": cards,
    }


def bundle_files(results: Iterable[RunResult]) -> tuple[dict[str, bytes], list[str]]:
    """``({path: bytes}, left out)``: the files of the bundle of ``results`` (manifest included)
    and why each run left out was (failed, no result key, a key already taken)."""
    rows, left, numbers = {}, [], set()
    for r in sorted(results, key=lambda r: (r.dataset, r.detector, r.scenario, r.strategy, r.seed)):
        if not r.ok:
            left.append(f"{said(r)}: failed")
        elif unverified(r):
            left.append(
                f"{said(r)}: imported unverified (its bundle holds it; it is not re-exported)"
            )
        elif not r.result_key:
            left.append(
                f"{said(r)}: no result key (computed before clad recorded one; run it again to export it)"
            )
        elif r.result_key["key"] in rows:
            left.append(
                f"{said(r)}: the same computation as a run already in the bundle (labels differ)"
            )
        else:
            rows[r.result_key["key"]] = row_of(r)
            numbers.add(r.result_key["parts"]["numbers"])
    if len(numbers) > 1:
        raise DataError(
            f"the runs were computed under numbers-versions {sorted(numbers)}; a bundle holds one "
            "(export each from its own folder)"
        )
    shards: dict[str, list[dict]] = {}
    for key in sorted(rows):
        rec = rows[key]["record"]
        path = f"runs/{_slug(rec['dataset'])}/{_slug(rec['detector'])}.jsonl"
        shards.setdefault(path, []).append(rows[key])
    files = {
        path: "".join(dumps(r) + "\n" for r in shard).encode("ascii")
        for path, shard in sorted(shards.items())
    }
    by_dataset: dict[str, list[dict]] = {}
    for row in rows.values():
        by_dataset.setdefault(row["record"]["dataset"], []).append(row)
    from ..engine.result_key import KEY_FORMAT, LIBRARY_POLICY

    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "key_format": KEY_FORMAT,
        "numbers_version": numbers.pop() if numbers else NUMBERS_VERSION,
        "library_policy": dict(LIBRARY_POLICY),
        "runs": len(rows),
        "datasets": [_dataset_entry(label, by_dataset[label]) for label in sorted(by_dataset)],
        "shards": [
            {
                "path": path,
                "sha256": sha256_hex(data),
                "runs": len(shards[path]),
                "dataset": shards[path][0]["record"]["dataset"],
                "detector": shards[path][0]["record"]["detector"],
            }
            for path, data in files.items()
        ],
    }
    files[MANIFEST] = (
        json.dumps(manifest, sort_keys=True, indent=1, ensure_ascii=True) + "\n"
    ).encode("ascii")
    return files, left


def _tar_bytes(files: Mapping[str, bytes]) -> bytes:
    """An uncompressed tar of ``files`` that depends on nothing but their names and bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in [MANIFEST, *sorted(p for p in files if p != MANIFEST)]:
            info = tarfile.TarInfo(path)
            info.size, info.mtime, info.mode, info.uid, info.gid = len(files[path]), 0, 0o644, 0, 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(files[path]))
    return buf.getvalue()


def write_bundle(files: Mapping[str, bytes], out: str | Path) -> Path:
    """Write a bundle's files to ``out``: one tar when ``out`` ends with ``.tar``, else a folder
    (replaced as a whole, atomically: a reader never sees half of it)."""
    import os
    import shutil
    import tempfile

    from ..atomic import atomic_output

    out = Path(out)
    if out.suffix == ".tar":
        with atomic_output(out) as tmp:
            tmp.write_bytes(_tar_bytes(files))
        return out
    if out.exists() and not (out / MANIFEST).is_file() and (not out.is_dir() or any(out.iterdir())):
        raise DataError(
            f"bundle destination {str(out)!r} exists and is not a bundle; expected a new or empty folder "
            "or an earlier bundle to replace"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for path, data in files.items():
            (tmp / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp / path).write_bytes(data)
        old = None
        if out.exists():
            old = out.with_name(f".{out.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(out, old)
        os.replace(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


# -- reading ---------------------------------------------------------------------------------------
def _read_tar(path: Path) -> dict[str, bytes]:
    try:
        with tarfile.open(path, mode="r:") as tar:
            out = {}
            for m in tar.getmembers():
                if not m.isfile() or m.name.startswith("/") or ".." in Path(m.name).parts:
                    raise BundleError(
                        f"bundle {str(path)!r}: member {m.name!r} is not a plain file inside the bundle"
                    )
                out[m.name] = tar.extractfile(m).read()
            return out
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise BundleError(
            f"bundle {str(path)!r} is not a readable tar ({exc}); truncated or not a bundle"
        ) from None


def _loader(path: Path):
    if path.is_file():
        return _read_tar(path).get

    def read(name: str) -> bytes | None:
        f = path / name
        return f.read_bytes() if f.is_file() else None

    return read


def read_bundle(path: str | Path, sha256: str | None = None) -> Bundle:
    """Read and check the bundle at ``path`` (a folder or a tar): its manifest is clad's and of a
    format version this clad reads, every shard is there with its sha256 and row count, every row
    has its parts and its key is theirs; ``sha256`` pins the bundle (its manifest's sha256).
    Anything else raises :class:`BundleError` naming what is wrong."""
    path = Path(path)
    if not path.exists():
        raise BundleError(f"bundle {str(path)!r} not found")
    read = _loader(path)
    raw = read(MANIFEST)
    if raw is None:
        raise BundleError(f"{str(path)!r} has no {MANIFEST}; not a clad bundle")
    digest = sha256_hex(raw)
    if sha256 is not None and digest != sha256.lower():
        raise BundleError(f"bundle {str(path)!r} has sha256 {digest}; expected {sha256} (pinned)")
    try:
        manifest = json.loads(raw)
    except ValueError as exc:
        raise BundleError(
            f"bundle {str(path)!r}: {MANIFEST} is not JSON ({exc}); corrupt or truncated"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BundleError(
            f"{str(path)!r}: {MANIFEST} is not a clad bundle's (format "
            f"{manifest.get('format') if isinstance(manifest, dict) else None!r}; expected {FORMAT!r})"
        )
    if manifest.get("format_version") != FORMAT_VERSION:
        raise BundleError(
            f"bundle {str(path)!r} has format_version {manifest.get('format_version')!r}; this clad "
            f"reads {FORMAT_VERSION}"
        )
    rows = []
    for shard in manifest.get("shards") or ():
        rows += _read_shard(path, shard, read(shard.get("path", "")))
    if len(rows) != manifest.get("runs"):
        raise BundleError(
            f"bundle {str(path)!r}: its shards hold {len(rows)} runs; the manifest says {manifest.get('runs')}"
        )
    return Bundle(manifest, tuple(rows), digest)


def _read_shard(path: Path, shard: Mapping, data: bytes | None) -> list[dict]:
    from ..engine.result_key import canonical_config, key_of

    where = f"bundle {str(path)!r}, shard {shard.get('path')!r}"
    if data is None:
        raise BundleError(f"{where} is missing")
    if sha256_hex(data) != shard.get("sha256"):
        raise BundleError(
            f"{where} has sha256 {sha256_hex(data)}; the manifest says {shard.get('sha256')} "
            "(truncated or altered)"
        )
    rows = []
    for i, line in enumerate(data.decode("ascii", errors="replace").splitlines(), 1):
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise BundleError(f"{where}, line {i}: not JSON ({exc})") from None
        if not isinstance(row, dict) or set(row) != set(_ROW_KEYS):
            raise BundleError(
                f"{where}, line {i}: expected an object with keys {', '.join(_ROW_KEYS)}"
            )
        if (
            not isinstance(row["parts"], dict)
            or not isinstance(row["config"], dict)
            or key_of({**row["parts"], "config": canonical_config(row["config"])}) != row["key"]
        ):
            raise BundleError(f"{where}, line {i}: key {row['key']!r} is not the key of its parts")
        rows.append(row)
    if len(rows) != shard.get("runs"):
        raise BundleError(f"{where} holds {len(rows)} runs; the manifest says {shard.get('runs')}")
    return rows


def result_of(row: Mapping, config: Mapping | None = None, **fields) -> RunResult:
    """The run record of a bundle row (``config`` replacing its configuration, e.g. a spec's own
    labels); ``fields`` set the local ones (``run_id``, ``inputs``, ``origin``)."""
    known = {f.name for f in RECORD_FIELDS}
    record = {k: v for k, v in row["record"].items() if k in known}
    return RunResult.from_dict(
        {
            **record,
            "config": dict(config or row["config"]),
            "status": "ok",
            "result_key": {"key": row["key"], "parts": row["parts"]},
            **fields,
        }
    )


@dataclass(frozen=True)
class Exported:
    """What ``clad export DIR --bundle OUT`` wrote."""

    path: Path
    runs: int
    shards: int
    sha256: str
    left_out: tuple[str, ...]


def export_bundle(source: str | Path, out: str | Path) -> Exported:
    """Write the bundle of the finished runs of results folder ``source`` to ``out`` (a folder, or
    one tar when ``out`` ends with ``.tar``); tuning and reference runs are not in it."""
    from ..results.reading import load_results

    files, left = bundle_files(load_results(source))
    manifest = json.loads(files[MANIFEST])
    path = write_bundle(files, out)
    return Exported(
        path, manifest["runs"], len(manifest["shards"]), sha256_hex(files[MANIFEST]), tuple(left)
    )
