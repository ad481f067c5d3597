"""Bad input, fuzzed: every malformed input ends in a clean clad error (never a deep IndexError,
KeyError or bare ValueError), no half-written file is left behind, and a results folder read or
exported with bad arguments is byte-for-byte the same afterwards."""

import collections
import hashlib
import warnings

import pytest

from clad.errors import CladError
from clad.results.store import DestinationError

from tests.fuzzing import MAY_BE_VALID, cases, feature_cases, reliability_cases, surface_cases

#: what a bad input may end in: a clad error, or a destination that cannot be written (exit 111)
CLEAR = (CladError, DestinationError)


def _digest(path) -> str:
    if path.is_dir():  # a folder: its listing
        return "folder:" + ",".join(sorted(p.name for p in path.iterdir()))
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


def _fuzz(generator):
    tally, clean, bad = collections.Counter(), collections.Counter(), []
    for kind, desc, thunk in generator:
        tally[kind] += 1
        guards = getattr(thunk, "guards", ())
        before = [_digest(p) for p in guards]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                thunk()
        except CLEAR as exc:
            if not str(exc).strip():
                bad.append((kind, desc, "empty message"))
            else:
                clean[kind] += 1
        except Exception as exc:  # noqa: BLE001 - anything else is what this test hunts for
            bad.append((kind, desc, f"{type(exc).__name__}: {exc}"))
        else:
            if kind in MAY_BE_VALID:
                clean[kind] += 1  # still a valid input: accepted
            else:
                bad.append((kind, desc, "accepted without error"))
        lost = [str(p) for p, d in zip(guards, before) if _digest(p) != d]
        if lost:
            bad.append((kind, desc, f"changed by the call: {', '.join(lost)}"))
    return tally, clean, bad


def _report(capsys, title, tally, clean):
    with capsys.disabled():
        print(
            f"\n{title}: {sum(tally.values())} bad inputs over {len(tally)} kinds; {sum(clean.values())} ended "
            "cleanly"
        )
        for kind, n in sorted(tally.items()):
            print(f"  {kind:28s} {n:4d}")


@pytest.mark.slow
def test_every_bad_input_ends_in_a_clean_clad_error(capsys):
    tally, clean, bad = _fuzz(cases(seed=0, per_kind=50))
    new_tally, new_clean, new_bad = _fuzz(feature_cases(seed=0, per_kind=50))
    _report(capsys, "fuzz (the features added since)", new_tally, new_clean)
    tally.update(new_tally)
    clean.update(new_clean)
    bad += new_bad
    rel_tally, rel_clean, rel_bad = _fuzz(reliability_cases(seed=0, per_kind=50))
    _report(
        capsys,
        "fuzz (reliability: links, foreign databases, sizes, plug-ins, late checks)",
        rel_tally,
        rel_clean,
    )
    tally.update(rel_tally)
    clean.update(rel_clean)
    bad += rel_bad
    new_tally, new_clean, new_bad = _fuzz(surface_cases(seed=0, per_kind=50))
    _report(
        capsys,
        "fuzz (thresholds, baselines, replicas, [slurm], report options, metric plug-ins)",
        new_tally,
        new_clean,
    )
    tally.update(new_tally)
    clean.update(new_clean)
    bad += new_bad
    _report(capsys, "fuzz (all)", tally, clean)
    assert len(tally) >= 80
    assert sum(tally.values()) >= 4000
    assert not bad, "\n".join(f"{k} [{d}]: {m}" for k, d, m in bad[:30])


def _rows(db, run_ids):
    """The stored rows of ``run_ids`` (runs, R cells, metrics) as comparable tuples."""
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out = {}
        for rid in run_ids:
            out[rid] = (
                con.execute("SELECT * FROM runs WHERE run_id = ?", (rid,)).fetchall(),
                con.execute(
                    "SELECT * FROM r_cells WHERE run_id = ? ORDER BY 3, 5", (rid,)
                ).fetchall(),
                con.execute(
                    "SELECT * FROM metrics WHERE run_id = ? ORDER BY 2, 3", (rid,)
                ).fetchall(),
            )
        return out
    finally:
        con.close()


@pytest.mark.slow
def test_bad_inputs_only_a_run_meets_fail_their_run_clearly_and_lose_nothing(tmp_path, capsys):
    """A few inputs that no spec check can see (the detector's output, the data's rows, a damaged
    record): each fails its run with a message naming the cause, or is computed again, and the
    folder's other runs are byte-for-byte the same afterwards."""
    import pickle
    import sqlite3

    from clad.engine.benchmark import run_spec

    base = {
        "name": "runtime",
        "seeds": 1,
        "strategies": ["naive"],
        "datasets": [
            {"name": "synthetic", "n_concepts": 2, "n_features": 2, "n_train": 30, "n_test": 20}
        ],
    }
    tally = collections.Counter()
    cases = [
        (
            "runtime_scores_text",
            {"scenarios": ["concept_incremental"], "detectors": ["hbos", "plugins:TextScores"]},
            "score() returned text",
        ),
        (
            "runtime_anytime_rows",
            {
                "scenarios": [
                    "concept_incremental",
                    {"name": "concept_agnostic", "batch_size": 10, "anytime_per_concept": 31},
                ],
                "detectors": ["hbos"],
            },
            "anytime_per_concept=31 is more than the 30 rows",
        ),
    ]
    for i, (kind, change, cause) in enumerate(cases):
        out = tmp_path / f"o{i}"
        first = run_spec({**base, **change}, out)
        good = [r.run_id for r in first.runs if r.ok]
        (failed,) = [r for r in first.runs if not r.ok]
        assert cause in failed.error and good, (kind, failed.error)
        before = _rows(out / "results.sqlite", good)
        again = run_spec({**base, **change}, out)  # the failed run is tried again, the others kept
        assert again.n_computed == 1 and _rows(out / "results.sqlite", good) == before
        tally[kind] += 2
    # a damaged record is computed again; the other runs are left as they were
    for j, column in enumerate(("timings", "config", "concepts")):
        out = tmp_path / f"d{j}"
        first = run_spec(
            {**base, "seeds": 3, "scenarios": ["concept_incremental"], "detectors": ["hbos"]}, out
        )
        hit, *rest = [r.run_id for r in first.runs]
        before = _rows(out / "results.sqlite", rest)
        con = sqlite3.connect(out / "results.sqlite")
        con.execute(f"UPDATE runs SET {column} = ? WHERE run_id = ?", (pickle.dumps(j), hit))
        con.commit()
        con.close()
        again = run_spec(
            {**base, "seeds": 3, "scenarios": ["concept_incremental"], "detectors": ["hbos"]}, out
        )
        assert again.ok and again.n_computed == 1
        assert _rows(out / "results.sqlite", rest) == before
        tally["runtime_damaged_record"] += 1
    _report(capsys, "fuzz (run time)", tally, tally)


def test_the_reliability_kinds_end_in_clean_errors_with_their_files_unchanged(capsys):
    """The reliability round's kinds, a few inputs each (the slow test above runs 50 of each)."""
    tally, clean, bad = _fuzz(reliability_cases(seed=1, per_kind=4))
    assert len(tally) >= 20
    assert not bad, "\n".join(f"{k} [{d}]: {m}" for k, d, m in bad[:30])


def test_the_new_surface_ends_in_clean_errors_with_its_files_unchanged(capsys):
    """Thresholds, baselines, replicas, [slurm], the report's --headline and --latex-columns and
    base-metric plug-ins, a few inputs each (the slow test above runs 50 of each)."""
    tally, clean, bad = _fuzz(surface_cases(seed=1, per_kind=4))
    _report(capsys, "fuzz (new surface, a few each)", tally, clean)
    assert len(tally) >= 15
    assert not bad, "\n".join(f"{k} [{d}]: {m}" for k, d, m in bad[:30])
