"""``clad run``: failures isolated and recorded, resume, results.json, summaries, export."""

from __future__ import annotations

import json
import sqlite3

import pandas as pd
import pytest

from clad.results import load_results
from clad.results.store import ResultStore

from tests.runner_helpers import run_main, write_spec

# hbos and a plug-in that fails in fit, 3 seeds: 6 runs, 3 of them failing
SPEC = dict(
    name="failing",
    seeds=3,
    detectors=[
        {"name": "hbos"},
        {
            "name": "tests.plugins:FailingDetector",
            "label": "failing",
            "message": "fit exploded on purpose",
        },
    ],
)


@pytest.mark.slow
def test_a_failing_run_is_recorded_and_the_grid_goes_on_then_resume_and_export(
    tmp_path, capsys, caplog
):
    spec = write_spec(tmp_path, **SPEC)
    out = tmp_path / "out"
    rc, stdout, stderr = run_main(capsys, caplog, "run", spec, "--out", out)
    assert rc == 1, stderr  # runs failed: exit status 1, the count printed
    assert "3 of 6 runs failed" in stderr
    # the cause is shown where it happens and once more in the table of failures grouped by cause
    assert "RuntimeError: fit exploded on purpose" in stderr
    table = stderr[stderr.index("Failed runs by cause (3 failed):") :]
    assert "  3 runs:\n      RuntimeError: fit exploded on purpose" in table
    db = out / "results.sqlite"
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT detector, status, error, started, finished FROM runs ORDER BY detector, seed"
    ).fetchall()
    con.close()
    assert [(d, s) for d, s, *_ in rows] == [("failing", "failed")] * 3 + [("hbos", "ok")] * 3
    for _, _, error, started, finished in rows[:3]:
        assert "Traceback (most recent call last)" in error
        assert "RuntimeError: fit exploded on purpose" in error and "plugins.py" in error
        assert started <= finished
    assert all(error is None for _, _, error, _, _ in rows[3:])

    # results.json: strict JSON, every run of the spec, failures included
    text = (out / "results.json").read_text()
    doc = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    assert len(doc["runs"]) == 6
    results = load_results(out / "results.json")
    assert sorted(r.status for r in results) == ["failed"] * 3 + ["ok"] * 3
    ok = [r for r in results if r.ok]
    assert all(r.R["roc_auc"].shape == (2, 2) for r in ok)

    # summaries: one group (hbos x naive) over three seeds, computed from the stored metrics
    summary = pd.read_csv(out / "summary.csv")
    assert (
        len(summary) == 1
        and summary.loc[0, "runs"] == 3
        and summary.loc[0, "CA_n"] == 3
        and summary.loc[0, "detector"] == "hbos"
    )
    ca = pd.Series([r.metrics["roc_auc"]["continual_average"] for r in ok])
    assert abs(summary.loc[0, "CA_mean"] - ca.mean()) < 1e-12
    assert abs(summary.loc[0, "CA_std"] - ca.std(ddof=1)) < 1e-12
    md = (out / "summary.md").read_text()
    assert "## concept_incremental" in md and f"{ca.mean():.3f} ± {ca.std(ddof=1):.3f}" in md
    assert (
        "\n  concept_incremental\n" in stdout and "naive + hbos" in stdout
    )  # a scenario, then its configurations

    # resume (the default): finished runs are skipped, failed ones are run again
    with ResultStore(db) as store:
        before = {r.run_id: r.timings for r in store.load_results() if r.ok}
    rc, stdout, stderr = run_main(capsys, caplog, "run", spec, "--out", out)
    assert rc == 1
    assert "3 of 6 runs already finished" in stderr
    with ResultStore(db) as store:
        after = store.load_results()
        assert (
            store.count() == 6
            and store._con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        )
    assert {r.run_id: r.timings for r in after if r.ok} == before

    # export: tidy tables from the database
    rc, stdout, stderr = run_main(capsys, caplog, "export", out, "--format", "csv")
    assert rc == 0, stderr
    cells = pd.read_csv(out / "r_cells.csv")
    assert len(cells) == 3 * 2 * 2  # three finished runs, 2 x 2 cells, one base metric
    assert set(cells.columns) >= {
        "run_id",
        "seed",
        "base_metric",
        "step_concept",
        "test_concept",
        "value",
    }
    first = ok[0]
    mine = cells[cells.run_id == first.run_id].sort_values(["step_index", "test_index"])
    assert mine["value"].to_numpy().reshape(2, 2).tolist() == first.R["roc_auc"].tolist()
    runs = pd.read_csv(out / "runs.csv")
    assert sorted(runs.status) == ["failed"] * 3 + ["ok"] * 3

    (out / "results.json").unlink()
    rc, stdout, stderr = run_main(capsys, caplog, "export", out, "--format", "json")
    assert rc == 0 and len(load_results(out / "results.json")) == 6

    # --fresh starts over
    rc, stdout, stderr = run_main(capsys, caplog, "run", spec, "--out", out, "--fresh", "--quiet")
    assert rc == 1 and "already finished" not in stderr
    assert stdout == ""  # --quiet: no summary, progress as plain log lines on stderr
    assert stderr.count("done") == 3 and stderr.count("FAILED") == 3


def test_export_without_a_database_is_a_clear_error(tmp_path, capsys, caplog):
    rc, stdout, stderr = run_main(capsys, caplog, "export", tmp_path)
    assert rc == 2 and "no results database" in stderr
