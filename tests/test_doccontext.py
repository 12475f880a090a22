"""Context side and concatenation baseline on a hand-made two-document corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from phenomt.cli import build_parser
from phenomt.core.doccontext import (
    concat_lines,
    context_counts,
    context_lines,
    current_sentence,
    document_positions,
    split_concat_lines,
)
from phenomt.core.io import InputError

# Document "news-1" has four sentences, "news-2" two.
DOC_IDS = ["news-1", "news-1", "news-1", "news-1", "news-2", "news-2"]
SOURCES = ["the cat sat", "it slept", "then it woke", "it ate", "dogs bark", "they run"]
TARGETS = ["die Katze saß", "sie schlief", "dann erwachte sie", "sie aß", "Hunde bellen",
           "sie rennen"]


def test_positions_and_counts():
    assert document_positions(DOC_IDS) == [0, 1, 2, 3, 0, 1]
    assert context_counts(DOC_IDS, 2) == [0, 1, 2, 2, 0, 1]
    assert context_counts(DOC_IDS, 1) == [0, 1, 1, 1, 0, 1]


def test_context_side_by_hand():
    assert context_lines(SOURCES, DOC_IDS) == [
        "",
        "the cat sat",
        "the cat sat it slept",
        "it slept then it woke",
        "",  # a new document starts: nothing from news-1 leaks in
        "dogs bark",
    ]
    assert context_lines(SOURCES, DOC_IDS, size=1) == [
        "", "the cat sat", "it slept", "then it woke", "", "dogs bark"]
    assert context_lines(SOURCES, DOC_IDS, size=3, separator="<s>")[3] == (
        "the cat sat <s> it slept <s> then it woke")


def test_context_skips_empty_sentences_and_normalises_spaces():
    lines = ["a  b", "", "c"]
    assert context_lines(lines, ["d"] * 3) == ["", "a b", "a b"]


def test_concatenation_by_hand():
    assert concat_lines(SOURCES, DOC_IDS) == [
        "the cat sat",
        "the cat sat <brk> it slept",
        "the cat sat <brk> it slept <brk> then it woke",
        "it slept <brk> then it woke <brk> it ate",
        "dogs bark",
        "dogs bark <brk> they run",
    ]
    assert concat_lines(TARGETS, DOC_IDS, size=1)[3] == "dann erwachte sie <brk> sie aß"
    # An empty previous sentence keeps its separator, so the counts stay predictable.
    assert concat_lines(["x", "", "y"], ["d"] * 3) == ["x", "x <brk>", "x <brk> <brk> y"]


def test_split_keeps_the_current_sentence():
    assert current_sentence("a b <brk> c <brk> d e") == "d e"
    assert current_sentence("no separator here") == "no separator here"
    assert current_sentence("a <brk>") == ""
    assert current_sentence("a || b", separator="||") == "b"
    concatenated = concat_lines(TARGETS, DOC_IDS)
    result = split_concat_lines(concatenated, expected=context_counts(DOC_IDS))
    assert result.lines == TARGETS and result.mismatched == []
    hyps = ["die Katze", "sie <brk> schlief", "schlief dann <brk> erwachte", "x <brk> y <brk> z",
            "<brk> Hunde", "sie rennen"]
    result = split_concat_lines(hyps, expected=[0, 1, 2, 2, 0, 1])
    assert result.lines == ["die Katze", "schlief", "erwachte", "z", "Hunde", "sie rennen"]
    assert result.mismatched == [3, 5, 6]


def test_bad_input_names_file_and_line():
    with pytest.raises(InputError, match=r"ids.txt:6: .*5 lines in src.txt but 6"):
        context_lines(SOURCES[:5], DOC_IDS, source="src.txt", docids_source="ids.txt")
    with pytest.raises(InputError) as err:
        concat_lines(SOURCES, DOC_IDS[:4], source="src.txt", docids_source="ids.txt")
    assert (err.value.path, err.value.line) == ("src.txt", 5)
    with pytest.raises(InputError, match=r"ids.txt:3: .*'a' resumes"):
        document_positions(["a", "b", "a"], "ids.txt")
    with pytest.raises(InputError, match=r"ids.txt:2: empty document id"):
        document_positions(["a", " "], "ids.txt")
    with pytest.raises(InputError, match=r"src.txt:2: .*already contains the separator"):
        concat_lines(["a", "b <brk> c"], ["d", "d"], source="src.txt")
    with pytest.raises(InputError, match=r"hyp.txt:2: 1 lines but 2"):
        split_concat_lines(["a"], expected=[0, 1], source="hyp.txt")
    with pytest.raises(ValueError, match="single token"):
        concat_lines(SOURCES, DOC_IDS, separator="a b")
    with pytest.raises(ValueError, match="at least 1"):
        context_lines(SOURCES, DOC_IDS, size=0)


def _run(argv: list[str]) -> int:
    args = build_parser(["phenomt.core.doccontext"]).parse_args(argv)
    return args.handler(args)


def test_command_line(tmp_path: Path):
    src, tgt, ids = tmp_path / "src.txt", tmp_path / "tgt.txt", tmp_path / "ids.txt"
    src.write_text("".join(f"{s}\n" for s in SOURCES), encoding="utf-8")
    tgt.write_text("".join(f"{s}\n" for s in TARGETS), encoding="utf-8")
    ids.write_text("".join(f"{d}\n" for d in DOC_IDS), encoding="utf-8")
    assert _run(["doc", "context", "--source", str(src), "--docids", str(ids),
                 "--output", str(tmp_path / "ctx.txt")]) == 0
    ctx = (tmp_path / "ctx.txt").read_text(encoding="utf-8").split("\n")
    assert ctx == ["", "the cat sat", "the cat sat it slept", "it slept then it woke", "",
                   "dogs bark", ""]  # six lines, the first and fifth empty
    assert _run(["doc", "concat", "--input", str(tgt), "--docids", str(ids), "--size", "1",
                 "--separator", "@SEP@", "--output", str(tmp_path / "cat.txt")]) == 0
    cat = (tmp_path / "cat.txt").read_text(encoding="utf-8").splitlines()
    assert cat[1] == "die Katze saß @SEP@ sie schlief" and cat[4] == "Hunde bellen"
    assert _run(["doc", "split-concat", "--input", str(tmp_path / "cat.txt"),
                 "--separator", "@SEP@", "--docids", str(ids), "--size", "1",
                 "--output", str(tmp_path / "kept.txt")]) == 0
    assert (tmp_path / "kept.txt").read_text(encoding="utf-8").splitlines() == TARGETS
    with pytest.raises(InputError, match="ids.txt:3"):
        ids.write_text("news-1\nnews-2\nnews-1\nnews-2\nnews-2\nnews-2\n", encoding="utf-8")
        _run(["doc", "concat", "--input", str(src), "--docids", str(ids),
              "--output", str(tmp_path / "bad.txt")])
    assert not (tmp_path / "bad.txt").exists()
    with pytest.raises(SystemExit):
        _run(["doc", "context", "--source", str(src), "--docids", str(ids), "--size", "0",
              "--output", str(tmp_path / "x.txt")])


def test_select_documents_drops_lines_outside_documents():
    from phenomt.core.doccontext import select_documents

    columns, ids = select_documents([["a", "b", "c"], ["A", "B", "C"]], ["0:d", "-", "0:d"])
    assert columns == [["a", "c"], ["A", "C"]] and ids == ["0:d", "0:d"]
    with pytest.raises(InputError, match="2 lines"):
        select_documents([["a", "b"]], ["-"])
