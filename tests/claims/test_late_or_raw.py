"""Late or raw, one test per kind: each refused before anything runs, with a clear error naming
the value and what is allowed (never a traceback, never a failure of every run)."""

import os

import numpy as np
import pytest

from clad.engine.benchmark import run_spec
from clad.engine.spec import load_spec, parse_spec
from clad.errors import CladError, CladTypeError, SpecError

from tests.runner_helpers import run_main, small_spec, synthetic, write_spec

TORCH = {"name": "autoencoder", "epochs": 1}


@pytest.mark.parametrize("device", ["CPU", "", "tpu", "meta", "cuda:x", "gpu"])
def test_a_torch_device_string_torch_does_not_know_is_a_spec_error(device):
    with pytest.raises(SpecError, match=r"expected 'cpu', 'cuda', 'cuda:N' or 'mps'"):
        parse_spec(small_spec(detectors=[{**TORCH, "device": device}]))


def test_a_cuda_device_this_machine_lacks_is_refused_before_any_run(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available() and torch.cuda.device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    with pytest.raises(SpecError, match=r"device='cuda:7', but this machine has"):
        run_spec(small_spec(detectors=[{**TORCH, "device": "cuda:7"}]), tmp_path / "o")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "strategy,words",
    [
        ({"name": "agem", "memory_batch_size": 0}, "memory_batch_size=0"),
        ({"name": "der", "alpha": -1}, "alpha=-1"),
        ({"name": "der", "beta": -0.5}, "beta=-0.5"),
    ],
)
def test_rehearsal_parameters_are_checked_at_spec_time(strategy, words):
    with pytest.raises(SpecError, match=words):
        parse_spec(small_spec(strategies=[strategy], detectors=[TORCH]))


def test_telemanom_window_score_and_a_pickle_table_are_spec_errors(tmp_path):
    with pytest.raises(
        SpecError, match=r"window_score='median' \(did you mean 'mean'\?\); allowed: 'max', 'mean'"
    ):
        parse_spec(
            small_spec(
                datasets=[
                    {"name": "telemanom", "window_score": "median", "data_dir": str(tmp_path)}
                ]
            )
        )
    (tmp_path / "t.pkl").write_bytes(b"\x80\x04junk")
    with pytest.raises(SpecError, match=r"a table is read from a .csv .* or a .parquet file"):
        parse_spec(
            small_spec(datasets=[{"name": "table", "file": "t.pkl", "data_dir": str(tmp_path)}])
        )


def test_a_spec_that_is_a_pipe_a_device_a_folder_or_nested_too_deep(tmp_path, capsys, caplog):
    fifo = tmp_path / "spec.toml"
    os.mkfifo(fifo)
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    for path, words in [
        (fifo, "not a regular file"),
        ("/dev/zero", "not a regular file"),
        (tmp_path, "is a folder"),
        (deep, "nested more than 32 deep"),
    ]:
        rc, _, err = run_main(capsys, caplog, "run", path, "--dry-run")
        assert rc == 2 and words in err and "Traceback" not in err, err


def test_data_files_that_are_folders_pipes_or_random_bytes(tmp_path):
    data = tmp_path / "data"
    (data / "x.csv").mkdir(parents=True)
    os.mkfifo(data / "p.csv")
    with pytest.raises(SpecError, match="is a folder; expected a data file"):
        parse_spec(small_spec(datasets=[{"name": "table", "file": "x.csv", "data_dir": str(data)}]))
    with pytest.raises(SpecError, match="is not a regular file"):
        parse_spec(small_spec(datasets=[{"name": "table", "file": "p.csv", "data_dir": str(data)}]))
    (data / "r.npz").write_bytes(
        np.random.default_rng(0).integers(0, 256, 500, dtype=np.uint8).tobytes()
    )
    from clad.datasets import DATASETS

    with pytest.raises(CladError, match=r"is not a .npz file") as err:
        DATASETS.build("clad_npz", {"file": "r.npz", "data_dir": str(data)})
    assert "allow_pickle" not in str(err.value)


def test_a_relative_link_out_of_the_data_folder_is_refused(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    outside = tmp_path / "secret.csv"
    outside.write_text("concept,label,x\na,0,1\n")
    (data / "link.csv").symlink_to(os.path.relpath(outside, data))
    with pytest.raises(SpecError, match="symbolic link leading out of its data directory"):
        parse_spec(
            small_spec(datasets=[{"name": "table", "file": "link.csv", "data_dir": str(data)}])
        )


@pytest.mark.parametrize("slot,wrong", [(0, [1, 2]), (1, "concept_aware"), (2, None), (2, "naive")])
def test_run_experiment_with_objects_of_the_wrong_kind(slot, wrong):
    from clad import run_experiment
    from clad.datasets import make_synthetic
    from clad.scenarios import ConceptAware
    from clad.strategies import Naive

    args = [
        make_synthetic(n_concepts=2, n_train=20, n_test=10, random_state=0),
        ConceptAware(),
        Naive(),
    ]
    args[slot] = wrong
    with pytest.raises(CladTypeError, match=["dataset is", "scenario is", "strategy is"][slot]):
        run_experiment(*args)
