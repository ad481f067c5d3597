"""ADBench tabular datasets: one ``.npz`` per dataset with arrays ``X`` and ``y`` (0 normal, 1 anomaly).

The files live in ``<data dir>/adbench-classical/`` (see the ``adbench-classical`` dataset card).
They have no native concepts: :func:`load_adbench` builds a continual scenario with a concept
recipe (:mod:`clad.datasets.recipes`), by default the ``cluster_random`` recipe with 5 concepts (a
spec entry: the datasets guide, ``docs/guides/datasets.md``; ``file = "shuttle"`` is enough).
"""

from __future__ import annotations

import os
import zipfile

import numpy as np

from ..core.concepts import ConceptDataset
from ..errors import DataError
from ..registry import did_you_mean
from ..validation import declare
from .flat import FLAT_CONSTRAINTS, check_recipe
from .files import locate

__all__ = ["load_adbench", "read_npz_xy", "adbench_file"]

FOLDER = "adbench-classical"


def adbench_file(file: str) -> str:
    """The path inside a data directory of an ADBench file given as ``32_shuttle.npz``, ``32_shuttle``
    or ``shuttle`` (a path with a folder, or an absolute path, is returned unchanged).

    >>> adbench_file("shuttle"), adbench_file("6_cardio.npz")
    ('adbench-classical/32_shuttle.npz', 'adbench-classical/6_cardio.npz')
    """
    if not isinstance(file, (str, os.PathLike)) or not str(file):
        raise DataError(f"adbench: file={file!r}; expected a file name such as '32_shuttle.npz'")
    file = str(file)
    if "/" in file or os.sep in file:
        return file
    from .cards import load_card

    known = list(load_card(FOLDER)["files"])
    name = file if file.endswith(".npz") else file + ".npz"
    if name in known:
        return f"{FOLDER}/{name}"
    by_short = {k.split("_", 1)[1].lower(): k for k in known}
    if name.lower() in by_short:
        return f"{FOLDER}/{by_short[name.lower()]}"
    if not file.endswith(".npz"):
        raise DataError(
            f"adbench: no dataset {file!r}{did_you_mean(name, known)}; known: {', '.join(known)}"
        )
    return f"{FOLDER}/{name}"


def read_npz_xy(path, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``X`` and ``y`` of an ``.npz`` file, read without unpickling anything."""
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [k for k in ("X", "y") if k not in z.files]
            if missing:
                raise DataError(f"{what}: {str(path)!r} has arrays {z.files}; expected 'X' and 'y'")
            return z["X"], z["y"]
    except ValueError as exc:  # object arrays need pickle; a broken zip also lands here
        raise DataError(
            f"{what}: {str(path)!r} could not be read as an .npz of plain arrays ({exc})"
        ) from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:  # truncated or not a zip at all
        raise DataError(f"{what}: {str(path)!r} is not a readable .npz file ({exc})") from None


def _n_concepts(args: dict):
    """The number of concepts a call asks for (a recipe key, in the recipe table or the recipe's default)."""
    if "n_concepts" in args:
        return args["n_concepts"]
    recipe = args.get("recipe", "cluster_random")
    if isinstance(recipe, dict) and "n_concepts" in recipe:
        return recipe["n_concepts"]
    try:
        from .recipes import as_recipe

        return getattr(as_recipe(recipe, "adbench", {}), "n_concepts", None)
    except Exception:  # noqa: BLE001 - a bad recipe is the loader's to report
        return None


def _concepts_rule(args: dict) -> list[str]:
    """n_concepts against the normal rows of the file (each concept needs 2 training and 2 test rows)."""
    try:
        path = locate(adbench_file(args["file"]), args.get("data_dir"), verify=False)
        with np.load(path, allow_pickle=False) as z:
            y = np.asarray(z["y"])
    except Exception:  # noqa: BLE001 - an unreadable file is the loader's to report, naming it
        return []
    normal, anomalies = int(np.sum(y == 0)), int(np.sum(y == 1))
    if args.get("max_rows") is not None and isinstance(args["max_rows"], int):
        share = min(1.0, int(args["max_rows"]) / max(len(y), 1))
        normal, anomalies = int(normal * share), int(anomalies * share)
    most = max(min(normal // 4, anomalies), 1)
    n = _n_concepts(args)
    if isinstance(n, int) and not isinstance(n, bool) and n > most:
        return [
            f"n_concepts={n}; {str(path)!r} has {normal:,} normal rows and {anomalies:,} anomalies, enough for at "
            f"most {most:,} concepts (each needs 2 training and 2 test rows and an anomaly to test on); "
            f"allowed: 1 to {most:,}"
        ]
    return []


@declare(
    FLAT_CONSTRAINTS,
    files=lambda a: [(adbench_file(a["file"]), None)],
    rest=lambda a, extra: check_recipe(a, extra, "adbench"),
    rules=_concepts_rule,
)
def load_adbench(
    file: str = "32_shuttle.npz",
    recipe: str | dict = "cluster_random",
    test_size: float = 0.5,
    contamination: float = 0.0,
    order: str = "given",
    difficulty: str = "iforest_auc",
    max_rows: int | None = None,
    data_dir: str | None = None,
    random_state: int = 0,
    **recipe_params,
) -> ConceptDataset:
    """A continual scenario built from one ADBench ``.npz`` file.

    Parameters
    ----------
    file : str
        ``"32_shuttle.npz"``, ``"32_shuttle"`` or ``"shuttle"`` (looked for in
        ``<data dir>/adbench-classical/``), or a path.
    recipe : str or dict
        How concepts are made (:mod:`clad.datasets.recipes`): a recipe name, or a table with
        ``name`` and the recipe's parameters.
    test_size, contamination, order, difficulty : split and order (:mod:`clad.datasets.build`).
    max_rows : int, optional
        Stratified random subsample of the rows before anything else (for a quicker run).
    data_dir : str, optional
        Data directory (see :mod:`clad.datasets.files`).
    random_state : int
        Seed of every random choice.
    **recipe_params
        The recipe's parameters given beside it (``n_concepts``, ``fit_rows``; ``faber2024``'s
        ``size_per_concept``, ...), checked by the recipe.
    """
    from .flat import check_flat, scenario_from_flat

    rel = adbench_file(file)
    path = locate(rel, data_dir)
    # the file's int64 labels are dropped here
    X, y = check_flat(*read_npz_xy(path, "adbench"), f"adbench: {str(path)!r}")
    name = os.path.basename(rel)[:-4] if rel.endswith(".npz") else os.path.basename(rel)
    return scenario_from_flat(
        X,
        y,
        name=name,
        loader="adbench",
        recipe=recipe,
        test_size=test_size,
        contamination=contamination,
        order=order,
        difficulty=difficulty,
        max_rows=max_rows,
        random_state=random_state,
        metadata={"file": str(path)},
        **recipe_params,
    )
