"""Tables are declared once (phenomt.plan.tables): every table a run makes has a declaration,
every declaration's command exists, and no rule or plan module spells a table's path."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import pytest

from phenomt.plan import Plan, load_config, tables
from tests.conftest import ROOT, TINY_CONFIG

CONFIGS = [TINY_CONFIG, ROOT / "config" / "config.yaml", ROOT / "config" / "findings.yaml"]


def _stem(path: str) -> str:
    return PurePosixPath(path).name.rsplit(".", 1)[0]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.name)
def test_every_table_of_a_run_is_declared_once(config):
    plan = Plan(load_config(config))
    files = [f for f in plan.tables() if "/tables/" in f]
    assert files
    for path in files:
        table = tables.spec(_stem(path))
        assert path.rsplit(".", 1)[1] in table.formats
        assert path == plan.table(_stem(path), path.rsplit(".", 1)[1])


def test_a_file_finds_its_family_and_a_pattern_its_members():
    assert tables.spec("ldd_reorder_grid.news.de-en").name == (
        "ldd_reorder_grid.{lcorpus}.{direction}")
    assert tables.spec("systems_mqm.wmt21-ted.zh-en").chapter == "systems"
    members = {t.name for t in tables.declared("ldd_table{num}")}
    assert members == {f"ldd_table{n}" for n in range(1, 7)}
    assert len(tables.declared("{table}")) == len(tables.TABLES)
    assert [t.name for t in tables.declared("systems_ldd_table4.{testset}")] == [
        "systems_ldd_table{num}.{testset}"]
    with pytest.raises(KeyError, match="no declared table"):
        tables.spec("ldd_table7")
    with pytest.raises(KeyError, match="no md file"):
        tables.table_path("out", "learning_curve.m", "md")
    assert tables.table_files("out", "bleu") == {"md": "out/tables/bleu.md",
                                                 "csv": "out/tables/bleu.csv",
                                                 "json": "out/tables/bleu.json"}
    assert tables.table_files("out", "{table}") == {"md": "out/tables/{table}.md",
                                                    "csv": "out/tables/{table}.csv",
                                                    "json": "out/tables/{table}.json"}
    assert tables.table_files("out", "learning_curve.m") == {
        "csv": "out/tables/learning_curve.m.csv"}


def test_every_declared_command_exists_and_every_chapter_is_known(capsys):
    from phenomt.cli import build_parser

    parser = build_parser()
    for table in tables.TABLES.values():
        with pytest.raises(SystemExit) as done:  # --help exits 0 for a known command only
            parser.parse_args([*table.command.split(), "--help"])
        assert done.value.code == 0, table.command
        assert table.chapter in tables.CHAPTERS
        assert table.caption_text().startswith(f"**{table.title}**")
    capsys.readouterr()


def test_report_labels_and_captions_come_from_the_declaration():
    plan = Plan(load_config(TINY_CONFIG))
    assert plan.report.table_label("nat_table5") == "nat_table5 (paper: Table 5)"
    assert plan.report.table_label("nat_speed") == "nat_speed"
    assert plan.report.caption("training").startswith("**Training runs**")
    assert "(Sections 4.1-4.2 (reordering sets))" in plan.report.caption(
        "ldd_reorder_grid.news.de-en")


def test_table_list_prints_every_declaration(capsys):
    from phenomt.cli import main

    assert main(["table", "list"]) == 0
    out = capsys.readouterr().out
    for name in tables.TABLES:
        assert name in out


RULE_TABLE_PATH = re.compile(r"\{OUT\}/tables/")
PLAN_TABLE_PATH = re.compile(r"/tables/")


def test_no_table_path_outside_its_declaration():
    """Rules and plan modules name tables; only phenomt.plan.tables spells their paths."""
    rules = [f"{p.name}:{n}" for p in sorted((ROOT / "workflow" / "rules").glob("*.smk"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if RULE_TABLE_PATH.search(line)]
    plans = [f"{p.name}:{n}" for p in sorted((ROOT / "src" / "phenomt" / "plan").glob("*.py"))
             if p.name != "tables.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if PLAN_TABLE_PATH.search(line) and "logs/tables" not in line]
    assert not rules and not plans, [*rules, *plans]


def test_the_readme_lists_every_declared_table():
    # README "What you get": one row per declaration, placeholders in angle brackets
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_cells = re.findall(r"^\| (`[^|]+`) \|", readme, flags=re.MULTILINE)
    listed = {name for cell in first_cells for name in re.findall(r"`([^`]+)`", cell)}
    declared = {re.sub(r"\{(\w+)\}", r"<\1>", name) for name in tables.TABLES}
    assert declared <= listed, f"not in README: {sorted(declared - listed)}"
