"""The HTML pages of a report: sections of escaped text, tables, and figures as files beside the
pages, loaded lazily: a figure the browser draws reserves its height until it is drawn, so the page
is laid out before any arrives. Large tables sort and filter, and figures are drawn, with the
scripts of ``assets/`` (vendored, so the pages work offline and from a file)."""

from __future__ import annotations

import html
import json
import re
from typing import Sequence

__all__ = [
    "chart_file",
    "script_json",
    "pre",
    "message",
    "details",
    "page",
    "figure_grid",
    "toml_text",
    "table_tools",
    "ASSETS",
    "write_assets",
]

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1200px;
       padding: 0 1rem; color: #222; }
h1 { border-bottom: 2px solid #333; padding-bottom: .3rem; }
h2 { border-bottom: 1px solid #aaa; margin-top: 2.5rem; }
table.table { border-collapse: collapse; margin: .5rem 0 1.2rem; font-size: .85rem; }
table.table th, table.table td { border-bottom: 1px solid #ddd; padding: .25rem .6rem; text-align: right; }
table.table th { background: #f3f3f3; }
pre { background: #f6f6f6; padding: .8rem; overflow-x: auto; font-size: .8rem; }
table.table { display: block; max-width: 100%; overflow-x: auto; }
.grid { display: flex; flex-wrap: wrap; gap: 1rem; }
figure { margin: 0 0 1rem; min-width: 0; max-width: 100%; }
figcaption { font-size: .75rem; color: #555; overflow-wrap: anywhere; }
table.index td { text-align: left; overflow-wrap: anywhere; }
.message { background: #fff4d6; border-left: 4px solid #e0a800; padding: .5rem .8rem; }
.legend { font-size: .85rem; color: #444; }
nav ul { columns: 4; font-size: .85rem; margin: .3rem 0; }
h2 { margin-top: 1.6rem; }
table.leaderboard td, table.leaderboard th { white-space: nowrap; padding: .2rem .5rem; }
table.leaderboard td:nth-child(-n+3), table.leaderboard th:nth-child(-n+3) { text-align: left; }
tr.chance td { color: #666; font-style: italic; background: #fafafa; }
table.compact { font-size: .78rem; }
table.compact td, table.compact th { padding: .15rem .4rem; }
table.compact th.group { text-align: center; border-bottom: 2px solid #bbb; }
table.compact tr.scenario th { text-align: left; background: #e8eef7; font-weight: 600; }
table.compact td:nth-child(-n+2) { text-align: left; }
table.compact td:nth-child(3n+3) { border-left: 1px solid #ccc; }
span.noise { color: #888; }
td[title] { cursor: help; }
.findings { background: #eef5ff; border-left: 4px solid #3b7dd8; padding: .3rem .8rem; }
.findings ul, .message ul { margin: .2rem 0 .4rem; padding-left: 1.3rem; }
.findings p { margin: .4rem 0 .1rem; }
div.message { padding: .3rem .8rem; font-size: .9rem; }
details { margin: .4rem 0; }
details > summary { cursor: pointer; color: #1a4f9c; }
p.run { font-size: 1.05rem; }
div.scroll { max-height: 34rem; overflow: auto; max-width: 100%; border: 1px solid #e4e4e4; margin: .4rem 0 1rem; }
div.scroll table.table { display: table; margin: 0; overflow: visible; }
div.scroll thead th { position: sticky; top: 0; z-index: 1; }
table.sortable th[role=columnheader]:not(.no-sort) { cursor: pointer; }
table.sortable th[aria-sort=ascending]::after { content: " ▲"; font-size: .7em; }
table.sortable th[aria-sort=descending]::after { content: " ▼"; font-size: .7em; }
.filter { font-size: .85rem; margin: .3rem 0; }
.filter input { font-size: .85rem; padding: .15rem .4rem; width: 22rem; max-width: 60%; }
p.back { font-size: .85rem; }
.headline li { margin: .15rem 0; }
ul.blocks { columns: 3; font-size: .9rem; }
table.ranking td:nth-child(-n+2), table.winners td:nth-child(1), table.rows td:nth-child(-n+5) { text-align: left; }
table.rows td { overflow-wrap: anywhere; }
table.rows { font-size: .78rem; }
div.chart { max-width: 100%; overflow-x: auto; }
div.chart.failed { background: #fff4d6; padding: .5rem; }
"""

#: the files every page loads (copied into ``assets/`` of the report folder by :func:`write_assets`):
#: tablesort 5.6.0 (MIT, its licence beside it) and clad's own filter boxes
TABLE_ASSETS = ("tablesort.min.js", "tablesort.number.min.js", "clad-tables.js")
#: what a page with figures drawn by the browser loads besides (:mod:`clad.report.charts`): Vega 6.2.0,
#: Vega-Lite 6.4.1 and vega-embed 7.1.0 (BSD-3-Clause, their licences beside them) and clad's loader,
#: which draws each figure when it scrolls into view
CHART_ASSETS = ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "clad-charts.js")
LICENCES = ("tablesort-LICENCE", "vega-LICENCE", "vega-lite-LICENCE", "vega-embed-LICENCE")
ASSETS = (*TABLE_ASSETS, *CHART_ASSETS, *LICENCES)


def write_assets(folder) -> None:
    """Copy the scripts of :data:`ASSETS` (package data of ``clad.report``) into ``folder``."""
    from importlib import resources
    from pathlib import Path

    from ..atomic import atomic_output

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    source = resources.files("clad.report") / "assets"
    for name in ASSETS:
        data = (source / name).read_bytes()
        target = folder / name
        if target.is_file() and target.read_bytes() == data:
            continue
        with atomic_output(target) as tmp:
            tmp.write_bytes(data)


#: how a figure the browser draws starts in a page (:func:`chart_file`; :func:`page` loads the Vega
#: scripts where it finds one)
_CHART = 'class="chart" data-chart='


def script_json(obj) -> str:
    """``obj`` as JSON that a script may hold: ``</`` (which would end an inline ``<script>``) and
    the line separators U+2028 and U+2029 (line breaks to older JavaScript) written as escapes,
    so text from a spec is data to every reader.

    >>> print(script_json({"a": "</script>\u2028"}))
    {"a":"<\\/script>\\u2028"}
    """
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return text.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def chart_file(
    src: str, ident: str, caption: str, height: int, *, anchor: str | None = None
) -> str:
    """A ``<figure>`` holding the figure of ``src`` (a script beside the pages calling
    ``cladChart(ident, spec)``), drawn by the browser when it scrolls into view; ``height`` px are
    reserved for it so the page does not move when it is drawn.

    >>> chart_file("../figures/a.js", "a", "R of a", 300)[:81]
    '<figure><div class="chart" data-chart="../figures/a.js" data-id="a" style="min-he'
    """
    ident_attr = f' id="{html.escape(anchor, quote=True)}"' if anchor else ""
    link = f' <a href="{html.escape(src, quote=True)}">{html.escape(src.rsplit("/", 1)[-1])}</a>'
    return (
        f'<figure{ident_attr}><div {_CHART}"{html.escape(src, quote=True)}" '
        f'data-id="{html.escape(ident, quote=True)}" style="min-height:{int(height)}px" role="img" '
        f'aria-label="{html.escape(caption, quote=True)}"></div>'
        f"<figcaption>{html.escape(caption)}{link}</figcaption></figure>"
    )


def table_tools(table_id: str, n_rows: int, table_html: str, *, scroll_from: int = 25) -> str:
    """``table_html`` (a ``<table id=table_id class='... sortable'>``) with a filter box above it,
    in a scrolling box when it has more than ``scroll_from`` rows (the page keeps its height)."""
    box = (
        f"<p class='filter'><label>Filter: <input type='search' data-filter='{html.escape(table_id, quote=True)}' "
        f"placeholder='words every shown row contains'></label> <span id='{html.escape(table_id, quote=True)}-count'>"
        f"{n_rows:,} rows</span></p>"
    )
    return box + (f"<div class='scroll'>{table_html}</div>" if n_rows > scroll_from else table_html)


def figure_grid(figures: Sequence[str]) -> str:
    return '<div class="grid">' + "\n".join(figures) + "</div>"


def _toml_key(key) -> str:
    key = str(key)
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml_value(value, tomli_w) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(_assignments(value.items(), tomli_w)) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v, tomli_w) for v in value if v is not None) + "]"
    if not isinstance(value, (str, int, float, bool)):
        value = str(value)
    return tomli_w.dumps({"v": value})[4:].rstrip("\n")


def _assignments(items, tomli_w) -> list[str]:
    """``key = value`` of each of ``items`` whose value is not None (TOML cannot hold None)."""
    return [f"{_toml_key(k)} = {_toml_value(v, tomli_w)}" for k, v in items if v is not None]


def _name_first(table: dict) -> list:
    # stable: the rest keep their order
    return sorted(table.items(), key=lambda kv: kv[0] != "name")


def toml_text(spec) -> str:
    """A spec as TOML text: ``spec`` as written when it is a string, else the mapping rendered by
    ``tomli_w``: top-level values first, then each list of tables as ``[[name]]`` blocks, ``name``
    first in each (values that are tables inline; None values, which TOML cannot hold, left out).

    >>> print(toml_text({"name": "q", "seeds": 2, "datasets": [{"name": "synthetic", "grid": {"k": [1, 2]}}]}))
    name = "q"
    seeds = 2
    <BLANKLINE>
    [[datasets]]
    name = "synthetic"
    grid = { k = [1, 2] }
    <BLANKLINE>
    """
    if isinstance(spec, str):
        return spec
    try:
        import tomli_w
    except ImportError:  # pragma: no cover - depends on the environment
        return json.dumps(spec, indent=1, default=str)
    tables = {
        k: v
        for k, v in spec.items()
        if isinstance(v, (list, tuple)) and v and all(isinstance(t, dict) for t in v)
    }
    lines = _assignments(((k, v) for k, v in _name_first(spec) if k not in tables), tomli_w)
    for name, items in tables.items():
        for table in items:
            lines += ["", f"[[{_toml_key(name)}]]", *_assignments(_name_first(table), tomli_w)]
    return "\n".join(lines) + "\n"


def pre(obj) -> str:
    """Escaped preformatted text (objects as indented JSON)."""
    text = obj if isinstance(obj, str) else json.dumps(obj, indent=1, sort_keys=False, default=str)
    return f"<pre>{html.escape(text)}</pre>"


def message(text: str) -> str:
    return f'<p class="message">{html.escape(text)}</p>'


def details(summary: str, body: str, open: bool = False) -> str:
    """``body`` folded under a one-line ``summary`` (``<details>``): there on demand, out of the way.

    >>> details("More", "<p>x</p>").startswith("<details><summary>More</summary>")
    True
    """
    return f"<details{' open' if open else ''}><summary>{html.escape(summary)}</summary>\n{body}\n</details>"


def page(
    title: str,
    sections: Sequence[tuple[str, str, str]],
    intro: str = "",
    *,
    prefix: str = "",
    links: Sequence[tuple[str, str]] = (),
) -> str:
    """The whole document: ``sections`` are ``(anchor, heading, body_html)``; ``links`` are
    ``(href, text)`` of the other pages, listed after the sections in the navigation; ``prefix``
    leads from the page to the report folder (``"../"`` for a page one folder down)."""
    nav = "".join(
        f'<li><a href="#{html.escape(a)}">{html.escape(h)}</a></li>' for a, h, _ in sections
    )
    nav += "".join(
        f'<li><a href="{html.escape(href, quote=True)}">{html.escape(text)}</a></li>'
        for href, text in links
    )
    body = "\n".join(
        f'<section id="{html.escape(a)}"><h2>{html.escape(h)}</h2>\n{b}\n</section>'
        for a, h, b in sections
    )
    names = TABLE_ASSETS + (CHART_ASSETS if _CHART in body else ())
    scripts = "".join(
        f'<script src="{html.escape(prefix)}assets/{name}" defer></script>' for name in names
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n{scripts}\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{intro}\n<nav><ul>{nav}</ul></nav>\n{body}\n</body>\n</html>\n"
    )
