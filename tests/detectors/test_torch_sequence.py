"""The LSTM and GRU sequence autoencoders: the detector contract, windows, and the torch strategies."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from clad import Concept, ConceptDataset, run_experiment  # noqa: E402
from clad.datasets.windows import sliding_windows, window_dataset  # noqa: E402
from clad.detectors import DETECTORS, make_detector  # noqa: E402
from clad.detectors.torch_seq import GRUAutoEncoder, LSTMAutoEncoder  # noqa: E402
from clad.errors import CladValueError  # noqa: E402
from clad.scenarios import ConceptAgnostic, ConceptIncremental  # noqa: E402
from clad.strategies import EWC, FineTune, LwF  # noqa: E402
from clad.testing import check_detector  # noqa: E402

SEQ = [LSTMAutoEncoder, GRUAutoEncoder]


def small(cls, **kw):
    params = dict(
        hidden_sizes=(8,),
        epochs=4,
        batch_size=32,
        learning_rate=5e-3,
        random_state=0,
        num_threads=1,
    )
    params.update(kw)
    return cls(**params)


def waves(n=800, period=40.0, phase=0.0, seed=0):
    t = np.arange(n)
    rng = np.random.default_rng(seed)
    return np.stack(
        [np.sin(2 * np.pi * t / period + phase), np.cos(2 * np.pi * t / period + phase)], axis=1
    ) + 0.02 * rng.normal(size=(n, 2))


@pytest.mark.slow
@pytest.mark.parametrize("cls", SEQ)
def test_detector_contract(cls):
    report = check_detector(small(cls, epochs=6), raise_on_failure=False)
    assert report.ok, str(report)


@pytest.mark.parametrize("cls", SEQ)
def test_windows_in_scores_out(cls):
    W = sliding_windows(waves(), 16, 4)
    ae = small(cls).fit(W)
    assert ae.n_features_in_ == 2 and ae.mean_.shape == (2,)
    s = ae.score(W)
    assert s.shape == (len(W),) and np.isfinite(s).all() and np.isfinite(ae.threshold_)
    with pytest.raises(CladValueError, match="X has 3 features; the detector was fitted with 2"):
        ae.score(np.zeros((4, 16, 3)))


@pytest.mark.slow
def test_a_broken_rhythm_scores_higher():
    W = sliding_windows(waves(), 20, 5)
    ae = small(LSTMAutoEncoder, hidden_sizes=(16,), epochs=30).fit(W)
    test = sliding_windows(waves(400, seed=1), 20, 5).copy()
    broken = test.copy()
    broken[:, 10:, :] = broken[:, 10:, ::-1]  # the two channels swap half-way: off-pattern
    assert np.median(ae.score(broken)) > 3 * np.median(ae.score(test))


@pytest.mark.slow
@pytest.mark.parametrize("cls", SEQ)
def test_same_seed_same_scores_and_partial_fit_continues(cls):
    W = sliding_windows(waves(), 16, 8)
    a, b = small(cls).fit(W), small(cls).fit(W)
    assert np.array_equal(a.score(W), b.score(W))
    before = [p.detach().clone() for p in a.module_.parameters()]
    a.partial_fit(W[::-1], epochs=1)
    assert a.n_train_calls_ == 2
    assert any(not torch.equal(p, q) for p, q in zip(before, a.module_.parameters()))


def test_registered_names():
    for name, cls in (("lstm_autoencoder", LSTMAutoEncoder), ("gru_autoencoder", GRUAutoEncoder)):
        assert DETECTORS.resolve(name) is cls
        det = make_detector(name, {"hidden_sizes": [4], "epochs": 1}, random_state=5)
        assert isinstance(det, cls) and det.random_state == 5


def rhythms(n_concepts=3, window=16, stride=8):
    """Concept c: the two waves at period 20 * (c + 1); test anomalies swap the channels mid-window."""
    train, test = [], []
    for c in range(n_concepts):
        period = 20.0 * (c + 1)
        train.append(Concept(f"P{c}", waves(600, period, seed=c)))
        X = waves(400, period, phase=1.0, seed=10 + c)
        y = np.zeros(400, dtype=int)
        X[200:260] = X[200:260, ::-1]
        y[200:260] = 1
        test.append(Concept(f"P{c}", X, y))
    return window_dataset(ConceptDataset(train, test, name="rhythms"), window=window, stride=stride)


@pytest.mark.slow
@pytest.mark.parametrize(
    "make",
    [lambda d: FineTune(d), lambda d: EWC(d, ewc_lambda=10.0, fisher_rows=20), lambda d: LwF(d)],
)
def test_torch_strategies_run_on_windows(make):
    ds = rhythms()
    for scenario in (ConceptIncremental(), ConceptAgnostic(batch_size=40)):
        r = run_experiment(ds, scenario, make(small(GRUAutoEncoder)), seed=0)
        assert r.R["roc_auc"].shape == (3, 3) and np.isfinite(r.R["roc_auc"]).all()


@pytest.mark.slow
def test_ewc_fisher_on_windows_matches_per_row_gradients():
    W = sliding_windows(waves(200), 8, 8)
    det = small(LSTMAutoEncoder, hidden_sizes=(4,), epochs=1).fit(W)
    fisher = det.fisher_diagonal(W)
    manual = [torch.zeros_like(p) for p in det.module_.parameters()]
    for x in torch.from_numpy(det.standardise(W)):
        det.module_.zero_grad()
        det.reconstruction_loss(x[None]).backward()
        for m, p in zip(manual, det.module_.parameters()):
            m += p.grad**2 / len(W)
    for f, m in zip(fisher, manual):
        torch.testing.assert_close(f, m, rtol=1e-4, atol=1e-8)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("cls", SEQ)
def test_cuda_path(cls):
    ds = rhythms(n_concepts=2)
    r = run_experiment(
        ds, ConceptIncremental(), EWC(small(cls, device="cuda"), ewc_lambda=10.0), seed=0
    )
    assert np.isfinite(r.R["roc_auc"]).all()
