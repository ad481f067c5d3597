"""The grid engine: from a spec file to a results folder.

* :mod:`clad.engine.config` — :class:`Component`, :class:`RunConfig`, run identity and seed derivation;
* :mod:`clad.engine.spec` — spec files, validated completely before anything runs;
* :mod:`clad.engine.benchmark` — :func:`~clad.engine.benchmark.run_spec`: a whole spec into a results
  folder (resume, the store, results.json, summaries), what ``clad run`` calls; its phases
  (:mod:`~clad.engine.phases`), records retired (:mod:`~clad.engine.retire`), the folder's one
  writer (:mod:`~clad.engine.folder`);
* :mod:`clad.engine.run` — one configuration built and run (a failure becomes a failed result);
* :mod:`clad.engine.tasks` — a grid's tasks (runs through one step cache, or a replica unit) and
  the one function computing a task; :mod:`clad.engine.executors` — which back end computes them:
  this process, worker processes (:mod:`~clad.engine.pool`), Dask (:mod:`~clad.engine.dask_cluster`);
* :mod:`clad.engine.sharing` — which runs can share training steps, and the step cache they share;
* :mod:`clad.engine.slurm` — runs as SLURM jobs (submitit job arrays, results folded by this
  process; :mod:`~clad.engine.slurm_config` the ``[slurm]`` section, :mod:`~clad.engine.slurm_worker`
  what a job runs, :mod:`~clad.engine.slurm_jobs` the cluster's view of the jobs,
  :mod:`~clad.engine.slurm_local` a one-node cluster for tests);
* :mod:`clad.engine.settings` — where and how the runs are computed (jobs, threads, Dask, time limit);
* :mod:`clad.engine.validate`, :mod:`clad.engine.verify` — ``clad validate`` and ``clad verify``;
* :mod:`clad.engine.progress`, :mod:`clad.engine.summary`, :mod:`clad.engine.export` — what a person sees.

Runs are stored by :mod:`clad.results` (the results database and ``results.json``). Submodules are
imported on demand: validating a spec imports no executor.
"""
