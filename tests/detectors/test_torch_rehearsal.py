"""A-GEM and DER on clad's PyTorch detectors: they forget less than fine-tuning on the stream built to forget."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.ensemble import IsolationForest  # noqa: E402

from clad import run_experiment  # noqa: E402
from clad.datasets.windows import window_dataset  # noqa: E402
from clad.detectors.torch_seq import LSTMAutoEncoder  # noqa: E402
from clad.errors import CladValueError  # noqa: E402
from clad.scenarios import ConceptAgnostic, ConceptIncremental  # noqa: E402
from clad.strategies import AGEM, DER, STRATEGIES, FineTune  # noqa: E402
from clad.testing import check_strategy  # noqa: E402

from tests.torch_helpers import ae, subspace_stream  # noqa: E402


@pytest.fixture(scope="module")
def stream():
    return subspace_stream(n_train=200)


@pytest.fixture(scope="module")
def fine_tuned(stream):
    return run_experiment(stream, ConceptIncremental(), FineTune(ae(epochs=20)))


@pytest.mark.slow
@pytest.mark.parametrize(
    "make",
    [
        lambda: AGEM(ae(epochs=20), buffer_size=200, random_state=0),
        lambda: DER(ae(epochs=20), buffer_size=200, alpha=1.0, random_state=0),
    ],
    ids=["agem", "der"],
)
def test_forgets_less_than_fine_tuning_and_same_seed_same_R(stream, fine_tuned, make):
    result = run_experiment(stream, ConceptIncremental(), make())
    bwt_ft = fine_tuned.metrics["roc_auc"]["backward_transfer"]
    bwt = result.metrics["roc_auc"]["backward_transfer"]
    assert bwt_ft < -0.2  # the stream is built so that fine-tuning forgets
    assert bwt > bwt_ft + 0.1
    assert (
        result.R["roc_auc"][0, 0] == fine_tuned.R["roc_auc"][0, 0]
    )  # the first concept is learned alike
    assert result.memory_rows == (200, 200, 200)
    again = run_experiment(stream, ConceptIncremental(), make())
    assert np.array_equal(again.R["roc_auc"], result.R["roc_auc"])


def test_agem_projection_by_hand():
    rng = np.random.default_rng(0)
    s = AGEM(
        ae(hidden_sizes=(4, 2), epochs=1), buffer_size=16, memory_batch_size=16, random_state=0
    )
    s.learn(rng.normal(size=(40, 3)))
    s.n_steps_ = s.n_projections_ = 0
    sample = s._sampler()  # seeded like the hook's own: it draws the same memory mini-batches
    hook = s._projection()
    module = s.detector_.module_
    params = list(module.parameters())

    def memory_gradient():
        return torch.autograd.grad(
            s.detector_.reconstruction_loss(s._rows(sample()), module), params
        )

    ref = memory_gradient()
    g_ref = torch.cat([r.reshape(-1) for r in ref])
    # a gradient pointing against the memory's: projected onto the plane orthogonal to g_ref
    for p, r in zip(params, ref):
        p.grad = -2.0 * r.clone() + 0.1
    g = torch.cat([p.grad.reshape(-1) for p in params])
    hook(module)
    g_new = torch.cat([p.grad.reshape(-1) for p in params])
    expected = g - torch.dot(g, g_ref) / torch.dot(g_ref, g_ref) * g_ref
    torch.testing.assert_close(g_new, expected)
    assert abs(float(torch.dot(g_new, g_ref))) < 1e-5 * float(g.norm() * g_ref.norm())
    # a gradient agreeing with the memory's is left alone
    ref = memory_gradient()
    for p, r in zip(params, ref):
        p.grad = r.clone()
    hook(module)
    torch.testing.assert_close(
        torch.cat([p.grad.reshape(-1) for p in params]), torch.cat([r.reshape(-1) for r in ref])
    )
    assert (s.n_steps_, s.n_projections_) == (2, 1)


def test_der_keeps_each_row_with_its_recorded_output():
    X = np.random.default_rng(1).normal(size=(30, 3))
    s = DER(ae(hidden_sizes=(4, 2), epochs=1), buffer_size=50, random_state=0).learn(X)
    memory = s.buffer_.view()
    assert memory.shape == (30, 6)
    x = torch.from_numpy(s.detector_.standardise(X))
    np.testing.assert_array_equal(memory[:, :3], x.numpy())
    with torch.no_grad():
        np.testing.assert_array_equal(memory[:, 3:], s.detector_.reconstruct(x).numpy())


@pytest.mark.slow
@pytest.mark.parametrize("cls", [AGEM, DER])
def test_contract_and_errors(cls):
    report = check_strategy(
        cls(ae(hidden_sizes=(8, 3), epochs=6), buffer_size=100), raise_on_failure=False
    )
    assert report.ok, str(report)
    assert STRATEGIES.resolve(cls.__name__.lower()) is cls
    with pytest.raises(
        CladValueError,
        match=f"{cls.__name__} needs one of clad's PyTorch detectors.*IsolationForest",
    ):
        cls(IsolationForest()).learn(np.zeros((10, 2)))
    with pytest.raises(CladValueError, match="buffer_size=0; expected an integer >= 1"):
        cls(ae(), buffer_size=0).learn(np.zeros((10, 2)))
    with pytest.raises(CladValueError, match="memory_batch_size=-3"):
        cls(ae(), memory_batch_size=-3).learn(np.zeros((10, 2)))


def test_der_bad_weights():
    with pytest.raises(CladValueError, match="DER: alpha=-1; expected a number >= 0"):
        DER(ae(), alpha=-1).learn(np.zeros((10, 2)))


@pytest.mark.slow
@pytest.mark.parametrize("cls", [AGEM, DER])
def test_on_windows_with_a_sequence_autoencoder_in_the_stream(cls):
    ds = window_dataset(subspace_stream(n_concepts=2, n_train=120, n_test=60), window=4, stride=2)
    det = LSTMAutoEncoder(hidden_sizes=(6,), epochs=2, random_state=0, num_threads=1)
    r = run_experiment(ds, ConceptAgnostic(batch_size=20), cls(det, buffer_size=30), seed=0)
    assert r.R["roc_auc"].shape == (2, 2) and np.isfinite(r.R["roc_auc"]).all()
    assert max(r.memory_rows) == 30


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("cls", [AGEM, DER])
def test_same_code_runs_on_cuda(cls):
    ds = subspace_stream(n_concepts=2, n_train=60, n_test=40)
    r = run_experiment(
        ds, ConceptIncremental(), cls(ae(epochs=3, device="cuda"), buffer_size=50), seed=0
    )
    assert np.isfinite(r.R["roc_auc"]).all()
