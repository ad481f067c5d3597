"""The evaluation core: concepts, the evaluator that fills R, seeding and the object API.

* :mod:`clad.core.concepts` — :class:`Concept` and :class:`ConceptDataset` (validated on construction);
* :mod:`clad.core.evaluation` — the :class:`Evaluator`: each test concept scored once per step into R;
  what a strategy's scores are (:mod:`clad.core.scored`), their chance levels
  (:mod:`clad.core.chance`), thresholds (:mod:`clad.core.thresholds`), the time-series extras
  (:mod:`clad.core.series_values`), the prequential scores (:mod:`clad.core.prequential`) and the
  checks that warn about a run's data (:mod:`clad.core.data_checks`);
* :mod:`clad.core.experiment` — :func:`run_experiment`: dataset, scenario and strategy objects in, a result out;
* :mod:`clad.core.seeding` — how a run seed reaches the dataset, scenario, strategy and detector;
* :mod:`clad.core.steps` — training steps keyed by their inputs (:mod:`clad.core.step_keys`), fitted and scored once per key
  (:mod:`clad.core.fitted_state`: what a fitted state holds, for verification and a cache's limit);
* :mod:`clad.core.buffers`, :mod:`clad.core.memmap` — growable row buffers and memory-mapped streams.

A run's result is a :class:`~clad.results.RunResult` (:mod:`clad.results`, the layer below). The
scenarios (:mod:`clad.scenarios`) and strategies (:mod:`clad.strategies`) sit above this package,
the continual metrics (:mod:`clad.metrics`) below it; nothing here knows about spec files or grids
(the layers: ``[tool.importlinter]`` in ``pyproject.toml``).
"""
