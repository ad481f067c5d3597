"""The evaluation core: concepts, the evaluator that fills R, run results and the object API.

* :mod:`clad.core.concepts` — :class:`Concept` and :class:`ConceptDataset` (validated on construction);
* :mod:`clad.core.evaluation` — the :class:`Evaluator`: each test concept scored once per step into R;
* :mod:`clad.core.experiment` — :func:`run_experiment`: dataset, scenario and strategy objects in, a result out;
* :mod:`clad.results.record` — the frozen :class:`RunResult` and the strict-JSON results file;
* :mod:`clad.core.buffers`, :mod:`clad.core.memmap` — growable row buffers and memory-mapped streams.

Scenarios (:mod:`clad.scenarios`), strategies (:mod:`clad.strategies`) and the continual metrics
(:mod:`clad.metrics`) complete the core; nothing here knows about spec files or grids.
"""
