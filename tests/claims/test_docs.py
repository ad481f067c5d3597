"""The documentation site builds with ``mkdocs build --strict`` (a broken link or API reference fails),
every page of docs/guides/ is in it, the README links to the guides, and the spec examples in the
guides are valid specs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDES = sorted((ROOT / "docs" / "guides").glob("*.md"))


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="needs MkDocs: pip install 'clad[docs]'")
    pytest.importorskip("mkdocstrings", reason="needs mkdocstrings: pip install 'clad[docs]'")
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    for (
        page
    ) in GUIDES:  # the navigation is built from the folder: every guide is a page of the site
        built = site / "guides" / page.stem / "index.html"
        assert built.is_file(), f"{page.name} is not in the site"
        title = page.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
        assert title in (site / "index.html").read_text(encoding="utf-8"), (
            f"{title!r} not in the navigation"
        )
    api = (site / "reference" / "strategies" / "index.html").read_text(encoding="utf-8")
    assert (
        'id="clad.strategies.Replay"' in api and "buffer_size" in api
    )  # the reference, from the docstrings
    assert (
        '<span class="gp">&gt;&gt;&gt; </span>' in api
    )  # docstring examples are highlighted code blocks
    reference = "".join(p.read_text(encoding="utf-8") for p in (site / "reference").rglob("*.html"))
    for raw in (":func:`", ":class:`", ":meth:`", ":mod:`", ":data:`", ":math:`", "======"):
        assert raw not in reference, (
            f"{raw} shown as text in the API reference"
        )  # formatted, not markup
    assert 'class="autorefs autorefs-internal"' in reference  # cross-references are links
    scenarios = (site / "reference" / "scenarios" / "index.html").read_text(encoding="utf-8")
    assert "<th>concept id</th>" in scenarios  # a table of the docstring is a table


def test_readme_links_to_the_guides():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = set(re.findall(r"\]\((docs/guides/[^)#]+\.md)", readme))
    assert {
        "docs/guides/specs.md",
        "docs/guides/strategies.md",
        "docs/guides/datasets.md",
        "docs/guides/results.md",
        "docs/guides/reports.md",
        "docs/guides/running.md",
        "docs/guides/plugins.md",
    } <= links
    for link in links:
        assert (ROOT / link).is_file(), link
    for shot in ("report-top.png", "report-leaderboard.png", "report-heatmap-chance.png"):
        assert f"docs/{shot}" in readme and (ROOT / "docs" / shot).is_file()


@pytest.mark.parametrize("guide", ["specs.md", "strategies.md", "running.md", "tuning.md"])
def test_spec_examples_in_the_guides_are_valid(guide):
    from clad.engine.spec import parse_spec

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    text = (ROOT / "docs" / "guides" / guide).read_text(encoding="utf-8")
    checked = 0
    for block in re.findall(r"```toml\n(.+?)```", text, re.S):
        if "[[datasets]]" in block and "[[detectors]]" in block:
            parse_spec(tomllib.loads(block))  # a SpecError names every problem
            checked += 1
    assert checked or guide != "specs.md"


def test_doctest_fences_for_the_api_reference():
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from doctest_blocks import fence_doctests
    finally:
        sys.path.pop(0)
    text = "Sum.\n\n    >>> d = {'a': {'b': 1}}\n    >>> d['a']['b']\n    1\n\nEnd."
    assert fence_doctests(text) == (
        "Sum.\n\n    ```pycon\n    >>> d = {'a': {'b': 1}}\n    >>> d['a']['b']\n    1\n"
        "    ```\n\nEnd."
    )


def test_reference_text_turns_rst_into_markdown():
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from rst_text import roles_to_markdown, tables_to_markdown
    finally:
        sys.path.pop(0)
    assert roles_to_markdown("see :func:`~clad.metrics.learned_at`") == (
        'see <autoref identifier="clad.metrics.learned_at" optional><code>learned_at</code></autoref>'
    )
    assert 'identifier="clad.report.aggregate.describe"' in roles_to_markdown(
        ":func:`describe`", "clad.report.aggregate"
    )
    assert roles_to_markdown(":math:`a_i`") == "`` a_i ``"
    table = (
        "Intro.\n\n=====  ====\nname   what\n=====  ====\n``a``  first\n       and more\n``b``  second\n"
        "=====  ====\n\nEnd."
    )
    assert tables_to_markdown(table) == (
        "Intro.\n\n| name | what |\n|---|---|\n| ``a`` | first and more |\n"
        "| ``b`` | second |\n\n\nEnd."
    )
