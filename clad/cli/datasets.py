"""``clad datasets``: ``list``, ``info NAME``, ``convert SRC DST`` (the dataset loaders are imported
only when the command runs)."""

from __future__ import annotations

import sys

from ..errors import CladValueError, DataError

__all__ = ["add_parser", "command"]

#: each action's number of arguments and usage line
USAGE = {
    "list": (0, "clad datasets list"),
    "info": (1, "clad datasets info NAME"),
    "convert": (2, "clad datasets convert SRC DST.npz --allow-pickle [--data-dir DIR]"),
}


def _list() -> int:
    from ..datasets import DATASETS
    from ..datasets.cards import card_names, load_card

    print("loaders (name in a spec's [[datasets]]):")
    for name in DATASETS.names():
        print(f"  {name:14s} {DATASETS.doc(name)}")
    print("\ndataset cards (clad datasets info NAME):")
    for name in card_names():
        card = load_card(name)
        print(
            f"  {name:24s} loader {card['loader']:10s} {len(card['files']):3d} files  {card['title']}"
        )
    return 0


def _info(name: str) -> int:
    import inspect

    from ..datasets import DATASETS
    from ..datasets.cards import card_names, load_card
    from ..datasets.files import search_dirs
    from ..registry import did_you_mean

    if name in card_names():
        card = load_card(name)
        print(f"{card['name']}: {card['title']}\n")
        print(card["description"])
        print(
            f"\nsource:   {card['source']}\nlicense:  {card['license']}\nloader:   {card['loader']}"
        )
        print("citation:")
        for c in card["citation"]:
            print(f"  {c}")
        recipe = ", ".join(f"{k} = {v!r}" for k, v in card["default_recipe"].items())
        print(f"default recipe: {recipe}")
        dirs = ", ".join(str(d / card["folder"]) for d in search_dirs())
        print(f"files (looked for in {dirs}, or <data_dir>/{card['folder']}):")
        for fname, entry in card["files"].items():
            print(f"  {fname:48s} {entry['size']:>10,d} B  sha256 {entry['sha256']}")
        return 0
    if name in DATASETS:
        fn = DATASETS.resolve(name)
        print(f"{name}: loader {DATASETS.path(name)}{inspect.signature(fn)}\n")
        print(inspect.getdoc(fn) or "")
        return 0
    known = card_names() + DATASETS.names()
    raise CladValueError(
        f"clad datasets info: no card or loader {name!r}{did_you_mean(name, known)}; "
        f"known: {', '.join(known)}"
    )


def _convert(src: str, dst: str, data_dir: str | None, allow_pickle: bool) -> int:
    from ..datasets.pyclad import convert_pyclad

    if not allow_pickle:
        raise DataError(
            "clad datasets convert: SRC is a pyCLAD concept file, a pickle; reading it runs code from "
            "the file. Add --allow-pickle to confirm you trust it."
        )
    out = convert_pyclad(src, dst, data_dir=data_dir)
    print(f"wrote {out} (load it with the 'clad_npz' loader: file = \"{out}\")")
    return 0


def command(args) -> int:
    """Run the subcommand for parsed ``args``; returns the exit code."""
    n, usage = USAGE[args.action]
    if len(args.args) != n:
        print(f"usage: {usage}", file=sys.stderr)
        return 2
    if args.action == "list":
        return _list()
    if args.action == "info":
        return _info(args.args[0])
    return _convert(args.args[0], args.args[1], args.data_dir, args.allow_pickle)


def add_parser(sub) -> None:
    """Declare ``clad datasets`` and its arguments."""
    d = sub.add_parser(
        "datasets", help="dataset loaders and cards: list, info NAME, convert SRC DST"
    )
    d.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=list(USAGE),
        help="list: loaders and cards; info NAME: one card or loader; convert SRC DST: pyCLAD file -> .npz",
    )
    d.add_argument("args", nargs="*", help="NAME for info; SRC DST for convert")
    d.add_argument("--data-dir", default=None, help="data directory to look for SRC in (convert)")
    d.add_argument(
        "--allow-pickle",
        action="store_true",
        help="convert: allow unpickling SRC (it runs code from the file: only for files you trust)",
    )
    d.set_defaults(func=command)
