"""NASA spacecraft telemetry in the telemanom layout (SMAP and MSL, Hundman et al. 2018).

The layout (``labeled_anomalies.csv``, whose ``num_values`` is a channel's number of test steps;
``train/CHAN.npy``, ``test/CHAN.npy``; in the folder ``path`` of a data directory), the parameters,
the concepts (a subsystem's channels concatenated, or one per channel), windows and the test
concepts' time axis are in the time-series guide (``docs/guides/time-series.md``). Concepts come in
alphabetical order (channels by number within a letter). A channel listed twice (P-2 in the SMAP
release) is read once and its ranges are united.

>>> from clad.datasets.cards import load_card
>>> load_card("nasa-smap")["default_recipe"]["concepts"]
'subsystem'
"""

from __future__ import annotations

import json
import logging
import re

import numpy as np
import pandas as pd

from ..core.concepts import Concept, ConceptDataset
from ..core.time_axis import TimeAxis
from ..errors import DataError
from ..validation import Integral, Interval, StrOptions
from . import _checks
from .files import locate
from .windows import LABELS, SCORE_RULES, window_dataset

__all__ = ["load_telemanom", "read_labels", "CONCEPTS"]

log = logging.getLogger(__name__)

CONCEPTS = ("subsystem", "channel")
_CHANNEL = re.compile(r"^([A-Za-z]+)-(\d+)$")


def _channel_key(chan: str) -> tuple[str, int, str]:
    m = _CHANNEL.match(chan)
    return (m.group(1), int(m.group(2)), chan) if m else (chan, -1, chan)


def _ranges(text, chan: str, n: int) -> list[tuple[int, int]]:
    try:
        pairs = json.loads(text)
        out = [(int(a), int(b)) for a, b in pairs]
    except (ValueError, TypeError) as exc:
        raise DataError(
            f"telemanom: channel {chan!r}: anomaly_sequences {text!r} is not a list of "
            f"[start, end] pairs ({exc})"
        ) from None
    for a, b in out:
        if not 0 <= a <= b < n:
            raise DataError(
                f"telemanom: channel {chan!r}: anomaly range [{a}, {b}] is outside its "
                f"{n} test steps (ranges are inclusive indices into the test series)"
            )
    return out


def read_labels(
    path: str = "nasa-smap", spacecraft: str = "SMAP", data_dir: str | None = None
) -> dict:
    """``{channel: (n_test_steps, [(start, end), ...])}`` from ``labeled_anomalies.csv``, for one
    spacecraft; a channel listed twice gets the union of its ranges."""
    csv = locate(f"{path}/labeled_anomalies.csv", data_dir)
    try:
        table = pd.read_csv(csv)
    except (ValueError, OSError) as exc:
        raise DataError(f"telemanom: {str(csv)!r} could not be read as a CSV ({exc})") from None
    needed = ("chan_id", "spacecraft", "anomaly_sequences", "num_values")
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise DataError(
            f"telemanom: {str(csv)!r} lacks columns {missing}; expected the telemanom "
            "labeled_anomalies.csv (chan_id, spacecraft, anomaly_sequences, class, num_values)"
        )
    known = sorted(table["spacecraft"].astype(str).unique())
    rows = table[table["spacecraft"].astype(str) == spacecraft]
    if rows.empty:
        raise DataError(
            f"telemanom: no channel of spacecraft={spacecraft!r} in {str(csv)!r}; it lists: {', '.join(known)}"
        )
    out: dict[str, tuple[int, list]] = {}
    for chan, text, n in zip(
        rows["chan_id"].astype(str), rows["anomaly_sequences"], rows["num_values"]
    ):
        n = int(n)
        if chan in out:
            if out[chan][0] != n:
                raise DataError(
                    f"telemanom: channel {chan!r} is listed twice with {out[chan][0]} and {n} test steps"
                )
            log.info("telemanom: channel %s is listed twice; its anomaly ranges are united", chan)
        ranges = _ranges(text, chan, n)
        out[chan] = (n, (out[chan][1] if chan in out else []) + ranges)
    return out


def _load(path: str, split: str, chan: str, data_dir, n_cols: int | None) -> np.ndarray:
    file = locate(f"{path}/{split}/{chan}.npy", data_dir)
    try:
        X = np.load(file, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise DataError(f"telemanom: {str(file)!r} is not a readable .npy array ({exc})") from None
    if X.ndim != 2 or X.shape[0] == 0 or X.dtype.kind not in "fiu":
        raise DataError(
            f"telemanom: {str(file)!r} holds a {X.dtype} array of shape {X.shape}; expected "
            "numbers, steps x features"
        )
    if n_cols is not None and X.shape[1] != n_cols:
        raise DataError(
            f"telemanom: {str(file)!r} has {X.shape[1]} columns, other channels {n_cols}"
        )
    return X if X.dtype.kind == "f" else X.astype(np.float64)


def _of_subsystems(channels: list[str], subsystems, spacecraft: str) -> list[str]:
    """The channels of the subsystem letters ``subsystems`` (each a letter ``spacecraft`` has)."""
    if isinstance(subsystems, str) or not isinstance(subsystems, (list, tuple)) or not subsystems:
        raise DataError(
            f"telemanom: subsystems={subsystems!r}; expected a non-empty list of letters"
        )
    letters = sorted({_channel_key(c)[0] for c in channels})
    unknown = [s for s in subsystems if s not in letters]
    if unknown:
        raise DataError(
            f"telemanom: unknown subsystems {unknown}; {spacecraft} has: {', '.join(letters)}"
        )
    return [c for c in channels if _channel_key(c)[0] in subsystems]


def _channel(path: str, chan: str, data_dir, n_cols: int | None, label: tuple[int, list]):
    """A channel's training steps, test steps and test labels (1 in each of its anomaly ranges),
    its test steps counted as ``labeled_anomalies.csv`` says (``label``: count, ranges)."""
    X_tr = _load(path, "train", chan, data_dir, n_cols)
    X_te = _load(path, "test", chan, data_dir, X_tr.shape[1])
    n_test, ranges = label
    if X_te.shape[0] != n_test:
        raise DataError(
            f"telemanom: test/{chan}.npy has {X_te.shape[0]} steps; labeled_anomalies.csv "
            f"says num_values={n_test}"
        )
    y = np.zeros(n_test, dtype=np.int8)
    for a, b in ranges:
        y[a : b + 1] = 1
    return X_tr, X_te, y


def load_telemanom(
    path: str = "nasa-smap",
    spacecraft: str = "SMAP",
    concepts: str = "subsystem",
    subsystems: list[str] | None = None,
    window: int | None = None,
    stride: int = 1,
    window_label: str = "any",
    window_score: str = "max",
    data_dir: str | None = None,
) -> ConceptDataset:
    """The telemanom layout as a continual scenario (see the module docstring).

    Parameters
    ----------
    path : str
        The folder inside a data directory (``"nasa-smap"`` for the SMAP copy; an MSL copy in
        its own folder works alike).
    spacecraft : str
        Which rows of ``labeled_anomalies.csv`` to take (``"SMAP"`` or ``"MSL"``).
    concepts : {"subsystem", "channel"}
    subsystems : list of str, optional
        Only these subsystem letters (e.g. ``["A", "E"]``).
    window, stride, window_label : windows (:mod:`clad.datasets.windows`; ``window_label`` is its
        ``label``, ``"any"`` or ``"last"``, named apart from a spec entry's display ``label``);
        ``window=None`` keeps steps as rows.
    window_score : {"max", "mean"}
        How a point's score comes from the windows covering it (for the range metrics).
    data_dir : str, optional
    """
    who = "telemanom"
    if not isinstance(path, str) or not path:
        raise DataError(
            f"{who}: path={path!r}; expected the folder name inside a data directory, e.g. 'nasa-smap'"
        )
    if not isinstance(spacecraft, str) or not spacecraft:
        raise DataError(f"{who}: spacecraft={spacecraft!r}; expected 'SMAP' or 'MSL'")
    concepts = _checks.choice(who, "concepts", concepts, CONCEPTS)
    if window is not None:
        _checks.integer(who, "window", window)
    _checks.integer(who, "stride", stride)
    _checks.choice(who, "window_label", window_label, LABELS)
    _checks.choice(who, "window_score", window_score, SCORE_RULES)
    labels = read_labels(path, spacecraft, data_dir)
    channels = sorted(labels, key=_channel_key)
    if subsystems is not None:
        channels = _of_subsystems(channels, subsystems, spacecraft)
    groups: dict[str, list[str]] = {}
    for chan in channels:
        groups.setdefault(_channel_key(chan)[0] if concepts == "subsystem" else chan, []).append(
            chan
        )
    join = lambda arrs: arrs[0] if len(arrs) == 1 else np.concatenate(arrs)
    train, test, seg_train, seg_test = [], [], [], []
    n_cols = None
    for name, chans in groups.items():
        read = []
        for chan in chans:
            read.append(_channel(path, chan, data_dir, n_cols, labels[chan]))
            n_cols = read[-1][0].shape[1]
        X_tr, X_te, ys = zip(*read)
        train.append(Concept(name, join(X_tr)))
        y_all = join(ys)
        axis = TimeAxis(tuple(chans), tuple(len(a) for a in X_te), y_all)
        test.append(Concept(name, join(X_te), y_all, time=axis))
        seg_train.append([len(a) for a in X_tr])
        seg_test.append([len(a) for a in X_te])
    meta = {
        "path": path,
        "spacecraft": spacecraft,
        "concepts": concepts,
        "channels": groups,
        "segments": {"train": seg_train, "test": seg_test},
    }
    ds = ConceptDataset(train, test, name=f"telemanom-{spacecraft.lower()}", metadata=meta)
    if window is None:
        return ds
    return window_dataset(
        ds, window=window, stride=stride, label=window_label, score_rule=window_score
    )


# what a spec checks before anything is loaded (the loader checks the same on its call)
load_telemanom._parameter_constraints = {
    "path": [str],
    "spacecraft": [str],
    "concepts": [StrOptions(CONCEPTS)],
    "window": [None, Interval(Integral, 1, None, closed="left")],
    "stride": [Interval(Integral, 1, None, closed="left")],
    "window_label": [StrOptions(LABELS)],
    "window_score": [StrOptions(SCORE_RULES)],
    "data_dir": [None, str],
}
load_telemanom._data_files = lambda a: [(f"{a['path']}/labeled_anomalies.csv", None)]
