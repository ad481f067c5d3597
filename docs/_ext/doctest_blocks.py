"""A griffe extension for the API reference: docstring examples (``>>>`` lines and their output)
become fenced ``pycon`` code blocks, so Markdown neither reflows them nor reads ``x["a"]["b"]`` in an
example as a link."""

from __future__ import annotations

from griffe import Extension


def fence_doctests(text: str) -> str:
    """``text`` with every doctest block (from a ``>>>`` line to the next blank line) fenced."""
    out: list[str] = []
    indent: str | None = None
    for line in text.split("\n"):
        stripped = line.lstrip()
        if indent is None and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}```pycon")
        elif indent is not None and not stripped:
            out.append(f"{indent}```")
            indent = None
        out.append(line)
    if indent is not None:
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestBlocks(Extension):
    def on_instance(self, *, obj, **kwargs) -> None:
        docstring = getattr(obj, "docstring", None)
        if docstring is not None and ">>>" in docstring.value:
            docstring.value = fence_doctests(docstring.value)
