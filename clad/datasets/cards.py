"""Dataset cards: small TOML files shipped with clad (``clad/datasets/cards/*.toml``).

A card describes one public dataset: where it comes from (``source``, a repository address at a
fixed commit), its ``license`` and ``citation``, the ``loader`` that reads it, the ``folder`` its
files live in inside a data directory, its ``default_recipe`` (the loader parameters of the
scenario clad builds by default) and, under ``[files."NAME"]``, each file's ``sha256``, ``size`` in
bytes and download ``url`` (a name may hold a subfolder: ``"train/A-1.npy"``). The cards are package data, so they are there after any install.

>>> card = load_card("adbench-classical")
>>> card["loader"], card["files"]["32_shuttle.npz"]["size"]
('adbench', 332929)
>>> find_file("adbench-classical/32_shuttle.npz")["sha256"][:12]
'26900b0f6be4'
>>> find_file("nasa-smap/train/A-1.npy")["size"]
576128
"""

from __future__ import annotations

import functools
import sys
from importlib import resources
from pathlib import PurePosixPath

from ..errors import DataError
from ..registry import did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["card_names", "load_card", "find_file", "REQUIRED_KEYS"]

REQUIRED_KEYS = (
    "name",
    "title",
    "source",
    "license",
    "citation",
    "loader",
    "folder",
    "default_recipe",
    "files",
)


def _card_dir():
    return resources.files("clad.datasets") / "cards"


@functools.lru_cache(maxsize=1)
def _all_cards() -> dict[str, dict]:
    cards = {}
    for entry in sorted(_card_dir().iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            card = tomllib.loads(entry.read_text(encoding="utf-8"))
            missing = [k for k in REQUIRED_KEYS if k not in card]
            if missing:
                raise DataError(f"dataset card {entry.name}: missing keys {missing}")
            cards[card["name"]] = card
    return cards


def card_names() -> list[str]:
    """Names of the shipped dataset cards."""
    return sorted(_all_cards())


def load_card(name: str) -> dict:
    """The card called ``name`` (a fresh dict each time)."""
    import copy

    cards = _all_cards()
    if name not in cards:
        raise DataError(
            f"no dataset card {name!r}{did_you_mean(name, cards)}; cards: {', '.join(sorted(cards))}"
        )
    return copy.deepcopy(cards[name])


def find_file(relpath: str) -> dict | None:
    """The card entry (``sha256``, ``size``, ``url``) of ``folder/file``, or None if no card lists it."""
    parts = PurePosixPath(str(relpath).replace("\\", "/")).parts
    if len(parts) < 2:
        return None
    # a card may list files in subfolders (train/A-1.npy)
    folder, fname = parts[0], "/".join(parts[1:])
    for card in _all_cards().values():
        if card["folder"] == folder and fname in card["files"]:
            return dict(card["files"][fname])
    return None
