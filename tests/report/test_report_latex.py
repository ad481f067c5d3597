"""leaderboard.tex: tables a journal takes (booktabs, caption and label, chosen columns, the scenario
as a group row), compiled by a TeX engine where one is installed."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from clad import metrics
from clad.report import leaderboard
from clad.report.chance import chance_table
from clad.report.table_formats import latex_columns, leaderboard_latex
from clad.results import RunResult


def _runs():
    out = []
    rng = np.random.default_rng(0)
    for scenario in ("concept_aware", "concept_incremental"):
        for strategy in ("naive", "cumulative"):
            for detector in ("iforest", "my_det&co 50%"):
                for seed in range(3):
                    R = np.clip(0.7 + 0.1 * rng.normal(size=(3, 3)), 0, 1)
                    t = metrics.learned_at(("A", "B", "C"), ("A", "B", "C"))
                    out.append(
                        RunResult(
                            "data_set#1",
                            scenario,
                            strategy,
                            detector,
                            seed,
                            ("A", "B", "C"),
                            ("A", "B", "C"),
                            R={"roc_auc": R},
                            metrics={"roc_auc": metrics.summarize(R, t)},
                            chance={"roc_auc": [0.5, 0.5, 0.5]},
                            run_id=f"{scenario}{strategy}{detector}{seed}",
                        )
                    )
    return out


@pytest.fixture(scope="module")
def board():
    runs = _runs()
    return leaderboard(runs), chance_table(runs)


def test_latex_tables_have_booktabs_caption_label_and_group_rows(board):
    lb, chance = board
    tex = leaderboard_latex(lb, chance)
    assert tex.startswith("% clad leaderboard tables; they need \\usepackage{booktabs}")
    tables = tex.split("\\begin{table}")[1:]
    assert len(tables) == 1  # one dataset, one base metric, the headline metrics
    body = tables[0]
    for rule in (
        "\\toprule",
        "\\midrule",
        "\\bottomrule",
        "\\caption{",
        "\\label{tab:clad-data-set-1-roc-auc-headline}",
    ):
        assert rule in body
    # the scenario is a group row, written once, not a column repeated on every row
    assert body.count("concept\\_aware") == 1 and body.count("concept\\_incremental") == 1
    assert "\\multicolumn{5}{l}{\\textit{concept\\_aware}}" in body
    header = next(line for line in body.splitlines() if line.startswith("Strategy"))
    assert header == "Strategy & Detector & CA & BWT & FWT \\\\"
    assert "my\\_det\\&co 50\\%" in body and "data\\_set\\#1" in body


def test_latex_columns_chosen_and_families(board):
    lb, chance = board
    tex = leaderboard_latex(lb, chance, latex_columns("CA,forgetting"))
    header = next(line for line in tex.splitlines() if line.startswith("Strategy"))
    assert header == "Strategy & Detector & CA & Forgetting \\\\"
    every = leaderboard_latex(lb, chance, latex_columns("all"))
    captions = re.findall(r"\\caption\{([^:]*):", every)
    assert any("(performance)" in c for c in captions) and any(
        "(transfer and forgetting)" in c for c in captions
    )
    labels = re.findall(r"\\label\{([^}]*)\}", every)
    assert len(labels) == len(set(labels))  # every label unique
    with pytest.raises(ValueError, match="latex column 'CAA' is not a scalar metric"):
        latex_columns("CAA")


def _tex_engine():
    engine = shutil.which("pdflatex")
    if engine is None:
        return None, "no pdflatex on PATH (Debian: texlive-latex-base)"
    kpse = shutil.which("kpsewhich")
    if (
        kpse is None
        or not subprocess.run([kpse, "booktabs.sty"], capture_output=True, text=True).stdout.strip()
    ):
        return None, "booktabs.sty not found (Debian: texlive-latex-recommended)"
    return engine, ""


@pytest.mark.slow
@pytest.mark.parametrize("columns", [None, "all"])
def test_leaderboard_tex_compiles(board, tmp_path, columns):
    engine, why = _tex_engine()
    if engine is None:
        pytest.skip(why)
    lb, chance = board
    (tmp_path / "leaderboard.tex").write_text(
        leaderboard_latex(lb, chance, latex_columns(columns)), encoding="utf-8"
    )
    (tmp_path / "paper.tex").write_text(
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n"
        "\\usepackage{booktabs}\n\\begin{document}\n\\input{leaderboard.tex}\n"
        "See Table~\\ref{tab:clad-data-set-1-roc-auc-"
        + ("headline" if columns is None else "performance")
        + "}.\n"
        "\\end{document}\n",
        encoding="utf-8",
    )
    for _ in range(2):  # twice: the reference resolves on the second pass
        proc = subprocess.run(
            [engine, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stdout[-3000:]
    log = (tmp_path / "paper.log").read_text(errors="replace")
    assert (tmp_path / "paper.pdf").stat().st_size > 1000
    assert (
        "undefined references" not in log
        and "Overfull \\hbox" not in log.split("\\input")[-1]
        or columns == "all"
    )
