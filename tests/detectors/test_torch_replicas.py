"""Replicas: runs of one torch network trained together as one stacked model
(clad.detectors.torch_replicas, clad.engine.replicas).

Stacking changes the order of floating-point operations (batched products, recurrent layers
unrolled, Adam on stacked tensors), so a replica equals the same run trained alone up to float32
rounding, not bit for bit: its learned parameters within ``PARAM_RTOL`` (relative, per parameter
tensor) and its R within ``REPLICA_R_TOLERANCE``. Within one grouping, R is bit-identical on
every executor.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from clad import run_experiment  # noqa: E402
from clad.detectors.torch_ae import AutoEncoder  # noqa: E402
from clad.detectors.torch_replicas import ReplicaGroup, train_replicas  # noqa: E402
from clad.engine.benchmark import run_spec  # noqa: E402
from clad.engine.config import Component, RunConfig  # noqa: E402
from clad.engine.replicas import replica_problem, replica_units  # noqa: E402
from clad.engine.spec import parse_spec  # noqa: E402
from clad.errors import CladValueError, SpecError  # noqa: E402
from clad.scenarios import ConceptIncremental  # noqa: E402
from clad.strategies import STRATEGIES, make_strategy  # noqa: E402

from tests.torch_helpers import DETECTORS, dataset  # noqa: E402

#: Largest relative difference (Frobenius norm of the difference over the norm, per parameter
#: tensor) between a replica's learned parameters and those of the same run trained alone. Measured
#: on the 20 cases below: 7.8e-8 to 4.4e-7.
PARAM_RTOL = 1e-5

#: Largest difference allowed between a cell of R (ROC-AUC) of a replica and of the same run trained
#: alone. Scores differ by float32 rounding (about 1e-7 relative); a cell of R moves only when two
#: test scores closer than that swap order, and each swap moves ROC-AUC by 1 / (anomalies x normal
#: rows) -- about 1/1,000 on these test concepts. The tolerance allows a few such swaps; measured on
#: the 20 detector x strategy cases of the parameter test: 0 (R identical).
REPLICA_R_TOLERANCE = 0.005

#: the strategies that run per replica, with the parameters of their small case
STRATEGY_PARAMS = {
    "fine_tune": {},
    "replay": {"buffer_size": 60},
    "ewc": {"ewc_lambda": 50.0},
    "lwf": {"alpha": 2.0},
    "der": {"buffer_size": 40, "beta": 0.5},
}
#: what the replicas of a case differ in: seed, learning rate and epochs
REPLICAS = [(0, 3e-3, 3), (1, 1e-2, 2), (2, 1e-3, 4)]


def strategy(detector: str, name: str, seed: int, lr: float, epochs: int, device: str = "cpu"):
    threads = {"num_threads": 1} if device == "cpu" else {}
    det = DETECTORS[detector](
        epochs=epochs, batch_size=16, learning_rate=lr, device=device, random_state=seed, **threads
    )
    params = dict(STRATEGY_PARAMS[name])
    if "random_state" in STRATEGIES.resolve(name)().get_params():
        params["random_state"] = seed
    return make_strategy(name, det, params)


def in_threads(fn, k: int):
    """``fn(i)`` for i < k, each in its own thread as a member of one ReplicaGroup."""
    group, out, errors = ReplicaGroup(k), [None] * k, []

    def member(i):
        try:
            with group.member(i):
                out[i] = fn(i)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    threads = [threading.Thread(target=member, args=(i,)) for i in range(k)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out, group


def learned(detector: str, name: str, i: int):
    s = strategy(detector, name, *REPLICAS[i])
    for concept in dataset(detector).train:
        s.learn(concept.X)
    return [p.detach().clone() for p in s.detector_.module_.parameters()], s.detector_.train_loss_


def R_together_and_alone(detector: str, name: str, device: str = "cpu") -> list:
    """Each replica's R trained together with the others, beside its run's R trained alone."""

    def R(i):
        seed, lr, epochs = REPLICAS[i]
        s = strategy(detector, name, seed, lr, epochs, device=device)
        return run_experiment(dataset(detector), ConceptIncremental(), s, seed=seed).R["roc_auc"]

    alone = [R(i) for i in range(len(REPLICAS))]
    together, _ = in_threads(R, len(REPLICAS))
    return list(zip(together, alone))


def relative(a, b) -> float:
    return max(
        float((x.detach() - y.detach()).norm() / y.detach().norm().clamp_min(1e-30))
        for x, y in zip(a, b)
    )


@pytest.mark.parametrize("name", list(STRATEGY_PARAMS))
@pytest.mark.parametrize("detector", list(DETECTORS))
def test_each_replica_learns_the_parameters_of_its_run_alone(detector, name):
    alone = [learned(detector, name, i) for i in range(len(REPLICAS))]
    together, group = in_threads(lambda i: learned(detector, name, i), len(REPLICAS))
    assert group.stats.stacked_calls >= 2 and max(group.stats.sizes) == len(
        REPLICAS
    )  # trained as replicas
    for (params, loss), (ref, ref_loss) in zip(together, alone):
        assert relative(params, ref) <= PARAM_RTOL
        assert loss == pytest.approx(ref_loss, rel=1e-4)
    # the replicas differ from each other: each learned its own run, not the first one's
    assert relative(together[0][0], together[1][0]) > 1e-3


@pytest.mark.parametrize("name", ["fine_tune", "ewc", "der"])
@pytest.mark.parametrize("detector", ["autoencoder", "vae", "lstm_autoencoder"])
def test_each_replica_gets_the_R_of_its_run_alone(detector, name):
    for a, b in R_together_and_alone(detector, name):
        assert np.nanmax(np.abs(a - b)) <= REPLICA_R_TOLERANCE


def test_a_replica_past_its_last_epoch_takes_no_step():
    X = np.random.default_rng(0).normal(size=(64, 4))
    dets = [
        AutoEncoder(hidden_sizes=(4, 2), epochs=1, batch_size=16, random_state=s).fit(X)
        for s in (0, 1)
    ]
    before = [p.detach().clone() for p in dets[0].module_.parameters()]
    alone = AutoEncoder(hidden_sizes=(4, 2), epochs=1, batch_size=16, random_state=0).fit(X)
    Xs = dets[0].standardise(X)
    train_replicas(
        dets, [Xs, Xs], [1, 5]
    )  # replica 0 stops after one epoch while replica 1 trains 5
    alone._train(Xs, 1, None)
    assert (
        relative(list(dets[0].module_.parameters()), list(alone.module_.parameters())) <= PARAM_RTOL
    )
    assert relative(list(dets[0].module_.parameters()), before) > 1e-4


def test_a_gradient_hook_cannot_run_per_replica():
    X = np.zeros((32, 3))
    dets = [AutoEncoder(hidden_sizes=(4, 2), epochs=1, random_state=s).fit(X) for s in (0, 1)]
    with pytest.raises(CladValueError, match="grad_hook"):
        train_replicas(dets, [X.astype(np.float32)] * 2, [1, 1], grad_hooks=[lambda m: None, None])


# -- the engine ----------------------------------------------------------------------------------
SPEC = {
    "name": "replicas",
    "seeds": 2,
    "base_metrics": ["roc_auc"],
    "strategies": [{"name": "fine_tune"}, {"name": "agem", "buffer_size": 40}],
    "scenarios": ["concept_incremental"],
    "datasets": [
        {"name": "synthetic", "n_concepts": 2, "n_features": 4, "n_train": 120, "n_test": 80}
    ],
    "detectors": [
        {
            "name": "autoencoder",
            "hidden_sizes": [8, 3],
            "epochs": 2,
            "batch_size": 16,
            "learning_rate": lr,
        }
        for lr in (3e-3, 1e-2)
    ],
}


def test_units_are_decided_by_the_spec_and_fall_back_per_strategy():
    configs = parse_spec(SPEC).configs
    units = replica_units(configs, 32)
    fine = [u for u in units if u[0].strategy.name == "fine_tune"]
    assert [len(u) for u in fine] == [4]  # 2 seeds x 2 learning rates: one stacked model
    assert all(len(u) == 1 for u in units if u[0].strategy.name == "agem")
    assert "gradient" in replica_problem(next(c for c in configs if c.strategy.name == "agem"))
    assert [len(u) for u in replica_units(configs, 3) if u[0].strategy.name == "fine_tune"] == [
        3,
        1,
    ]
    assert all(len(u) == 1 for u in replica_units(configs, 1))
    iforest = RunConfig(
        Component("synthetic"), Component("concept_aware"), Component("naive"), Component("iforest")
    )
    assert "torch" in replica_problem(iforest)


def test_a_grid_of_replica_units_only_is_planned_for_several_workers():
    """Every run in a replica unit and nothing left to share: the units are the tasks (planning
    the sharing groups of no run for two workers once failed on an empty max())."""
    from clad.engine.sharing import Sharing
    from clad.engine.tasks import plan_tasks

    spec = parse_spec({**SPEC, "strategies": [{"name": "fine_tune"}]})
    tasks = plan_tasks(spec.configs, Sharing.of(spec), workers=2, replicas=spec.replicas)
    assert [(len(t.runs), t.together) for t in tasks] == [(4, True)]


def test_replicas_key_is_checked():
    assert parse_spec(SPEC).replicas == 32
    assert parse_spec({**SPEC, "replicas": 1}).replicas == 1
    with pytest.raises(SpecError, match="replicas"):
        parse_spec({**SPEC, "replicas": 0})


def test_clad_list_says_which_strategies_run_per_replica(capsys):
    from clad.cli import main

    assert main(["list", "strategies"]) == 0
    out = capsys.readouterr().out
    assert "replicas: yes" in out and "replicas: no, one model at a time (its gradient hook" in out


def _R(results):
    return {r.run_id: r.R["roc_auc"] for r in results.runs}


@pytest.mark.slow
def test_R_is_bit_identical_on_every_executor_with_replicas_on(tmp_path):
    seq = run_spec(SPEC, tmp_path / "seq")
    procs = run_spec({**SPEC, "jobs": 2}, tmp_path / "procs")
    off = run_spec({**SPEC, "replicas": 1}, tmp_path / "off")
    assert seq.n_ok == procs.n_ok == off.n_ok == 8
    a, b, c = _R(seq), _R(procs), _R(off)
    for k in a:
        assert np.array_equal(a[k], b[k], equal_nan=True)
        assert np.nanmax(np.abs(a[k] - c[k])) <= REPLICA_R_TOLERANCE
    units = {r.run_id: (r.extras or {}).get("replicas") for r in seq.runs}
    assert units == {r.run_id: (r.extras or {}).get("replicas") for r in procs.runs}
    stacked = [u for u in units.values() if u]
    assert (
        len(stacked) == 4
        and {u["size"] for u in stacked} == {4}
        and len({u["unit"] for u in stacked}) == 1
    )
    assert all(not (r.extras or {}).get("replicas") for r in off.runs)


@pytest.mark.slow
def test_R_is_bit_identical_on_dask_with_replicas_on(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    seq = run_spec(SPEC, tmp_path / "seq")
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        on_dask = run_spec({**SPEC, "dask": cluster.scheduler_address}, tmp_path / "dask")
    a, b = _R(seq), _R(on_dask)
    assert on_dask.n_ok == 8 and all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)


# -- CUDA (where available) ------------------------------------------------------------------------
CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs CUDA")

#: On a GPU the run alone uses cuBLAS's single products and (recurrent layers) cuDNN's fused kernels,
#: which may compute in TF32; replicas use batched products and unrolled layers. Dense networks are
#: compared by their parameters (relative, as above); recurrent ones by R only, within the
#: tolerance of CPU against CUDA in tests/detectors/test_torch_device.py.
CUDA_PARAM_RTOL = 1e-4
CUDA_R_TOLERANCE = 0.1


@needs_cuda
@pytest.mark.parametrize("name", ["fine_tune", "ewc", "der"])
@pytest.mark.parametrize("detector", ["autoencoder", "vae"])
def test_cuda_replicas_learn_the_parameters_of_their_runs_alone(detector, name):
    def learn(i):
        s = strategy(detector, name, *REPLICAS[i], device="cuda")
        for concept in dataset(detector).train:
            s.learn(concept.X)
        return [p.detach().cpu() for p in s.detector_.module_.parameters()]

    alone = [learn(i) for i in range(len(REPLICAS))]
    together, group = in_threads(learn, len(REPLICAS))
    assert max(group.stats.sizes) == len(REPLICAS)
    for params, ref in zip(together, alone):
        assert relative(params, ref) <= CUDA_PARAM_RTOL


@needs_cuda
@pytest.mark.parametrize("name", ["fine_tune", "lwf"])
@pytest.mark.parametrize("detector", list(DETECTORS))
def test_cuda_replicas_get_the_R_of_their_runs_alone(detector, name):
    for a, b in R_together_and_alone(detector, name, device="cuda"):
        assert np.nanmax(np.abs(a - b)) <= CUDA_R_TOLERANCE


class _Replayed:
    """A stand-in for a captured CUDA graph on the CPU: ``replay()`` runs the step again."""

    def __init__(self, step, dev):
        self.replay = step


@pytest.mark.parametrize("detector", ["autoencoder", "lstm_autoencoder"])
def test_the_captured_step_reads_its_inputs_from_the_graph_buffers(detector, monkeypatch):
    """The CUDA-graph path (static index, Adam schedule and mask buffers filled before each replay)
    trains what the step-by-step path trains: checked on the CPU with the capture replaced by a
    plain call, so a step that read a stale buffer would show here."""
    import clad.detectors.torch_replicas as tr

    def train(graphs: bool):
        data = dataset(detector).train[0].X
        dets = [
            DETECTORS[detector](
                epochs=1, batch_size=16, learning_rate=lr, random_state=s, num_threads=1
            ).fit(data)
            for s, lr, _ in REPLICAS
        ]
        Xs = [d.standardise(data) for d in dets]
        if graphs:
            monkeypatch.setattr(tr, "GRAPH_DEVICES", ("cuda", "cpu"))
            monkeypatch.setattr(tr, "GRAPH_MIN_STEPS", 0)
            monkeypatch.setattr(tr, "_warm_up", lambda step, dev: step())
            monkeypatch.setattr(tr, "_capture", _Replayed)
        train_replicas(dets, Xs, [e for _, _, e in REPLICAS])
        monkeypatch.undo()
        return [[p.detach().clone() for p in d.module_.parameters()] for d in dets]

    plain, replayed = train(False), train(True)
    for a, b in zip(replayed, plain):
        assert relative(a, b) <= 1e-6
