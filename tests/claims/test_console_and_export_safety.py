"""Nothing silent or faked on the console: text from plug-ins and files reaches the terminal as
text (control characters escaped); an MLflow store that would lose the runs is refused, and an
export cut short leaves no half-logged run RUNNING."""

import pytest

from clad.cli import main, terminal_safe
from clad.errors import CladValueError

from tests.runner_helpers import run_main, small_spec, write_spec

FAKE = "\x1b[2J\x1b[H0 failed: all runs passed\x9b1m"


def test_a_message_with_escape_sequences_reaches_the_console_escaped(tmp_path, capsys, caplog):
    spec = write_spec(
        tmp_path, **small_spec(detectors=[{"name": "plugins:FailingDetector", "message": FAKE}])
    )
    rc, out, err = run_main(capsys, caplog, "run", spec, "--out", tmp_path / "o")
    assert rc == 1
    assert "\x1b" not in out and "\x9b" not in out
    assert "\\x1b[2J" in err  # said, as text


def test_terminal_safe_keeps_lines_and_tabs():
    assert terminal_safe("a\tb\nc\r") == "a\tb\nc\r"
    assert terminal_safe("\x07\x1b\x7f\x85") == "\\x07\\x1b\\x7f\\x85"


@pytest.mark.parametrize(
    "uri,words",
    [
        ("sqlite:///:memory:", "in-memory store"),
        ("sqlite://", "in-memory store"),
        ("ftp://host/x", "scheme 'ftp' is not a tracking store"),
        ("mlruns", "scheme '(none)'"),
        ("http://", "names no host"),
        ("", "expected a URI"),
    ],
)
def test_a_tracking_uri_that_would_lose_the_runs_is_refused(uri, words):
    from clad.engine.export_mlflow import check_tracking_uri

    with pytest.raises(CladValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        check_tracking_uri(uri)


@pytest.mark.slow
def test_a_refused_tracking_uri_is_exit_2_and_an_interrupted_export_leaves_no_running_run(
    tmp_path, capsys, monkeypatch
):
    pytest.importorskip("mlflow")
    pytest.importorskip("sqlalchemy")
    from mlflow.tracking import MlflowClient

    from clad.engine.export_mlflow import default_tracking_uri

    spec = write_spec(tmp_path, **small_spec(seeds=[0, 1, 2]))
    out = tmp_path / "o"
    assert main(["run", str(spec), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert (
        main(["export", str(out), "--format", "mlflow", "--tracking-uri", "sqlite:///:memory:"])
        == 2
    )
    assert "in-memory store" in capsys.readouterr().err

    import clad.report.plots as plots

    calls = {"n": 0}
    real = plots.plot_heatmap

    def interrupted(*args, **kwargs):  # Ctrl-C while the second run's artifacts are logged
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(plots, "plot_heatmap", interrupted)
    assert main(["export", str(out), "--format", "mlflow"]) == 130
    client = MlflowClient(tracking_uri=default_tracking_uri(out))
    exp = client.get_experiment_by_name("tiny").experiment_id
    runs = client.search_runs([exp])
    assert [r.info.status for r in runs] == [
        "FINISHED"
    ]  # the first; the second was not left RUNNING
    monkeypatch.setattr(plots, "plot_heatmap", real)
    assert main(["export", str(out), "--format", "mlflow"]) == 0
    assert len(client.search_runs([exp])) == 3
