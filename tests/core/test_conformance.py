"""The conformance suite passes on every built-in detector and strategy, and fails, with the reason,
on deliberately broken detectors."""

import pytest

from clad.cli import main
from clad.detectors import DETECTORS
from clad.errors import CladValueError
from clad.strategies import STRATEGIES, Cumulative, Naive
from clad.testing import (
    ConformanceError,
    check_detector,
    check_strategy,
    parametrize_detector_checks,
    parametrize_strategy_checks,
)

from plugins import DistanceToMean, FitReturnsNone, MutableDefault, WrongShape, WrongSign

FAST = {"iforest": {"n_estimators": 20}, "pyod_iforest": {"n_estimators": 20}}


UNAVAILABLE: dict[
    str, str
] = {}  # detectors whose optional dependency (e.g. torch) is not installed


def builtin_detectors():
    out = []
    for name in DETECTORS.names():
        try:
            out.append(DETECTORS.build(name, FAST.get(name, {})))
        except (ImportError, CladValueError) as exc:
            if "could not be imported" not in str(exc) and not isinstance(exc, ImportError):
                raise
            UNAVAILABLE[name] = str(exc)
    return out


_DETECTORS = builtin_detectors() + [DistanceToMean()]
#: checked in the fast loop (`pytest -m "not slow"`); the full suite checks every detector
_LIGHT = ("IsolationForest", "LocalOutlierFactor", "DistanceToMean")


@parametrize_detector_checks([d for d in _DETECTORS if type(d).__name__ in _LIGHT])
def test_light_detectors_conform(detector, check):
    check(detector)


@pytest.mark.slow
@parametrize_detector_checks([d for d in _DETECTORS if type(d).__name__ not in _LIGHT])
def test_builtin_detectors_conform(detector, check):
    check(detector)


def test_every_builtin_detector_is_checked():
    if UNAVAILABLE:  # a missing optional dependency is a skip, not a pass
        pytest.skip("; ".join(f"{name}: {msg}" for name, msg in UNAVAILABLE.items()))


def _detector_for(name):
    from sklearn.ensemble import IsolationForest

    if name in (
        "ewc",
        "lwf",
        "fine_tune",
        "incremental",
        "agem",
        "der",
    ):  # need a trainable network (or partial_fit)
        pytest.importorskip("torch")
        from clad.detectors.torch_ae import AutoEncoder

        return AutoEncoder(hidden_sizes=(8, 3), epochs=15, num_threads=1)
    return IsolationForest(n_estimators=20)


@pytest.mark.slow
@pytest.mark.parametrize("name", STRATEGIES.names())
def test_builtin_strategies_conform(name):
    strategy = STRATEGIES.build(name, {"detector": _detector_for(name)})
    report = check_strategy(strategy, raise_on_failure=False)
    assert report.ok, str(report)


@parametrize_strategy_checks([Naive(DistanceToMean()), Cumulative(DistanceToMean())])
def test_strategy_checks_parametrised(strategy, check):
    check(strategy)


@pytest.mark.parametrize(
    "broken, check, reason",
    [
        (WrongSign(), "higher_is_more_anomalous", "scores look inverted"),
        (WrongShape(), "score_shape_and_finite", r"returned shape \(300, 2\)"),
        (
            FitReturnsNone(),
            "fit_returns_self",
            "fit() returned NoneType, expected the detector itself",
        ),
        (MutableDefault(), "no_mutable_defaults", "mutable default(s) for weights"),
    ],
)
def test_broken_detectors_fail_with_the_reason(broken, check, reason):
    report = check_detector(broken, raise_on_failure=False)
    assert not report.ok
    assert check in report.failures
    import re

    assert re.search(
        reason if "(" not in reason or "\\(" in reason else re.escape(reason),
        report.failures[check],
    )
    with pytest.raises(ConformanceError, match="FAIL"):
        check_detector(broken)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["iforest", "lof", "ocsvm", "elliptic_envelope", "knn", "ecod"])
def test_cli_check_passes_on_builtin(name, capsys):
    assert main(["check", name]) == 0
    assert "checks passed" in capsys.readouterr().out


@pytest.mark.parametrize(
    "path, reason",
    [
        ("plugins:WrongSign", "scores look inverted"),
        ("plugins:WrongShape", "expected (300,)"),
        ("plugins:FitReturnsNone", "return self"),
    ],
)
def test_cli_check_fails_on_broken(path, reason, capsys):
    assert main(["check", path]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and reason in out


def test_cli_check_unknown_name(capsys):
    assert main(["check", "iforrest"]) == 2
    assert "did you mean 'iforest'" in capsys.readouterr().err


def test_check_strategy_catches_state_in_params():
    class Leaky(Naive):
        def learn(self, X, concept_id=None):
            self.random_state = 123  # changes a parameter: not allowed
            return super().learn(X, concept_id)

    report = check_strategy(Leaky(DistanceToMean()), raise_on_failure=False)
    assert "learn_does_not_change_params" in report.failures
