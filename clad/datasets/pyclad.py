"""pyCLAD concept files, and their conversion to clad's pickle-free format.

A pyCLAD concept file is a ``.npy`` *object* array of dicts ``{name, train_data, test_data,
test_labels}``, one per concept, in learning order. Object arrays are stored as pickles, and loading
a pickle runs code from the file: clad refuses unless asked explicitly (``allow_pickle=True``, spec
key ``allow_pickle = true``), and then only after the file's sha256 matched its dataset card when a
card lists it. Convert a trusted file once with :func:`convert_pyclad` (``clad datasets convert``)
and load the result with the ``clad_npz`` loader, which never unpickles.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np

from ..core.concepts import Concept, ConceptDataset
from ..errors import DataError
from ..validation import declare
from . import _checks
from .files import locate

__all__ = ["load_pyclad", "convert_pyclad", "DEFAULT_FILE"]

FOLDER = "pyclad-nsl-kdd"
DEFAULT_FILE = f"{FOLDER}/nsl-kdd_random_anomalies_5_concepts_1000_per_cluster.npy"
_KEYS = ("name", "train_data", "test_data", "test_labels")


def _relpath(file: str) -> str:
    from .cards import find_file

    file = str(file)
    if "/" not in file and os.sep not in file and find_file(f"{FOLDER}/{file}") is not None:
        return f"{FOLDER}/{file}"
    return file


def _pickle_rule(args: dict) -> list[str]:
    if args.get("allow_pickle") is True:
        return []
    return [
        f"allow_pickle={args.get('allow_pickle')!r}; a pyCLAD concept file is a pickled numpy object array, and "
        "loading it runs code stored in the file: set allow_pickle = true for a file you trust, or convert it "
        "once with `clad datasets convert SRC DST.npz --allow-pickle` and load DST with the pickle-free "
        "'clad_npz' loader"
    ]


@declare(
    {"allow_pickle": _checks.FLAG, "data_dir": [None, str]},
    files=lambda a: [(_relpath(a["file"]), None)],
)
def load_pyclad(
    file: str = DEFAULT_FILE, allow_pickle: bool = False, data_dir: str | None = None
) -> ConceptDataset:
    """The concepts of a pyCLAD concept file, trained in file order and tested on all.

    Parameters
    ----------
    file : str
        Path inside the data directory (default: pyCLAD's NSL-KDD scenario), a bare file name of
        the ``pyclad-nsl-kdd`` card, or a path.
    allow_pickle : bool
        Must be True to read the file: it is a pickle, and unpickling runs code from it. Use it only
        for files you trust (clad checks the card's sha256 first when a card lists the file).
    data_dir : str, optional
        Data directory (see :mod:`clad.datasets.files`).
    """
    path = locate(_relpath(file), data_dir)
    try:
        arr = np.load(path, allow_pickle=allow_pickle)
    except ValueError as exc:
        if not allow_pickle and "allow_pickle" in str(exc):
            raise DataError(
                f"pyclad: {str(path)!r} is a pickled numpy object array (pyCLAD's concept-file format); "
                "loading it runs code stored in the file, so clad does not do it unless you opt in: pass "
                "allow_pickle=True (spec key: allow_pickle = true) for a file you trust, or convert it once "
                "with `clad datasets convert SRC DST.npz --allow-pickle` and load DST with the pickle-free "
                "'clad_npz' loader"
            ) from None
        raise DataError(f"pyclad: {str(path)!r} could not be read ({exc})") from None
    except (OSError, EOFError, pickle.UnpicklingError) as exc:
        raise DataError(f"pyclad: {str(path)!r} is not a readable .npy file ({exc})") from None
    if not isinstance(arr, np.ndarray) or arr.dtype != object or arr.ndim != 1 or len(arr) == 0:
        raise DataError(
            f"pyclad: {str(path)!r} is not a pyCLAD concept file; expected a 1-D object array of "
            f"dicts with keys {list(_KEYS)}"
        )
    train, test = [], []
    for i, entry in enumerate(arr):
        if not isinstance(entry, dict) or any(k not in entry for k in _KEYS):
            got = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
            raise DataError(
                f"pyclad: entry {i} of {str(path)!r} is {got}; expected a dict with keys {list(_KEYS)}"
            )
        name = str(entry["name"])
        train.append(Concept(name, entry["train_data"]))
        test.append(Concept(name, entry["test_data"], np.asarray(entry["test_labels"]).ravel()))
    stem = Path(path).stem
    return ConceptDataset(train, test, name=stem, metadata={"file": str(path), "format": "pyclad"})


def convert_pyclad(src: str, dst: str | os.PathLike, data_dir: str | None = None) -> Path:
    """Convert a pyCLAD concept file (unpickled: trust it) to clad's pickle-free ``.npz``; returns ``dst``."""
    from .clad_npz import save_clad_npz

    return save_clad_npz(load_pyclad(src, allow_pickle=True, data_dir=data_dir), dst)


# a spec refuses the missing opt-in before anything runs (a call explains it itself, as a DataError)
load_pyclad._data_rules = _pickle_rule
