"""The self-contained HTML page: sections of escaped text, tables and PNG images embedded as
base64 ``data:`` URIs (the page needs no other file)."""

from __future__ import annotations

import base64
import html
import json
from typing import Sequence

__all__ = ["img", "pre", "message", "page", "figure_grid"]

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1200px;
       padding: 0 1rem; color: #222; }
h1 { border-bottom: 2px solid #333; padding-bottom: .3rem; }
h2 { border-bottom: 1px solid #aaa; margin-top: 2.5rem; }
table.table { border-collapse: collapse; margin: .5rem 0 1.2rem; font-size: .85rem; }
table.table th, table.table td { border-bottom: 1px solid #ddd; padding: .25rem .6rem; text-align: right; }
table.table th { background: #f3f3f3; }
pre { background: #f6f6f6; padding: .8rem; overflow-x: auto; font-size: .8rem; }
.grid { display: flex; flex-wrap: wrap; gap: 1rem; }
figure { margin: 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: .75rem; color: #555; }
.message { background: #fff4d6; border-left: 4px solid #e0a800; padding: .5rem .8rem; }
.legend { font-size: .85rem; color: #444; }
nav ul { columns: 2; }
"""


def img(png: bytes, alt: str, caption: str | None = None) -> str:
    """A ``<figure>`` with the PNG embedded as a base64 data URI.

    >>> img(b"\\x89PNG", "R").startswith('<figure><img src="data:image/png;base64,iVBORw==" alt="R"')
    True
    """
    data = base64.b64encode(png).decode("ascii")
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(alt, quote=True)}">{cap}</figure>'


def figure_grid(figures: Sequence[str]) -> str:
    return '<div class="grid">' + "\n".join(figures) + "</div>"


def pre(obj) -> str:
    """Escaped preformatted text (objects as indented JSON)."""
    text = obj if isinstance(obj, str) else json.dumps(obj, indent=1, sort_keys=False, default=str)
    return f"<pre>{html.escape(text)}</pre>"


def message(text: str) -> str:
    return f'<p class="message">{html.escape(text)}</p>'


def page(title: str, sections: Sequence[tuple[str, str, str]], intro: str = "") -> str:
    """The whole document: ``sections`` are ``(anchor, heading, body_html)``."""
    nav = "".join(f'<li><a href="#{html.escape(a)}">{html.escape(h)}</a></li>' for a, h, _ in sections)
    body = "\n".join(f'<section id="{html.escape(a)}"><h2>{html.escape(h)}</h2>\n{b}\n</section>'
                     for a, h, b in sections)
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n{intro}\n<nav><ul>{nav}</ul></nav>\n{body}\n</body>\n</html>\n")
