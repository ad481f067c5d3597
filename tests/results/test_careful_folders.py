"""One careful path for reading and writing a results folder: run, report, export and validate
say which path cannot be written and why (exit 111), and a damaged stored run is named with its
table and column when it is read, never drawn half or called a foreign database."""

import os
import pickle
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from clad.cli import main
from clad.engine.benchmark import run_spec
from clad.results.reading import load_results
from clad.results.store import DestinationError, writable_destination
from clad.errors import DataError
from tests.runner_helpers import small_spec, synthetic, write_spec

ROOT = Path(__file__).resolve().parents[2]
SPEC = small_spec(
    name="careful", seeds=2, datasets=[synthetic(n_features=2, n_train=40, n_test=30)]
)
#: a spec for commands that stop before computing anything
QUICK = dict(datasets=[synthetic(n_features=2, n_train=30, n_test=20)])


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    out = tmp_path_factory.mktemp("careful") / "out"
    run_spec(SPEC, out)
    return out


@pytest.fixture
def folder(pristine, tmp_path):
    import shutil

    return Path(shutil.copytree(pristine, tmp_path / "out"))


def _sql(folder, *statements):
    con = sqlite3.connect(folder / "results.sqlite")
    for st in statements:
        con.execute(*st) if isinstance(st, tuple) else con.execute(st)
    con.commit()
    con.close()


@pytest.mark.slow
def test_export_dest_naming_a_file_exits_111_naming_it(folder, tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    assert main(["export", str(folder), "--dest", str(tmp_path / "afile")]) == 111
    err = capsys.readouterr().err
    assert (
        f"cannot write '{tmp_path / 'afile'}': it names a file, not a folder; give a writable folder with --dest"
        in err
    )


def test_validate_json_naming_a_folder_or_a_path_under_a_file_exits_111_before_computing(
    tmp_path, capsys
):
    spec = write_spec(tmp_path, **QUICK)
    assert main(["validate", str(spec), "--json", str(tmp_path)]) == 111
    assert (
        "it names a folder, not a file; give a writable file with --json" in capsys.readouterr().err
    )
    (tmp_path / "plain").write_text("x")
    assert main(["validate", str(spec), "--json", str(tmp_path / "plain" / "r.json")]) == 111
    captured = capsys.readouterr()
    assert (
        f"'{tmp_path / 'plain'}' is a file, not a folder" in captured.err
        and "pass every check" not in captured.out
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
@pytest.mark.slow
def test_a_read_only_folder_without_dest_exits_111(folder, capsys):
    folder.chmod(0o555)
    try:
        assert main(["export", str(folder)]) == 111
        assert (
            "the folder is read-only; give a writable folder with --dest" in capsys.readouterr().err
        )
    finally:
        folder.chmod(0o755)


def test_writable_destination_names_the_path_and_why(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(DestinationError, match="names a file, not a folder"):
        writable_destination(tmp_path / "f", "folder")
    with pytest.raises(
        DestinationError, match=r"cannot write '.*f/sub': '.*f' is a file, not a folder"
    ):
        writable_destination(tmp_path / "f" / "sub", "folder")
    assert writable_destination(tmp_path / "new" / "deeper", "folder").is_dir()


@pytest.mark.slow
def test_half_the_r_cells_deleted_is_named_by_report_and_export(folder, capsys):
    rid = load_results(folder)[0].run_id
    _sql(folder, ("DELETE FROM r_cells WHERE run_id = ? AND step_index = 1", (rid,)))
    with pytest.raises(
        DataError,
        match=rf"run '{rid}' of .* is damaged: table r_cells, column value: base metric "
        r"'roc_auc' has 2 of its 4 R cells",
    ):
        load_results(folder)
    assert main(["report", str(folder)]) == 2
    assert f"run '{rid}'" in capsys.readouterr().err
    assert main(["export", str(folder), "--format", "json"]) == 2
    assert "table r_cells" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("column", ["timings", "config", "seed"])
def test_a_pickle_in_a_column_is_named_by_report_export_and_run(folder, column, capsys):
    rid = load_results(folder)[1].run_id
    _sql(folder, (f"UPDATE runs SET {column} = ? WHERE run_id = ?", (pickle.dumps({"x": 1}), rid)))
    for args in (
        ["report", str(folder)],
        ["export", str(folder)],
        ["export", str(folder), "--format", "json"],
    ):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert f"run '{rid}'" in err and f"table runs, column {column}: bytes" in err, err


@pytest.mark.slow
def test_a_file_size_limit_does_not_make_a_healthy_database_foreign(folder, tmp_path):
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000)); "
        "from clad.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "export", str(folder), "--dest", str(tmp_path / "dest")],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "not a clad results database" not in proc.stderr
    assert proc.returncode == 111 and "File too large" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_clad_run_computes_a_damaged_run_again_and_says_why(folder, caplog):
    runs = load_results(folder)
    _sql(
        folder, ("UPDATE runs SET timings = ? WHERE run_id = ?", (pickle.dumps(1), runs[0].run_id))
    )
    with caplog.at_level("WARNING"):
        again = run_spec(SPEC, folder.parent / "out")
    assert again.n_computed == 1 and again.ok
    assert (
        "computed again: its stored record is damaged (table runs, column timings: bytes where JSON text "
        "belongs)"
    ) in caplog.text and "R cells are missing" not in caplog.text
    assert sorted(r.run_id for r in load_results(folder)) == sorted(r.run_id for r in runs)


def test_validate_refuses_a_threshold_outside_the_metric_range(tmp_path, capsys):
    spec = write_spec(tmp_path, **QUICK)
    assert main(["validate", str(spec), "--feasible", "2"]) == 2
    assert (
        "--feasible 2.0; expected a number from 0 to 1 (base metrics lie in [0, 1])"
        in capsys.readouterr().err
    )
