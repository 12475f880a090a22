"""The lexical-consistency wing: the layout reader, tagging and pairs, Tables 2–3, annotation
sheets with the inter-annotator F1, conversion of other corpora, and the released set."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from phenomt.cli import build_parser
from phenomt.core.io import InputError
from phenomt.lexcons import chains, convert, pos, sheet, stats
from phenomt.lexcons.testset import TestSet, read_testset
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "lexcons"
MINI = DATA / "mini"


@pytest.fixture()
def mini(tmp_path) -> Path:
    """A writable copy of the hand-made set."""
    shutil.copytree(MINI, tmp_path / "mini")
    return tmp_path / "mini"


# --------------------------------------------------------------------------------------------
# Reader


def test_reads_the_hand_made_set():
    testset = read_testset(MINI)
    assert [d.name for d in testset.documents] == ["test-1", "test-2"]
    assert testset.sentences == 6 and testset.annotated and testset.has_raw
    chain = testset.documents[1].chains[1]
    assert (chain.word, chain.positions, chain.translation) == (
        "政策", ((0, 3), (1, 0), (2, 3)), "policy")


def test_documents_in_numeric_order(tmp_path):
    for n in range(1, 12):
        path = tmp_path / "set" / "zh2en_token" / f"test-{n}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"词{n} ||| word{n}\n", encoding="utf-8")
    names = [d.name for d in read_testset(tmp_path / "set").documents]
    assert names == [f"test-{n}" for n in range(1, 12)]  # test-10 after test-9
    (tmp_path / "set" / "zh2en_token" / "test-5.txt").unlink()
    with pytest.raises(InputError, match="missing test-5"):
        read_testset(tmp_path / "set")


def test_chain_token_mismatch_names_file_and_line(mini):
    (mini / "res" / "test-2.txt").write_text(
        "['政府/0/0', '政府/1/2', 'government']\n['政策/0/3', '政策/1/1', 'policy']\n",
        encoding="utf-8")
    with pytest.raises(InputError, match=r"res/test-2\.txt:2: .*token 1 of sentence 1 is '得到'"):
        read_testset(mini)


def test_chain_position_out_of_range_and_bad_literal(mini):
    path = mini / "res" / "test-1.txt"
    path.write_text("['医生/0/0', '医生/7/0', 'doctor']\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"test-1\.txt:1: .*only 3 sentences"):
        read_testset(mini)
    path.write_text("\n['医生/0/0', '医生/1/2', 'doctor'\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"test-1\.txt:2: not a Python list"):
        read_testset(mini)


def test_line_without_separator_names_file_and_line(mini):
    path = mini / "zh2en_token" / "test-2.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace(" ||| ", " ")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"zh2en_token/test-2\.txt:2: expected one ' \|\|\| '"):
        read_testset(mini)


def test_raw_and_token_line_counts_must_agree(mini):
    path = mini / "zh2en_raw" / "test-1.txt"
    path.write_text("\n".join(path.read_text(encoding="utf-8").splitlines()[:2]) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"zh2en_raw/test-1\.txt:3: has 2 lines but"):
        read_testset(mini)


# --------------------------------------------------------------------------------------------
# Tagging and pairs


def test_class_table_covers_jieba_tags_and_rejects_bad_rows(tmp_path):
    table = pos.read_class_table()
    assert table["n"] == "NOUN" and table["v"] == "VERB" and table["d"] == "ADJ/ADV"
    assert table["uj"] == pos.FUNCTION and table["x"] == pos.FUNCTION
    bad = tmp_path / "t.tsv"
    bad.write_text("tag\tclass\nn\tNOUN\nv\tVERBS\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"t\.tsv:3"):
        pos.read_class_table(bad)


def test_projection_takes_last_character_and_flags_conflicts():
    table = pos.read_class_table()
    # "医生在" as one given token spans jieba's 医生/n and 在/p: last character → p, conflict
    tagged = pos.tag_sentence(["医生在", "医院"], table)
    assert tagged[0].tag == "p" and tagged[0].conflicting
    assert tagged[1].word_class == "NOUN" and not tagged[1].conflicting


def test_annotated_words_are_content_whatever_the_tagger_says():
    testset = read_testset(MINI)
    # a tagger that calls every token a function word: only the annotated words remain
    table = {tag: pos.FUNCTION for tag in pos.read_class_table()}
    pair_set = chains.build_pairs(testset, table)
    assert {p.first for p in pair_set.pairs if p.document == 1} >= {(0, 0), (0, 3)}
    assert all(p.document in (0, 1) for p in pair_set.pairs)
    anno = [p for p in pair_set.pairs if p.in_anno]
    assert len(anno) == 7 and pair_set.anno_pairs_tagger_dropped == 7
    assert all(p.word_class == "OTHERS" for p in pair_set.pairs)


def test_every_annotated_pair_is_an_l_all_pair():
    testset = read_testset(MINI)
    pair_set = chains.build_pairs(testset)
    all_pairs = {(p.document, p.first, p.second) for p in pair_set.pairs}
    for number, document in enumerate(testset.documents):
        for a, b in chains.annotated_pairs(document):
            assert (number, a, b) in all_pairs
    assert sum(p.in_anno for p in pair_set.pairs) == 7  # 3 + 1 + 3 chain pairs
    assert len(pair_set.pairs) == 16
    assert Counter(p.word_class for p in pair_set.pairs) == {"NOUN": 15, "VERB": 1}


def test_majority_class_breaks_ties_in_paper_order():
    assert chains.majority_class(["VERB", "NOUN"]) == "NOUN"
    assert chains.majority_class(["FUNCTION", "FUNCTION", "VERB"]) == "FUNCTION"


def test_tables_2_and_3_on_the_fixture():
    testset = read_testset(MINI)
    t3 = stats.table3(testset).set_index("distance")
    # annotated pairs: 医生 00-12 (1), 00-20 (2), 12-20 (1); 政府 00-12 (1);
    # 政策 03-10 (1), 03-23 (2), 10-23 (1)
    assert t3["pairs"].to_dict() == {"0": 0, "1": 5, "2": 2, "3": 0, "4": 0, "ge5": 0}
    assert t3.loc["ge5", "paper pairs"] == "8610"
    t2 = stats.table2(chains.build_pairs(testset)).set_index("class")
    assert t2.loc["NOUN", "pairs"] == 7 and t2.loc["VERB", "pairs"] == 0
    assert t2.loc["NOUN", "paper pairs"] == "14349"


# --------------------------------------------------------------------------------------------
# Sheets


def test_iaa_f1_on_hand_made_sheets():
    """Shared document test-1 only. Pairs (A / B): 医生 00-12 consistent / consistent,
    00-20 not / consistent, 12-20 not / consistent; 医院 02-10 consistent / not.
    TP 1, FP 2, FN 1: precision 1/3, recall 1/2, F1 = 2·(1/6)/(5/6) = 0.4."""
    result = sheet.iaa_f1(sheet.read_sheet(DATA / "sheets" / "a.tsv"),
                          sheet.read_sheet(DATA / "sheets" / "b.tsv"))
    assert (result["documents"], result["pairs"]) == (1, 4)
    assert (result["tp"], result["fp"], result["fn"]) == (1, 2, 1)
    assert result["f1"] == pytest.approx(0.4)


def test_sheet_round_trip_rebuilds_the_released_chains(tmp_path, mini):
    testset = read_testset(MINI)
    path = tmp_path / "sheet.tsv"
    assert sheet.write_sheet(path, testset, sheet.released_chains(testset)) == 8
    lines = path.read_text(encoding="utf-8").splitlines()
    assert "【医生】" in lines[1]
    labelled = [lines[0]] + [line + "1" for line in lines[1:]]
    path.write_text("\n".join(labelled) + "\n", encoding="utf-8")
    shutil.rmtree(mini / "res")
    sheet.write_res(mini / "res", testset, sheet.read_sheet(path))
    again = read_testset(mini)
    assert [d.chains for d in again.documents] == [
        tuple(c.__class__(c.word, c.positions, c.translation, n)
              for n, c in enumerate(d.chains, start=1)) for d in testset.documents]


def test_unlabelled_row_names_file_and_line(tmp_path):
    path = tmp_path / "s.tsv"
    rows = (DATA / "sheets" / "a.tsv").read_text(encoding="utf-8").splitlines()
    rows[3] = rows[3][:-1]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"s\.tsv:4: label must be 0 or 1"):
        sheet.read_sheet(path)


# --------------------------------------------------------------------------------------------
# Conversion


def test_convert_by_document_ids_and_counts(tmp_path):
    src = tmp_path / "src.zh"
    ref = tmp_path / "ref.en"
    ids = tmp_path / "ids"
    src.write_text("医生在医院工作。\n医院很忙。\n政府宣布新政策。\n", encoding="utf-8")
    ref.write_text("The doctor works at the hospital.\nThe hospital is busy.\n"
                   "The government announced a new policy.\n", encoding="utf-8")
    ids.write_text("doc-a\ndoc-a\ndoc-b\n", encoding="utf-8")
    assert convert.convert(src, ref, tmp_path / "out", docids=ids) == 2
    testset = read_testset(tmp_path / "out")
    assert not testset.annotated and testset.has_raw
    assert testset.documents[0].source[0] == ("医生", "在", "医院", "工作", "。")
    assert testset.documents[0].reference[1][-1] == "."
    counts = tmp_path / "n_sent"
    counts.write_text("1\n2\n", encoding="utf-8")
    assert convert.convert(src, ref, tmp_path / "out2", n_sent=counts) == 2
    assert read_testset(tmp_path / "out2").documents[1].sentences == 2
    ids.write_text("doc-a\ndoc-b\ndoc-a\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"ids:3: document 'doc-a' continues"):
        convert.convert(src, ref, tmp_path / "out3", docids=ids)


def test_cli_registers_the_wing_commands(tmp_path):
    modules = ["phenomt.lexcons.chains", "phenomt.lexcons.stats", "phenomt.lexcons.sheet",
               "phenomt.lexcons.convert", "phenomt.lexcons.results"]
    parser = build_parser(modules)
    out = tmp_path / "iaa.json"
    args = parser.parse_args(["lexcons", "iaa", "--a", str(DATA / "sheets" / "a.tsv"),
                              "--b", str(DATA / "sheets" / "b.tsv"), "--output", str(out)])
    assert args.handler(args) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["f1"] == pytest.approx(0.4)
    for command in (["lexcons", "tables", "--testset", "x", "--table-prefix", "y",
                     "--stats", "z"],
                    ["lexcons", "convert", "--src", "a", "--ref", "b", "--docids", "c",
                     "--output", "d"],
                    ["lexcons", "subset", "--testset", "x", "--documents", "2", "--output", "d"],
                    ["lexcons", "model-tables", "--ltcr", "a=b", "--ref", "r", "--scale", "s",
                     "--testset-note", "t", "--table-prefix", "p"],
                    ["lexcons", "sets-table", "--ltcr", "a/b=c", "--output-md", "m",
                     "--output-csv", "c"],
                    ["lexcons", "sheet-export", "--testset", "x", "--output", "y"],
                    ["lexcons", "sheet-import", "--testset", "x", "--sheet", "s",
                     "--outdir", "d"]):
        assert callable(parser.parse_args(command).handler)


# --------------------------------------------------------------------------------------------
# The released set


def test_released_set_counts_exactly(mirror):
    testset = read_testset(mirror / "lexcons")
    assert len(testset.documents) == 310 and testset.sentences == 5051
    assert testset.documents[9].name == "test-10"
    assert sum(len(d.chains) for d in testset.documents) == 4240
    counts = stats.annotated_distance_counts(testset)
    assert [counts[b] for b in ("0", "1", "2", "3", "4", "ge5")] == [
        945, 2571, 2013, 1729, 1424, 8610]
    assert sum(counts.values()) == 17292


def test_released_annotated_pairs_are_l_all_pairs(mirror):
    """On the first 20 documents (tagging all 310 takes too long for a unit test)."""
    full = read_testset(mirror / "lexcons")
    part = TestSet(full.root, full.documents[:20], full.annotated, full.has_raw)
    pair_set = chains.build_pairs(part)
    expected = sum(len(chains.annotated_pairs(d)) for d in part.documents)
    assert sum(p.in_anno for p in pair_set.pairs) == expected > 0


def test_tables_command_writes_tables_1_to_3_and_the_calibration(tmp_path):
    from phenomt.cli import main

    prefix, stats = tmp_path / "tables" / "lexcons_table", tmp_path / "stats.json"
    assert main(["lexcons", "tables", "--testset", str(MINI), "--table-prefix", str(prefix),
                 "--stats", str(stats)]) == 0
    for n in (1, 2, 3):
        assert (tmp_path / "tables" / f"lexcons_table{n}.md").read_text(encoding="utf-8")
    record = json.loads(stats.read_text(encoding="utf-8"))
    calibration = record["reference_calibration"]
    assert calibration["pairs_anno"] == record["table1"]["anno_consistent_by_reference"] + \
        record["table1"]["anno_inconsistent_by_reference"] + \
        record["table1"]["anno_unjudged_by_reference"]
    assert "paper pairs" in (tmp_path / "tables" / "lexcons_table3.md").read_text(
        encoding="utf-8")


def test_figure3_draws_both_series_deterministically(tmp_path):
    from phenomt.cli import main

    curve = {"sizes": [1, 2], "l_all": [
        {"documents": 1, "mean": 0.5, "interval": [0.4, 0.6]},
        {"documents": 2, "mean": 0.55, "interval": [0.5, 0.6]}],
        "l_anno": [{"documents": 1, "mean": None, "interval": None},
                   {"documents": 2, "mean": 0.8, "interval": [0.7, 0.9]}]}
    record = tmp_path / "stats.json"
    record.write_text(json.dumps({"reference_calibration": {"curve": curve}}))
    outputs = [tmp_path / "f.png", tmp_path / "f.svg", tmp_path / "g.svg"]
    assert main(["lexcons", "figure3", "--record", str(record), "--key",
                 "reference_calibration", "--output", *map(str, outputs[:2])]) == 0
    assert outputs[0].read_bytes().startswith(b"\x89PNG")
    assert main(["lexcons", "figure3", "--record", str(record), "--key",
                 "reference_calibration", "--output", str(outputs[2])]) == 0
    assert outputs[1].read_bytes() == outputs[2].read_bytes()  # same curve, same bytes
    assert main(["lexcons", "figure3", "--record", str(record),
                 "--output", str(tmp_path / "h.png")]) == 2  # no curve at the top level


def test_ltcr_records_carry_the_sample_size_curve():
    from phenomt.core.metrics import ltcr

    assert ltcr.curve_sizes(310) == [31, 62, 93, 124, 155, 186, 217, 248, 279, 310]
    assert ltcr.curve_sizes(3) == [1, 2, 3]
