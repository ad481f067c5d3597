"""Sizes of report figures from their data: text measured with matplotlib's own font engine.

A figure's size, its tick labels' rotation, the wrapping of its titles and the columns of its
legend are decided before anything is drawn, from the widths of the strings it will show (measured
by the Agg renderer, the one that draws the PNGs). So a figure grows with its number of concepts
and the length of its names instead of letting labels collide or titles run off the canvas.
Everything is in inches unless said otherwise.

>>> w2, _ = text_size("ab", 10); w4, _ = text_size("abab", 10)
>>> round(w4 / w2, 1)
2.0
>>> wrap("naive + a_detector_with_a_rather_long_name", 1.2, 8).count("\\n") >= 1
True
"""

from __future__ import annotations

import functools
import re
from typing import Sequence

__all__ = [
    "text_size",
    "text_width",
    "line_height",
    "wrap",
    "tick_rotation",
    "category_spacing",
    "legend_columns",
    "MAX_WIDTH",
]

#: widest figure (inches) shown at full size in the HTML report's column (1,200 px at the report's dpi)
MAX_WIDTH = 12.5
#: resolutions text is measured at: the report's PNGs (90 dpi) and matplotlib's default (100 dpi).
#: Glyph hinting makes a string up to 7 % wider at one resolution than at another, so the widest
#: measurement is used, with a 2 % margin.
_DPIS = (90, 100)
_MARGIN = 1.02
_LINE_SPACING = 1.2  # matplotlib's default line spacing, in font sizes


@functools.lru_cache(maxsize=len(_DPIS))
def _renderer(dpi: int):
    from matplotlib.backends.backend_agg import RendererAgg

    return RendererAgg(8, 8, dpi)


@functools.lru_cache(maxsize=65536)
def _line_width(line: str, fontsize: float) -> float:
    from matplotlib.font_manager import FontProperties

    prop = FontProperties(size=fontsize)
    return _MARGIN * max(
        _renderer(dpi).get_text_width_height_descent(line or " ", prop, ismath=False)[0] / dpi
        for dpi in _DPIS
    )


def line_height(fontsize: float) -> float:
    """Height of one line of text (inches), line spacing included."""
    return fontsize * _LINE_SPACING / 72.0


def text_size(text: str, fontsize: float) -> tuple[float, float]:
    """(width, height) in inches of ``text`` (lines split at ``\\n``) at ``fontsize`` points."""
    lines = str(text).split("\n")
    return max(_line_width(line, fontsize) for line in lines), len(lines) * line_height(fontsize)


def text_width(texts: Sequence[str], fontsize: float) -> float:
    """Width in inches of the widest of ``texts`` (0 for none)."""
    return max((text_size(t, fontsize)[0] for t in texts), default=0.0)


def _cut(piece: str, width: float, fontsize: float) -> list[str]:
    """``piece`` in chunks each at most ``width`` wide (one character at least)."""
    out = []
    while len(piece) > 1 and _line_width(piece, fontsize) > width:
        cut = 1
        while cut < len(piece) and _line_width(piece[: cut + 1], fontsize) <= width:
            cut += 1
        out.append(piece[:cut])
        piece = piece[cut:]
    return out + [piece]


def _tokens(para: str, width: float, fontsize: float) -> list[str]:
    """Words with their leading space; a word wider than ``width`` cut after ``_ . : / - + , =``
    (where a long identifier can break), and a piece still too wide cut where it must."""
    out = []
    for word in re.findall(r"\s*\S+", para):
        if _line_width(word.strip(), fontsize) <= width:
            out.append(word)
            continue
        for k, piece in enumerate(p for p in re.split(r"(?<=[_.:/\-+,=])", word) if p):
            out += _cut(piece.lstrip() if k else piece, width, fontsize)
    return out


def wrap(text: str, width: float, fontsize: float) -> str:
    """``text`` with line breaks so that no line is wider than ``width`` inches at ``fontsize``.

    Breaks at spaces first, inside long identifiers after ``_ . : / - + , =``, and inside a piece
    still too long after as many characters as fit. Existing line breaks are kept.
    """
    out: list[str] = []
    for para in str(text).split("\n"):
        line = ""
        for token in _tokens(para, width, fontsize):
            candidate = line + token if line else token.lstrip()
            if line and _line_width(candidate, fontsize) > width:
                out.append(line)
                candidate = token.lstrip()
            line = candidate
        out.append(line)
    return "\n".join(out)


def tick_rotation(labels: Sequence[str], spacing: float, fontsize: float) -> int:
    """0 when the widest label fits between neighbouring ticks ``spacing`` inches apart, else 90."""
    return 0 if text_width(labels, fontsize) + 0.06 <= spacing else 90


def category_spacing(
    labels: Sequence[str], fontsize: float, minimum: float, budget: float = 9.0
) -> float:
    """Distance between neighbouring category ticks (inches): at least ``minimum``; enough for the
    labels to sit upright when that costs at most 0.8 in per category and ``budget`` inches for
    all of them; else enough for them to stand rotated (one line height plus a gap).

    >>> category_spacing(["a", "b"], 7, 0.3)
    0.3
    >>> round(category_spacing([f"concept_{j}" for j in range(40)], 7, 0.1), 3)
    0.152
    """
    upright = text_width(labels, fontsize) + 0.08
    if upright <= max(minimum, 0.8) and (upright <= minimum or len(labels) * upright <= budget):
        return max(minimum, upright)
    return max(minimum, line_height(fontsize) * 1.3)


def legend_columns(labels: Sequence[str], fontsize: float, width: float) -> int:
    """How many legend columns of ``labels`` fit side by side in ``width`` inches."""
    column = text_width(labels, fontsize) + 0.6  # handle, padding and column gap
    return max(1, min(len(labels), int(width // column)))
