"""Generators of malformed inputs for the bad-input fuzz tests.

Each generator yields ``(kind, description, thunk)``: calling ``thunk()`` feeds one malformed input
to clad. The fuzz test requires every call to either succeed (only where the kind says the input
may still be valid, e.g. a truncated spec that is still a spec) or raise a clad error; any other
exception (IndexError, KeyError, a bare ValueError from deep inside...) is a failure.
"""

from __future__ import annotations

import json
import string

import numpy as np

from clad import Concept, ConceptDataset, metrics
from clad.core.evaluation import Evaluator, check_base_metrics
from clad.results import load_results
from clad.scenarios import ConceptAgnostic
from clad.engine.spec import load_spec, parse_spec

GOOD_SPEC = """\
name = "fuzz"
base_metrics = ["roc_auc", "f1"]
seeds = [0, 1]
strategies = ["naive", "cumulative"]

[[datasets]]
name = "synthetic"
n_concepts = 3
n_train = 50

[[scenarios]]
name = "concept_agnostic"
batch_size = 64

[[detectors]]
name = "iforest"
n_estimators = 10
"""

#: kinds whose inputs may happen to be valid (then success is fine too)
MAY_BE_VALID = {"spec_truncated", "spec_mutated_name", "features_huge"}


def _good_concept(rng, n=20, d=3, labels=True):
    X = rng.normal(size=(n, d))
    y = np.r_[np.zeros(n - 3), np.ones(3)] if labels else None
    return Concept("ok", X, y)


def cases(seed: int = 0, per_kind: int = 50):
    rng = np.random.default_rng(seed)

    def rand_shape():
        return int(rng.integers(1, 30)), int(rng.integers(1, 8))

    # --- arrays and concepts --------------------------------------------------------------
    for i in range(per_kind):
        n, d = rand_shape()
        X = rng.normal(size=(n, d))
        X.flat[rng.integers(0, X.size)] = np.nan
        yield "features_nan", f"NaN in {n}x{d}", lambda X=X: Concept("c", X)
    for i in range(per_kind):
        n, d = rand_shape()
        X = rng.normal(size=(n, d))
        X.flat[rng.integers(0, X.size)] = rng.choice([np.inf, -np.inf])
        yield "features_inf", f"inf in {n}x{d}", lambda X=X: Concept("c", X)
    for i in range(per_kind):
        # 3-D features are windows (rows x steps x features), valid: 4-D is not
        shape = [(int(rng.integers(1, 9)),), (2, 2, 2, int(rng.integers(1, 4))), ()][i % 3]
        X = rng.normal(size=shape)
        yield "features_ndim", f"shape {shape}", lambda X=X: Concept("c", X)
    for i in range(per_kind):
        shape = [(0, int(rng.integers(1, 5))), (int(rng.integers(1, 5)), 0), (0, 0)][i % 3]
        yield "features_empty", f"shape {shape}", lambda s=shape: Concept("c", np.zeros(s))
    for i in range(per_kind):
        choices = [
            [["a", "b"], ["c", "d"]],
            [[1.0, 2.0], [3.0]],
            np.array([[object(), 1]], dtype=object),
            [[1 + 2j, 3j]],
            "not an array",
            [[None, 1.0]],
        ]
        X = choices[i % len(choices)]
        yield "features_type", f"{type(X).__name__} {str(X)[:30]}", lambda X=X: Concept("c", X)
    for i in range(per_kind):
        n, d = rand_shape()
        bad = [rng.integers(2, 9), -1, 0.5, 7][i % 4]
        y = np.zeros(n)
        y[rng.integers(0, n)] = bad
        yield "labels_non_binary", f"label {bad}", lambda n=n, d=d, y=y: Concept("c", np.zeros((n, d)), y)
    for i in range(per_kind):
        n, d = rand_shape()
        m = n + int(rng.choice([-1, 1])) * int(rng.integers(1, 4))
        m = max(m, 0) if m != n else n + 1
        yield "labels_length", f"{m} labels for {n} rows", lambda n=n, d=d, m=m: Concept("c", np.zeros((n, d)), np.zeros(m))
    for i in range(per_kind):
        n, d = rand_shape()
        y = np.zeros(n)
        y[rng.integers(0, n)] = [np.nan, np.inf][i % 2]
        yield "labels_nan", "NaN/inf label", lambda n=n, d=d, y=y: Concept("c", np.zeros((n, d)), y)
    for i in range(per_kind):
        y = [np.array(["a"] * 3), np.zeros((3, 2)), np.array([[0], [1], [0]])][i % 3]
        yield "labels_type", f"labels {y.dtype} {y.shape}", lambda y=y: Concept("c", np.zeros((3, 2)), y)
    for i in range(per_kind):
        name = ["", None, 3, b"x", ["a"]][i % 5]
        yield "concept_name", repr(name), lambda name=name: Concept(name, np.zeros((2, 2)))
    for i in range(per_kind):
        d1, d2 = int(rng.integers(1, 6)), int(rng.integers(6, 10))
        a = Concept("a", rng.normal(size=(10, d1)))
        t = Concept("a", rng.normal(size=(10, d2)), np.r_[np.zeros(8), np.ones(2)])
        yield "dataset_features", f"{d1} vs {d2}", lambda a=a, t=t: ConceptDataset([a], [t])
    for i in range(per_kind):
        a = _good_concept(rng, labels=False)
        bad = [
            lambda a=a: ConceptDataset([a], [a]),  # test concept without labels
            lambda a=a: ConceptDataset([], [a]),
            lambda a=a: ConceptDataset([a], []),
            lambda a=a: ConceptDataset([np.zeros((2, 2))], [a]),
            lambda a=a: ConceptDataset([a], [_good_concept(rng), _good_concept(rng)]),  # duplicate names
        ][i % 5]
        yield "dataset_structure", f"variant {i % 5}", bad

    # --- metrics --------------------------------------------------------------------------
    for i in range(per_kind):
        R = [np.zeros((0, 0)), np.zeros(int(rng.integers(1, 5))), [[]], np.zeros((2, 2, 2)), "R"][i % 5]
        yield "metric_matrix", f"{type(R).__name__}", lambda R=R: metrics.continual_average(R)
    for i in range(per_kind):
        n = int(rng.integers(1, 5))
        t = [list(range(n + 1)), [n + 3] * n, [-2] * n, list(range(max(n - 1, 0)))][i % 4]
        yield "metric_learned_at", str(t), lambda n=n, t=t: metrics.backward_transfer(np.zeros((n, n)), t)

    # --- evaluation and scenario parameters ----------------------------------------------
    for i in range(per_kind):
        names = [["auc"], [], ["roc_auc", "roc_auc"], [3], "rocauc", None][i % 6]
        yield "base_metrics", repr(names), lambda names=names: check_base_metrics(names)
    for i in range(per_kind):
        bs = [0, -int(rng.integers(1, 100)), float(rng.uniform(0.1, 50)), "64", True, None][i % 6]

        def run_stream(bs=bs):
            ds = ConceptDataset([Concept("ok", rng.normal(size=(20, 3)))], [_good_concept(rng)])
            from clad.strategies import Naive

            from plugins import DistanceToMean

            ConceptAgnostic(batch_size=bs).run(ds, Naive(DistanceToMean()), Evaluator(ds.test))

        yield "scenario_params", f"batch_size={bs!r}", run_stream

    # --- huge values: a clean run or a clean detector error -----------------------------------
    for i in range(per_kind):
        def huge(i=i):
            from sklearn.ensemble import IsolationForest

            from clad import ConceptIncremental, run_experiment
            from clad.strategies import Naive

            from plugins import DistanceToMean

            big = float(10.0 ** int(rng.integers(150, 308)))
            X = rng.normal(size=(30, 3)) * big
            ds = ConceptDataset([Concept("a", X)], [Concept("a", X, np.r_[np.zeros(27), np.ones(3)])])
            det = DistanceToMean() if i % 2 else IsolationForest(n_estimators=5)
            run_experiment(ds, ConceptIncremental(), Naive(det), seed=0)

        yield "features_huge", "values up to 1e308", huge

    # --- spec files -----------------------------------------------------------------------
    for i in range(per_kind):
        cut = int(rng.integers(1, len(GOOD_SPEC) - 1))
        yield "spec_truncated", f"cut at {cut}", lambda cut=cut: parse_text(GOOD_SPEC[:cut])
    for i in range(per_kind):
        text = GOOD_SPEC
        garbage = "".join(rng.choice(list(string.printable), size=int(rng.integers(1, 6))))
        pos = int(rng.integers(0, len(text)))
        text = text[:pos] + garbage + "\n= [[" + text[pos:]
        yield "spec_syntax", f"garbage at {pos}", lambda text=text: parse_text(text)
    for i in range(per_kind):
        key, value = [
            ("seeds", '"many"'), ("seeds", "0"), ("seeds", "[1, 1]"), ("seeds", "[-3]"), ("base_metrics", "3"),
            ("base_metrics", "[]"), ("name", "7"), ("skip_incompatible", '"yes"'), ("seeds", "true"),
            ("base_metrics", '["roc_auc", "roc_auc"]'),
        ][i % 10]
        text = f"{key} = {value}\n" + "\n".join(l for l in GOOD_SPEC.splitlines() if not l.startswith(key + " "))
        yield "spec_value_types", f"{key} = {value}", lambda text=text: parse_text(text)
    for i in range(per_kind):
        raw = {
            "datasets": [5, [], {"name": 3}, {}, "synthetic", {"name": "synthetic", "grid": 3}][i % 6],
            "scenarios": ["concept_aware"], "strategies": ["naive"], "detectors": ["iforest"],
        }
        if i % 2:
            raw["scenarios"], raw["datasets"] = raw["datasets"], ["synthetic"]
        if i % 6 == 4:  # a valid name: break another part instead
            raw["detectors"] = [{"name": "iforest", "label": 5}]
        yield "spec_structure", json.dumps(raw, default=str)[:60], lambda raw=raw: parse_spec(raw, "fuzz")
    for i in range(per_kind):
        name = ["naive", "cumulative", "iforest", "concept_aware", "synthetic"][i % 5]
        chars = list(name)
        j = int(rng.integers(0, len(chars)))
        chars[j] = str(rng.choice(list(string.ascii_lowercase + "_")))
        mutated = "".join(chars)
        text = GOOD_SPEC.replace(f'"{name}"', f'"{mutated}"', 1)
        yield "spec_mutated_name", f"{name} -> {mutated}", lambda text=text: parse_text(text)
    for i in range(per_kind):
        key = ["n_estimator", "batchsize", "nconcepts", "max_sample", "contamnation"][i % 5]
        section = ["detectors", "scenarios", "datasets", "detectors", "detectors"][i % 5]
        anchor = {"detectors": 'name = "iforest"', "scenarios": 'name = "concept_agnostic"',
                  "datasets": 'name = "synthetic"'}[section]
        text = GOOD_SPEC.replace(anchor, f"{anchor}\n{key} = {int(rng.integers(1, 99))}")
        yield "spec_unknown_param", key, lambda text=text: parse_text(text)
    for i in range(per_kind):
        data = [GOOD_SPEC.encode("utf-16"), bytes(rng.integers(128, 256, size=40, dtype=np.uint8)),
                ("name = \"caf\xe9\"\n").encode("latin-1") + GOOD_SPEC.encode()][i % 3]
        yield "spec_encoding", f"{len(data)} bytes", lambda data=data: parse_bytes(data)

    # --- data files -----------------------------------------------------------------------
    yield from file_cases(rng, per_kind)

    # --- results files --------------------------------------------------------------------
    good = json.dumps({"runs": [{"dataset": "d", "scenario": "s", "strategy": "t", "detector": "x", "seed": 0,
                                 "R": {"roc_auc": [[0.5]]}}]})
    for i in range(per_kind):
        cut = int(rng.integers(0, len(good) - 1))
        yield "results_truncated", f"cut at {cut}", lambda text=good[:cut]: read_text(text)
    for i in range(per_kind):
        doc = [[], {"runs": 3}, {"runs": [3]}, {"runs": [{"seed": "x"}]},
               {"runs": [{"dataset": "d", "scenario": "s", "strategy": "t", "detector": "x", "seed": "zero"}]},
               {"runs": [{"dataset": "d", "scenario": "s", "strategy": "t", "detector": "x", "seed": 0,
                          "R": {"roc_auc": [["a"]]}}]}][i % 6]
        yield "results_structure", json.dumps(doc)[:50], lambda doc=doc: read_text(json.dumps(doc))


_TMP = {}


def _tmpdir():
    import tempfile
    from pathlib import Path

    if "dir" not in _TMP:
        _TMP["dir"] = Path(tempfile.mkdtemp(prefix="clad-fuzz-"))
    return _TMP["dir"]


def parse_text(text: str):
    p = _tmpdir() / "spec.toml"
    p.write_text(text, encoding="utf-8")
    return load_spec(p)


def parse_bytes(data: bytes):
    p = _tmpdir() / "spec.toml"
    p.write_bytes(data)
    return load_spec(p)


def read_text(text: str):
    p = _tmpdir() / "results.json"
    p.write_text(text, encoding="utf-8")
    return load_results(p)


def _write_npz(path, **arrays):
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def file_cases(rng, per_kind):
    """Malformed data files read by the real loaders."""
    import io

    from clad.datasets import load_npz_files, load_odds_mat, load_pyclad, load_table

    d = _tmpdir()
    good = io.BytesIO()
    np.savez(good, X=rng.normal(size=(40, 3)), y=np.r_[np.zeros(36), np.ones(4)])
    good = good.getvalue()
    for i in range(per_kind):
        cut = int(rng.integers(0, len(good) - 1))

        def run(cut=cut, i=i):
            p = d / f"trunc{i}.npz"
            p.write_bytes(good[:cut])
            load_npz_files([str(p)], data_dir=str(d))

        yield "npz_truncated", f"cut at {cut}", run
    variants = [
        dict(Z=np.zeros((4, 2)), y=np.zeros(4)),                          # no X
        dict(X=np.zeros((4, 2))),                                         # no y
        dict(X=np.zeros((4, 2)), y=np.zeros(5)),                          # length mismatch
        dict(X=np.zeros((4, 2)), y=np.array([0, 1, 2, 1])),               # non-binary
        dict(X=np.array([[np.nan, 1], [1, 1], [2, 2], [3, 3]]), y=np.array([0, 0, 1, 1])),
        dict(X=np.zeros(4), y=np.zeros(4)),                               # 1-D X
        dict(X=np.array([["a", "b"]] * 4), y=np.array([0, 0, 1, 1])),     # strings
        dict(X=np.zeros((4, 2)), y=np.ones(4)),                           # no normal rows
        dict(X=np.zeros((0, 2)), y=np.zeros(0)),                          # empty
    ]
    for i in range(per_kind):
        arrays = variants[i % len(variants)]

        def run(arrays=arrays, i=i):
            p = d / f"content{i}.npz"
            _write_npz(p, **arrays)
            load_npz_files([str(p)], data_dir=str(d))

        yield "npz_content", str(sorted(arrays)), run
    csvs = [
        "concept,label,x1\na,0,1\na,0,oops\na,1,3\n",               # non-numeric feature
        "group,label,x1\na,0,1\na,1,2\n",                            # no concept column
        "concept,lab,x1\na,0,1\na,1,2\n",                            # no label column
        "concept,label,x1\na,0,1\na,3,2\n",                          # non-binary label
        "",                                                               # empty file
        "concept,label,x1\na,0,1,9,9\na,1\n",                        # ragged
        "concept,label\na,0\na,1\n",                                 # no feature column
        "concept,label,x1\na,0,\na,1,2\n",                           # missing value
    ]
    for i in range(per_kind):
        text = csvs[i % len(csvs)]

        def run(text=text, i=i):
            p = d / f"table{i}.csv"
            p.write_bytes(text.encode() if i % 3 else text.encode("utf-16"))
            load_table(file=str(p), data_dir=str(d))

        yield "csv_malformed", repr(text[:30]), run
    for i in range(per_kind):
        data = bytes(rng.integers(0, 256, size=int(rng.integers(0, 300)), dtype=np.uint8))

        def run(data=data, i=i):
            p = d / f"odds{i}.mat"
            p.write_bytes(data)
            load_odds_mat(str(p), data_dir=str(d))

        yield "mat_malformed", f"{len(data)} random bytes", run
    for i in range(per_kind):
        entries = [
            np.array([1, 2, 3], dtype=object),
            np.array([{"name": "a"}], dtype=object),
            np.array([{"name": "a", "train_data": np.zeros((3, 2)), "test_data": np.zeros((3, 3)),
                       "test_labels": np.array([0, 1, 0])}], dtype=object),
            np.zeros((3, 3)),
        ][i % 4]
        allow = i % 5 != 0  # every fifth: the opt-in is missing

        def run(entries=entries, allow=allow, i=i):
            p = d / f"pyclad{i}.npy"
            np.save(p, entries, allow_pickle=True)
            load_pyclad(str(p), allow_pickle=allow, data_dir=str(d))

        yield "pyclad_file", f"variant {i % 4} allow_pickle={allow}", run
