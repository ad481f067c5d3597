"""Reports: heatmaps of R, learning curves, forgetting, leaderboards and statistical comparisons.

The contract:

* input is a list of :class:`clad.results.record.RunResult` (:func:`load_results` reads a results folder);
  failed runs are listed but never enter a number;
* aggregation over seeds is pure (:mod:`clad.report.aggregate`, :mod:`clad.report.stats`): mean and
  sample std with NaN left out, never turned into 0;
* a statistical comparison ends in one verdict (:func:`comparison_verdict`, also ``Comparison.verdict``):
  p-values exact up to :data:`clad.report.exact.EXACT_MAX_BLOCKS` blocks, post-hoc claims gated by
  the omnibus test; the page's text, pair table and critical-difference diagram are drawn from it;
* the report's figures are Vega-Lite specifications the browser draws (:mod:`clad.report.charts`);
  for a paper, :func:`plot_heatmap`, :func:`plot_curves`, :func:`plot_forgetting`
  (:mod:`clad.report.plots`) and :func:`plot_cd` (:mod:`clad.report.cd_diagram`) draw the same data on one matplotlib Axes (a new
  figure's without ``ax``), compute nothing, never call ``show()``, and matplotlib is imported only
  when a plot is drawn;
* :func:`make_report` writes the first page ``index.html`` (a fixed size whatever the grid: the
  headline across blocks of :mod:`clad.report.ranking`), a page per block, the leaderboard,
  statistics and details pages, their figures beside them (each written again only when what it
  shows changed), the leaderboard (CSV, Markdown, LaTeX) and ``statistics.csv`` into a folder; ``clad report DIR`` does it for ``DIR/report``, reading the runs in a stream
  (:func:`report_runs`).

Too few blocks give a message, not an exception:

>>> import warnings
>>> import pandas as pd
>>> from clad.report import compare_methods
>>> with warnings.catch_warnings(record=True):
...     c = compare_methods(pd.DataFrame({"A": [0.9, 0.8], "B": [0.7, 0.6]}), by="detector")
>>> c.statistic is None, c.message.split(";")[0]
(True, 'only 2 complete block(s) (0, 1)')
"""

from . import (
    aggregate as _aggregate,
    cd_diagram as _cd_diagram,
    chance as _chance,
    describe as _describe,
    figure_data as _figure_data,
    leaderboard as _leaderboard,
    load as _load,
    make as _make,
    plots as _plots,
    stats as _stats,
)
from .aggregate import *
from .chance import *
from .describe import *
from .figure_data import *
from .leaderboard import *
from .load import *
from .make import *
from .plots import *
from .cd_diagram import *
from .stats import *

#: the public names, each listed once: a module's ``__all__`` is what this package offers from it (its
#: other names without an underscore are shared inside clad, not offered here)
__all__ = [
    *_load.__all__,
    *_make.__all__,
    *_describe.__all__,
    *_aggregate.__all__,
    *_stats.__all__,
    *_plots.__all__,
    *_cd_diagram.__all__,
    *_figure_data.__all__,
    *_leaderboard.__all__,
    *_chance.__all__,
]
