"""clad's version and its numbers-version (one place, read by the package, results and the command line).

``__version__`` is the release. ``NUMBERS_VERSION`` changes only when a change of clad changes a
number it computes (a value of R, a chance level, a threshold) for a configuration that existed
before: it enters every run's result key (:mod:`clad.engine.result_key`), so a release that leaves
every number alone keeps earlier results and bundles importable. ``NUMBERS_DIGEST`` is the sha256 of
the quickstart's R under this numbers-version with the libraries named beside it;
``tests/bundle/test_result_key.py`` recomputes it and fails when R changed without a bump (the rule:
CONTRIBUTING.md, "The numbers-version").
"""

__version__ = "0.1.0"

#: raised by one with every change that alters a number clad computes (see CONTRIBUTING.md)
NUMBERS_VERSION = 1

#: the quickstart's R under ``NUMBERS_VERSION``: its digest and the libraries it was computed with
NUMBERS_DIGEST = {
    "numbers_version": 1,
    "libraries": {"numpy": "2.4.6", "scikit-learn": "1.9.1", "pyod": "3.6.7"},
    "quickstart_R": "6a6061abc8423df069d7a570ba76655c2f37de9cd939012481cba67951ef2def",
}
