"""clad's PyTorch detectors: interface, determinism, continued training, lazy import, devices."""

import pickle
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.base import clone  # noqa: E402
from sklearn.ensemble import IsolationForest  # noqa: E402

from clad.detectors import DETECTORS, as_detector, make_detector  # noqa: E402
from clad.detectors.torch_ae import VAE, AutoEncoder  # noqa: E402
from clad.errors import CladValueError, DetectorError  # noqa: E402
from clad.strategies import FineTune, Naive, make_strategy  # noqa: E402

KINDS = [AutoEncoder, VAE]


def small(cls, **kw):
    params = dict(hidden_sizes=(8, 2), epochs=3, batch_size=16, random_state=0, num_threads=1)
    params.update(kw)
    return cls(**params)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    latent = rng.normal(size=(200, 2))
    X = latent @ rng.normal(size=(2, 5)) + 0.05 * rng.normal(size=(200, 5)) + 3.0
    return X


@pytest.mark.slow
@pytest.mark.parametrize("cls", KINDS)
def test_protocol(cls, data):
    det = small(cls, epochs=15)
    assert det.fit(data) is det
    s = det.score(data)
    assert s.shape == (200,) and s.dtype == np.float64 and np.isfinite(s).all()
    assert det.threshold_ == pytest.approx(np.quantile(s, 0.9))
    assert as_detector(det) is det
    far = det.score(data[:5] + 10.0)
    assert far.min() > np.median(s)  # far-away rows are more anomalous


@pytest.mark.parametrize("cls", KINDS)
def test_same_seed_same_scores_and_global_rng_untouched(cls, data):
    state = torch.random.get_rng_state()
    a = small(cls).fit(data).score(data)
    b = small(cls).fit(data).score(data)
    assert torch.equal(state, torch.random.get_rng_state())
    assert np.array_equal(a, b)
    assert not np.array_equal(a, small(cls, random_state=1).fit(data).score(data))


@pytest.mark.parametrize("cls", KINDS)
def test_batched_scoring_matches(cls, data):
    det = small(cls).fit(data)
    det_small_batches = clone(det).set_params(score_batch_size=7)
    det_small_batches.__dict__.update({k: v for k, v in det.__dict__.items() if k.endswith("_")})
    np.testing.assert_allclose(det_small_batches.score(data), det.score(data), rtol=1e-5, atol=1e-7)


@pytest.mark.slow
@pytest.mark.parametrize("cls", KINDS)
def test_partial_fit_continues_and_keeps_standardisation(cls, data):
    det = small(cls).fit(data)
    mean, scale = det.mean_.copy(), det.scale_.copy()
    before = [p.detach().clone() for p in det.module_.parameters()]
    module = det.module_
    shifted = data + 5.0
    assert det.partial_fit(shifted) is det
    assert det.module_ is module and det.n_train_calls_ == 2
    assert np.array_equal(det.mean_, mean) and np.array_equal(det.scale_, scale)
    assert any(not torch.equal(b, p) for b, p in zip(before, det.module_.parameters()))
    assert det.threshold_ == pytest.approx(np.quantile(det.score(shifted), 0.9))
    # partial_fit on an unfitted detector is fit
    fresh = small(cls).partial_fit(data)
    assert np.array_equal(fresh.score(data), small(cls).fit(data).score(data))


def test_extra_loss_hook_is_called_per_batch(data):
    det = small(AutoEncoder).fit(data)
    calls = []

    def extra(module, xb):
        calls.append(tuple(xb.shape))
        assert module is det.module_
        return 0.0 * xb.sum()

    det.partial_fit(data[:40], extra_loss=extra, epochs=2)
    assert calls == [(16, 5), (16, 5), (8, 5)] * 2


def test_constant_columns_are_fine():
    X = np.c_[np.random.default_rng(0).normal(size=(60, 3)), np.ones(60)]
    s = small(AutoEncoder).fit(X).score(X)
    assert np.isfinite(s).all()


@pytest.mark.parametrize(
    "param, value, message",
    [
        ("epochs", 0, "epochs=0; expected an integer >= 1"),
        ("batch_size", 2.5, "batch_size=2.5; expected an integer >= 1"),
        ("hidden_sizes", (), "hidden_sizes=\\(\\); expected a non-empty list"),
        ("learning_rate", -1.0, "learning_rate=-1.0; expected a number > 0"),
        ("contamination", 0.7, "contamination=0.7; expected a number in \\(0, 0.5\\)"),
        ("device", "nonsense", "device='nonsense'; expected 'cpu', 'cuda'"),
    ],
)
def test_bad_parameters_are_clear_errors(param, value, message, data):
    with pytest.raises(CladValueError, match=message):
        small(AutoEncoder, **{param: value}).fit(data)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error when CUDA is absent")
def test_cuda_without_cuda_is_a_clear_error(data):
    with pytest.raises(
        DetectorError, match="device='cuda' but torch.cuda.is_available\\(\\) is False"
    ):
        small(AutoEncoder, device="cuda").fit(data)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("cls", KINDS)
def test_runs_on_cuda(cls, data):
    det = small(cls, device="cuda").fit(data)
    s = det.score(data)
    assert s.shape == (200,) and np.isfinite(s).all()
    assert next(det.module_.parameters()).is_cuda
    det.partial_fit(data + 1.0)


def test_score_before_fit_and_wrong_width(data):
    with pytest.raises(DetectorError, match="AutoEncoder: used before fit"):
        small(AutoEncoder).score(data)
    det = small(AutoEncoder).fit(data)
    with pytest.raises(CladValueError, match="X has 3 features; the detector was fitted with 5"):
        det.score(data[:, :3])


@pytest.mark.parametrize("cls", KINDS)
def test_clone_and_pickle(cls, data):
    det = small(cls).fit(data)
    fresh = clone(det)
    assert not hasattr(fresh, "module_") and fresh.get_params() == det.get_params()
    back = pickle.loads(pickle.dumps(det))
    assert np.array_equal(back.score(data), det.score(data))
    back.partial_fit(data)  # a restored detector can go on training


@pytest.mark.slow
def test_registered_names_are_lazy():
    assert DETECTORS.path("autoencoder") == "clad.detectors.torch_ae:AutoEncoder"
    assert DETECTORS.path("vae") == "clad.detectors.torch_ae:VAE"
    det = make_detector("vae", {"epochs": 1}, random_state=4)
    assert isinstance(det, VAE) and det.random_state == 4
    code = "import sys, clad, clad.strategies, clad.detectors; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_naive_refits_a_fresh_clone_and_fine_tune_continues(data):
    naive = Naive(small(AutoEncoder)).learn(data)
    first = naive.detector_
    naive.learn(data + 1.0)
    assert naive.detector_ is not first and naive.detector_.n_train_calls_ == 1
    tuned = FineTune(small(AutoEncoder)).learn(data)
    first = tuned.detector_
    tuned.learn(data + 1.0)
    assert tuned.detector_ is first and tuned.detector_.n_train_calls_ == 2
    assert Naive(small(AutoEncoder), warm_start=True).get_params()["warm_start"] is True
    assert make_strategy("fine_tune", small(AutoEncoder)).warm_start is True
    with pytest.raises(CladValueError, match="detector IsolationForest does not have"):
        Naive(IsolationForest(), warm_start=True).learn(data)
