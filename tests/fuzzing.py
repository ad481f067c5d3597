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
from clad.core.evaluation import Evaluator
from clad.metrics.base import check_base_metrics
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
        yield (
            "labels_non_binary",
            f"label {bad}",
            lambda n=n, d=d, y=y: Concept("c", np.zeros((n, d)), y),
        )
    for i in range(per_kind):
        n, d = rand_shape()
        m = n + int(rng.choice([-1, 1])) * int(rng.integers(1, 4))
        m = max(m, 0) if m != n else n + 1
        yield (
            "labels_length",
            f"{m} labels for {n} rows",
            lambda n=n, d=d, m=m: Concept("c", np.zeros((n, d)), np.zeros(m)),
        )
    for i in range(per_kind):
        n, d = rand_shape()
        y = np.zeros(n)
        y[rng.integers(0, n)] = [np.nan, np.inf][i % 2]
        yield "labels_nan", "NaN/inf label", lambda n=n, d=d, y=y: Concept("c", np.zeros((n, d)), y)
    for i in range(per_kind):
        y = [np.array(["a"] * 3), np.zeros((3, 2)), np.array([[0], [1], [0]])][i % 3]
        yield (
            "labels_type",
            f"labels {y.dtype} {y.shape}",
            lambda y=y: Concept("c", np.zeros((3, 2)), y),
        )
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
            lambda a=a: ConceptDataset(
                [a], [_good_concept(rng), _good_concept(rng)]
            ),  # duplicate names
        ][i % 5]
        yield "dataset_structure", f"variant {i % 5}", bad

    # --- metrics --------------------------------------------------------------------------
    for i in range(per_kind):
        R = [np.zeros((0, 0)), np.zeros(int(rng.integers(1, 5))), [[]], np.zeros((2, 2, 2)), "R"][
            i % 5
        ]
        yield "metric_matrix", f"{type(R).__name__}", lambda R=R: metrics.continual_average(R)
    for i in range(per_kind):
        n = int(rng.integers(1, 5))
        t = [list(range(n + 1)), [n + 3] * n, [-2] * n, list(range(max(n - 1, 0)))][i % 4]
        yield (
            "metric_learned_at",
            str(t),
            lambda n=n, t=t: metrics.backward_transfer(np.zeros((n, n)), t),
        )

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
            ds = ConceptDataset(
                [Concept("a", X)], [Concept("a", X, np.r_[np.zeros(27), np.ones(3)])]
            )
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
            ("seeds", '"many"'),
            ("seeds", "0"),
            ("seeds", "[1, 1]"),
            ("seeds", "[-3]"),
            ("base_metrics", "3"),
            ("base_metrics", "[]"),
            ("name", "7"),
            ("skip_incompatible", '"yes"'),
            ("seeds", "true"),
            ("base_metrics", '["roc_auc", "roc_auc"]'),
        ][i % 10]
        text = f"{key} = {value}\n" + "\n".join(
            l for l in GOOD_SPEC.splitlines() if not l.startswith(key + " ")
        )
        yield "spec_value_types", f"{key} = {value}", lambda text=text: parse_text(text)
    for i in range(per_kind):
        raw = {
            "datasets": [5, [], {"name": 3}, {}, "synthetic", {"name": "synthetic", "grid": 3}][
                i % 6
            ],
            "scenarios": ["concept_aware"],
            "strategies": ["naive"],
            "detectors": ["iforest"],
        }
        if i % 2:
            raw["scenarios"], raw["datasets"] = raw["datasets"], ["synthetic"]
        if i % 6 == 4:  # a valid name: break another part instead
            raw["detectors"] = [{"name": "iforest", "label": 5}]
        yield (
            "spec_structure",
            json.dumps(raw, default=str)[:60],
            lambda raw=raw: parse_spec(raw, "fuzz"),
        )
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
        anchor = {
            "detectors": 'name = "iforest"',
            "scenarios": 'name = "concept_agnostic"',
            "datasets": 'name = "synthetic"',
        }[section]
        text = GOOD_SPEC.replace(anchor, f"{anchor}\n{key} = {int(rng.integers(1, 99))}")
        yield "spec_unknown_param", key, lambda text=text: parse_text(text)
    for i in range(per_kind):
        data = [
            GOOD_SPEC.encode("utf-16"),
            bytes(rng.integers(128, 256, size=40, dtype=np.uint8)),
            ('name = "caf\xe9"\n').encode("latin-1") + GOOD_SPEC.encode(),
        ][i % 3]
        yield "spec_encoding", f"{len(data)} bytes", lambda data=data: parse_bytes(data)

    # --- data files -----------------------------------------------------------------------
    yield from file_cases(rng, per_kind)

    # --- results files --------------------------------------------------------------------
    good = json.dumps(
        {
            "runs": [
                {
                    "dataset": "d",
                    "scenario": "s",
                    "strategy": "t",
                    "detector": "x",
                    "seed": 0,
                    "R": {"roc_auc": [[0.5]]},
                }
            ]
        }
    )
    for i in range(per_kind):
        cut = int(rng.integers(0, len(good) - 1))
        yield "results_truncated", f"cut at {cut}", lambda text=good[:cut]: read_text(text)
    for i in range(per_kind):
        doc = [
            [],
            {"runs": 3},
            {"runs": [3]},
            {"runs": [{"seed": "x"}]},
            {
                "runs": [
                    {
                        "dataset": "d",
                        "scenario": "s",
                        "strategy": "t",
                        "detector": "x",
                        "seed": "zero",
                    }
                ]
            },
            {
                "runs": [
                    {
                        "dataset": "d",
                        "scenario": "s",
                        "strategy": "t",
                        "detector": "x",
                        "seed": 0,
                        "R": {"roc_auc": [["a"]]},
                    }
                ]
            },
        ][i % 6]
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
        dict(Z=np.zeros((4, 2)), y=np.zeros(4)),  # no X
        dict(X=np.zeros((4, 2))),  # no y
        dict(X=np.zeros((4, 2)), y=np.zeros(5)),  # length mismatch
        dict(X=np.zeros((4, 2)), y=np.array([0, 1, 2, 1])),  # non-binary
        dict(X=np.array([[np.nan, 1], [1, 1], [2, 2], [3, 3]]), y=np.array([0, 0, 1, 1])),
        dict(X=np.zeros(4), y=np.zeros(4)),  # 1-D X
        dict(X=np.array([["a", "b"]] * 4), y=np.array([0, 0, 1, 1])),  # strings
        dict(X=np.zeros((4, 2)), y=np.ones(4)),  # no normal rows
        dict(X=np.zeros((0, 2)), y=np.zeros(0)),  # empty
    ]
    for i in range(per_kind):
        arrays = variants[i % len(variants)]

        def run(arrays=arrays, i=i):
            p = d / f"content{i}.npz"
            _write_npz(p, **arrays)
            load_npz_files([str(p)], data_dir=str(d))

        yield "npz_content", str(sorted(arrays)), run
    csvs = [
        "concept,label,x1\na,0,1\na,0,oops\na,1,3\n",  # non-numeric feature
        "group,label,x1\na,0,1\na,1,2\n",  # no concept column
        "concept,lab,x1\na,0,1\na,1,2\n",  # no label column
        "concept,label,x1\na,0,1\na,3,2\n",  # non-binary label
        "",  # empty file
        "concept,label,x1\na,0,1,9,9\na,1\n",  # ragged
        "concept,label\na,0\na,1\n",  # no feature column
        "concept,label,x1\na,0,\na,1,2\n",  # missing value
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
            np.array(
                [
                    {
                        "name": "a",
                        "train_data": np.zeros((3, 2)),
                        "test_data": np.zeros((3, 3)),
                        "test_labels": np.array([0, 1, 0]),
                    }
                ],
                dtype=object,
            ),
            np.zeros((3, 3)),
        ][i % 4]
        allow = i % 5 != 0  # every fifth: the opt-in is missing

        def run(entries=entries, allow=allow, i=i):
            p = d / f"pyclad{i}.npy"
            np.save(p, entries, allow_pickle=True)
            load_pyclad(str(p), allow_pickle=allow, data_dir=str(d))

        yield "pyclad_file", f"variant {i % 4} allow_pickle={allow}", run


# ==================================================================================================
# The features added since: tuning, references, streams, time series, export, validate, verify,
# MLflow. Most are spec-time checks (milliseconds each); the ones that read or write a results
# folder carry ``guards``: files that must be byte-for-byte the same after the call.
# ==================================================================================================

BASE_RAW = {
    "name": "fuzz2",
    "seeds": 1,
    "strategies": ["naive"],
    "scenarios": ["concept_incremental"],
    "detectors": [{"name": "iforest", "n_estimators": 5}],
    "datasets": [
        {"name": "synthetic", "n_concepts": 3, "n_features": 2, "n_train": 30, "n_test": 20}
    ],
}
TUNED = {"mode": "first_concepts", "k": 1, "detectors": {"iforest": {"max_samples": [8, 16]}}}


def _raw(**changes):
    import copy

    raw = copy.deepcopy(BASE_RAW)
    raw.update(changes)
    return raw


def _mutate(rng, word: str) -> str:
    """``word`` with one character replaced, inserted or dropped (never ``word`` itself)."""
    chars = list(word)
    while True:
        j = int(rng.integers(0, len(chars)))
        op = int(rng.integers(0, 3))
        c = str(rng.choice(list(string.ascii_lowercase + "_")))
        new = (
            chars[:j] + [c] + chars[j + 1 :]
            if op == 0
            else (chars[:j] + [c] + chars[j:] if op == 1 else chars[:j] + chars[j + 1 :])
        )
        out = "".join(new)
        if out and out != word:
            return out


def _guarded(thunk, *paths):
    thunk.guards = [p for p in paths]
    return thunk


def results_folder():
    """A small finished results folder (built once per process), and a fresh copy of it."""
    import shutil

    from clad.engine.benchmark import run_spec

    if "folder" not in _TMP:
        out = _tmpdir() / "pristine"
        run_spec({**BASE_RAW, "seeds": 2}, out)
        _TMP["folder"] = out
        _TMP["copies"] = 0
    _TMP["copies"] += 1
    return shutil.copytree(_TMP["folder"], _tmpdir() / f"copy{_TMP['copies']}")


def _closed_ports(rng, n):
    import socket

    ports = []
    while len(ports) < n:
        port = int(rng.integers(1, 1024))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                continue  # something listens there
        except OSError:
            ports.append(port)
    return ports


def feature_cases(seed: int = 0, per_kind: int = 50):
    """Malformed inputs of the newer features, ``(kind, description, thunk)`` as :func:`cases`."""
    rng = np.random.default_rng(seed)
    P = lambda raw: lambda raw=raw: parse_spec(raw, "fuzz")  # noqa: E731

    # --- [tuning] ---------------------------------------------------------------------------
    for i in range(per_kind):
        mode = [
            _mutate(rng, "first_concepts"),
            _mutate(rng, "validation_split"),
            3,
            None,
            ["first_concepts"],
        ][i % 5]
        t = (
            {**TUNED, "mode": mode}
            if mode is not None
            else {k: v for k, v in TUNED.items() if k != "mode"}
        )
        yield "tuning_mode", repr(mode), P(_raw(tuning=t))
    for i in range(per_kind):
        k = [0, -int(rng.integers(1, 9)), 1.5, "1", True, 3, int(rng.integers(3, 99)), "missing"][
            i % 8
        ]
        t = {**TUNED, "k": k} if k != "missing" else {k2: v for k2, v in TUNED.items() if k2 != "k"}
        yield "tuning_k", repr(k), P(_raw(tuning=t))
    for i in range(per_kind):
        f = [
            0,
            1,
            -float(rng.uniform(0, 2)),
            1 + float(rng.uniform(0, 2)),
            "0.2",
            True,
            "missing",
            "with_k",
        ][i % 8]
        t = {"mode": "validation_split", "detectors": TUNED["detectors"]}
        if f == "with_k":
            t.update(fraction=0.2, k=1)
        elif f != "missing":
            t["fraction"] = f
        yield "tuning_fraction", repr(f), P(_raw(tuning=t))
    for i in range(per_kind):
        obj = [
            _mutate(rng, "continual_average"),
            _mutate(rng, "backward_transfer"),
            7,
            ["continual_average"],
        ][i % 4]
        extra = {"objective": obj} if i % 5 else {"base_metric": _mutate(rng, "roc_auc")}
        yield "tuning_objective", repr(extra), P(_raw(tuning={**TUNED, **extra}))
    for i in range(per_kind):
        limit = int(rng.integers(10, 2000))
        a = int(rng.integers(2, 400))
        b = limit // a + 1 + int(rng.integers(0, 50))
        grid = {"n_estimators": list(range(1, a + 1)), "max_samples": list(range(2, b + 2))}
        yield (
            "tuning_grid_size",
            f"{a} x {b} > {limit}",
            P(_raw(max_runs=limit, tuning={**TUNED, "detectors": {"iforest": grid}})),
        )
    for i in range(per_kind):
        key, vals = [
            ("max_features", [0]),
            ("max_features", [-int(rng.integers(1, 99))]),
            ("max_features", ["x"]),
            ("max_samples", [-1.5]),
            ("max_features", []),
            ("max_features", "10"),
            ("contamination", [0.9]),
            ("bootstrap", ["yes"]),
        ][i % 8]
        yield (
            "tuning_values",
            f"{key} = {vals!r}",
            P(_raw(tuning={**TUNED, "detectors": {"iforest": {key: vals}}})),
        )
    for i in range(per_kind):
        variant = i % 4
        if variant == 0:
            t = {**TUNED, "detectors": {_mutate(rng, "iforest"): {"max_samples": [8, 16]}}}
        elif variant == 1:
            t = {**TUNED, "strategies": {_mutate(rng, "naive"): {"warm_start": [True, False]}}}
        elif variant == 2:
            t = {**TUNED, _mutate(rng, "objective"): 1}
        else:
            t = {
                **TUNED,
                "detectors": {"iforest": {"n_estimators": [5, 6]}},
            }  # fixed in the spec too
        yield "tuning_names", f"variant {variant}", P(_raw(tuning=t))

    # --- references, orders, limits, sizes ----------------------------------------------------
    for i in range(per_kind):
        refs = [
            [_mutate(rng, "joint")],
            "joint",
            ["joint", "joint"],
            [1],
            {},
            [_mutate(rng, "single_task")],
        ][i % 6]
        yield "references_key", repr(refs), P(_raw(references=refs))
    for i in range(per_kind):
        variant = i % 7
        orders = [
            ["given", "../" * int(rng.integers(1, 5)) + "x"],
            [_mutate(rng, "random")],
            ["given", ""],
            {"random": 0},
            {"random": -int(rng.integers(1, 9))},
            {_mutate(rng, "random"): 2},
            ["given", "given"],
        ][variant]
        yield "orders_values", repr(orders), P(_raw(orders=orders))
    for i in range(per_kind):
        key, value = [
            ("batch_size", 0),
            ("batch_size", -int(rng.integers(1, 99))),
            ("batch_size", "64"),
            ("anytime_every", 0),
            ("anytime_per_concept", -2),
            ("transition", -1),
            ("evaluate", _mutate(rng, "before_crossing_batch")),
            ("prequential", "yes"),
            ("anytime_every", 2),
        ][i % 9]
        params = {"name": "concept_agnostic", "batch_size": 10, key: value}
        if key == "anytime_every" and value == 2:
            params["anytime_per_concept"] = 2  # both: refused
        yield "stream_params", f"{key}={value!r}", P(_raw(scenarios=[params]))
    for i in range(per_kind):
        n = int(rng.integers(2, 12))
        h = 10_000 // n + 1 + int(rng.integers(0, 10**6))
        yield (
            "anytime_size",
            f"{h} x {n} concepts",
            P(
                _raw(
                    scenarios=[
                        {"name": "concept_agnostic", "batch_size": 10, "anytime_per_concept": h}
                    ],
                    datasets=[{"name": "synthetic", "n_concepts": n}],
                )
            ),
        )
    for i in range(per_kind):
        n_f = int(rng.integers(10**6, 10**9))
        yield (
            "data_size",
            f"n_features={n_f}",
            P(
                _raw(
                    datasets=[
                        {
                            "name": "synthetic",
                            "n_features": n_f,
                            "n_train": int(rng.integers(600, 5000)),
                        }
                    ]
                )
            ),
        )
    for i in range(per_kind):
        t = [
            0,
            -float(rng.uniform(0, 99)),
            1e12,
            float("inf"),
            float("nan"),
            "600",
            True,
            [1],
            30 * 24 * 3600 + float(rng.uniform(1, 1e9)),
        ][i % 9]
        yield "timeout_values", repr(t), P(_raw(timeout=t))
    for i in range(per_kind):
        key = ["max_runs", "max_evaluations", "max_data_gb"][i % 3]
        value = [0, -int(rng.integers(1, 99)), "x", True, float("nan")][(i // 3) % 5]
        yield "limits_values", f"{key}={value!r}", P(_raw(**{key: value}))
    for i in range(per_kind):
        limit = int(rng.integers(10, 5000))
        seeds = limit + int(rng.integers(1, 10**12))
        yield "seeds_size", f"{seeds} seeds > {limit}", P(_raw(seeds=seeds, max_runs=limit))
    for i in range(per_kind):
        limit = int(rng.integers(10, 5000))
        a = int(rng.integers(2, 200))
        grid = {
            "n_estimators": list(range(1, a + 1)),
            "max_samples": list(range(2, limit // a + 4)),
        }
        yield (
            "spec_grid_size",
            f"{a} x {limit // a + 2} > {limit}",
            P(_raw(max_runs=limit, detectors=[{"name": "iforest", "grid": grid}])),
        )

    # --- time series ---------------------------------------------------------------------------
    for i in range(per_kind):
        loader = ["windowed", "telemanom"][i % 2]
        key, value = [
            ("window", 0),
            ("window", -int(rng.integers(1, 9))),
            ("window", "16"),
            ("window", 1.5),
            ("stride", 0),
            ("window_label", _mutate(rng, "last")),
            ("window_label", 3),
        ][(i // 2) % 7]
        yield (
            "window_params",
            f"{loader} {key}={value!r}",
            P(_raw(datasets=[{"name": loader, key: value}])),
        )
    for i in range(per_kind):
        inner = [
            "builtins:eval",
            "builtins:exec",
            "os:system",
            "subprocess:run",
            "shutil:rmtree",
            "pickle:loads",
            "threading:Thread",
            _mutate(rng, "synthetic"),
            3,
            ["synthetic"],
        ][i % 10]
        ds = {"name": "windowed", "dataset": inner}
        if i % 10 == 9:
            ds = (
                {"name": "windowed", "params": [1, 2]}
                if i % 20 == 9
                else {"name": "windowed", "params": {"n_concepts": 0}}
            )
        yield "windowed_inner", repr(ds)[:60], P(_raw(datasets=[ds]))
    for i in range(per_kind):
        loader = ["table", "adbench", "odds_mat", "clad_npz", "npz_files", "telemanom"][i % 6]
        target = [
            "/etc/passwd",
            "/etc/hosts",
            "../" * int(rng.integers(1, 6)) + "etc/passwd",
            "/proc/self/environ",
            "~/../../etc/shadow",
            "/root/../etc/group",
        ][(i // 6) % 6]
        ds = (
            {"name": loader, "files": [target]}
            if loader == "npz_files"
            else {"name": loader, "path": "../" * int(rng.integers(1, 6)) + "etc"}
            if loader == "telemanom"
            else {"name": loader, "file": target}
        )
        yield "data_paths", f"{loader} {target}", P(_raw(datasets=[ds]))

    # --- detectors and strategies ----------------------------------------------------------------
    for i in range(per_kind):
        det = [
            "sklearn.ensemble:RandomForestClassifier",
            "sklearn.linear_model:LogisticRegression",
            "sklearn.linear_model:LinearRegression",
            "sklearn.svm:SVC",
            "sklearn.tree:DecisionTreeRegressor",
            "sklearn.naive_bayes:GaussianNB",
            "sklearn.neighbors:KNeighborsClassifier",
            "os:system",
            "subprocess:Popen",
            "collections:Counter",
        ][i % 10]
        yield "detector_kind", det, P(_raw(detectors=[det]))
    for i in range(per_kind):
        st = ["incremental", "fine_tune", "ewc", "lwf"][i % 4]
        det = ["iforest", "hbos", "lof", "ocsvm", "knn", "ecod"][(i // 4) % 6]
        yield "strategy_detector", f"{st} x {det}", P(_raw(strategies=[st], detectors=[det]))
    for i in range(per_kind):
        key, value = [
            ("drift", _mutate(rng, "adwin")),
            ("drift", _mutate(rng, "page_hinkley")),
            ("drift", 3),
            ("signal", _mutate(rng, "rank")),
            ("window_size", 0),
            ("min_rows", 0),
            ("grace_rows", -1),
            ("max_delay", -int(rng.integers(1, 9))),
            ("drift_params", "x"),
        ][i % 9]
        yield (
            "drift_params",
            f"{key}={value!r}",
            P(
                _raw(
                    scenarios=[{"name": "concept_agnostic", "batch_size": 10}],
                    strategies=[{"name": "drift_experts", key: value}],
                )
            ),
        )
    for i in range(per_kind):
        det, key, value = [
            ("half_space_trees", "n_trees", 0),
            ("half_space_trees", "n_trees", -3),
            ("half_space_trees", "height", 0),
            ("half_space_trees", "window_size", 0),
            ("half_space_trees", "contamination", 0.7),
            ("half_space_trees", "n_trees", "10"),
            ("river_one_class_svm", "nu", 0),
            ("river_one_class_svm", "nu", 1.5),
            ("river_one_class_svm", "gamma", 0),
            ("river_one_class_svm", "n_components", 0),
        ][i % 10]
        yield (
            "river_params",
            f"{det} {key}={value!r}",
            P(_raw(strategies=["incremental"], detectors=[{"name": det, key: value}])),
        )
    for i in range(per_kind):
        kind = i % 7
        n = int(rng.integers(1, 20))
        scores = [
            np.array([str(v) for v in rng.normal(size=n)]),
            [str(v) for v in rng.normal(size=n)],
            np.array([None] * n, dtype=object),
            rng.normal(size=n) + 1j,
            np.r_[rng.normal(size=n - 1), np.nan],
            rng.normal(size=(n, 2)),
            rng.normal(size=n + 1),
        ][kind]

        def score(scores=scores, n=n):
            from clad.detectors import check_scores

            check_scores(scores, n, "fuzz")

        yield "detector_scores", f"variant {kind}", score

    # --- validate, verify -------------------------------------------------------------------------
    for i in range(per_kind):
        which = i % 4
        bad = [
            1 + float(rng.uniform(0.01, 5)),
            -1 - float(rng.uniform(0.01, 5)),
            float("nan"),
            float("inf"),
        ][(i // 4) % 4]
        values = [0.7, 0.99, -0.01, 0.01]
        values[which] = bad

        def thresholds(values=values):
            from clad.protocol.validity import Thresholds

            Thresholds(*values)

        yield "validate_thresholds", repr(values), thresholds
    spec_file = _tmpdir() / "validate.toml"
    spec_file.write_text(
        'datasets = [{name = "synthetic", n_concepts = 2, n_features = 2, n_train = 30, n_test = 20}]\n'
        'scenarios = ["concept_incremental"]\nstrategies = ["naive"]\ndetectors = ["hbos"]\n'
    )
    (_tmpdir() / "plainfile").write_text("x")
    for i in range(per_kind):
        dest = [
            _tmpdir(),
            _tmpdir() / "plainfile" / f"r{i}.json",
            _tmpdir() / "plainfile" / "a" / "b.json",
        ][i % 3]

        def validate(dest=dest):
            import argparse

            from clad.cli.validate import run_validate

            run_validate(
                argparse.Namespace(
                    spec=str(spec_file),
                    metric="roc_auc",
                    feasible=0.7,
                    ceiling=0.99,
                    forgetting=-0.01,
                    redundancy=0.01,
                    json=str(dest),
                )
            )

        yield "validate_json_dest", str(dest)[-30:], validate
    verify_spec_file = _tmpdir() / "verifyme.toml"
    verify_spec_file.write_text(spec_file.read_text())
    good_key = {"dataset": "d", "scenario": "s", "strategy": "t", "detector": "x", "seed": 0}
    for i in range(per_kind):
        doc = [
            "not json {",
            json.dumps([]),
            json.dumps({"format": 2, "runs": []}),
            json.dumps({"format": 1, "runs": 3}),
            json.dumps({"format": 1, "runs": [3]}),
            json.dumps({"format": 1, "runs": [{"key": {"seed": 0}}]}),
            json.dumps({"format": 1, "runs": [{"key": good_key, "tolerance": -1}]}),
            json.dumps({"format": 1, "runs": [{"key": good_key, "R": [1]}]}),
            json.dumps({"format": 1, "runs": [{"key": {**good_key, "seed": [0]}}]}),
            json.dumps({"format": 1, "runs": [{"key": good_key, "concepts": [1, 2]}]}),
        ][i % 10]

        def verify(doc=doc):
            from clad.engine.verify import reference_path, verify_spec

            reference_path(verify_spec_file).write_text(doc, encoding="utf-8")
            verify_spec(verify_spec_file)

        yield "verify_reference", doc[:40], verify

    # --- results folders: export, MLflow, damaged and foreign databases ---------------------------
    folder = results_folder()
    db = folder / "results.sqlite"
    (folder / "afile").write_text("x")
    for i in range(per_kind):
        dest = [folder / "afile", folder / "afile" / "sub", folder / "results.sqlite"][i % 3]
        fmt = ["csv", "json", "parquet"][(i // 3) % 3]

        def export_dest(dest=dest, fmt=fmt):
            from clad.engine.export import export

            export(folder, fmt, dest)

        yield "export_dest", f"{fmt} -> {dest.name}", _guarded(export_dest, db)
    for i in range(per_kind):
        fmt = [_mutate(rng, "csv"), _mutate(rng, "parquet"), _mutate(rng, "json"), "", "CSV"][i % 5]

        def export_format(fmt=fmt):
            from clad.engine.export import export

            export(folder, fmt)

        yield "export_format", repr(fmt), _guarded(export_format, db)
    ports = _closed_ports(rng, per_kind)
    for i in range(per_kind):
        uri = f"http://127.0.0.1:{ports[i]}" if i % 5 else f"https://localhost:{ports[i]}/mlflow"

        def mlflow(uri=uri):
            from clad.engine.export_mlflow import export_mlflow

            export_mlflow(folder, tracking_uri=uri)

        yield "mlflow_uri", uri, _guarded(mlflow, db)
    damages = [
        "DELETE FROM r_cells WHERE run_id = :rid AND step_index = 1",
        "DELETE FROM r_cells WHERE run_id = :rid AND test_index = 0",
        "UPDATE runs SET timings = :blob WHERE run_id = :rid",
        "UPDATE runs SET config = 'not json' WHERE run_id = :rid",
        "UPDATE runs SET concepts = :blob WHERE run_id = :rid",
        "UPDATE runs SET seed = 'zero' WHERE run_id = :rid",
        "UPDATE r_cells SET value = 'high' WHERE run_id = :rid AND step_index = 0",
        "UPDATE r_cells SET value = :blob WHERE run_id = :rid AND test_index = 1",
        "UPDATE metrics SET value = :blob WHERE run_id = :rid",
        "UPDATE runs SET concepts = '3' WHERE run_id = :rid",
        "UPDATE r_cells SET step_index = 99 WHERE run_id = :rid AND step_index = 0",
        "UPDATE runs SET dataset = :blob WHERE run_id = :rid",
    ]
    import pickle
    import sqlite3

    for i in range(per_kind):
        damage = damages[i % len(damages)]
        copy = results_folder()
        con = sqlite3.connect(copy / "results.sqlite")
        rids = [r for (r,) in con.execute("SELECT run_id FROM runs ORDER BY run_id")]
        con.execute(damage, {"rid": rids[i % len(rids)], "blob": pickle.dumps({"i": i})})
        con.commit()
        con.close()

        def damaged(copy=copy, i=i):
            from clad.results.reading import load_results, read_store

            if i % 2:
                read_store(
                    copy / "results.sqlite",
                    lambda store: store.load_results(include_unfinished=True),
                )
            else:
                load_results(copy)

        yield "results_db_damage", damage[:40], _guarded(damaged, copy / "results.sqlite")
    for i in range(per_kind):
        copy = _tmpdir() / f"foreign{i}"
        copy.mkdir()
        if i % 3 == 0:
            (copy / "results.sqlite").write_bytes(
                bytes(rng.integers(0, 256, size=int(rng.integers(0, 5000)), dtype=np.uint8))
            )
        elif i % 3 == 1:
            con = sqlite3.connect(copy / "results.sqlite")
            con.execute(f"CREATE TABLE t{i} (x)")
            con.commit()
            con.close()
        else:
            good = (folder / "results.sqlite").read_bytes()
            (copy / "results.sqlite").write_bytes(good[: int(rng.integers(100, len(good) // 2))])

        def foreign(copy=copy):
            from clad.results.reading import load_results

            load_results(copy)

        yield "results_db_foreign", f"variant {i % 3}", _guarded(foreign, copy / "results.sqlite")
    for i in range(per_kind):
        refs = [3, "x", [3], [{"seed": "x"}], {"a": 1}, [{"dataset": "d", "R": "no"}]][i % 6]

        def references(refs=refs, i=i):
            from clad.results.reading import load_references

            p = _tmpdir() / f"refs{i}" / "results.json"
            p.parent.mkdir(exist_ok=True)
            p.write_text(json.dumps({"runs": [], "references": refs}), encoding="utf-8")
            load_references(p.parent)

        yield "results_json_references", repr(refs)[:40], references


def reliability_cases(seed: int = 0, per_kind: int = 50):
    """Malformed inputs of the reliability round (links, foreign databases, sizes, plug-ins, late
    checks), ``(kind, description, thunk)`` as :func:`cases`; files a thunk must leave unchanged are
    its ``guards``."""
    import os
    import sqlite3
    import sys

    from clad.core.scored import Scored, check_scored
    from clad.detectors import DETECTORS
    from clad.engine.folder import FolderLock
    from clad.engine.verify import _read_reference
    from clad.results.store import ResultStore
    from clad.strategies import STRATEGIES

    rng = np.random.default_rng(seed)
    import tempfile
    from pathlib import Path

    root = Path(tempfile.mkdtemp(prefix="reliability-", dir=_tmpdir()))  # fresh for every call
    P = lambda raw: lambda raw=raw: parse_spec(raw, "fuzz")  # noqa: E731
    TORCH = {"name": "autoencoder", "epochs": 1}

    # --- loss: links and foreign databases ------------------------------------------------------
    for i in range(per_kind):
        out = root / f"lock{i}"
        out.mkdir()
        target = root / f"notes{i}.txt"
        target.write_text(f"notes {i}\n")
        (out / ".clad.lock").symlink_to(target if i % 3 else root / f"absent{i}.txt")
        yield (
            "lock_symlink",
            f"link {i}",
            _guarded(
                lambda out=out, i=i: FolderLock(out, "s").acquire(), target, root / f"absent{i}.txt"
            ),
        )
    for i in range(per_kind):
        out = root / f"lockdir{i}"
        (out / ".clad.lock").mkdir(parents=True)
        yield (
            "lock_folder",
            f"folder {i}",
            _guarded(lambda out=out: FolderLock(out, "s").acquire(), out / ".clad.lock"),
        )
    for i in range(per_kind):
        db = root / f"foreign_runs{i}.sqlite"
        con = sqlite3.connect(db)
        cols = ", ".join(f"c{j} TEXT" for j in range(int(rng.integers(1, 6))))
        if i % 2:
            con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        con.execute(f"CREATE TABLE runs ({'run_id TEXT, ' if i % 3 == 0 else ''}{cols})")
        con.commit()
        con.close()
        yield (
            "results_db_foreign_runs",
            f"runs table {i}",
            _guarded(lambda db=db: ResultStore(db).close(), db),
        )

    # --- sizes counted before a run -------------------------------------------------------------
    for i in range(per_kind):
        n = int(rng.integers(101, 10**6))
        ds = {"name": "synthetic", "n_concepts": n, "n_features": 1, "n_train": 2, "n_test": 2}
        yield "size_r_evaluations", f"n_concepts={n}", P(_raw(datasets=[ds]))
    for i in range(per_kind):
        w = int(rng.integers(5001, 10**10))
        yield (
            "size_vus_window",
            f"window={w}",
            P(_raw(base_metrics=["vus_pr"], base_metric_params={"vus_pr": {"window": w}})),
        )
    for i in range(per_kind):
        t = int(rng.integers(10_001, 10**10))
        metric = ["vus_pr", "vus_roc"][i % 2]
        yield (
            "size_vus_thresholds",
            f"thresholds={t}",
            P(_raw(base_metrics=[metric], base_metric_params={metric: {"thresholds": t}})),
        )
    for i in range(per_kind):
        t = int(rng.integers(10_001, 10**10))
        metric = ["pa_f1_oracle", "event_f1_oracle", "range_f1_oracle", "affiliation_f1_oracle"][
            i % 4
        ]
        yield (
            "size_oracle_thresholds",
            f"{metric} n_thresholds={t}",
            P(_raw(base_metrics=[metric], base_metric_params={metric: {"n_thresholds": t}})),
        )
    for i in range(per_kind):
        limit = int(rng.integers(1, 1000))
        count = limit + int(rng.integers(1, 10**6))
        yield (
            "size_random_orders",
            f"random={count}, max_runs={limit}",
            P(_raw(orders={"random": count}, max_runs=limit)),
        )

    # --- late or raw: values a component declares -----------------------------------------------
    devices = [
        "CPU",
        "",
        "tpu",
        "meta",
        "cuda:",
        "cuda:x",
        "gpu",
        "cuda:1:2",
        " cpu",
        "xla",
        "cuda:-1",
        0,
        None,
    ]
    for i in range(per_kind):
        dev = (
            devices[i % len(devices)]
            if i < len(devices)
            else _mutate(rng, ["cpu", "cuda", "cuda:0"][i % 3])
        )
        if dev in ("cpu", "cuda", "mps") or (
            isinstance(dev, str) and dev.startswith("cuda:") and dev[5:].isdigit() and len(dev) <= 8
        ):
            dev = dev.upper() + "?"
        yield "torch_device", repr(dev), P(_raw(detectors=[{**TORCH, "device": dev}]))
    for i in range(per_kind):
        value = [0, -int(rng.integers(1, 99)), 1.5, "8", True][i % 5]
        name = ["agem", "der"][i % 2]
        yield (
            "rehearsal_memory_batch",
            f"{name} {value!r}",
            P(_raw(strategies=[{"name": name, "memory_batch_size": value}], detectors=[TORCH])),
        )
    for i in range(per_kind):
        key = ["alpha", "beta"][i % 2]
        value = [-float(rng.uniform(1e-9, 10)), "1", True, -int(rng.integers(1, 9))][i % 4]
        yield (
            "der_weights",
            f"{key}={value!r}",
            P(_raw(strategies=[{"name": "der", key: value}], detectors=[TORCH])),
        )

    # --- spec files that are not files, nested too deep -----------------------------------------
    fifo = root / "spec.fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    specials = [fifo, "/dev/zero", "/dev/null", root]
    for i in range(per_kind):
        path = specials[i % len(specials)]
        yield "spec_not_a_file", str(path), (lambda path=path: load_spec(path))
    for i in range(per_kind):
        depth = int(rng.integers(33, 6000))
        path = root / f"deep{i}.toml"
        if i % 2:
            path.write_text('name = "x"\nseeds = ' + "[" * depth + "1" + "]" * depth + "\n")
        else:
            path.write_text('name = "x"\n' + "a = " + "{ b = " * depth + "1" + " }" * depth + "\n")
        yield (
            "spec_deep_nesting",
            f"depth {depth}",
            _guarded(lambda path=path: load_spec(path), path),
        )

    # --- data files that are folders, pipes or links out of their folder ------------------------
    data = root / "data"
    data.mkdir(exist_ok=True)
    outside = root / "outside.csv"
    outside.write_text("concept,label,x\na,0,1\na,1,2\n")
    for i in range(per_kind):
        name = f"folder{i}.csv"
        (data / name).mkdir()
        yield (
            "data_file_folder",
            name,
            P(_raw(datasets=[{"name": "table", "file": name, "data_dir": str(data)}])),
        )
    for i in range(per_kind):
        name = f"link{i}.csv"
        target = outside if i % 2 else os.path.relpath(outside, data)
        (data / name).symlink_to(target)
        yield (
            "data_file_link_out",
            f"{name} -> {target}",
            _guarded(
                P(_raw(datasets=[{"name": "table", "file": name, "data_dir": str(data)}])), outside
            ),
        )
    for i in range(per_kind):
        name = f"random{i}.npz"
        (data / name).write_bytes(
            bytes(rng.integers(0, 256, size=int(rng.integers(1, 4000)), dtype=np.uint8))
        )

        def random_npz(name=name):
            from clad.datasets import DATASETS

            DATASETS.build("clad_npz", {"file": name, "data_dir": str(data)})

        yield "npz_random_bytes", name, _guarded(random_npz, data / name)

    # --- plug-ins that fail at import, and names already taken ----------------------------------
    plugins = root / "plugins"
    plugins.mkdir(exist_ok=True)
    if str(plugins) not in sys.path:
        sys.path.append(str(plugins))
    bodies = [
        "import sys\nsys.exit({i})\n",
        "def broken(:\n    pass  # {i}\n",
        "raise RuntimeError('at import {i}')\n",
        "x = 1 / 0  # {i}\n",
        "raise KeyboardInterrupt if False else ValueError({i})\n",
    ]
    for i in range(per_kind):
        mod = f"clad_fuzz_plugin_{root.name.replace('-', '_')}_{i}"
        (plugins / f"{mod}.py").write_text(bodies[i % len(bodies)].format(i=i))
        kind = ["detectors", "strategies"][i % 2]
        entry = f"{mod}:Thing"
        yield "plugin_import_fails", bodies[i % len(bodies)][:20], P(_raw(**{kind: [entry]}))
    for i in range(per_kind):
        registry = [DETECTORS, STRATEGIES][i % 2]
        name = registry.names()[int(rng.integers(0, len(registry.names())))]
        yield (
            "registry_name_taken",
            name,
            (
                lambda registry=registry, name=name, i=i: registry.add(
                    name, f"clad_fuzz_elsewhere_{i}:Thing"
                )
            ),
        )

    # --- a strategy's Scored, clad verify's references ------------------------------------------
    for i in range(per_kind):
        n = int(rng.integers(2, 40))
        bad = [
            Scored(np.full(n, np.nan), 0.5),
            Scored(np.zeros(max(1, n - 1)), 0.5),
            Scored(np.linspace(0, 1, n), float("nan")),
            Scored(list(range(n)), 0.5),
            Scored(np.array(["a"] * n), 0.5),
            Scored(np.r_[np.inf, np.zeros(n - 1)], 0.5),
            Scored(np.zeros(n), "0.5"),
            Scored(np.zeros((n, 2)), 0.5),
            (np.zeros(n), 0.5),
        ][i % 9]
        yield (
            "strategy_scored",
            f"variant {i % 9}",
            (lambda bad=bad, n=n: check_scored(bad, n, "Fuzz", "x")),
        )
    good_run = {
        "key": {"dataset": "d", "scenario": "s", "strategy": "t", "detector": "x", "seed": 0},
        "concepts": ["a"],
        "test_concepts": ["a"],
        "R": {"roc_auc": [[0.5]]},
        "metrics": {"roc_auc": {"continual_average": 0.5}},
        "versions": {},
    }
    for i in range(per_kind):
        tol = [float(rng.uniform(0.011, 1e9)), 1e300, -float(rng.uniform(0, 1)), "0", True, None][
            i % 6
        ]
        path = root / f"tol{i}.reference.json"
        doc = {"format": 1, "runs": [{**good_run, "tolerance": tol}]}
        path.write_text(json.dumps(doc))
        yield "verify_tolerance", repr(tol), _guarded(lambda path=path: _read_reference(path), path)
    for i in range(per_kind):
        part = ["R", "metrics"][i % 2]
        empty = [{}, {"roc_auc": []}, {"roc_auc": [[]]}, {"roc_auc": {}}][i % 4]
        path = root / f"empty{i}.reference.json"
        path.write_text(
            json.dumps({"format": 1, "runs": [{**good_run, part: empty, "tolerance": 1e-9}]})
        )
        yield (
            "verify_empty_record",
            f"{part}={empty!r}",
            _guarded(lambda path=path: _read_reference(path), path),
        )

    # --- run_experiment with objects of the wrong kind ------------------------------------------
    from clad import run_experiment
    from clad.datasets import make_synthetic
    from clad.scenarios import ConceptAware
    from clad.strategies import Naive

    ds = make_synthetic(n_concepts=2, n_train=20, n_test=10, random_state=0)
    for i in range(per_kind):
        wrong = ["concept_aware", None, [1, 2], 3, {"name": "naive"}, ConceptAware, Naive][i % 7]
        slot = i % 3
        args = [ds, ConceptAware(), Naive()]
        args[slot] = wrong
        yield (
            "run_experiment_types",
            f"{['dataset', 'scenario', 'strategy'][slot]}={wrong!r:.30}",
            (lambda args=args: run_experiment(*args)),
        )
    # --- late checks of loaders and of the MLflow export --------------------------------------
    from clad.engine.export_mlflow import check_tracking_uri

    for i in range(per_kind):
        suffix = [".pkl", ".pickle", ".npy", ".json", ".txt", ".xlsx", "", ".csv.tar"][i % 8]
        name = f"table{i}{suffix}"
        yield (
            "table_not_csv_or_parquet",
            name,
            P(_raw(datasets=[{"name": "table", "file": name, "data_dir": str(data)}])),
        )
    for i in range(per_kind):
        value = [_mutate(rng, "max"), _mutate(rng, "mean"), "median", "", 3, None][i % 6]
        if value in ("max", "mean"):
            value = value + "x"
        yield (
            "telemanom_window_score",
            repr(value),
            P(_raw(datasets=[{"name": "telemanom", "window_score": value, "data_dir": str(data)}])),
        )
    for i in range(per_kind):
        uri = [
            "sqlite:///:memory:",
            "sqlite://",
            "ftp://host/x",
            "mlruns",
            "http://",
            "",
            None,
            3,
            f"{_mutate(rng, 'http')}://host:5000",
            "s3://bucket/x",
        ][i % 10]
        if isinstance(uri, str) and uri.split("://")[0] in ("http", "https"):
            uri = "gopher://host"
        yield "tracking_uri", repr(uri), (lambda uri=uri: check_tracking_uri(uri))


#: numbers that no bounded setting takes: non-finite, signed, huge, and the wrong types
_BAD_NUMBERS = (
    float("nan"),
    float("inf"),
    float("-inf"),
    -1,
    0,
    1e308,
    10**30,
    "5",
    True,
    None,
    [1],
    {"a": 1},
)


def surface_cases(seed: int = 0, per_kind: int = 50):
    """Malformed values of the keys and options added last (threshold policy, baselines, replicas,
    ``[slurm]``, ``--headline``, ``--latex-columns``, base-metric plug-ins), ``(kind, description,
    thunk)`` as :func:`cases`: each a clean clad error before anything is written (a report's folder
    and a results folder are the guards that must stay as they were)."""
    import tempfile
    from pathlib import Path

    from clad.metrics.base import get_base_metric
    from clad.report import make_report
    from clad.report.table_formats import latex_columns

    rng = np.random.default_rng(seed)
    root = Path(tempfile.mkdtemp(prefix="surface-", dir=_tmpdir()))
    P = lambda raw: lambda raw=raw: parse_spec(raw, "fuzz")  # noqa: E731
    pick = lambda seq: seq[int(rng.integers(0, len(seq)))]  # noqa: E731
    text = lambda: "".join(
        pick(string.printable + "\u2028\x00é数") for _ in range(int(rng.integers(0, 12)))
    )  # noqa: E731

    for i in range(per_kind):  # the threshold policy: its rate, its calibration rows, its form
        fpr = pick(_BAD_NUMBERS + (1, 1.5, -0.05, 1 + 1e-12))
        yield "threshold_fpr", repr(fpr), P(_raw(base_metrics=["f1"], threshold={"fpr": fpr}))
        calibration = pick(_BAD_NUMBERS + (1.0, 1.5, -3, 0.0))
        yield (
            "threshold_calibration",
            repr(calibration),
            P(_raw(base_metrics=["f1"], threshold={"fpr": 0.05, "calibration": calibration})),
        )
        form = pick(
            (
                "mine",
                "",
                0.05,
                5,
                [0.05],
                {"rate": 0.05},
                {"fpr": 0.05, "other": 1},
                True,
                float("nan"),
            )
        )
        yield "threshold_form", repr(form), P(_raw(base_metrics=["f1"], threshold=form))
        metrics = pick(
            (["roc_auc"], ["average_precision"], ["roc_auc", "vus_pr"], ["pa_f1_oracle"])
        )
        yield (
            "threshold_serves_nothing",
            repr(metrics),
            P(_raw(base_metrics=metrics, threshold={"fpr": 0.05})),
        )
    for i in range(per_kind):  # baselines and replicas
        value = pick(
            (
                "yes",
                1,
                0.5,
                float("nan"),
                ["nope"],
                [1],
                [True],
                {"random_scores": 1},
                [text() + "x"],
                None,
            )
        )
        yield "baselines_values", repr(value)[:40], P(_raw(baselines=value))
        value = pick((0, -1, 1.5, float("nan"), float("inf"), "32", True, [2], -(10**20)))
        yield "replicas_values", repr(value), P(_raw(replicas=value))
    numbers = (
        "time_minutes",
        "cpus_per_run",
        "runs_per_job",
        "max_jobs",
        "retries",
        "mem_gb",
        "poll_seconds",
    )
    names = ("partition", "gres", "account", "qos", "constraint", "folder", "python")
    for i in range(per_kind):  # [slurm]: every number bounded and finite, every name printable
        key, value = pick(numbers), pick(_BAD_NUMBERS + (1e9, 10**9, 2.5))
        if key in ("mem_gb", "poll_seconds") and value == 2.5 or key == "retries" and value == 0:
            value = float("inf")  # a valid value there: a bad one instead
        yield "slurm_numbers", f"{key}={value!r}", P(_raw(slurm={key: value}))
        key, value = (
            pick(names),
            pick(("", 5, None, "a\nb", "cpu\x00", "gpu\r", "q\u2028", "\t", ["cpu"])),
        )
        yield "slurm_names", f"{key}={value!r}", P(_raw(slurm={key: value}))
        where = pick(("detectors", "strategies", "datasets"))
        key, value = (
            pick(("mem_gb", "time_minutes", "partition")),
            pick((float("nan"), float("inf"), 0, "x\ny", -2)),
        )
        yield (
            "slurm_component",
            f"{where} {key}={value!r}",
            P(_raw(slurm={where: {"iforest": {key: value}}})),
        )
        option = pick(
            (
                {"x y": 1},
                {"mem": "1\n#SBATCH --x"},
                {"nice": float("nan")},
                {"": "a"},
                {"a": [1]},
                "x",
                5,
            )
        )
        yield "slurm_sbatch", repr(option)[:40], P(_raw(slurm={"sbatch": option}))
    folder = results_folder()
    from clad.results import load_results

    runs = load_results(folder)
    before = [folder / "results.sqlite", folder / "results.json", folder]
    for i in range(per_kind):  # the report's options: checked before the report folder is made
        out = root / f"report{i}"
        value = pick(
            (
                "",
                ",,,",
                " , ",
                "CA,CA",
                "CA,continual_average",
                "all,CA",
                text() + "?",
                "CA,,BWT,BWT",
            )
        )
        yield (
            "report_latex_columns",
            repr(value),
            _guarded(
                lambda value=value, out=out: make_report(runs, out, latex_columns=value),
                out,
                *before,
            ),
        )
        value = pick(("", "pr_auc", "ROC-AUC", text() + "!", "roc_auc ", "f1\x00"))
        yield (
            "report_headline",
            repr(value),
            _guarded(
                lambda value=value, out=out: make_report(runs, out, headline=value), out, *before
            ),
        )
        yield (
            "latex_columns_option",
            repr(value),
            (lambda value=pick(("", ",", "CA,CA", "x", "all,all")): latex_columns(value)),
        )
    plugins = (
        "reliability_plugins:OUT_OF_BOUNDS",
        "reliability_plugins:ARRAY_METRIC",
        "reliability_plugins:TEXT_METRIC",
    )
    for i in range(per_kind):  # base-metric plug-ins: named wrongly, or breaking their declaration
        path = pick(
            (
                "no_such_module_x:M",
                "reliability_plugins:NOT_THERE",
                "json:dumps",
                "os:sep",
                ":M",
                "a:",
                "reliability_plugins:" + text() + "$",
            )
        )
        yield "metric_plugin_path", path, P(_raw(base_metrics=[path]))
        n = int(rng.integers(8, 200))
        y = np.zeros(n, dtype=np.int8)
        y[int(rng.integers(0, n - 1)) :][: max(1, n // 5)] = 1
        y[0] = 0
        scores = rng.normal(size=n) + y
        yield (
            "metric_plugin_output",
            pick(plugins),
            (
                lambda metric=pick(plugins), y=y, scores=scores: get_base_metric(metric).checked(
                    y, scores
                )
            ),
        )
