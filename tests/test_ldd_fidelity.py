"""Reordering-set fidelity grid: intersection, punctuation links, >= against >, files and CLI.

The expected counts are worked out by hand in the comments next to each case.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import pytest

from phenomt.cli import build_parser
from phenomt.core import io as core_io
from phenomt.core.io import InputError
from phenomt.ldd import fidelity
from phenomt.ldd.fidelity import (
    drop_punctuation,
    intersection,
    is_punctuation,
    make_pair,
    max_distance,
    meets,
    paper_size,
    read_pairs,
    reorder_grid,
)

WORDS = [f"w{k}" for k in range(10)]


def _with(tokens: list[str], index: int, token: str) -> list[str]:
    out = list(tokens)
    out[index] = token
    return out


# Four pairs of ten tokens a side; links are (source, target), 0-based.
# P1: no punctuation; (1, 6) in every alignment: distance 5 everywhere.
# P2: source token 9 is "."; forward (0,0) (9,2) [7, touches "."]; reverse (0,0) (3,9) [6];
#     gdfa = union; intersection = {(0,0)} [0].
# P3: target token 8 is "«"; every alignment (2,8) (4,4): 6, but 0 once "«" links are dropped.
# P4: no links at all: never selected.
SRC = [WORDS, _with(WORDS, 9, "."), WORDS, WORDS]
TGT = [WORDS, WORDS, _with(WORDS, 8, "«"), WORDS]
FORWARD = [{(1, 6)}, {(0, 0), (9, 2)}, {(2, 8), (4, 4)}, set()]
REVERSE = [{(1, 6)}, {(0, 0), (3, 9)}, {(2, 8), (4, 4)}, set()]
GDFA = [{(1, 6)}, {(0, 0), (9, 2), (3, 9)}, {(2, 8), (4, 4)}, set()]

# Largest distance per pair (P1, P2, P3, P4; -1 = no link):
#   forward kept 5 7 6 -1, dropped 5 0 0 -1;  reverse kept 5 6 6 -1, dropped 5 6 0 -1;
#   gdfa kept 5 7 6 -1, dropped 5 6 0 -1;     intersection kept 5 0 6 -1, dropped 5 0 0 -1.
# Counted for (d, comparison) = (5 >=), (5 >), (6 >=), (6 >), (7 >=), (7 >):
EXPECTED = {
    ("forward", "kept"): [3, 2, 2, 1, 1, 0],
    ("forward", "dropped"): [1, 0, 0, 0, 0, 0],
    ("reverse", "kept"): [3, 2, 2, 0, 0, 0],
    ("reverse", "dropped"): [2, 1, 1, 0, 0, 0],
    ("gdfa", "kept"): [3, 2, 2, 1, 1, 0],
    ("gdfa", "dropped"): [2, 1, 1, 0, 0, 0],
    ("intersection", "kept"): [2, 1, 1, 0, 0, 0],
    ("intersection", "dropped"): [1, 0, 0, 0, 0, 0],
}
THRESHOLDS = [(5, ">="), (5, ">"), (6, ">="), (6, ">"), (7, ">="), (7, ">")]


def _pairs() -> list[fidelity.SentencePair]:
    return [make_pair(s, t, f, r, g)
            for s, t, f, r, g in zip(SRC, TGT, FORWARD, REVERSE, GDFA, strict=True)]


def _pharaoh(links: set[tuple[int, int]]) -> str:
    return " ".join(f"{i}-{j}" for i, j in sorted(links))


def _write_inputs(tmp_path: Path) -> dict[str, Path]:
    files = {"src": [" ".join(s) for s in SRC], "tgt": [" ".join(t) for t in TGT],
             "forward": [_pharaoh(x) for x in FORWARD],
             "reverse": [_pharaoh(x) for x in REVERSE], "gdfa": [_pharaoh(x) for x in GDFA]}
    paths = {}
    for name, lines in files.items():
        paths[name] = tmp_path / f"in.{name}"
        paths[name].write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return paths


@pytest.mark.parametrize(("token", "expected"), [
    (".", True), (",", True), ("«", True), ("»", True), ("--", True), ("%", True),
    ("&", True), ("(", True), ("„", True), ("...", True),
    ("$", False), ("€", False), ("+", False), ("a.", False), ("U.S.", False), ("1", False),
    ("", False),
])
def test_punctuation_is_unicode_category_p(token, expected):
    assert is_punctuation(token) is expected


def test_intersection_and_punctuation_dropping():
    assert intersection({(0, 0), (1, 2), (3, 1)}, {(1, 2), (3, 3), (0, 0)}) == {(0, 0), (1, 2)}
    assert intersection({(0, 1)}, {(1, 0)}) == frozenset()
    src, tgt = ["Ja", ",", "gut"], ["Yes", "good", "!"]
    # (1, *) touches the source comma, (*, 2) the target "!"; only (0,0) and (2,1) remain.
    links = {(0, 0), (1, 0), (2, 1), (2, 2), (0, 2)}
    assert drop_punctuation(links, src, tgt) == {(0, 0), (2, 1)}


def test_max_distance_and_comparisons():
    assert max_distance({(0, 0), (2, 7), (9, 4)}) == 5
    assert max_distance(set()) == -1
    assert meets(5, 5, ">=") and not meets(5, 5, ">")
    assert meets(6, 5, ">") and not meets(4, 5, ">=")
    assert not meets(-1, 0, ">=")  # a pair without links is never selected, not even at d = 0
    with pytest.raises(ValueError, match="unknown comparison"):
        meets(5, 5, "=")


def test_gdfa_is_computed_when_not_given():
    # No shared link, so growing adds nothing; final-and adds each link whose two words are
    # both unaligned: forward (0,0) first, then reverse (1,1).
    pair = make_pair(["a", "b"], ["x", "y"], {(0, 0)}, {(1, 1)})
    assert pair.gdfa == {(0, 0), (1, 1)}
    assert pair.links("intersection") == frozenset()
    # Identical directions symmetrise to themselves.
    same = make_pair(["a", "b", "c"], ["x", "y", "z"], {(0, 2), (2, 0)}, {(0, 2), (2, 0)})
    assert same.gdfa == {(0, 2), (2, 0)}


def test_grid_counts_by_hand():
    frame = reorder_grid(_pairs(), 5, 7)
    assert list(frame.columns) == list(fidelity.COLUMNS)
    assert len(frame) == 3 * 4 * 2 * 2
    assert (frame["pairs"] == 4).all()
    for (alignment, punctuation), counts in EXPECTED.items():
        for (d, comparison), count in zip(THRESHOLDS, counts, strict=True):
            row = frame[(frame["alignment"] == alignment) & (frame["punctuation"] == punctuation)
                        & (frame["d"] == d) & (frame["comparison"] == comparison)]
            assert row["selected"].tolist() == [count], (alignment, punctuation, d, comparison)
            assert row["percent"].tolist() == [100 * count / 4]
    assert frame["paper"].isna().all()


def test_paper_number_only_at_its_distance():
    frame = reorder_grid(_pairs(), 4, 6, paper=306.0)
    assert (frame.loc[frame["d"] == 5, "paper"] == 306.0).all()
    assert frame.loc[frame["d"] != 5, "paper"].isna().all()
    with pytest.raises(ValueError, match="min <= max"):
        reorder_grid(_pairs(), 6, 5)


def test_paper_size_needs_the_papers_corpus_size():
    size, note = paper_size("news/de-en", 3000)
    assert size == 306 and "Table 2" in note
    assert paper_size("news/de-en", 4)[0] is None
    assert paper_size("nowhere/xx-yy", 3000)[0] is None
    assert paper_size(None, 3000)[0] is None


def test_read_pairs_matches_in_memory_pairs(tmp_path):
    paths = _write_inputs(tmp_path)
    read = read_pairs(paths["src"], paths["tgt"], paths["forward"], paths["reverse"],
                      paths["gdfa"])
    assert read == _pairs()
    # Without the gdfa file it is computed: P2's (9,2) and (3,9) touch no aligned word of the
    # other, so final-and adds both, giving the hand-made union again.
    computed = read_pairs(paths["src"], paths["tgt"], paths["forward"], paths["reverse"])
    assert [p.gdfa for p in computed] == [frozenset(g) for g in GDFA]


@pytest.mark.parametrize(("name", "lines", "message", "line"), [
    ("forward", ["1-6", "0-0 9-2", "2-8 4-4"], "has 3 lines but", None),
    ("reverse", ["1-6", "0-0 3:9", "2-8 4-4", ""], "malformed alignment point", 2),
    ("forward", ["1-6", "0-0 9-2", "2-8 4-10", ""], "out of range", 3),
    ("gdfa", ["1-6", "9-2 3-9", "2-8 4-4", ""], "not the symmetrisation", 2),
])
def test_bad_input_names_file_and_line(tmp_path, name, lines, message, line):
    paths = _write_inputs(tmp_path)
    paths[name].write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    with pytest.raises(InputError, match=message) as err:
        read_pairs(paths["src"], paths["tgt"], paths["forward"], paths["reverse"],
                   paths["gdfa"])
    assert err.value.path == str(paths[name])
    assert err.value.line == line


def _run_cli(argv: list[str]) -> int:
    parser = build_parser(("phenomt.ldd.cli", "phenomt.ldd.fidelity"))
    args = parser.parse_args(argv)
    return args.handler(args)


def _cli_args(paths: dict[str, Path], md: Path, csv: Path, *extra: str) -> list[str]:
    return ["ldd", "reorder-grid", "--src", str(paths["src"]), "--tgt", str(paths["tgt"]),
            "--forward", str(paths["forward"]), "--reverse", str(paths["reverse"]),
            "--gdfa", str(paths["gdfa"]), "--out-md", str(md), "--out-csv", str(csv), *extra]


def test_cli_writes_tidy_csv_and_wide_markdown(tmp_path):
    paths = _write_inputs(tmp_path)
    md, csv = tmp_path / "out" / "grid.md", tmp_path / "out" / "grid.csv"
    assert _run_cli(_cli_args(paths, md, csv, "--min", "5", "--max", "7")) == 0
    frame = pd.read_csv(csv)
    assert len(frame) == 48
    pd.testing.assert_frame_equal(frame, reorder_grid(_pairs(), 5, 7), check_dtype=False)
    text = md.read_text(encoding="utf-8")
    # Wide rows: d, comparison, then forward, forward −punct, reverse, ... intersection −punct.
    assert "| 5   | >=           | 3         | 1" in text
    assert "intersection −punct" in text
    assert "No paper number" in text  # four pairs are not the paper's 3,000
    leftovers = [p.name for p in md.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_cli_rejects_min_above_max(tmp_path):
    paths = _write_inputs(tmp_path)
    with pytest.raises(InputError, match="--min 9 is larger than --max 6"):
        _run_cli(_cli_args(paths, tmp_path / "g.md", tmp_path / "g.csv", "--min", "9",
                           "--max", "6"))
    with pytest.raises(SystemExit):
        _run_cli(_cli_args(paths, tmp_path / "g.md", tmp_path / "g.csv", "--min", "-1"))


def test_cli_output_is_written_atomically(tmp_path, monkeypatch):
    paths = _write_inputs(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    md, csv = out / "grid.md", out / "grid.csv"
    md.write_text("old md\n", encoding="utf-8")
    csv.write_text("old csv\n", encoding="utf-8")

    def failing_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    # A failure at the final rename leaves the old files whole and no temporary file behind.
    monkeypatch.setattr(core_io.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        _run_cli(_cli_args(paths, md, csv))
    assert md.read_text(encoding="utf-8") == "old md\n"
    assert csv.read_text(encoding="utf-8") == "old csv\n"
    assert sorted(p.name for p in out.iterdir()) == ["grid.csv", "grid.md"]
    monkeypatch.undo()

    # Bad input fails before anything is written.
    paths["reverse"].write_text("1-6\n", encoding="utf-8")
    with pytest.raises(InputError):
        _run_cli(_cli_args(paths, md, csv))
    assert csv.read_text(encoding="utf-8") == "old csv\n"


def test_command_joins_the_ldd_group():
    parser = build_parser(("phenomt.ldd.cli", "phenomt.ldd.fidelity"))
    group = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    ldd = group.choices["ldd"]
    commands = next(a for a in ldd._actions if isinstance(a, argparse._SubParsersAction))
    assert {"reorder-grid", "score", "select"} <= set(commands.choices)
