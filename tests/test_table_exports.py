"""Every table as JSON beside its CSV, and as LaTeX on request."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from phenomt.cli import build_parser
from phenomt.core.io import InputError
from phenomt.core.tables import latex_table, parse_cell, table_record, write_table
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
    assert "sys\\_name" in text and "a\\&b" in text and "-1.00 [-2.00, 0.00] *" in text
    assert "\\caption{BLEU of 50\\% \\{test\\}}" in text
    assert "\\toprule" in text and text.startswith("\\begin{table}")
    # LaTeX shows the cells as printed: a bucket label "1" and a p "1.0000" keep their form
    printed = latex_table(table_record(pd.DataFrame({"bucket": ["1"], "p": ["1.0000"],
                                                     "x": [None]}), "t"))
    assert "1 & 1.0000 & -- \\\\" in printed
    (tmp_path / "t.json").write_text(json.dumps(record), encoding="utf-8")
    assert run("table", "latex", "--table", tmp_path / "t.json", "--output",
               tmp_path / "t.tex") == 0
    assert (tmp_path / "t.tex").read_text(encoding="utf-8") == text
    (tmp_path / "bad.json").write_text('{"rows": []}', encoding="utf-8")
    with pytest.raises(InputError, match="bad.json: not a table's JSON export"):
        run("table", "latex", "--table", tmp_path / "bad.json", "--output", tmp_path / "b.tex")
    assert not (tmp_path / "b.tex").exists()


def test_latex_tables_are_targets_when_asked():
    config = load_config(ROOT / "config" / "config.yaml")
    tables = Plan(config, str(ROOT)).tables()
    assert "results/tables/systems_bleu.json" in tables
    assert not any(t.endswith(".tex") for t in tables)
    with_latex = Plan({**config, "latex": True}, str(ROOT)).tables()
    assert "results/tables/systems_bleu.tex" in with_latex
    assert len([t for t in with_latex if t.endswith(".tex")]) == len(
        [t for t in tables if t.endswith(".json")])
