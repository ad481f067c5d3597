"""MVTec-AD image embeddings (ADBench, ResNet-18, 512 features): one concept per category.

Files: ``<data dir>/adbench-mvtec-resnet18/MVTec-AD_<category>.npz`` (see the
``adbench-mvtec-resnet18`` dataset card). Each category is one concept, a natural
concept-incremental scenario; its rows are split as in :mod:`clad.datasets.build`.
"""

from __future__ import annotations

from ..core.concepts import ConceptDataset
from ..errors import DataError
from ..registry import did_you_mean
from ..validation import declare
from .build import SPLIT_CONSTRAINTS
from .per_file import load_npz_files

__all__ = ["load_mvtec", "CATEGORIES"]

FOLDER = "adbench-mvtec-resnet18"
CATEGORIES = (
    "bottle",
    "cable",
    "capsule",
    "carpet",
    "grid",
    "hazelnut",
    "leather",
    "metal_nut",
    "pill",
    "screw",
    "tile",
    "toothbrush",
    "transistor",
    "wood",
    "zipper",
)


@declare(
    SPLIT_CONSTRAINTS,
    files=lambda a: [
        (f"{FOLDER}/MVTec-AD_{c}.npz", None)
        for c in (a["categories"] or CATEGORIES)
        if c in CATEGORIES
    ],
)
def load_mvtec(
    categories: list[str] | None = None,
    test_size: float = 0.5,
    contamination: float = 0.0,
    order: str = "given",
    difficulty: str = "iforest_auc",
    data_dir: str | None = None,
    random_state: int = 0,
) -> ConceptDataset:
    """MVTec-AD by category: ``categories`` (default all 15, alphabetical) in the given order.

    ``test_size``, ``contamination``, ``order`` and ``difficulty`` are those of :mod:`clad.datasets.build`.
    """
    if categories is None:
        categories = list(CATEGORIES)
    if isinstance(categories, str) or not isinstance(categories, (list, tuple)) or not categories:
        raise DataError(
            f"mvtec: categories={categories!r}; expected a non-empty list of: {', '.join(CATEGORIES)}"
        )
    for c in categories:
        if c not in CATEGORIES:
            raise DataError(
                f"mvtec: unknown category {c!r}{did_you_mean(str(c), CATEGORIES)}; "
                f"known: {', '.join(CATEGORIES)}"
            )
    files = [f"{FOLDER}/MVTec-AD_{c}.npz" for c in categories]
    return load_npz_files(
        files,
        names=list(categories),
        test_size=test_size,
        contamination=contamination,
        order=order,
        difficulty=difficulty,
        data_dir=data_dir,
        random_state=random_state,
        loader="mvtec",
        dataset_name="mvtec-ad",
    )
