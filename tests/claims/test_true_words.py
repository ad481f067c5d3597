"""Words that say what happened: an interrupted tuned grid counts the runs it really keeps, a
folder of another spec says what differs, a table with only a header says it has no rows."""

import os
import sqlite3

import pytest

from clad.cli import main
from clad.datasets import load_table
from clad.engine.benchmark import run_spec
from clad.engine.folder import FolderInUse
from clad.errors import DataError
from tests.runner_helpers import small_spec, synthetic, write_spec

#: three concepts, no detector yet (each test names its own)
SMALL = small_spec(
    name="words",
    seeds=1,
    datasets=[synthetic(n_concepts=3, n_features=2, n_train=40, n_test=30)],
    detectors=None,
)

PLUGIN = """
import os, signal
from sklearn.ensemble import IsolationForest

FITS = [0]


class StopsOnThirdFit(IsolationForest):
    def fit(self, X, y=None, sample_weight=None):
        FITS[0] += 1
        if FITS[0] == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        return super().fit(X, y, sample_weight)
"""


@pytest.mark.slow
def test_sigterm_during_tuning_counts_the_tuning_runs_it_keeps(tmp_path, capsys):
    (tmp_path / "stopper.py").write_text(PLUGIN)
    spec = write_spec(
        tmp_path,
        **{**SMALL, "name": "tuned"},
        detectors=[{"name": "stopper:StopsOnThirdFit", "label": "stop"}],
        tuning={
            "mode": "first_concepts",
            "k": 1,
            "detectors": {"stop": {"n_estimators": [5, 6, 7, 8]}},
        },
    )
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 143
    err = capsys.readouterr().err
    con = sqlite3.connect(tmp_path / "out" / "results.sqlite")
    kept = con.execute("SELECT COUNT(*) FROM runs WHERE status = 'ok'").fetchone()[0]
    con.close()
    assert kept == 2
    assert "interrupted by SIGTERM; 2 finished runs (0 evaluation, 2 tuning) are kept" in err


@pytest.mark.slow
def test_a_folder_of_another_spec_says_what_differs(tmp_path):
    run_spec({**SMALL, "detectors": [{"name": "hbos", "n_bins": 10}]}, tmp_path / "out")
    with pytest.raises(
        FolderInUse,
        match=r"holds the results of another spec \('words'\); this is spec 'words', "
        r"which differs in: detectors\[0\].n_bins: 10 -> 20; seeds: 1 -> 2;",
    ):
        run_spec(
            {**SMALL, "seeds": 2, "detectors": [{"name": "hbos", "n_bins": 20}]}, tmp_path / "out"
        )


def test_a_csv_with_only_a_header_says_it_has_no_rows(tmp_path):
    (tmp_path / "h.csv").write_text("concept,label,x1,x2\n")
    with pytest.raises(
        DataError,
        match=r"table: '.*h.csv' has no rows \(only a header, columns \['concept', "
        r"'label', 'x1', 'x2'\]\)",
    ):
        load_table(file="h.csv", data_dir=str(tmp_path))
