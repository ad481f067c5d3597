"""Training steps shared by their inputs (clad.core.steps, clad.engine.sharing): computed once per
key, bit-identical to computing everything, and verified on demand."""

import json

import numpy as np
import pytest

from clad.engine.settings import Execution
from clad.core import step_keys, steps
from clad.core.scored import Scored
from clad.core.experiment import run_experiment
from clad.datasets import make_synthetic
from clad.detectors import as_detector, make_detector
from clad.engine.benchmark import run_spec
from clad.engine.config import Component, RunConfig
from clad.engine.tasks import Task, compute
from clad.engine.sharing import Sharing, sharing_groups
from clad.scenarios import ConceptAgnostic, ConceptIncremental
from clad.strategies import EWC, Cumulative, FineTune, Incremental, Naive, Replay, Window


class Misdeclared(Naive):
    """Declares what Naive declares, but its scores also read how many steps it has learned: a key
    that leaves out an input (the verification must catch it)."""

    step_inputs = ("rows",)

    def score(self, X, concept_id=None):
        sign = 1.0 if self.n_learn_calls_ % 2 else -1.0  # every second step turns the scores round
        return Scored(sign * self.detector_.score(X), sign * self.detector_.threshold_)


class OwnLearn(Naive):
    """A plug-in that writes its own learn without declaring: never shared."""

    def learn(self, X, concept_id=None):
        self.detector_ = self._fit_new(X)
        return self


def _hbos():
    return make_detector("hbos", {})


def _R_bytes(result):
    return {m: (r.shape, r.tobytes()) for m, r in result.R.items()}


# -- keys ---------------------------------------------------------------------------------------
def test_a_fit_key_is_the_detector_configuration_and_exactly_the_rows():
    det = as_detector(_hbos())
    X = np.random.default_rng(0).normal(size=(30, 3))
    assert step_keys.fit_key(det, X) == step_keys.fit_key(as_detector(_hbos()), X.copy())
    assert step_keys.fit_key(det, X) != step_keys.fit_key(det, X[::-1])  # order
    assert step_keys.fit_key(det, X) != step_keys.fit_key(det, X[:-1])  # rows
    assert step_keys.fit_key(det, X) != step_keys.fit_key(det, X.astype(np.float32))
    assert step_keys.fit_key(det, X) != step_keys.fit_key(
        as_detector(make_detector("hbos", {"n_bins": 7})), X
    )
    a = as_detector(make_detector("iforest", {"random_state": 1}))
    b = as_detector(make_detector("iforest", {"random_state": 2}))
    assert step_keys.fit_key(a, X) != step_keys.fit_key(b, X)  # the seed stream


def test_only_declared_strategies_are_shared():
    assert step_keys.declared(Naive(_hbos())) == ("rows", "state")
    assert step_keys.declared(Cumulative(_hbos())) == ("rows",)
    assert step_keys.declared(OwnLearn(_hbos())) is None  # its own learn, no declaration
    assert step_keys.declared(Misdeclared(_hbos())) == ("rows",)  # it says so (wrongly)
    assert step_keys.declared(FineTune(None)) == ("rows", "state")
    assert step_keys.declared(EWC(None)) == (
        "rows",
    )  # its first step only: later ones forget the key
    assert step_keys.declared(Incremental(None)) is None  # says nothing: never shared


def test_an_undeclared_strategy_fits_every_step():
    ds = make_synthetic(n_concepts=3, n_train=80, n_test=50, random_state=0)
    cache = steps.StepCache()
    with steps.using(cache):
        run_experiment(ds, ConceptIncremental(), Naive(_hbos()), seed=0)
        r = run_experiment(ds, ConceptIncremental(), OwnLearn(_hbos()), seed=0)
    assert r.timings["work"] == {
        "steps": 3,
        "fitted": 3,
        "passes": 9,
        "scored": 9,
        "cache_bytes": cache.peak_bytes,
    }


# -- computed once, and the same numbers --------------------------------------------------------
@pytest.mark.parametrize("scenario", [ConceptIncremental(), ConceptAgnostic(batch_size=40)])
def test_shared_steps_give_bit_identical_R_and_fit_each_key_once(scenario):
    ds = make_synthetic(n_concepts=4, n_train=80, n_test=50, random_state=1)
    strategies = [
        Naive(_hbos()),
        Cumulative(_hbos()),
        Replay(_hbos(), buffer_size=1000),
        Window(_hbos(), 1000),
    ]
    alone = [run_experiment(ds, scenario, s, seed=3) for s in strategies]
    cache = steps.StepCache()
    with steps.using(cache):
        shared = [run_experiment(ds, scenario, s, seed=3) for s in strategies]
    for a, b in zip(alone, shared):
        assert _R_bytes(a) == _R_bytes(b)
        assert json.dumps(a.metrics, sort_keys=True, default=str) == json.dumps(
            b.metrics, sort_keys=True, default=str
        )
    # replay (buffer larger than the stream) and the window train on what cumulative trains on
    assert shared[2].timings["work"]["fitted"] == 0 and shared[3].timings["work"]["fitted"] == 0
    n = shared[0].timings["work"]["steps"]
    assert (
        cache.counts.fits == 4 * n and cache.counts.fits_computed == 2 * n - 1
    )  # step 1 common to all
    assert cache.counts.passes_computed < cache.counts.passes


def test_the_cache_stays_within_its_limit_and_R_does_not_change():
    ds = make_synthetic(n_concepts=4, n_train=80, n_test=50, random_state=1)
    alone = run_experiment(ds, ConceptIncremental(), Cumulative(_hbos()), seed=0)
    cache = steps.StepCache(max_bytes=20_000)
    with steps.using(cache):
        for _ in range(2):
            again = run_experiment(ds, ConceptIncremental(), Cumulative(_hbos()), seed=0)
            assert _R_bytes(again) == _R_bytes(alone)
    assert 0 < cache.peak_bytes <= 20_000 and cache.bytes <= 20_000


# -- verification --------------------------------------------------------------------------------
def test_verification_recomputes_and_passes_when_keys_are_right():
    ds = make_synthetic(n_concepts=3, n_train=80, n_test=50, random_state=0)
    cache = steps.StepCache(verify=True)
    with steps.using(cache):
        for s in (Naive(_hbos()), Cumulative(_hbos()), Window(_hbos(), 1000)):
            run_experiment(ds, ConceptIncremental(), s, seed=0)
    assert cache.counts.fits_computed == cache.counts.fits and cache.counts.verified > 0


def test_a_misdeclared_strategy_is_caught_by_verification_and_goes_wrong_without_it():
    ds = make_synthetic(n_concepts=3, n_train=80, n_test=50, random_state=0)
    truth = run_experiment(ds, ConceptIncremental(), Misdeclared(_hbos()), seed=0)
    with steps.using(steps.StepCache()):  # trusted: the wrong key serves Naive's scores
        run_experiment(ds, ConceptIncremental(), Naive(_hbos()), seed=0)
        trusted = run_experiment(ds, ConceptIncremental(), Misdeclared(_hbos()), seed=0)
    assert not np.array_equal(trusted.R["roc_auc"], truth.R["roc_auc"])
    with steps.using(steps.StepCache(verify=True)):
        run_experiment(ds, ConceptIncremental(), Naive(_hbos()), seed=0)
        with pytest.raises(
            steps.SharingMismatch,
            match=r"scoring key score:\w+ \(state \w+\) was computed by Naive run, training step 2 and again by Misdeclared run.*differ",
        ):
            run_experiment(ds, ConceptIncremental(), Misdeclared(_hbos()), seed=0)


def test_verify_sharing_fails_the_run_of_a_misdeclared_plugin_in_a_grid(tmp_path):
    spec = {
        "name": "misdeclared",
        "seeds": 1,
        "base_metrics": ["roc_auc", "f1"],
        "strategies": ["naive", "test_step_sharing:Misdeclared"],
        "scenarios": ["concept_incremental"],
        "detectors": ["hbos"],
        "datasets": [{"name": "synthetic", "n_concepts": 3, "n_train": 60, "n_test": 40}],
    }
    done = run_spec(spec, tmp_path / "v", sharing=Sharing.of(spec, verify=True))
    failed = [r for r in done.runs if not r.ok]
    assert [r.strategy for r in failed] == ["test_step_sharing:Misdeclared"]
    assert "SharingMismatch: sharing verification failed: scoring key" in failed[0].error
    assert "fewer inputs" in failed[0].error
    ok = run_spec(spec, tmp_path / "plain", sharing=Sharing.of(spec, share=False))
    assert ok.n_failed == 0


# -- across a grid ---------------------------------------------------------------------------------
def _grid_spec(
    detectors, strategies, scenarios=("concept_incremental", "concept_agnostic"), seeds=2
):
    return {
        "name": "grid",
        "seeds": seeds,
        "base_metrics": ["roc_auc", "f1", "average_precision"],
        "strategies": list(strategies),
        "scenarios": [
            {"name": s, "batch_size": 40} if s == "concept_agnostic" else s for s in scenarios
        ],
        "detectors": list(detectors),
        "skip_incompatible": True,
        "datasets": [
            {"name": "synthetic", "n_concepts": 3, "n_features": 4, "n_train": 80, "n_test": 50}
        ],
    }


def _numbers(done):
    doc = json.loads(done.results_json.read_text())
    return {
        r["run_id"]: (r["R"], r["metrics"], r["status"], r.get("shared_from")) for r in doc["runs"]
    }


def _compare(spec, tmp_path, jobs=1):
    off = run_spec(spec, tmp_path / "off", sharing=Sharing.of(spec, share=False))
    on = run_spec(spec, tmp_path / "on", execution=Execution.of(spec, jobs=jobs))
    ver = run_spec(spec, tmp_path / "verify", sharing=Sharing.of(spec, verify=True))
    assert off.n_failed == 0 and on.n_failed == 0 and ver.n_failed == 0, [
        r.error for r in (*on.runs, *ver.runs) if not r.ok
    ][:1]
    plain = {k: v[:3] for k, v in _numbers(off).items()}
    assert {k: v[:3] for k, v in _numbers(on).items()} == plain
    assert {k: v[:3] for k, v in _numbers(ver).items()} == plain
    return off, on, ver


def _trainable(detector: dict) -> list[str]:
    """Every registered strategy that can train ``detector`` (``{"name": ..., params}``)."""
    from clad.strategies import STRATEGIES

    det = as_detector(
        make_detector(detector["name"], {k: v for k, v in detector.items() if k != "name"})
    )
    return [
        n
        for n in STRATEGIES.names()
        if STRATEGIES.build(n, {"detector": det}).detector_problem(det) is None
    ]


def test_every_registered_strategy_on_a_pyod_and_a_sklearn_detector(tmp_path):
    names = _trainable({"name": "hbos"})
    assert {
        "naive",
        "cumulative",
        "replay",
        "balanced_replay",
        "window",
        "experts",
        "drift_experts",
    } <= set(names)
    spec = _grid_spec(["hbos"], names, seeds=1)
    spec["datasets"].append(
        {
            "name": "synthetic",
            "n_concepts": 2,
            "n_features": 3,
            "n_train": 60,
            "n_test": 40,
            "random_state": 5,
        }
    )
    off, on, ver = _compare(spec, tmp_path)
    assert on.work["fitted"] < off.work["fitted"] and on.work["scored"] < off.work["scored"]
    spec = _grid_spec(
        [{"name": "iforest", "n_estimators": 20}], _trainable({"name": "iforest"}), seeds=1
    )
    off, on, ver = _compare(spec, tmp_path / "iforest")
    assert on.work["fitted"] < off.work["fitted"] and on.work["scored"] < off.work["scored"]
    assert on.work["steps"] == off.work["steps"] and on.work["passes"] == off.work["passes"]


@pytest.mark.slow
def test_every_registered_strategy_on_a_torch_detector(tmp_path):
    pytest.importorskip("torch")
    ae = {"name": "autoencoder", "epochs": 2, "hidden_sizes": [4, 2]}
    names = _trainable(ae)
    assert {"fine_tune", "ewc", "lwf", "agem", "der", "incremental", "naive", "experts"} <= set(
        names
    )
    spec = _grid_spec([ae], names, seeds=1, scenarios=("concept_incremental",))
    off, on, _ = _compare(spec, tmp_path)
    assert on.work["fitted"] < off.work["fitted"]
    # step 1 is naive's for each of them (no penalty, teacher or memory yet): fitted once, by the first
    first = [
        next(r for r in on.runs if r.strategy == n)
        for n in ("naive", "fine_tune", "ewc", "lwf", "agem", "der")
    ]
    assert sum(r.timings["work"]["steps"] - r.timings["work"]["fitted"] for r in first) >= 5


def test_fine_tuning_shares_its_first_step_and_continues_on_its_own_copy():
    pytest.importorskip("torch")
    from clad.detectors.torch_ae import AutoEncoder

    ds = make_synthetic(n_concepts=3, n_features=3, n_train=60, n_test=40, random_state=0)
    ae = AutoEncoder(hidden_sizes=(4, 2), epochs=2)
    alone = [
        run_experiment(ds, ConceptIncremental(), s, seed=0)
        for s in (Naive(ae), FineTune(ae), FineTune(ae))
    ]
    cache = steps.StepCache(verify=False)
    with steps.using(cache):
        shared = [
            run_experiment(ds, ConceptIncremental(), s, seed=0)
            for s in (Naive(ae), FineTune(ae), FineTune(ae))
        ]
    assert [_R_bytes(r) for r in shared] == [_R_bytes(r) for r in alone]
    assert [r.timings["work"]["fitted"] for r in shared] == [3, 2, 0]
    with steps.using(steps.StepCache(verify=True)):
        for s in (Naive(ae), FineTune(ae), FineTune(ae)):
            run_experiment(ds, ConceptIncremental(), s, seed=0)


def test_sharing_does_not_depend_on_the_executor(tmp_path):
    spec = _grid_spec(["hbos", "ecod"], ["naive", "cumulative", "replay", "window"])
    one = run_spec(spec, tmp_path / "one", execution=Execution.of(spec, jobs=1))
    two = run_spec(spec, tmp_path / "two", execution=Execution.of(spec, jobs=2))
    assert _numbers(one) == _numbers(two)
    assert one.work == {**two.work, "cache_bytes": one.work["cache_bytes"]}
    assert one.work["fitted"] < one.work["steps"] / 2


def test_groups_bring_together_what_can_share():
    data = Component(
        "synthetic", {"n_concepts": 2, "random_state": 0}
    )  # data that draws no run seed
    cfgs = [
        RunConfig(data, Component("concept_incremental"), Component(s), Component(d), seed)
        for seed in (0, 1)
        for d in ("hbos", "iforest")
        for s in ("naive", "cumulative")
    ]
    groups = sharing_groups(cfgs)
    # hbos draws no seed: one group over seeds; iforest draws one: a group per seed
    assert sorted(len(g) for g in groups) == [2, 2, 4]
    assert all(len({c.detector.name for c in g}) == 1 for g in groups)


def test_a_group_computed_elsewhere_returns_its_results_in_order():
    data = Component("synthetic", {"n_concepts": 3, "n_train": 60, "n_test": 40})
    cfgs = [
        RunConfig(data, Component("concept_incremental"), Component(s), Component("hbos"))
        for s in ("naive", "cumulative", "window")
    ]
    out = compute(Task(tuple(cfgs), sharing=Sharing()))
    assert [r.run_id for r, _, _ in out] == [c.run_id for c in cfgs]
    assert [r.timings["work"]["fitted"] for r, _, _ in out] == [3, 2, 0]
    off = compute(Task(tuple(cfgs)))
    assert [_R_bytes(a) for a, _, _ in out] == [_R_bytes(b) for b, _, _ in off]


# -- tuning, and what a person sees ----------------------------------------------------------------
def test_tuned_evaluation_runs_take_the_fitted_states_of_their_tuning_runs(tmp_path):
    spec = {
        "name": "tuned",
        "seeds": 1,
        "base_metrics": ["roc_auc"],
        "strategies": ["naive", "cumulative"],
        "scenarios": ["concept_incremental"],
        "detectors": ["iforest"],
        "datasets": [
            {
                "name": "synthetic",
                "n_concepts": 3,
                "n_features": 3,
                "n_train": 60,
                "n_test": 60,
                "random_state": 0,
            }
        ],
        "tuning": {
            "mode": "validation_split",
            "fraction": 0.3,
            "detectors": {"iforest": {"n_estimators": [5, 10, 15, 20]}},
        },
    }
    before = run_spec(spec, tmp_path / "before", sharing=Sharing.of(spec, steps=False))
    after = run_spec(spec, tmp_path / "after")
    assert _numbers(before) == _numbers(after)
    chosen = [r.extras["tuning"]["chosen_params"] for r in after.runs]
    assert chosen == [r.extras["tuning"]["chosen_params"] for r in before.runs]
    # validation_split trains the evaluation run on what its chosen candidate's tuning run trained on
    assert [r.timings["work"]["fitted"] for r in after.runs] == [0, 0]
    assert [r.timings["work"]["fitted"] for r in before.runs] == [3, 3]


def test_the_end_line_says_what_the_grid_contains_and_computed(tmp_path, capsys, caplog):
    from tests.runner_helpers import run_main, write_spec

    spec = write_spec(
        tmp_path,
        None,
        strategies=["naive", "cumulative", "window"],
        scenarios=["concept_incremental"],
        detectors=["hbos"],
        seeds=1,
    )
    rc, out, _ = run_main(capsys, caplog, "run", str(spec), "--out", str(tmp_path / "out"))
    assert rc == 0
    line = next(l for l in out.splitlines() if "training steps" in l)
    import re

    m = re.fullmatch(
        r"3 runs: (\d+) training steps, (\d+) fitted; (\d+) scoring passes, (\d+) computed", line
    )
    assert m and int(m[2]) < int(m[1]) and int(m[4]) < int(m[3])
    rc, out, _ = run_main(
        capsys, caplog, "run", str(spec), "--out", str(tmp_path / "v"), "--verify-sharing"
    )
    assert rc == 0 and "(every shared step verified)" in out


def test_the_report_provenance_says_it(tmp_path):
    from clad.report import make_report

    spec = {
        "name": "prov",
        "seeds": 1,
        "strategies": ["naive", "cumulative"],
        "scenarios": ["concept_incremental"],
        "detectors": ["hbos"],
        "datasets": [{"name": "synthetic", "n_concepts": 3, "n_train": 60, "n_test": 40}],
    }
    done = run_spec(spec, tmp_path / "out")
    report = make_report(done.runs, tmp_path / "report")
    html = report.all_text()  # every page: provenance is on the details page
    assert done.work["fitted"] == 5 and done.work["steps"] == 6
    assert (
        "Computation: 2 runs: 6 training steps, 5 fitted; 18 scoring passes, 15 computed" in html
    ), report
