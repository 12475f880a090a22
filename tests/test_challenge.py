"""Lexical and reordering long-distance-dependency challenge sets.

Expected answers were worked out by hand from the fixtures in ``tests/data/ldd``:

German (de_lexical.conllu), (sentence, head, dependent, distance):
  particle:  (1,2,5,2) (4,2,7,4: "zum" is two words) (5,2,7,4: empty node 5.1 not counted)
             (7,2,3,0: legacy "prt") (8,2,8,5) (9,2,4,1) (9,7,11,3)
  reflexive: (2,2,3,0) (6,6,3,2)
English (en_lexical.conllu):
  preposition-stranding: (1,4,5,0) (2,6,9,2) (6,4,5,0: obl:arg); sentence 3's obl is a NOUN
  reflexive: (4,2,3,0); particle: (5,2,5,2)
Reordering (reorder.*), largest |i - j| per pair: 6, 0, 4, 5.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from phenomt.core.bins import DistanceBin
from phenomt.core.cliargs import CommandTree
from phenomt.core.conllu import parse_conllu, read_conllu
from phenomt.core.io import InputError
from phenomt.ldd.extract import (
    EXACT_BINS,
    LEXICAL_BINS,
    LEXICAL_SUFFIXES,
    MINIMUM_BINS,
    PARTICLE,
    PREPOSITION_STRANDING,
    REFLEXIVE,
    REORDER_SUFFIXES,
    Instance,
    ReorderInstance,
    check_phenomenon,
    extract_lexical,
    extract_reorder,
    lexical_instances,
    mark_words,
    parse_alignment,
    phenomenon_pairs,
    register_cli,
    reorder_instances,
    select_ids,
    word_distance,
)

DATA = Path(__file__).parent / "data" / "ldd"
DE = DATA / "de_lexical.conllu"
EN = DATA / "en_lexical.conllu"
DE_SRC, DE_REF = DATA / "de_lexical.de", DATA / "de_lexical.en"
R_SRC, R_TGT, R_ALIGN = DATA / "reorder.de", DATA / "reorder.en", DATA / "reorder.align"

DE_PARTICLES = [(1, 2, 5, 2), (4, 2, 7, 4), (5, 2, 7, 4), (7, 2, 3, 0), (8, 2, 8, 5),
                (9, 2, 4, 1), (9, 7, 11, 3)]


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def ids_of(prefix: Path) -> list[int]:
    return [int(x) for x in read(Path(f"{prefix}.ids")).split()]


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="phenomt")
    register_cli(CommandTree(parser))
    args = parser.parse_args(argv)
    return args.handler(args)


# --- distance convention and bins -------------------------------------------------------------

def test_distance_counts_words_strictly_between() -> None:
    assert word_distance(2, 3) == 0
    assert word_distance(3, 2) == 0
    assert word_distance(2, 5) == 2
    assert word_distance(11, 7) == 3
    with pytest.raises(ValueError):
        word_distance(4, 4)


def test_bins_minimum_against_exact() -> None:
    assert [b.label for b in MINIMUM_BINS] == ["all", "ge1", "ge2", "ge3"]
    assert [b.label for b in EXACT_BINS] == [f"eq{k}" for k in range(6)]
    assert len(LEXICAL_BINS) == 10
    assert DistanceBin(2).admits(2) and DistanceBin(2).admits(7) and not DistanceBin(2).admits(1)
    assert DistanceBin(2, exact=True).admits(2)
    assert not DistanceBin(2, exact=True).admits(3)
    with pytest.raises(ValueError):
        DistanceBin(-1)


# --- lexical instances --------------------------------------------------------------------------

def test_particle_instances_with_multiword_tokens_and_empty_nodes() -> None:
    found = lexical_instances(read_conllu(DE), PARTICLE, "de")
    assert [(i.sentence, i.head, i.dependent, i.distance) for i in found] == DE_PARTICLES
    assert all(i.phenomenon == PARTICLE for i in found)


def test_reflexive_instances() -> None:
    assert lexical_instances(read_conllu(DE), REFLEXIVE, "de") == [
        Instance(2, 2, 3, 0, REFLEXIVE), Instance(6, 6, 3, 2, REFLEXIVE)]
    assert lexical_instances(read_conllu(EN), REFLEXIVE, "en") == [
        Instance(4, 2, 3, 0, REFLEXIVE)]


def test_preposition_stranding_needs_adp_and_obl() -> None:
    found = lexical_instances(read_conllu(EN), PREPOSITION_STRANDING, "en")
    assert [(i.sentence, i.head, i.dependent, i.distance) for i in found] == [
        (1, 4, 5, 0), (2, 6, 9, 2), (6, 4, 5, 0)]


def test_preposition_stranding_is_english_only() -> None:
    check_phenomenon(PREPOSITION_STRANDING, "en")
    for lang in ("de", None):
        with pytest.raises(ValueError, match="English sources only"):
            lexical_instances(read_conllu(DE), PREPOSITION_STRANDING, lang)
    with pytest.raises(ValueError, match="unknown lexical phenomenon"):
        check_phenomenon("idiom", "en")


def test_root_and_unannotated_heads_give_no_instance() -> None:
    text = "\n".join([
        "1\tsich\ter\tPRON\tPRF\tReflex=Yes\t0\troot\t_\t_",
        "2\tan\tan\tADP\tPTKVZ\t_\t_\t_\t_\t_",
        "3\tan\tan\tADP\tPTKVZ\t_\t1\tcompound:prt\t_\t_",
    ])
    (sentence,) = parse_conllu(text)
    assert phenomenon_pairs(sentence, REFLEXIVE) == []
    assert phenomenon_pairs(sentence, PARTICLE) == [(1, 3)]


# --- selection ----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("distance", "exact", "expected"),
    [
        (0, False, [1, 4, 5, 7, 8, 9]),
        (1, False, [1, 4, 5, 8, 9]),
        (2, False, [1, 4, 5, 8, 9]),
        (3, False, [4, 5, 8, 9]),
        (4, False, [4, 5, 8]),
        (6, False, []),
        (0, True, [7]),
        (1, True, [9]),
        (2, True, [1]),
        (3, True, [9]),
        (4, True, [4, 5]),
        (5, True, [8]),
    ],
)
def test_particle_bins(distance: int, exact: bool, expected: list[int]) -> None:
    found = lexical_instances(read_conllu(DE), PARTICLE, "de")
    assert select_ids(found, DistanceBin(distance, exact)) == expected


@pytest.mark.parametrize(
    ("distance", "exact", "expected"),
    [(0, False, [2, 6]), (1, False, [6]), (3, False, []), (0, True, [2]), (1, True, []),
     (2, True, [6])],
)
def test_reflexive_bins(distance: int, exact: bool, expected: list[int]) -> None:
    found = lexical_instances(read_conllu(DE), REFLEXIVE, "de")
    assert select_ids(found, DistanceBin(distance, exact)) == expected


# --- marking ------------------------------------------------------------------------------------

def test_marking_stars_whole_multiword_token() -> None:
    text = "\n".join([
        "1\tVoglio\tvolere\tVERB\t_\t_\t0\troot\t_\t_",
        "2-3\tlavarmi\t_\t_\t_\t_\t_\t_\t_\t_",
        "2\tlavar\tlavare\tVERB\t_\t_\t1\txcomp\t_\t_",
        "3\tmi\tmi\tPRON\t_\tReflex=Yes\t2\texpl\t_\t_",
        "4\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_",
    ])
    (sentence,) = parse_conllu(text)
    assert phenomenon_pairs(sentence, REFLEXIVE) == [(2, 3)]
    assert mark_words(sentence, [2, 3]) == "Voglio *lavarmi* ."
    assert mark_words(sentence, [1, 3]) == "*Voglio* *lavarmi* ."


# --- lexical extraction to files ----------------------------------------------------------------

def test_extract_lexical_writes_every_file(tmp_path: Path) -> None:
    prefix = tmp_path / "news.de.particle.ge3"
    result = extract_lexical(DE, PARTICLE, prefix, min_distance=3, lang="de", src_path=DE_SRC,
                             ref_path=DE_REF)
    assert result.ids == (4, 5, 8, 9)
    assert result.total == 9
    assert result.instances == 4
    assert [p.name for p in result.files] == [prefix.name + s for s in LEXICAL_SUFFIXES]
    assert read(Path(f"{prefix}.ids")) == "4\n5\n8\n9\n"
    src_lines = read(DE_SRC).splitlines()
    ref_lines = read(DE_REF).splitlines()
    assert read(Path(f"{prefix}.src")).splitlines() == [src_lines[i - 1] for i in (4, 5, 8, 9)]
    assert read(Path(f"{prefix}.ref")).splitlines() == [ref_lines[i - 1] for i in (4, 5, 8, 9)]
    # Only the instances meeting the bound are starred: in sentence 9, "rufe ... an" is at
    # distance 1 and stays unmarked.
    assert read(Path(f"{prefix}.src_marked")).splitlines() == [
        "Er *fängt* zum Glück heute *an* .",
        "Anna *kauft* Brot , Paul Milch *ein* .",
        "Sie *stellt* das neue Buch ihres Freundes *vor* .",
        "Ich rufe ihn an und er *ruft* mich heute Abend *zurück* .",
    ]
    blocks = read(DE).split("\n\n")
    assert read(Path(f"{prefix}.conllu")) == "".join(blocks[i - 1] + "\n\n" for i in (4, 5, 8, 9))


def test_extract_lexical_exact_bin_and_marks_all_qualifying_instances(tmp_path: Path) -> None:
    prefix = tmp_path / "eq4"
    result = extract_lexical(DE, PARTICLE, prefix, min_distance=4, exact=True)
    assert result.ids == (4, 5)
    prefix = tmp_path / "all"
    extract_lexical(DE, PARTICLE, prefix, min_distance=0)
    marked = read(Path(f"{prefix}.src_marked")).splitlines()
    assert marked[-1] == "Ich *rufe* ihn *an* und er *ruft* mich heute Abend *zurück* ."


def test_source_defaults_to_text_comment_or_tokens(tmp_path: Path) -> None:
    # Without "# text", sentence 6's source line is built from its tokens.
    no_text = tmp_path / "no_text.conllu"
    no_text.write_text(read(DE).replace("# text = Er hat sich gestern sehr gefreut .\n", ""),
                       encoding="utf-8")
    prefix = tmp_path / "refl"
    extract_lexical(no_text, REFLEXIVE, prefix)
    assert read(Path(f"{prefix}.src")) == "Ich wasche mich .\nEr hat sich gestern sehr gefreut .\n"
    assert not Path(f"{prefix}.ref").exists()


def test_empty_set_is_written_as_empty_files(tmp_path: Path) -> None:
    prefix = tmp_path / "refl.ge3"
    result = extract_lexical(DE, REFLEXIVE, prefix, min_distance=3, src_path=DE_SRC,
                             ref_path=DE_REF)
    assert result.ids == ()
    for suffix in LEXICAL_SUFFIXES:
        assert Path(f"{prefix}{suffix}").read_bytes() == b""


def test_lexical_rerun_is_byte_identical(tmp_path: Path) -> None:
    prefix = tmp_path / "set"
    extract_lexical(EN, PREPOSITION_STRANDING, prefix, 0, lang="en")
    first = {s: Path(f"{prefix}{s}").read_bytes() for s in (".src", ".ids", ".src_marked",
                                                            ".conllu")}
    extract_lexical(EN, PREPOSITION_STRANDING, prefix, 0, lang="en")
    assert {s: Path(f"{prefix}{s}").read_bytes() for s in first} == first
    assert first[".ids"] == b"1\n2\n6\n"
    assert first[".src_marked"].decode().splitlines() == [
        "The dog I *talked* *to* barked .",
        "This is the man I *gave* the book *to* .",
        "This bed was *slept* *in* .",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"set{s}" for s in first)  # no temporary files left behind


def test_sentence_count_mismatch_names_both_files(tmp_path: Path) -> None:
    short = tmp_path / "short.de"
    short.write_text("\n".join(read(DE_SRC).splitlines()[:8]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        extract_lexical(DE, PARTICLE, tmp_path / "x", src_path=short)
    message = str(caught.value)
    assert str(DE) in message and str(short) in message
    assert "9 sentences" in message and "8 lines" in message
    with pytest.raises(InputError, match="short.de"):
        extract_lexical(DE, PARTICLE, tmp_path / "x", src_path=DE_SRC, ref_path=short)
    assert not Path(f"{tmp_path / 'x'}.src").exists()


def test_malformed_conllu_reports_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.conllu"
    lines = read(DE).splitlines()
    lines[11] = lines[11].replace("\t", " ", 1)  # line 12: sentence 2, word 1
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{bad}:12: expected 10 tab-separated columns"):
        extract_lexical(bad, PARTICLE, tmp_path / "x")


# --- reordering ---------------------------------------------------------------------------------

def test_parse_alignment() -> None:
    assert parse_alignment("0-1 2-0\n", 3, 2) == [(0, 1), (2, 0)]
    assert parse_alignment("", 3, 2) == []
    with pytest.raises(InputError, match="malformed alignment point '0:1'"):
        parse_alignment("0:1", 3, 2, "a.align", 4)


@pytest.mark.parametrize(
    ("d", "expected"),
    [(4, [1, 3, 4]), (5, [1, 4]), (6, [1]), (7, [])],
)
def test_reorder_threshold_around_d(d: int, expected: list[int]) -> None:
    # Pair 3's largest shift is 4 (d - 1 for d = 5), pair 4's is 5 (d), pair 1's is 6 (d + 1).
    found = reorder_instances(R_SRC, R_TGT, R_ALIGN, d)
    assert select_ids(found, DistanceBin(d)) == expected


def test_reorder_instances_default_d5() -> None:
    assert reorder_instances(R_SRC, R_TGT, R_ALIGN) == [
        ReorderInstance(1, 7, 1, 6), ReorderInstance(4, 7, 2, 5)]


def test_extract_reorder_files_and_rerun(tmp_path: Path) -> None:
    prefix = tmp_path / "reorder.d4"
    result = extract_reorder(R_SRC, R_TGT, R_ALIGN, prefix, 4)
    assert result.ids == (1, 3, 4)
    assert [p.name for p in result.files] == [prefix.name + s for s in REORDER_SUFFIXES]
    src, tgt = read(R_SRC).splitlines(), read(R_TGT).splitlines()
    assert read(Path(f"{prefix}.src")).splitlines() == [src[0], src[2], src[3]]
    assert read(Path(f"{prefix}.ref")).splitlines() == [tgt[0], tgt[2], tgt[3]]
    assert read(Path(f"{prefix}.ids")) == "1\n3\n4\n"
    assert read(Path(f"{prefix}.src_marked")).splitlines() == [
        "Ich habe *gestern* mit meinem Bruder *Fußball* *gespielt* .",
        "Morgen wird er das Buch seiner Schwester *lesen* .",
        "Gestern hat sie den Brief ihrer Mutter *geschrieben* .",
    ]
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    extract_reorder(R_SRC, R_TGT, R_ALIGN, prefix, 4)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before

    empty = tmp_path / "reorder.d7"
    assert extract_reorder(R_SRC, R_TGT, R_ALIGN, empty, 7).ids == ()
    for suffix in REORDER_SUFFIXES:
        assert Path(f"{empty}{suffix}").read_bytes() == b""


def test_alignment_index_out_of_range(tmp_path: Path) -> None:
    alignment = tmp_path / "bad.align"
    lines = read(R_ALIGN).splitlines()
    lines[1] = "0-0 1-1 2-2 3-4"  # the target "He comes tomorrow ." has 4 tokens: 0..3
    alignment.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        extract_reorder(R_SRC, R_TGT, alignment, tmp_path / "x")
    assert caught.value.path == str(alignment) and caught.value.line == 2
    assert "3-4 out of range" in str(caught.value)
    lines[1] = "4-0"  # the source "Er kommt morgen ." has 4 tokens
    alignment.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{alignment}:2: alignment point 4-0 out of range"):
        reorder_instances(R_SRC, R_TGT, alignment)


def test_reorder_line_count_mismatch(tmp_path: Path) -> None:
    alignment = tmp_path / "short.align"
    alignment.write_text("0-0\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        extract_reorder(R_SRC, R_TGT, alignment, tmp_path / "x")
    assert str(alignment) in str(caught.value) and str(R_SRC) in str(caught.value)


# --- command line -------------------------------------------------------------------------------

def test_cli_extract_lexical(tmp_path: Path) -> None:
    prefix = tmp_path / "cli.particle.eq2"
    code = run_cli(["extract", "lexical", "--conllu", str(DE), "--phenomenon", "particle",
                    "--min-distance", "2", "--exact", "--lang", "de", "--src", str(DE_SRC),
                    "--ref", str(DE_REF), "--out-prefix", str(prefix)])
    assert code == 0
    assert read(Path(f"{prefix}.ids")) == "1\n"
    assert read(Path(f"{prefix}.ref")) == "He will call her tomorrow .\n"
    assert read(Path(f"{prefix}.src_marked")) == "Er *ruft* sie morgen *an* .\n"


def test_cli_extracts_several_bins_as_one_bin_at_a_time(tmp_path: Path) -> None:
    common = ["extract", "lexical", "--conllu", str(DE), "--phenomenon", "particle", "--lang",
              "de", "--src", str(DE_SRC), "--ref", str(DE_REF)]
    assert run_cli([*common, "--bins", "all", "ge1", "eq2", "eq3",
                    "--out-prefix", str(tmp_path / "many")]) == 0
    for label, options in (("all", []), ("ge1", ["--min-distance", "1"]),
                           ("eq2", ["--min-distance", "2", "--exact"]),
                           ("eq3", ["--min-distance", "3", "--exact"])):
        assert run_cli([*common, *options, "--out-prefix", str(tmp_path / f"one.{label}")]) == 0
        for ext in (".src", ".ref", ".ids", ".src_marked", ".conllu"):
            assert read(tmp_path / f"many.{label}{ext}") == read(tmp_path / f"one.{label}{ext}")
    assert read(tmp_path / "many.eq2.ids") == "1\n"
    assert read(tmp_path / "many.eq3.ids") == "9\n"  # ruft (mich heute Abend) zurück
    for bad in (["--bins", "ge0"], ["--bins", "ge1", "--min-distance", "1"]):
        with pytest.raises(InputError, match="--bins"):
            run_cli([*common, *bad, "--out-prefix", str(tmp_path / "bad")])
    assert not list(tmp_path.glob("bad*"))


def test_cli_stranding_on_german_fails(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code = run_cli(["extract", "lexical", "--conllu", str(DE), "--phenomenon",
                    "preposition-stranding", "--lang", "de", "--out-prefix", str(tmp_path / "p")])
    assert code == 2
    assert "English sources only" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(SystemExit):
        run_cli(["extract", "lexical", "--conllu", str(DE), "--phenomenon", "particle",
                 "--min-distance", "-1", "--out-prefix", str(tmp_path / "p")])


def test_cli_extract_reorder(tmp_path: Path) -> None:
    prefix = tmp_path / "cli.reorder"
    code = run_cli(["extract", "reorder", "--src", str(R_SRC), "--tgt", str(R_TGT),
                    "--alignment", str(R_ALIGN), "--min-distance", "5",
                    "--out-prefix", str(prefix)])
    assert code == 0
    assert read(Path(f"{prefix}.ids")) == "1\n4\n"
