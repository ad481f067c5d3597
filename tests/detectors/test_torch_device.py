"""clad's PyTorch detectors on a device: every torch detector with every strategy that trains it,
the batched Fisher diagonal of the sequence autoencoders, and a GPU loop that does not wait.

The CUDA tests run where ``torch.cuda.is_available()`` and are skipped elsewhere. R on a GPU is
not bit-identical to the CPU's (see ``CUDA_R_TOLERANCE``); R on the CPU is, run after run.
"""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from clad import run_experiment  # noqa: E402
from clad.detectors.torch_ae import AutoEncoder, dense_squared_grad_sums  # noqa: E402
from clad.detectors.torch_seq import GRUAutoEncoder, LSTMAutoEncoder, per_row_squared_grad_sums  # noqa: E402
from clad.scenarios import ConceptIncremental  # noqa: E402
from clad.strategies import STRATEGIES, make_strategy  # noqa: E402

from tests.torch_helpers import DETECTORS, dataset  # noqa: E402

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs CUDA")

#: Largest difference allowed between a cell of R (ROC-AUC) computed on a GPU and the same cell on
#: the CPU, same spec and seed. The two are not bit-identical: GPU kernels add in other orders
#: (and cuDNN's recurrent kernels may use TF32), the VAE's noise comes from the device's generator,
#: and training carries those rounding differences from step to step. On the well-separated data
#: below both stay near the top of the scale; a broken device path (wrong rows, wrong statistics,
#: untrained weights) lands near 0.5, far outside the tolerance.
CUDA_R_TOLERANCE = 0.1

#: every registered strategy, with the parameters of its small case (all of them train torch detectors)
STRATEGY_PARAMS = {
    "naive": {},
    "cumulative": {},
    "replay": {"buffer_size": 60},
    "replay_buffer_only": {"buffer_size": 60},
    "balanced_replay": {"buffer_size": 60},
    "window": {"window_size": 100},
    "experts": {},
    "fine_tune": {},
    "ewc": {"ewc_lambda": 50.0},
    "lwf": {"alpha": 2.0},
    "agem": {"buffer_size": 40},
    "der": {"buffer_size": 40, "beta": 0.5},
    "incremental": {},
    "drift_experts": {},
}
CASES = [(d, s) for d in DETECTORS for s in STRATEGY_PARAMS]


def run(detector: str, strategy: str, device: str):
    det = DETECTORS[detector](
        epochs=3, batch_size=16, learning_rate=3e-3, device=device, num_threads=1
    )
    strat = make_strategy(strategy, det, STRATEGY_PARAMS[strategy])
    return run_experiment(dataset(detector), ConceptIncremental(), strat, seed=0).R["roc_auc"]


def test_the_matrix_covers_every_registered_strategy():
    assert set(STRATEGY_PARAMS) == set(STRATEGIES.names())


@pytest.mark.slow
@pytest.mark.parametrize("detector, strategy", CASES)
def test_every_torch_detector_with_every_strategy_on_the_cpu(detector, strategy):
    R = run(detector, strategy, "cpu")
    assert R.shape == (2, 2) and np.isfinite(R).all()
    assert np.array_equal(R, run(detector, strategy, "cpu"))  # bit-identical, run after run


@pytest.mark.slow
@needs_cuda
@pytest.mark.parametrize("detector, strategy", CASES)
def test_every_torch_detector_with_every_strategy_on_cuda(detector, strategy):
    R = run(detector, strategy, "cuda")
    assert R.shape == (2, 2) and np.isfinite(R).all()
    np.testing.assert_allclose(R, run(detector, strategy, "cpu"), rtol=0, atol=CUDA_R_TOLERANCE)


def row_loop_fisher_sums(det, xb):
    """The reference: one backward pass per row, squared gradients summed."""
    params = list(det.module_.parameters())
    sums = [torch.zeros_like(p) for p in params]
    with det.gradient_pass():
        for x in xb:
            for total, g in zip(
                sums, torch.autograd.grad(det.reconstruction_loss(x[None]), params)
            ):
                total += g**2
    return sums


def windows(n=120, steps=9, features=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, steps, features)).cumsum(axis=1)


@pytest.mark.slow
@pytest.mark.parametrize(
    "cls, hidden", [(LSTMAutoEncoder, (5,)), (LSTMAutoEncoder, (5, 3)), (GRUAutoEncoder, (5, 3))]
)
def test_batched_fisher_equals_the_row_loop(cls, hidden):
    W = windows()
    det = cls(hidden_sizes=hidden, epochs=1, random_state=0, num_threads=1).fit(W)
    xb = torch.from_numpy(det.standardise(W))
    # float64: the batched formula is the row loop's gradient, to 1e-6 relative in every element
    det.module_.double()
    x64 = xb[::5].double()
    batched = per_row_squared_grad_sums(det.module_, x64)
    for b, r in zip(batched, row_loop_fisher_sums(det, x64)):
        torch.testing.assert_close(b, r, rtol=1e-6, atol=1e-12 * float(r.abs().max()))
    det.module_.float()
    # float32, through fisher_diagonal: within 1e-6 of each tensor's largest entry
    fisher = det.fisher_diagonal(W)
    for f, r in zip(fisher, row_loop_fisher_sums(det, xb)):
        r = r / len(W)
        assert float((f - r).abs().max()) <= 1e-6 * float(r.abs().max())


def test_dense_fisher_products_of_squares_equal_the_row_loop():
    X = np.random.default_rng(3).normal(size=(30, 6))
    det = AutoEncoder(hidden_sizes=(5, 2), epochs=1, random_state=0, num_threads=1).fit(X)
    det.module_.double()
    x64 = torch.from_numpy(det.standardise(X)).double()
    batched = dense_squared_grad_sums(det.module_, x64)
    for b, r in zip(batched, row_loop_fisher_sums(det, x64)):
        torch.testing.assert_close(b, r, rtol=1e-6, atol=1e-12 * float(r.abs().max()))


def test_fisher_with_max_rows_uses_evenly_spaced_rows():
    W = windows(n=50)
    det = LSTMAutoEncoder(
        hidden_sizes=(4,), epochs=1, random_state=0, num_threads=1, score_batch_size=7
    ).fit(W)
    rows = np.linspace(0, 49, 10).astype(np.int64)
    for a, b in zip(det.fisher_diagonal(W, max_rows=10), det.fisher_diagonal(W[rows])):
        assert torch.equal(a, b)


def test_gradient_pass_leaves_the_cpu_modes_alone():
    det = GRUAutoEncoder(hidden_sizes=(4,), epochs=1, random_state=0, num_threads=1).fit(
        windows(n=30)
    )
    with det.gradient_pass() as module:
        assert module is det.module_ and not any(m.training for m in module.modules())
    assert not det.module_.training


@pytest.mark.slow
@needs_cuda
@pytest.mark.parametrize("cls", [LSTMAutoEncoder, GRUAutoEncoder])
def test_gradients_outside_training_work_with_cudnn(cls):
    W = windows()
    det = cls(hidden_sizes=(5,), epochs=1, random_state=0, device="cuda").fit(W)
    xb = torch.from_numpy(det.standardise(W)).cuda()
    with det.gradient_pass() as module:  # cuDNN's recurrent backward needs train mode
        assert all(m.training for m in module.modules() if isinstance(m, torch.nn.RNNBase))
    assert not any(m.training for m in det.module_.modules())
    loop = row_loop_fisher_sums(det, xb)
    fisher = det.fisher_diagonal(W)
    for f, r in zip(fisher, loop):
        r = r / len(W)
        # cuDNN may compute the row loop in TF32: a looser bound than on the CPU
        assert float((f - r).abs().max()) <= 1e-2 * float(r.abs().max())


@pytest.mark.slow
@needs_cuda
@pytest.mark.parametrize("detector", list(DETECTORS))
def test_the_cuda_training_loop_does_not_wait_for_the_gpu(detector):
    """Synchronising calls during fit do not grow with the number of mini-batches or epochs."""
    data = dataset(detector).train[0].X

    def syncs(epochs):
        det = DETECTORS[detector](epochs=epochs, batch_size=8, device="cuda", random_state=0)
        torch.cuda.set_sync_debug_mode("warn")
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                det.fit(data)
        finally:
            torch.cuda.set_sync_debug_mode("default")
        return sum("synchroniz" in str(w.message) for w in caught)

    assert syncs(1) == syncs(4)


@pytest.mark.slow
@needs_cuda
@pytest.mark.parametrize("detector", list(DETECTORS))
def test_cuda_scores_are_close_to_the_cpu_scores(detector):
    data = dataset(detector).train[0].X
    cpu = DETECTORS[detector](epochs=2, random_state=0).fit(data)
    gpu = DETECTORS[detector](epochs=2, random_state=0, device="cuda").fit(data)
    # the same initial weights and batches; training rounds differently on the GPU
    assert np.corrcoef(cpu.score(data), gpu.score(data))[0, 1] > 0.9


def test_branch_free_agem_projection_equals_the_branch():
    from clad.strategies.rehearsal import agem_project

    gen = torch.Generator().manual_seed(0)
    for _ in range(20):
        g, g_ref = torch.randn(50, generator=gen), torch.randn(50, generator=gen)
        dot = torch.dot(g, g_ref)
        expected = g - (dot / torch.dot(g_ref, g_ref).clamp_min(1e-12)) * g_ref if dot < 0 else g
        got, projected = agem_project(g, g_ref)
        assert torch.equal(got, expected) and bool(projected) == bool(dot < 0)


def test_memory_indices_drawn_in_chunks_are_the_per_batch_draws():
    """What lets A-GEM and DER on a GPU use the CPU's memory mini-batches while drawing 64 at once."""
    a = torch.randint(1000, (64, 32), generator=torch.Generator().manual_seed(3))
    gen = torch.Generator().manual_seed(3)
    b = torch.stack([torch.randint(1000, (32,), generator=gen) for _ in range(64)])
    assert torch.equal(a, b)


@pytest.mark.slow
@needs_cuda
@pytest.mark.parametrize(
    "cls, shape",
    [(AutoEncoder, (3000, 8)), (LSTMAutoEncoder, (2000, 6, 3)), (GRUAutoEncoder, (2000, 6, 3))],
)
def test_a_graphed_training_step_trains_as_the_eager_step(cls, shape, monkeypatch):
    """A long training call on CUDA replays its step as a CUDA graph; the network it trains
    equals the eager loop's to float32 rounding (Adam's step count lives on the device there)."""
    from clad.detectors import torch_graph

    X = np.random.default_rng(0).normal(size=shape)
    hidden = (8, 3) if cls is AutoEncoder else (6,)

    def fit():
        return cls(hidden_sizes=hidden, epochs=2, batch_size=32, device="cuda", random_state=0).fit(
            X
        )

    graphed = fit()
    full_steps = 2 * (shape[0] // 32)
    assert (
        graphed.graph_replays_ == full_steps - torch_graph.WARMUP_STEPS
    )  # every full batch but the warm-up
    monkeypatch.setattr(torch_graph, "MIN_GRAPH_STEPS", 10**9)
    eager = fit()
    assert eager.graph_replays_ == 0
    for a, b in zip(graphed.module_.parameters(), eager.module_.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(graphed.score(X), eager.score(X), rtol=1e-3, atol=1e-5)
    assert abs(graphed.train_loss_ - eager.train_loss_) <= 1e-4 * abs(eager.train_loss_)


def test_no_graph_on_the_cpu():
    X = np.random.default_rng(0).normal(size=(3000, 4))
    det = AutoEncoder(hidden_sizes=(4, 2), epochs=1, batch_size=16, random_state=0).fit(X)
    assert det.graph_replays_ == 0
