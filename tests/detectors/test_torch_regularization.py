"""EWC and LwF on clad's PyTorch detectors."""

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.base import clone  # noqa: E402
from sklearn.ensemble import IsolationForest  # noqa: E402

from clad import Concept, ConceptDataset, run_experiment  # noqa: E402
from clad.detectors.torch_ae import VAE, AutoEncoder  # noqa: E402
from clad.errors import CladValueError  # noqa: E402
from clad.scenarios import ConceptAgnostic, ConceptIncremental  # noqa: E402
from clad.strategies import EWC, STRATEGIES, FineTune, LwF, make_strategy  # noqa: E402

from tests.torch_helpers import ae, subspace_stream  # noqa: E402


@pytest.fixture(scope="module")
def stream():
    return subspace_stream()


@pytest.fixture(scope="module")
def fine_tuned(stream):
    return run_experiment(stream, ConceptIncremental(), FineTune(ae()))


@pytest.mark.slow
def test_ewc_forgets_less_than_fine_tuning(stream, fine_tuned):
    ewc = run_experiment(stream, ConceptIncremental(), EWC(ae(), ewc_lambda=1e4))
    bwt_ft = fine_tuned.metrics["roc_auc"]["backward_transfer"]
    bwt_ewc = ewc.metrics["roc_auc"]["backward_transfer"]
    assert bwt_ft < -0.2  # the stream is built so that fine-tuning forgets
    assert bwt_ewc > bwt_ft + 0.1
    # the first concept is learned the same way by both
    assert ewc.R["roc_auc"][0, 0] == fine_tuned.R["roc_auc"][0, 0]


@pytest.mark.slow
def test_same_seed_twice_gives_identical_R(stream):
    a = run_experiment(
        stream, ConceptIncremental(), EWC(ae(epochs=5), ewc_lambda=100.0, mode="online")
    )
    b = run_experiment(
        stream, ConceptIncremental(), EWC(ae(epochs=5), ewc_lambda=100.0, mode="online")
    )
    assert np.array_equal(a.R["roc_auc"], b.R["roc_auc"])
    c = run_experiment(stream, ConceptIncremental(), LwF(ae(epochs=5), alpha=1.0))
    d = run_experiment(stream, ConceptIncremental(), LwF(ae(epochs=5), alpha=1.0))
    assert np.array_equal(c.R["roc_auc"], d.R["roc_auc"])


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: EWC(ae(), ewc_lambda=0.0), lambda: LwF(ae(), alpha=0.0)])
def test_zero_strength_is_exactly_fine_tuning(stream, fine_tuned, make):
    result = run_experiment(stream, ConceptIncremental(), make())
    assert np.array_equal(result.R["roc_auc"], fine_tuned.R["roc_auc"])


def test_ewc_penalty_by_hand():
    X = np.random.default_rng(0).normal(size=(40, 3))
    s = EWC(ae(hidden_sizes=(4, 2), epochs=2), ewc_lambda=6.0).learn(X)
    ((fisher, anchor),) = s.penalties_
    module = s.detector_.module_
    assert float(s._penalty(module, None).detach()) == 0.0  # at the anchor
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.5)
    expected = 0.5 * 6.0 * sum(float((f * 0.25).sum()) for f in fisher)
    assert float(s._penalty(module, None).detach()) == pytest.approx(expected, rel=1e-5)


def test_fisher_is_mean_squared_per_row_gradient():
    X = np.random.default_rng(1).normal(size=(9, 3))
    det = ae(hidden_sizes=(4, 2), epochs=2, batch_size=4).fit(X)
    fisher = det.fisher_diagonal(X)
    module = det.module_
    manual = [torch.zeros_like(p) for p in module.parameters()]
    for x in torch.from_numpy(det.standardise(X)):
        module.zero_grad()
        det.reconstruction_loss(x[None]).backward()
        for m, p in zip(manual, module.parameters()):
            m += p.grad**2 / len(X)
    for f, m in zip(fisher, manual):
        torch.testing.assert_close(f, m, rtol=1e-4, atol=1e-8)


def test_separate_and_online_modes():
    X = np.random.default_rng(0).normal(size=(30, 3))
    sep = EWC(ae(hidden_sizes=(4, 2), epochs=1), mode="separate")
    onl = EWC(ae(hidden_sizes=(4, 2), epochs=1), mode="online", gamma=0.5)
    for k in range(3):
        sep.learn(X + k)
        onl.learn(X + k)
    assert len(sep.penalties_) == 3 and len(onl.penalties_) == 1
    # online: F = gamma * F_old + F_new, anchor = latest weights
    assert all(
        torch.equal(a, p) for a, p in zip(onl.penalties_[0][1], onl.detector_.module_.parameters())
    )


@pytest.mark.slow
def test_lwf_stays_closer_to_the_previous_model(stream):
    first, second = stream.train[0].X, stream.train[1].X
    strong = LwF(ae(epochs=10), alpha=50.0).learn(first)
    previous = pickle.loads(pickle.dumps(strong.detector_))  # a frozen copy of the first model
    strong.learn(second)
    tuned = FineTune(ae(epochs=10)).learn(first).learn(second)

    def gap(det):
        xb = torch.from_numpy(det.standardise(second))
        with torch.no_grad():
            return float(((det.reconstruct(xb) - previous.reconstruct(xb)) ** 2).mean())

    assert gap(strong.detector_) < 0.5 * gap(tuned.detector_)


@pytest.mark.parametrize("cls", [EWC, LwF])
def test_non_torch_detector_is_a_clear_error(cls):
    with pytest.raises(
        CladValueError,
        match=f"{cls.__name__} needs one of clad's PyTorch detectors.*IsolationForest",
    ):
        cls(IsolationForest()).learn(np.zeros((10, 2)))


def test_bad_parameters():
    X = np.zeros((10, 2))
    with pytest.raises(CladValueError, match="mode='both'; allowed: 'separate', 'online'"):
        EWC(ae(), mode="both").learn(X)
    with pytest.raises(CladValueError, match="gamma=0; expected a number in \\(0, 1\\]"):
        EWC(ae(), gamma=0).learn(X)
    with pytest.raises(CladValueError, match="alpha=-1; expected a number >= 0"):
        LwF(ae(), alpha=-1).learn(X)


@pytest.mark.parametrize("name", ["fine_tune", "ewc", "lwf"])
def test_registered_clone_pickle_and_stream(name):
    strat = make_strategy(name, VAE(hidden_sizes=(4, 2), epochs=1, random_state=0, num_threads=1))
    assert STRATEGIES.resolve(name) is type(strat)
    assert not strat.requires_boundaries and "concept_agnostic" in strat.supported_scenarios
    ds = subspace_stream(n_concepts=2, n_train=40, n_test=20)
    result = run_experiment(ds, ConceptAgnostic(batch_size=25), strat)
    assert result.memory_rows == (0, 0) and np.isfinite(result.R["roc_auc"]).all()
    fitted = clone(strat).learn(ds.train[0].X).learn(ds.train[1].X)
    assert not hasattr(clone(fitted), "detector_")
    back = pickle.loads(pickle.dumps(fitted))
    X = ds.test[0].X
    assert np.array_equal(back.score(X).scores, fitted.score(X).scores)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize(
    "make", [lambda d: FineTune(d), lambda d: EWC(d, ewc_lambda=100.0), lambda d: LwF(d)]
)
def test_same_code_runs_on_cuda(make):
    ds = subspace_stream(n_concepts=2, n_train=60, n_test=40)
    result = run_experiment(ds, ConceptIncremental(), make(ae(epochs=3, device="cuda")))
    assert np.isfinite(result.R["roc_auc"]).all()
