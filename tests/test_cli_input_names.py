"""What a user types names files and selects data: language codes, MQM categories and metric
columns, sheet rows and config keys are checked before anything is written, and a bad one
is a one-line error naming the option, or the file and line (never a traceback, never a
file outside the output folder, never a half-written folder)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import yaml

from phenomt.cli import build_parser, main
from phenomt.core import cliargs
from phenomt.core.io import InputError
from phenomt.plan.config import SCHEMA, load_config, load_yaml
from tests.conftest import ROOT, error_of, run_snakemake

SYSTEMS = ROOT / "tests" / "data" / "systems"
MINI = ROOT / "tests" / "data" / "lexcons" / "mini"
BAD_CODES = ["/../../ESCAPED", "../../x", "a b", "DE", "d", "de-en", ""]


def files_under(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*")}


# --------------------------------------------------------------------------- language codes

def test_the_language_code_type_is_the_config_schemas_rule():
    """One rule: the argparse type's pattern is the schema's ``$defs.lang``."""
    assert load_yaml(SCHEMA)["$defs"]["lang"]["pattern"] == f"^{cliargs.LANG_CODE.pattern}$"
    assert cliargs.language_code("zh") == "zh" and cliargs.language_code("src") == "src"
    for code in BAD_CODES:
        with pytest.raises(argparse.ArgumentTypeError, match="expected a language code"):
            cliargs.language_code(code)


def _language_options() -> list[tuple[str, str]]:
    parser = build_parser(["phenomt.ldd.locality", "phenomt.systems.cli"])
    groups = next(a for a in parser._actions if a.dest == "command").choices
    found = []
    for group in ("locality", "systems"):
        commands = next(a for a in groups[group]._actions if a.dest.startswith("command_"))
        for name, command in commands.choices.items():
            found += [(f"{group} {name}", action.option_strings[0], action.type)
                      for action in command._actions if action.dest.endswith("_lang")]
    return found


def test_every_language_option_takes_a_language_code():
    options = _language_options()
    assert len(options) >= 10  # locality prepare, systems prepare-mqm, score, analyse ...
    assert [(c, o) for c, o, kind in options if kind is not cliargs.language_code] == []


@pytest.fixture
def parallel(tmp_path: Path) -> tuple[Path, Path]:
    """40 pairs of 5 tokens, in their own folder."""
    folder = tmp_path / "in"
    folder.mkdir()
    src, tgt = folder / "lp.de", folder / "lp.en"
    src.write_text("".join(f"a{i} b c d e\n" for i in range(40)), encoding="utf-8")
    tgt.write_text("".join(f"x{i} y z\n" for i in range(40)), encoding="utf-8")
    return src, tgt


def _prepare(src: Path, tgt: Path, out: Path, *extra: str) -> list[object]:
    return ["locality", "prepare", "--src", src, "--tgt", tgt, "--setting", "regular",
            "--n-test", "5", "--n-valid", "5", *extra, "--out-dir", out]


@pytest.mark.parametrize("option", ["--src-lang", "--tgt-lang"])
@pytest.mark.parametrize("code", ["/../../LOC_ESCAPED", "../../x", "a b"])
def test_locality_prepare_refuses_a_language_that_is_no_code(tmp_path, capsys, parallel,
                                                             option, code):
    before = files_under(tmp_path)
    err = error_of(capsys, *_prepare(*parallel, tmp_path / "lo" / "p12", option, code))
    assert f"argument {option}: expected a language code" in err and repr(code) in err
    assert files_under(tmp_path) == before  # nothing inside --out-dir, nothing outside it


def test_locality_prepare_takes_the_workflows_codes_and_checks_file_suffixes(
        tmp_path, capsys, parallel):
    out = tmp_path / "lo"
    assert main([str(a) for a in _prepare(*parallel, out, "--src-lang", "src",
                                          "--tgt-lang", "tgt")]) == 0
    assert {"train.src", "valid.tgt", "test.ids"} <= {p.name for p in out.iterdir()}
    bare = parallel[0].with_name("lp")
    bare.write_bytes(parallel[0].read_bytes())
    err = error_of(capsys, *_prepare(bare, parallel[1], tmp_path / "lo2"))
    assert f"{bare}: cannot tell the language from the file name (no suffix)" in err
    err = error_of(capsys, *_prepare(*parallel, tmp_path / "lo3", "--tgt-lang", "de"))
    assert "source and target language are both 'de'" in err
    assert not (tmp_path / "lo2").exists() and not (tmp_path / "lo3").exists()


@pytest.mark.parametrize("option", ["--src-lang", "--tgt-lang"])
def test_prepare_mqm_refuses_a_language_that_is_no_code(tmp_path, capsys, option):
    langs = {"--src-lang": "zh", "--tgt-lang": "en", option: "/../../ESCAPED"}
    err = error_of(capsys, "systems", "prepare-mqm", "--annotations", SYSTEMS / "mqm.tsv",
                   *[x for pair in langs.items() for x in pair],
                   "--outdir", tmp_path / "mqm" / "out")
    assert f"argument {option}: expected a language code" in err
    assert files_under(tmp_path) == set()


# --------------------------------------------------------------------------- systems mqm

def _mqm(tmp_path: Path, *extra: object) -> list[object]:
    return ["systems", "mqm", "--annotations", SYSTEMS / "mqm.tsv", *extra,
            "--output", tmp_path / "mqm.json"]


def test_mqm_refuses_an_unknown_category_listing_the_known(tmp_path, capsys):
    err = error_of(capsys, *_mqm(tmp_path, "--categories", "Accuracy/Addition", "Nope"))
    assert "argument --categories: unknown 'Nope'" in err
    # the file's categories and the default ones (absent from this file) are known
    assert "Accuracy/Addition, Fluency/Inconsistency, Terminology/Inconsistent use" in err
    assert not (tmp_path / "mqm.json").exists()


@pytest.fixture
def records(tmp_path: Path) -> dict[str, Path]:
    found = {"red": {"system": "D", "main": "all", "subsets": {"all": {"drr": 0.05}}},
             "bleu": {"bleu": {"score": 30.0}, "chrf": {"score": 50.0}},
             "ltcr": {"l_all": None, "pairs_all": 0}}
    for name, record in found.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(record), encoding="utf-8")
    return {name: tmp_path / f"{name}.json" for name in found}


def test_mqm_refuses_a_metric_no_record_has(tmp_path, capsys, records):
    err = error_of(capsys, *_mqm(tmp_path, "--records", records["red"], "--metric", "zzz"))
    assert "argument --metric: no record has 'zzz'; their columns: drr" in err
    # a record that is not LTCR's, named as one
    err = error_of(capsys, *_mqm(tmp_path, "--named-records", f"A={records['bleu']}",
                                 "--metric", "l_all"))
    assert "argument --metric: no record has 'l_all'; their columns: bleu, chrf" in err
    err = error_of(capsys, *_mqm(tmp_path, "--records", records["red"], "--named-records",
                                 f"A={records['bleu']}", "--metric", "drr"))
    assert f"{records['bleu']}: has none of the --metric columns (drr); its columns: bleu" in err
    assert not (tmp_path / "mqm.json").exists()


def test_mqm_takes_a_metric_whose_value_is_null(tmp_path, capsys, records):
    """A null value is a metric without a value (too few pairs), not a misspelled one."""
    assert main([str(a) for a in _mqm(tmp_path, "--records", records["red"], "--named-records",
                                      f"A={records['ltcr']}", "--metric", "drr", "l_all")]) == 0
    assert json.loads((tmp_path / "mqm.json").read_text("utf-8"))["metrics"]["l_all"] == {}


# --------------------------------------------------------------------------- sheets

def _labelled(tmp_path: Path, name: str, row: int, column: int, value: str) -> Path:
    """The exported sheet of the mini set, every row labelled 1, one cell changed."""
    sheet = tmp_path / "all.tsv"
    if not sheet.exists():
        assert main(["lexcons", "sheet-export", "--testset", str(MINI), "--output",
                     str(sheet)]) == 0
    lines = [line.split("\t") for line in sheet.read_text("utf-8").splitlines()]
    for fields in lines[1:]:
        fields[-1] = "1"
    lines[row - 1][column] = value
    path = tmp_path / name
    path.write_text("".join("\t".join(f) + "\n" for f in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("column, value, message", [
    (2, "WRONG", "'WRONG' is not the token at (1, 0) of test-2, '政策' is"),
    (4, "99", "sentence 1 of test-2 has no token 99 (it has 0 to 4)"),
    (4, "-1", "sentence 1 of test-2 has no token -1"),
    (3, "7", "test-2 has no sentence 7 (it has 0 to 2)"),
    (0, "test-9", "document 'test-9' is not in"),
])
def test_sheet_import_checks_every_row_before_writing(tmp_path, capsys, column, value, message):
    sheet = _labelled(tmp_path, "bad.tsv", 8, column, value)
    err = error_of(capsys, "lexcons", "sheet-import", "--testset", MINI, "--sheet", sheet,
                   "--outdir", tmp_path / "res")
    assert f"{sheet}:8: {message}" in err
    assert not (tmp_path / "res").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_sheet_import_replaces_a_res_folder_but_no_other(tmp_path, capsys):
    sheet = _labelled(tmp_path, "good.tsv", 1, 8, "label")
    out = tmp_path / "res"
    out.mkdir()
    (out / "test-7.txt").write_text("stale\n", encoding="utf-8")
    assert main(["lexcons", "sheet-import", "--testset", str(MINI), "--sheet", str(sheet),
                 "--outdir", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["test-1.txt", "test-2.txt"]
    err = error_of(capsys, "lexcons", "sheet-import", "--testset", MINI, "--sheet", sheet,
                   "--outdir", tmp_path)
    assert f"{tmp_path}: is not a res layer folder (it holds all.tsv, good.tsv, res)" in err
    assert sheet.is_file()


def test_sheet_export_refuses_an_unknown_document(tmp_path, capsys):
    err = error_of(capsys, "lexcons", "sheet-export", "--testset", MINI, "--documents",
                   "test-1", "test-99", "--output", tmp_path / "s.tsv")
    assert f"{MINI}: has no document test-99 (--documents); its documents: test-1, test-2" in err
    assert not (tmp_path / "s.tsv").exists()


def test_ldd_sheet_import_names_the_line_that_is_not_utf8(tmp_path, capsys):
    sheet = tmp_path / "bad.txt"
    sheet.write_bytes(b"set\tphenomenon\tdirection\tcorrect\n"
                      b"a\tparticle\tde-en\ty\nb\xff\tparticle\tde-en\ty\n")
    err = error_of(capsys, "ldd", "sheet-import", "--sheet", sheet, "--md", tmp_path / "v.md",
                   "--csv", tmp_path / "v.csv")
    assert f"{sheet}:3: invalid UTF-8 at byte 1 of the line" in err
    assert not (tmp_path / "v.md").exists()


# --------------------------------------------------------------------------- lexcons convert

def test_convert_errors_name_the_convert_command(tmp_path, capsys):
    err = error_of(capsys, "lexcons", "convert", "--src", "a", "--ref", "b",
                   "--output", tmp_path / "o")
    assert "phenomt lexcons convert: error: give exactly one of --docids and --n-sent" in err


# --------------------------------------------------------------------------- configs

def _config(tmp_path: Path, change) -> Path:
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    change(config)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_a_yaml_syntax_error_names_the_file_and_line(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text("outdir: out\ncorpora:\n  a: [1,\n  b: 2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"c\.yaml:5: not valid YAML: did not find expected"):
        load_config(path)
    err = error_of(capsys, "systems", "evaluate", "--configfile", path, "--testset", "x",
                   "--hyp", tmp_path / "hyp.txt")
    assert f"{path}:5: not valid YAML" in err and len(err.strip().splitlines()) == 1
    path.write_bytes(b"outdir: out\nseed: \xff\n")
    with pytest.raises(InputError, match=r"c\.yaml:2: invalid UTF-8 at byte 6 of the line"):
        load_config(path)


def test_a_config_that_is_no_mapping_is_refused(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("- outdir\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"c\.yaml:1: a config is a mapping of settings"):
        load_config(path)


def test_corpora_that_are_no_mapping_are_refused_by_the_schema(tmp_path):
    path = _config(tmp_path, lambda c: c.update(corpora=[1, 2]))
    with pytest.raises(InputError, match=r"broken\.yaml: invalid config at \$\.corpora: "
                                         r"\[1, 2\] is not of type 'object'"):
        load_config(path)


def test_a_corpus_neither_catalogued_nor_declared_says_so(tmp_path):
    path = _config(tmp_path, lambda c: c["corpora"].update({"newstest2017.zh-em": {}}))
    with pytest.raises(InputError) as caught:
        load_config(path)
    assert str(caught.value) == (
        f"{path}: invalid config at $.corpora.newstest2017.zh-em: corpus 'newstest2017.zh-em' "
        "is not in the data catalog (phenomt/plan/catalog.yaml) and is not declared in full "
        "in the config ('langs' is a required property); the catalog's nearest: "
        "'newstest2017.zh-en', 'newstest2021.zh-en', 'newstest2019.zh-en'")


def _bad_baseline(config: dict) -> None:
    config["systems"]["testsets"]["newstest2021.zh-en"]["baseline"] = "Nobody"


def test_a_baseline_that_is_no_output_names_the_file_and_key(tmp_path):
    path = _config(tmp_path, _bad_baseline)
    with pytest.raises(InputError, match=r"broken\.yaml: invalid config at \$\.systems\.testsets"
                                         r"\.newstest2021\.zh-en\.baseline: 'Nobody' is not one "
                                         r"of its outputs \(DIDI-NLP, "):
        load_config(path)


@pytest.mark.parametrize("change, message", [
    (lambda c: c.update(corpora=[1, 2]), "invalid config at $.corpora: [1, 2] is not of type"),
    (_bad_baseline, "invalid config at $.systems.testsets.newstest2021.zh-en.baseline: "
                    "'Nobody' is not one of its outputs"),
], ids=["corpora-list", "baseline"])
def test_the_workflow_reports_config_errors_naming_the_file(tmp_path, change, message):
    path = _config(tmp_path, change)
    result = run_snakemake("-n", "--nolock", "--configfile", str(path), "--directory",
                           str(tmp_path), timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"{path}: {message}" in output
    assert "AttributeError" not in output and "ValueError" not in output
