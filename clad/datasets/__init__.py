"""Datasets: loaders that return a :class:`~clad.core.concepts.ConceptDataset`, registered by name.

Registered names usable in spec files, read from the registry (``clad list datasets`` prints the
same):

>>> for name in DATASETS.names():
...     print(f"{name:10} {DATASETS.doc(name)}")
adbench    ADBench .npz (X, y); concepts by a recipe (cluster_random, ...)
clad_npz   clad's pickle-free concept file (.npz)
mvtec      MVTec-AD ResNet-18 embeddings, one concept per category
nab        NAB series (one concept each), probationary prefix to train, whole series to test
npz_files  one concept per .npz file (X, y)
nsl_kdd    NSL-KDD text files; concepts by attack family or protocol
odds_mat   ODDS .mat (X, y); concepts by a recipe
pyclad     pyCLAD concept file (.npy pickle; needs allow_pickle = true)
skab       SKAB experiments (files or fault groups), split in time order as SKAB does
synthetic  seeded moving Gaussian concepts with their own anomalies
table      CSV / Parquet table with concept, label and feature columns
telemanom  NASA SMAP/MSL telemetry; concepts by subsystem or channel; windows
windowed   a registered loader's concepts cut into sliding windows

The contract: a loader is any callable returning a ``ConceptDataset``; a spec names it by its
registered name or by ``package.module:function``. Loaders that take ``random_state`` get one
derived from the run seed unless the spec sets it, and give the same concepts for the same seed.
Loaders of files take ``data_dir`` (see :mod:`clad.datasets.files` for where files are looked for,
checksums and the ``CLAD_DATA`` variable). Recipes for flat data are in :mod:`clad.datasets.recipes`,
the split and concept order in :mod:`clad.datasets.build`, dataset cards in :mod:`clad.datasets.cards`.
"""

from __future__ import annotations

from ..registry import Registry
from .adbench import load_adbench
from .build import ORDERS, make_dataset
from .cards import card_names, load_card
from .clad_npz import load_clad_npz, save_clad_npz
from .files import default_cache_dir, download, locate, sha256_of
from .flat import scenario_from_flat
from .mvtec import load_mvtec
from .nab import load_nab
from .nsl_kdd import load_nsl_kdd, read_nsl_kdd
from .odds import load_odds_mat
from .per_file import load_npz_files
from .pyclad import convert_pyclad, load_pyclad
from .recipes import make_groups
from .skab import load_skab
from .synthetic import make_synthetic
from .table import load_table
from .telemanom import load_telemanom
from .windows import window_dataset

__all__ = [
    "DATASETS",
    "load_dataset",
    "make_synthetic",
    "load_pyclad",
    "convert_pyclad",
    "load_clad_npz",
    "save_clad_npz",
    "load_nsl_kdd",
    "read_nsl_kdd",
    "load_adbench",
    "load_odds_mat",
    "load_table",
    "load_npz_files",
    "load_mvtec",
    "scenario_from_flat",
    "make_groups",
    "make_dataset",
    "ORDERS",
    "card_names",
    "load_card",
    "locate",
    "default_cache_dir",
    "sha256_of",
    "download",
    "load_telemanom",
    "window_dataset",
    "load_skab",
    "load_nab",
]

DATASETS = Registry("dataset", functions=True)
DATASETS.add(
    "synthetic", make_synthetic, "seeded moving Gaussian concepts with their own anomalies"
)
DATASETS.add("pyclad", load_pyclad, "pyCLAD concept file (.npy pickle; needs allow_pickle = true)")
DATASETS.add("clad_npz", load_clad_npz, "clad's pickle-free concept file (.npz)")
DATASETS.add("nsl_kdd", load_nsl_kdd, "NSL-KDD text files; concepts by attack family or protocol")
DATASETS.add(
    "adbench", load_adbench, "ADBench .npz (X, y); concepts by a recipe (cluster_random, ...)"
)
DATASETS.add("odds_mat", load_odds_mat, "ODDS .mat (X, y); concepts by a recipe")
DATASETS.add("table", load_table, "CSV / Parquet table with concept, label and feature columns")
DATASETS.add("npz_files", load_npz_files, "one concept per .npz file (X, y)")
DATASETS.add("mvtec", load_mvtec, "MVTec-AD ResNet-18 embeddings, one concept per category")
DATASETS.add(
    "telemanom",
    load_telemanom,
    "NASA SMAP/MSL telemetry; concepts by subsystem or channel; windows",
)
DATASETS.add(
    "skab", load_skab, "SKAB experiments (files or fault groups), split in time order as SKAB does"
)
DATASETS.add(
    "nab",
    load_nab,
    "NAB series (one concept each), probationary prefix to train, whole series to test",
)
DATASETS.add(
    "windowed",
    "clad.datasets.windowed:load_windowed",
    "a registered loader's concepts cut into sliding windows",
)


def load_dataset(name: str, params: dict | None = None):
    """Build the dataset registered as ``name`` with ``params``; check that it is a ConceptDataset."""
    from ..core.concepts import ConceptDataset
    from ..errors import CladTypeError

    ds = DATASETS.build(name, params)
    if not isinstance(ds, ConceptDataset):
        raise CladTypeError(
            f"dataset loader {name!r} returned {type(ds).__name__}; expected a ConceptDataset"
        )
    return ds
