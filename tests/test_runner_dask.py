"""A real Dask distributed cluster (scheduler + 2 worker processes) gives the same R as --jobs 1."""

from __future__ import annotations

import pytest

from clad.results.store import ResultStore

from tests.runner_helpers import SMALL_SPEC, run_main, same_results, write_spec

distributed = pytest.importorskip("dask.distributed")


@pytest.mark.slow
def test_dask_local_cluster_gives_the_same_R_as_jobs_1(tmp_path, capsys, caplog):
    spec = write_spec(tmp_path, SMALL_SPEC)
    rc1, _, _ = run_main(capsys, caplog, "run", spec, "--out", tmp_path / "seq", "--jobs", "1", "--quiet")
    assert rc1 == 0
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        rc2, _, log = run_main(capsys, caplog, "run", spec, "--out", tmp_path / "dask", "--quiet",
                               "--dask", cluster.scheduler_address)
        with distributed.Client(cluster.scheduler_address) as client:
            workers = client.scheduler_info()["workers"]
            assert len(workers) == 2
    assert rc2 == 0, log
    with ResultStore(tmp_path / "seq" / "results.sqlite") as a, ResultStore(tmp_path / "dask" / "results.sqlite") as b:
        ra, rb = a.load_results(), b.load_results()
        assert b.count("ok") == 8 and b.integrity_check() == "ok"
    same_results(ra, rb)
