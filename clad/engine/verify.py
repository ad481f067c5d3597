"""A reference suite anyone can verify: rerun specs and compare with their committed results.

Each spec ``NAME.toml`` of a suite has beside it ``NAME.reference.json``: for every run, its key
(dataset, scenario, strategy, detector and seed labels), R and the continual metrics, the versions
it was computed with, and the tolerance it is checked at. :func:`verify_spec` reruns the spec and
compares every number: within ``1e-9`` (absolute) for deterministic detectors, within
:data:`TORCH_TOLERANCE` for PyTorch detectors (their floating-point reductions may run in another
order on another machine), or within the tolerance given when the reference was written. Undefined
values (``null``) must stay undefined. A run missing from the rerun, a run the reference does not
know, a failed run, or a value of the reference the rerun lacks, is a difference too; a value the
rerun adds (a metric newer than the reference) is not.

``clad verify SPEC_OR_FOLDER`` prints a per-run table of what differs and exits with status 1 when
anything does; ``clad verify --update`` (re)writes the references from a fresh run. The file holds
no timestamps, so an unchanged result rewrites it byte for byte.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..results.record import RunResult, atomic_write_text, to_jsonable
from ..results.store import DestinationError
from ..errors import CladValueError, DataError

__all__ = [
    "DEFAULT_TOLERANCE",
    "TORCH_TOLERANCE",
    "MAX_TOLERANCE",
    "check_tolerance",
    "RunCheck",
    "SpecCheck",
    "reference_path",
    "spec_files",
    "reference_document",
    "compare_run",
    "compare",
    "verify_spec",
    "update_reference",
    "format_check",
]

#: absolute tolerance for deterministic detectors
DEFAULT_TOLERANCE = 1e-9
#: absolute tolerance for PyTorch detectors (reductions may be ordered differently across machines)
TORCH_TOLERANCE = 1e-4
#: the largest tolerance a reference may hold: every value compared lies in [0, 1] or near it, so a
#: wider one would let any number pass
MAX_TOLERANCE = 1e-2
FORMAT = 1
_KEY = ("dataset", "scenario", "strategy", "detector", "seed")


def reference_path(spec: str | Path) -> Path:
    """``NAME.reference.json`` beside ``NAME.toml``."""
    spec = Path(spec)
    return spec.with_name(spec.stem + ".reference.json")


def spec_files(target: str | Path) -> list[Path]:
    """The spec files of ``target``: the file itself, or every ``*.toml`` of a folder (sorted)."""
    target = Path(target)
    if target.is_dir():
        files = sorted(target.glob("*.toml"))
        if not files:
            raise CladValueError(f"folder {str(target)!r} holds no spec (*.toml) to verify")
        return files
    if not target.is_file():
        raise CladValueError(f"{str(target)!r} is neither a spec file nor a folder of specs")
    return [target]


def _key(run: RunResult | dict) -> tuple:
    get = run.get if isinstance(run, dict) else (lambda k: getattr(run, k))
    return tuple(get(k) for k in _KEY)


def _label(key: tuple) -> str:
    return " / ".join(str(k) for k in key[:4]) + f" / seed {key[4]}"


def _tolerance_of(result: RunResult) -> tuple[float, str]:
    from ..detectors import DETECTORS

    name = (result.config.get("detector") or {}).get("name", "")
    # an import path: nothing is imported
    target = DETECTORS.path(name) if name in DETECTORS else name
    module = target.split(":")[0] if isinstance(target, str) else getattr(target, "__module__", "")
    if module.startswith(("clad.detectors.torch", "torch")):
        return (
            TORCH_TOLERANCE,
            "PyTorch detector: floating-point reductions may be ordered differently",
        )
    return DEFAULT_TOLERANCE, "deterministic"


def _run_record(result: RunResult, tolerance: float | None) -> dict:
    if tolerance is None:
        tol, why = _tolerance_of(result)
    else:
        tol, why = tolerance, "given when the reference was written"
    d = result.to_dict()
    return {
        "key": {k: d[k] for k in _KEY},
        "tolerance": tol,
        "tolerance_reason": why,
        "concepts": d["concepts"],
        "test_concepts": d["test_concepts"],
        "R": d["R"],
        "metrics": d["metrics"],
        "versions": d["versions"],
    }


def reference_document(
    spec_file: Path, results: Iterable[RunResult], tolerance: float | None = None
) -> dict:
    """The reference JSON of a spec's results (runs sorted by key)."""
    from .._version import __version__

    runs = sorted(results, key=lambda r: tuple(map(str, _key(r))))
    failed = [r for r in runs if not r.ok]
    if failed:
        raise CladValueError(
            f"{spec_file}: {len(failed)} run(s) failed, so no reference is written; first: "
            f"{_label(_key(failed[0]))}: {(failed[0].error or '').strip().splitlines()[-1:]}"
        )
    return to_jsonable(
        {
            "format": FORMAT,
            "spec": spec_file.name,
            "clad_version": __version__,
            "runs": [_run_record(r, tolerance) for r in runs],
        }
    )


def check_tolerance(tol: Any, where: str = "tolerance") -> float:
    """``tol`` as a float if it is a number from 0 to :data:`MAX_TOLERANCE`, else a CladValueError."""
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol <= MAX_TOLERANCE:
        raise CladValueError(
            f"{where}={tol!r}; expected a number from 0 to {MAX_TOLERANCE:g} (an absolute "
            f"difference allowed per value; {DEFAULT_TOLERANCE:g} for deterministic detectors, "
            f"{TORCH_TOLERANCE:g} for PyTorch ones)"
        )
    return float(tol)


def _count_numbers(doc: Any) -> int:
    if isinstance(doc, dict):
        return sum(_count_numbers(v) for v in doc.values())
    if isinstance(doc, list):
        return sum(_count_numbers(v) for v in doc)
    return int(doc is None or (isinstance(doc, (int, float)) and not isinstance(doc, bool)))


def _diff(path: str, ref: Any, got: Any, tol: float, out: list) -> None:
    if isinstance(ref, dict) and isinstance(got, dict):
        # a value the rerun adds (a metric newer than the reference) is not a difference
        for k in ref:
            if k not in got:
                out.append((f"{path}.{k}", ref[k], "(absent)", None))
            else:
                _diff(f"{path}.{k}", ref[k], got[k], tol, out)
    elif isinstance(ref, list) and isinstance(got, list):
        if len(ref) != len(got):
            out.append((f"{path}", f"{len(ref)} values", f"{len(got)} values", None))
            return
        for i, (a, b) in enumerate(zip(ref, got)):
            _diff(f"{path}[{i}]", a, b, tol, out)
    elif (
        isinstance(ref, (int, float))
        and isinstance(got, (int, float))
        and not isinstance(ref, bool)
    ):
        delta = abs(float(ref) - float(got))
        if not delta <= tol:
            out.append((path, ref, got, delta))
    elif ref != got:
        out.append((path, ref, got, None))


@dataclass(frozen=True)
class RunCheck:
    """One run's comparison: ``status`` is ``"same"``, ``"differs"``, ``"missing"`` (in the reference,
    not rerun), ``"new"`` (rerun, not in the reference) or ``"failed"``; ``differences`` lists
    ``(path, reference, now, |difference| or None)``."""

    key: tuple
    status: str
    tolerance: float | None = None
    differences: tuple = ()
    version_changes: dict = field(default_factory=dict)
    #: how many values of the reference (R cells, metrics; undefined ones included) were compared
    compared: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "same"


def compare_run(ref: dict, result: RunResult) -> RunCheck:
    """Compare one rerun with its reference record."""
    key = tuple(ref["key"][k] for k in _KEY)
    if not result.ok:
        last = (result.error or "").strip().splitlines()[-1:] or ["(no traceback)"]
        return RunCheck(key, "failed", ref.get("tolerance"), (("error", None, last[0], None),))
    now = _run_record(result, ref.get("tolerance"))
    tol = float(ref.get("tolerance", DEFAULT_TOLERANCE))
    out: list = []
    for part in ("concepts", "test_concepts", "R", "metrics"):
        _diff(part, ref.get(part), now[part], tol, out)
    versions = {
        k: (ref.get("versions", {}).get(k), v)
        for k, v in now["versions"].items()
        if ref.get("versions", {}).get(k) != v
    }
    compared = sum(_count_numbers(ref.get(part)) for part in ("R", "metrics"))
    return RunCheck(key, "differs" if out else "same", tol, tuple(out), versions, compared)


def compare(reference: dict, results: Iterable[RunResult]) -> list[RunCheck]:
    """Every run of the reference and of the rerun, compared (see :class:`RunCheck`)."""
    got = {_key(r): r for r in results}
    refs = {tuple(r["key"][k] for k in _KEY): r for r in reference.get("runs", [])}
    checks = [
        compare_run(ref, got[key]) if key in got else RunCheck(key, "missing", ref.get("tolerance"))
        for key, ref in refs.items()
    ]
    return checks + [RunCheck(key, "new") for key in got if key not in refs]


@dataclass(frozen=True)
class SpecCheck:
    """The comparison of one spec: its file, the runs' checks and the seconds the rerun took."""

    spec_file: Path
    runs: tuple[RunCheck, ...]
    seconds: float

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.runs)


def _read_reference(path: Path) -> dict:
    if path.is_dir():
        raise DataError(
            f"reference results {str(path)!r} is a folder; expected the JSON file `clad verify --update` "
            "writes"
        )
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(
            f"no reference results {str(path)!r}; write them with `clad verify --update "
            f"{path.with_name(path.name.replace('.reference.json', '.toml'))}`"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise DataError(f"reference results {str(path)!r} are not valid JSON ({exc})") from None
    except OSError as exc:
        raise DataError(
            f"reference results {str(path)!r} cannot be read ({exc.strerror or exc})"
        ) from None
    if (
        not isinstance(doc, dict)
        or doc.get("format") != FORMAT
        or not isinstance(doc.get("runs"), list)
    ):
        raise DataError(
            f"{str(path)!r} is not a clad reference file (format {FORMAT} with a 'runs' list)"
        )
    for i, run in enumerate(doc["runs"]):  # each record checked before anything is run
        problem = _record_problem(run)
        if problem:
            raise DataError(
                f"reference results {str(path)!r}: runs[{i}] {problem}; write them again with "
                "`clad verify --update`"
            )
    return doc


def _record_problem(run: Any) -> str | None:
    """What is wrong with one reference record (None when it has the shape a comparison reads)."""
    if not isinstance(run, dict):
        return f"is {type(run).__name__}, not a table"
    key = run.get("key")
    if not isinstance(key, dict) or any(k not in key for k in _KEY):
        return f"has no 'key' with {', '.join(_KEY)}"
    if any(isinstance(key[k], bool) or not isinstance(key[k], (str, int)) for k in _KEY):
        return f"has a 'key' whose values are not names and a seed ({key!r})"
    try:
        check_tolerance(run.get("tolerance", DEFAULT_TOLERANCE))
    except CladValueError as exc:
        return str(exc)
    for part in ("R", "metrics", "versions"):
        if part in run and not isinstance(run[part], dict):
            return f"{part!r} is {type(run[part]).__name__}, not a table"
    for part in ("R", "metrics"):
        if not _count_numbers(run.get(part)):
            return f"holds no {part} values (nothing to compare)"
    for part in ("concepts", "test_concepts"):
        if part in run and not (
            isinstance(run[part], list) and all(isinstance(c, str) for c in run[part])
        ):
            return f"{part!r} is not a list of names"
    return None


def _run(spec_file: Path, jobs: int) -> tuple[list[RunResult], float]:
    from .executors import execute_grid
    from .settings import Execution
    from .spec import load_spec

    spec = load_spec(spec_file)
    configs = list({c.run_id: c for c in spec.configs}.values())
    t0 = time.perf_counter()
    results = [
        ev.result
        for ev in execute_grid(configs, Execution(jobs=jobs, threads=1))
        if ev.kind == "finished"
    ]
    return results, time.perf_counter() - t0


def verify_spec(spec_file: str | Path, jobs: int = 1) -> SpecCheck:
    """Rerun ``spec_file`` and compare with its reference (:func:`reference_path`)."""
    spec_file = Path(spec_file)
    reference = _read_reference(reference_path(spec_file))
    results, seconds = _run(spec_file, jobs)
    return SpecCheck(spec_file, tuple(compare(reference, results)), seconds)


def _dumps(doc: Any, indent: int = 0) -> str:
    """Indented strict JSON with every list of plain values on one line (a matrix: one row a line)."""
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(doc, dict) and doc:
        items = [
            f"{inner}{json.dumps(str(k))}: {_dumps(v, indent + 1).lstrip()}" for k, v in doc.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}" + ("\n" if indent == 0 else "")
    if isinstance(doc, list) and any(isinstance(v, (dict, list)) for v in doc):
        return "[\n" + ",\n".join(inner + _dumps(v, indent + 1).lstrip() for v in doc) + f"\n{pad}]"
    return json.dumps(doc, allow_nan=False, separators=(", ", ": "))


def update_reference(
    spec_file: str | Path, jobs: int = 1, tolerance: float | None = None
) -> tuple[Path, int, float]:
    """Rerun ``spec_file`` and (re)write its reference; returns the file, its run count and the seconds."""
    spec_file = Path(spec_file)
    if tolerance is not None:
        check_tolerance(tolerance)
    path = reference_path(spec_file)
    if path.is_dir():
        raise DataError(
            f"reference results {str(path)!r} is a folder; remove it to write the reference file there"
        )
    if not os.access(path.parent, os.W_OK):  # said before the rerun, not after it
        raise DestinationError(
            path.parent,
            "the folder cannot be written",
            "make it writable, or copy the spec into a writable folder",
        )
    results, seconds = _run(spec_file, jobs)
    doc = reference_document(spec_file, results, tolerance)
    try:
        atomic_write_text(path, _dumps(doc))
    except OSError as exc:
        raise DestinationError(path, exc.strerror or str(exc), "give a writable folder") from None
    return path, len(doc["runs"]), seconds


def _num(v) -> str:
    return f"{v:.12g}" if isinstance(v, float) else str(v)


def format_check(check: SpecCheck, max_lines: int = 5) -> str:
    """The per-run table of a :class:`SpecCheck`, with up to ``max_lines`` differences per run."""
    n_same = sum(r.ok for r in check.runs)
    lines = [
        f"{check.spec_file}: {len(check.runs)} runs, {n_same} same, {len(check.runs) - n_same} differ "
        f"({check.seconds:.1f} s)"
    ]
    width = max([len(_label(r.key)) for r in check.runs] + [3])
    lines.append(
        f"  {'run':<{width}s}  {'result':8s} {'values':>6s}  {'max |diff|':>10s}  tolerance"
    )
    for r in check.runs:
        deltas = [d[3] for d in r.differences if d[3] is not None]
        worst = f"{max(deltas):.3g}" if deltas else ""
        tol = "" if r.tolerance is None else f"{r.tolerance:g}"
        lines.append(
            f"  {_label(r.key):<{width}s}  {r.status:8s} {len(r.differences) or '':>6}  {worst:>10s}  {tol}"
        )
        for path, ref, now, delta in r.differences[:max_lines]:
            extra = f" (|diff| {delta:.3g})" if delta is not None else ""
            lines.append(f"      {path}: reference {_num(ref)}, now {_num(now)}{extra}")
        if len(r.differences) > max_lines:
            lines.append(f"      ... and {len(r.differences) - max_lines} more")
        if r.version_changes and not r.ok:
            shown = ", ".join(
                f"{k} {v[1]} (reference {v[0]})" for k, v in sorted(r.version_changes.items())
            )
            lines.append(f"      versions differ from the reference: {shown}")
    return "\n".join(lines)
