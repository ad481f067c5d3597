"""Dataset cards (package data), the `clad datasets` subcommand and the real-benchmark spec files."""

import subprocess
import sys
from pathlib import Path

import pytest

from clad.cli import main
from clad.datasets.cards import tomllib
from clad.datasets import DATASETS, card_names, load_card
from clad.engine.spec import load_spec
from tests.data_helpers import SHARED, needs_data

ROOT = Path(__file__).resolve().parents[2]
SPECS = [
    "pyclad_nsl_kdd",
    "nsl_kdd_families",
    "adbench_clustering",
    "mvtec_categories",
    "nasa_smap",
]


def test_every_card_is_complete():
    assert card_names() == [
        "adbench-classical",
        "adbench-mvtec-resnet18",
        "nab",
        "nasa-smap",
        "nsl-kdd",
        "pyclad-nsl-kdd",
        "skab",
    ]
    for name in card_names():
        card = load_card(name)
        assert card["loader"] in DATASETS
        assert (
            card["source"].startswith("https://github.com/")
            and card["license"]
            and card["citation"]
        )
        # the default recipe is a valid set of parameters of the card's loader
        from clad.registry import check_params

        check_params(DATASETS.resolve(card["loader"]), card["default_recipe"], name)
        for fname, entry in card["files"].items():
            assert (
                len(entry["sha256"]) == 64
                and entry["size"] > 0
                and entry["url"].startswith("https://")
            )


@needs_data
def test_cards_match_the_published_checksums():
    listed = {}
    # the first four folders in one list; nasa-smap has its own (paths relative to that folder)
    for sums, prefix in (
        (SHARED / "SHA256SUMS.tsv", ""),
        (SHARED / "nasa-smap" / "SHA256SUMS.tsv", "nasa-smap/"),
        (SHARED / "skab" / "SHA256SUMS.tsv", "skab/"),
        (SHARED / "nab" / "SHA256SUMS.tsv", "nab/"),
    ):
        for line in sums.read_text().splitlines():
            sha, size, path = line.split("\t")
            listed[prefix + path] = (sha, int(size))
    carded = {
        f"{load_card(n)['folder']}/{f}": (e["sha256"], e["size"])
        for n in card_names()
        for f, e in load_card(n)["files"].items()
    }
    assert carded == listed


def test_cards_ship_as_package_data():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = pyproject["tool"]["setuptools"]["package-data"]["clad"]
    assert "datasets/cards/*.toml" in globs
    cards = sorted(p.stem for p in (ROOT / "clad" / "datasets" / "cards").glob("*.toml"))
    assert cards == card_names()
    assert "clad/datasets/cards" in (ROOT / "datasets" / "README.md").read_text()


def test_cli_list_and_info(capsys):
    assert main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    for name in (
        "pyclad",
        "clad_npz",
        "nsl_kdd",
        "adbench",
        "odds_mat",
        "table",
        "mvtec",
        "nsl-kdd",
    ):
        assert name in out
    assert main(["datasets", "info", "nsl-kdd"]) == 0
    out = capsys.readouterr().out
    assert (
        "fa46b0935342616aa83b7c2578db355b6a7aaabbc492248172c7a1e8b7ab8f84" in out
        and "Tavallaee" in out
    )
    assert main(["datasets", "info", "nsl-kd"]) == 2
    assert "did you mean 'nsl-kdd'" in capsys.readouterr().err


@needs_data
def test_cli_convert(tmp_path, capsys):
    src = "nsl-kdd_random_anomalies_5_concepts_1000_per_cluster.npy"
    dst = tmp_path / "p.npz"
    assert main(["datasets", "convert", src, str(dst), "--data-dir", str(SHARED)]) == 2
    assert "--allow-pickle" in capsys.readouterr().err and not dst.exists()
    assert (
        main(["datasets", "convert", src, str(dst), "--data-dir", str(SHARED), "--allow-pickle"])
        == 0
    )
    assert dst.exists()


@pytest.mark.parametrize("spec", SPECS)
def test_spec_validates(spec, monkeypatch):
    monkeypatch.chdir(ROOT)
    s = load_spec(ROOT / "scenarios" / f"{spec}.toml")
    assert len(s) >= 2 and all(
        c.dataset.params["data_dir"] == "../shared/datasets" for c in s.configs
    )


@pytest.mark.slow
@needs_data
def test_spec_dry_run_from_the_repo_root():
    proc = subprocess.run(
        [sys.executable, "-m", "clad.cli", "run", "scenarios/adbench_clustering.toml", "--dry-run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "adbench-clustering: 12 runs" in proc.stdout
