"""Every table as JSON beside its CSV, and as LaTeX on request."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess

import pandas as pd
import pytest

from phenomt.cli import build_parser
from phenomt.core.io import InputError
from phenomt.core.tables import (
    _LATEX_SYMBOLS,
    LATEX_HEADER,
    _escape,
    latex_table,
    numeric_column,
    parse_cell,
    table_record,
    write_markdown,
    write_table,
)
from phenomt.plan import Plan, load_config
from tests.conftest import ROOT


def run(*argv: object) -> int:
    args = build_parser(["phenomt.core.tables"]).parse_args([str(a) for a in argv])
    return int(args.handler(args) or 0)


def test_cells_become_data():
    assert parse_cell("23.10 [22.00, 24.50] ▼") == {
        "value": 23.1, "ci": [22.0, 24.5], "text": "23.10 [22.00, 24.50] ▼"}
    assert parse_cell("-0.61 [-1.20, -0.05]")["ci"] == [-1.2, -0.05]
    assert parse_cell("61.00% [55.10, 66.00]")["value"] == 61.0
    assert parse_cell("12.5") == 12.5 and parse_cell(3) == 3 and parse_cell(float("nan")) is None
    assert parse_cell("240") == 240 and isinstance(parse_cell("240"), int)
    assert parse_cell("-3") == -3 and parse_cell("2.0") == 2.0
    assert parse_cell("newstest2017 (3,004 lines)") == "newstest2017 (3,004 lines)"
    assert parse_cell(None) is None
    # never written by format_number, so a name: "007" stays text even in a numeric column
    assert parse_cell("007") == "007"
    # in a text column a cell is its text, whatever it looks like
    assert parse_cell("11", numeric=False) == "11" and parse_cell("1.10", numeric=False) == "1.10"
    assert parse_cell(2017, numeric=False) == "2017" and parse_cell(None, numeric=False) is None


def test_numeric_columns_are_decided_per_column():
    assert numeric_column("BLEU", ["20.00 [19.00, 21.00] ▼", "12.5", None, 3])
    assert numeric_column("sentences", ["240", "?", "—", ""])  # missing marks do not count
    # numbers as the tables write them: marks, notes, grouped digits, % and x after them
    assert numeric_column("p", ["0.0400 *", "1.0000", "— (under 20 sentences)"])
    assert numeric_column("A", ["+0.41 (n 5)", "50.00 [27.78, 71.48]", "— (fewer than 3 bins)"])
    assert numeric_column("lines", ["3,004", "61.00%", "20.00x", "-1.00 [-2.00, 0.00] ▼ *"])
    assert numeric_column("H", ["1.0000 [1.0000, 1.0000] Δ+0.0000 †", "23.10 Δ-0.50 ▼ ‡"])
    assert not numeric_column("remark", ["12 apples"]) and not numeric_column("x", ["1,23"])
    assert not numeric_column("system", ["2017", "2018"])  # a name column, by name
    assert not numeric_column("System Output", ["1"])  # names compare case-insensitively
    assert not numeric_column("remark", ["12", "twelve"])  # one cell of words: text
    assert not numeric_column("id", ["3"], text_columns=["id"])  # declared by the caller
    assert not numeric_column("code", ["007", "12"])


def test_json_keeps_text_columns_as_text():
    frame = pd.DataFrame({
        "system": ["2017", "B"], "n-gram": ["11", "007"], "hypothesis": ["1.10", "42"],
        "line": [12, 345], "sentences": ["240", "?"],
        "BLEU [95% CI]": ["20.00 [19.00, 21.00]", None], "p": ["0.0400", "1.0000 *"],
        "remark": ["12", "twelve"], "id": ["3", "4"]})
    record = table_record(frame, "t", text_columns=["id"])
    assert record["rows"] == [
        {"system": "2017", "n-gram": "11", "hypothesis": "1.10", "line": 12, "sentences": 240,
         "BLEU [95% CI]": {"value": 20.0, "ci": [19.0, 21.0], "text": "20.00 [19.00, 21.00]"},
         "p": 0.04, "remark": "12", "id": "3"},
        {"system": "B", "n-gram": "007", "hypothesis": "42", "line": 345, "sentences": "?",
         "BLEU [95% CI]": None, "p": "1.0000 *", "remark": "twelve", "id": "4"}]
    assert [type(v) for v in record["rows"][0].values()] == [
        str, str, str, int, int, dict, float, str, str]
    # the printed cells are unchanged
    assert record["cells"][1] == ["B", "007", "42", "345", "?", "—", "1.0000 *", "twelve", "4"]
    # a name column of Python numbers is text too
    assert table_record(pd.DataFrame({"system": [2017]}), "t")["rows"] == [{"system": "2017"}]


def test_write_table_writes_json_beside_csv(tmp_path):
    frame = pd.DataFrame({"system": ["A", "B"], "BLEU [95% CI]": ["20.00 [19.00, 21.00]", None]})
    write_table(frame, tmp_path / "t.md", tmp_path / "t.csv", "Title", ["seed 1; nrefs:1"])
    record = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert record == {"schema": "phenomt.table/1", "title": "Title",
                      "notes": ["seed 1; nrefs:1"], "columns": ["system", "BLEU [95% CI]"],
                      "rows": [{"system": "A", "BLEU [95% CI]": {
                          "value": 20.0, "ci": [19.0, 21.0], "text": "20.00 [19.00, 21.00]"}},
                          {"system": "B", "BLEU [95% CI]": None}],
                      "cells": [["A", "20.00 [19.00, 21.00]"], ["B", "—"]]}
    assert (tmp_path / "t.csv").is_file() and (tmp_path / "t.md").is_file()


def test_latex_escapes_and_keeps_marks(tmp_path):
    record = table_record(pd.DataFrame({"sys_name": ["a&b"], "Δ": ["-1.00 [-2.00, 0.00] *"]}),
                          "BLEU of 50% {test}", ["signature nrefs:1|tok:13a"])
    text = latex_table(record)
    assert text == LATEX_HEADER + (
        "\\begin{table}\n\\centering\n\\small\n\\begin{tabular}{ll}\n\\toprule\n"
        "sys\\_name & \\ensuremath{\\Delta} \\\\\n\\midrule\n"
        "a\\&b & -1.00 [-2.00, 0.00] * \\\\\n\\bottomrule\n\\end{tabular}\n"
        "\\caption{BLEU of 50\\% \\{test\\}}\n"
        "\\par\\footnotesize signature nrefs:1\\textbar{}\\allowbreak{}tok:13a\n\\end{table}\n")
    # LaTeX shows the cells as printed: a bucket label "1" and a p "1.0000" keep their form
    printed = latex_table(table_record(pd.DataFrame({"bucket": ["1"], "p": ["1.0000"],
                                                     "x": [None]}), "t"))
    assert "\n1 & 1.0000 & -- \\\\\n" in printed
    (tmp_path / "t.json").write_text(json.dumps(record), encoding="utf-8")
    assert run("table", "latex", "--table", tmp_path / "t.json", "--output",
               tmp_path / "t.tex") == 0
    assert (tmp_path / "t.tex").read_text(encoding="utf-8") == text
    (tmp_path / "bad.json").write_text('{"rows": []}', encoding="utf-8")
    with pytest.raises(InputError, match="bad.json: not a table's JSON export"):
        run("table", "latex", "--table", tmp_path / "bad.json", "--output", tmp_path / "b.tex")
    assert not (tmp_path / "b.tex").exists()


def test_latex_escape_of_symbols_and_hostile_text():
    assert _escape("Δ ≥ ≤ ▼ ▲ ρ α β † ‡ ± × → …") == (
        r"\ensuremath{\Delta} \ensuremath{\geq} \ensuremath{\leq} "
        r"\ensuremath{\blacktriangledown} \ensuremath{\blacktriangle} \ensuremath{\rho} "
        r"\ensuremath{\alpha} \ensuremath{\beta} \dag{} \ddag{} \ensuremath{\pm} "
        r"\ensuremath{\times} \ensuremath{\rightarrow} \dots{}")
    assert _escape("σ · − ≠ ↔ s⁻¹ — –") == (
        r"\ensuremath{\sigma} \ensuremath{\cdot} \ensuremath{-} \ensuremath{\neq} "
        r"\ensuremath{\leftrightarrow} s\ensuremath{^{-}}\ensuremath{^{1}} \textemdash{} "
        r"\textendash{}")
    assert _escape("<script>alert(1)</script>") == (
        r"\textless{}script\textgreater{}alert(1)\textless{}/\allowbreak{}script\textgreater{}")
    assert _escape("_ & % # $ ~ ^ { } \\ |") == (
        r"\_ \& \% \# \$ \textasciitilde{} \textasciicircum{} \{ \} \textbackslash{} "
        r"\textbar{}\allowbreak{}")
    # other text stays UTF-8; a line break would end a paragraph (no caption may hold one)
    assert _escape("Grüße, Ærø, ça\nva") == "Grüße, Ærø, ça va"


def test_latex_wraps_long_text_columns_only():
    sentence = "The committee decided to postpone the vote until the next session."
    interval = "123.4567 [100.1234, 150.5678] ▼ *"  # long, but numeric: stays l
    record = table_record(pd.DataFrame({"system": ["A"], "source": [sentence],
                                        "Δ": [interval], "[note]": ["*"]}), "t")
    text = latex_table(record)
    assert ("\\begin{tabularx}{\\linewidth}{l>{\\raggedright\\arraybackslash}Xll}\n"
            "\\toprule\nsystem & source & \\ensuremath{\\Delta} & {}[note] \\\\\n") in text
    assert text.endswith("\\bottomrule\n\\end{tabularx}\n\\caption{t}\n\\end{table}\n")
    # a cell starting with [ or * gets {} first: the \\ or rule before it would take it
    assert ("A & The committee decided to postpone the vote until the next session. & "
            "123.4567 [100.1234, 150.5678] \\ensuremath{\\blacktriangledown} * & {}* \\\\\n"
            ) in text


def test_every_symbol_of_the_tables_has_a_latex_command():
    src = ROOT / "src" / "phenomt"
    files = [src / "core" / "tables.py",
             *(p for d in ("systems", "ldd", "lexcons", "nat") for p in (src / d).glob("*.py")
               if p.name != "sheet.py")]  # lexcons' annotation sheets are no table
    used = set()
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(getattr(node, "body", None), list) and node.body
                      and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        used |= {c for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and isinstance(node.value, str)
                 and id(node) not in docstrings for c in node.value if ord(c) > 127}
    assert used and used <= set(_LATEX_SYMBOLS), sorted(used - set(_LATEX_SYMBOLS))


def require_pdflatex() -> str:
    """pdflatex's path. Without it the test skips, unless $PHENOMT_REQUIRE_LATEX is set (CI
    installs TeX Live's base packages): then it fails."""
    found = shutil.which("pdflatex")
    if found is None:
        message = "pdflatex not installed (texlive-latex-base)"
        if os.environ.get("PHENOMT_REQUIRE_LATEX"):
            pytest.fail(message + ", and PHENOMT_REQUIRE_LATEX is set", pytrace=False)
        pytest.skip(message)
    return found


def _compile(tmp_path, tables: list[str]) -> str:
    """Compile ``tables`` in an article with the packages LATEX_HEADER names; pdflatex's log.
    \\tracinglostchars=2 logs a character that its font lacks."""
    pdflatex = require_pdflatex()
    for n, table in enumerate(tables):
        (tmp_path / f"t{n}.tex").write_text(table, encoding="utf-8")
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs,amssymb,tabularx}\n"
        "\\tracinglostchars=2\n\\begin{document}\n"
        + "".join(f"\\input{{t{n}.tex}}\n" for n in range(len(tables))) + "\\end{document}\n",
        encoding="utf-8")
    done = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    log = (tmp_path / "doc.log").read_text(encoding="utf-8", errors="replace")
    assert done.returncode == 0, log[-3000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 0
    return log


def test_latex_compiles_with_every_symbol_and_hostile_text(tmp_path):
    symbols = " ".join(_LATEX_SYMBOLS)
    hostile = "<script>alert(1)</script> a|b _ & % # $ ~ ^ { } \\ [x] Grüße, Ærø, ça"
    frame = pd.DataFrame({"system": [hostile, "*"], f"{symbols} [95% CI]": [
        "-1.00 [-2.00, 0.00] ▼ *", None], "hypothesis": [symbols, "[0.5, 1] 50%"]})
    table = latex_table(table_record(frame, f"Title {symbols} {hostile}",
                                     [f"note {symbols}", hostile]))
    log = _compile(tmp_path, [table])
    assert "Missing character" not in log


def test_latex_sentence_tables_fit_the_page(tmp_path):
    # the examples table's columns (phenomt.systems.analysis.examples_table), and paths
    sentence = ("The committee, which had met in Strasbourg on Tuesday, decided to postpone "
                "the vote until the next plenary session.")
    examples = pd.DataFrame({"system": ["online-B", "Facebook-FAIR"], "line": [12, 345],
                             "Δ chrF": ["-12.3456", "8.1000"], "source": [sentence] * 2,
                             "reference": [sentence] * 2, "system output": [sentence] * 2,
                             "baseline output": [sentence] * 2})
    path = "results/systems/newstest2019/online-B.sentences.json"
    paths = pd.DataFrame({"system": ["online-B"], "file": [f"{path}|{path}"],
                          "BLEU": ["42.10"]})
    log = _compile(tmp_path, [latex_table(table_record(examples, "Sentences")),
                              latex_table(table_record(paths, "Paths"))])
    assert "Overfull \\hbox" not in log


def test_markdown_cells_cannot_break_the_table(tmp_path):
    frame = pd.DataFrame({"system": ["a|b", "<script>x</script>"],
                          "BLEU [95% CI]": ["20.00 [19.00, 21.00] ▼ *", "—"],
                          "output": [r"C:\dir & \| x", "1 < 2"]})
    write_markdown(frame, tmp_path / "t.md", "T", ["note"])
    # | escaped, < and & inert, the backslash before | doubled, the one before d kept (it
    # escapes nothing); the interval, ▼, * and the dash as they were
    assert (tmp_path / "t.md").read_text(encoding="utf-8") == (
        "# T\n\n"
        "| system               | BLEU [95% CI]            | output           |\n"
        "|:---------------------|:-------------------------|:-----------------|\n"
        r"| a\|b                 | 20.00 [19.00, 21.00] ▼ * | C:\dir \& \\\| x |" "\n"
        r"| \<script>x\</script> | —                        | 1 \< 2           |" "\n"
        "\n- note\n")


def test_latex_tables_are_targets_when_asked():
    config = load_config(ROOT / "config" / "config.yaml")
    tables = Plan(config, str(ROOT)).tables()
    assert "results/tables/systems_bleu.json" in tables
    assert not any(t.endswith(".tex") for t in tables)
    with_latex = Plan({**config, "latex": True}, str(ROOT)).tables()
    assert "results/tables/systems_bleu.tex" in with_latex
    assert len([t for t in with_latex if t.endswith(".tex")]) == len(
        [t for t in tables if t.endswith(".json")])
