"""Reading a results folder: ``DIR/results.sqlite`` when it is there, else ``DIR/results.json``.

:func:`load_spec_record` reads the spec recorded beside the runs, from the file
:func:`clad.results.store.load_results` (the one reader of results) reads them from.
"""

from __future__ import annotations

import os

from ..results.store import ResultStore, read_document, results_source
from ..errors import DataError

__all__ = ["load_spec_record", "load_spec_text"]


def load_spec_record(directory: str | os.PathLike) -> dict | None:
    """The spec recorded with the results (from the same file
    :func:`~clad.results.store.load_results` reads), or None.

    >>> import tempfile
    >>> from clad.results import write_results
    >>> d = tempfile.mkdtemp()
    >>> write_results(f"{d}/results.json", [], spec={"name": "toy"})
    >>> load_spec_record(d)
    {'name': 'toy'}
    """
    try:
        source = results_source(directory)
        if source.suffix == ".sqlite":
            with ResultStore(source, create=False) as store:
                spec = store.get_meta("spec")
        else:
            spec = read_document(source).get("spec")
    except DataError:
        return None
    return spec if isinstance(spec, dict) and spec else None


def load_spec_text(directory: str | os.PathLike) -> str | None:
    """The spec file's text as the user wrote it (stored by ``clad run`` in the database's meta
    table as ``spec_text``), or None when it was not stored (older results, a JSON file only)."""
    try:
        source = results_source(directory)
        if source.suffix != ".sqlite":
            return None
        with ResultStore(source, create=False) as store:
            text = store.get_meta("spec_text")
    except DataError:
        return None
    return text if isinstance(text, str) and text.strip() else None
