"""A griffe extension for the API reference: the reStructuredText that clad's docstrings use becomes
Markdown, so the reference shows formatted text instead of markup.

* Sphinx roles (``:func:`~clad.metrics.learned_at```, ``:class:`Scored```, ``:mod:`...```) become
  cross-references to the object when the reference documents it (an *optional* autorefs link: one
  that cannot be resolved renders as code, without a warning), with the title Sphinx would show
  (the last part of the name after ``~``, or the explicit ``title <target>``); ``:math:`...``` becomes
  code.
* Simple tables (columns under ``====  ====`` borders) become Markdown pipe tables.
"""

from __future__ import annotations

import html
import re

from griffe import Extension

_ROLE = re.compile(r":(func|class|meth|mod|data|attr|obj|exc|math):`([^`]+)`")
_BORDER = re.compile(r"^(\s*)(=+)(\s+=+)*\s*$")


def _code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


def roles_to_markdown(text: str, module: str = "") -> str:
    """``text`` with every Sphinx role replaced (see the module)."""

    def replace(m: re.Match) -> str:
        role, body = m.group(1), m.group(2)
        if role == "math":  # a Markdown code span: its text is shown as written
            return f"`` {body} ``"
        title, target = body, body
        explicit = re.fullmatch(r"(.+?)\s*<(.+)>", body)
        if explicit:
            title, target = explicit.group(1), explicit.group(2)
        if target.startswith("~"):
            target = target[1:]
            title = target.rsplit(".", 1)[-1] if not explicit else title
        title = title.lstrip("~")
        if target.startswith("."):
            target = target.lstrip(".")
        if not target.startswith("clad") and module:
            target = f"{module}.{target}"
        return f'<autoref identifier="{html.escape(target, quote=True)}" optional>{_code(title)}</autoref>'

    return _ROLE.sub(replace, text)


def _spans(border: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"=+", border)]


def _cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    out = []
    for k, (start, end) in enumerate(spans):
        stop = spans[k + 1][0] if k + 1 < len(spans) else len(line)
        out.append(line[start:stop].strip())
    return out


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def tables_to_markdown(text: str) -> str:
    """``text`` with every reStructuredText simple table turned into a Markdown pipe table (a row
    whose first cell is blank continues the row above it)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _BORDER.match(lines[i])
        if not m or len(_spans(lines[i])) < 2:
            out.append(lines[i])
            i += 1
            continue
        indent, spans = m.group(1), _spans(lines[i])
        borders, rows, j = [i], [], i + 1
        while j < len(lines) and lines[j].strip():
            if _BORDER.match(lines[j]) and _spans(lines[j]) == spans:
                borders.append(j)
            else:
                rows.append((j, _cells(lines[j], spans)))
            j += 1
        if len(borders) < 2:
            out.append(lines[i])
            i += 1
            continue
        header: list[str] | None = None
        if len(borders) == 3:
            head = [cells for k, cells in rows if borders[0] < k < borders[1]]
            header = [" ".join(parts).strip() for parts in zip(*head)] if head else None
            rows = [(k, cells) for k, cells in rows if k > borders[1]]
        merged: list[list[str]] = []
        for _, cells in rows:
            if merged and not cells[0]:  # a continuation line of the row above
                merged[-1] = [f"{a} {b}".strip() for a, b in zip(merged[-1], cells)]
            else:
                merged.append(cells)
        header = header or [""] * len(spans)
        if out and out[-1].strip():
            out.append("")
        out.append(indent + _row(header))
        out.append(indent + "|" + "|".join("---" for _ in spans) + "|")
        out += [indent + _row(cells) for cells in merged]
        out.append("")
        i = j
    return "\n".join(out)


class ReferenceText(Extension):
    """Applies :func:`tables_to_markdown` and :func:`roles_to_markdown` to every docstring."""

    def on_instance(self, *, obj, **kwargs) -> None:
        docstring = getattr(obj, "docstring", None)
        if docstring is None:
            return
        text = docstring.value
        if "==" in text:
            text = tables_to_markdown(text)
        if ":`" in text:
            module = (
                obj.path if getattr(obj, "is_module", False) else getattr(obj.module, "path", "")
            )
            text = roles_to_markdown(text, module)
        docstring.value = text
