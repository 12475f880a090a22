"""The locality-bias experiment: length choice, held-out split, σ, settings and Table 1.

Hand-worked expectations:

* σ = (2 0 3 1) moves the token at position i to position σ(i): ``a b c d`` → out[2]=a,
  out[0]=b, out[3]=c, out[1]=d → ``b d a c``; σ⁻¹ = (1 3 0 2).
* The paper's σ = (11 5 9 15 8 14 10 1 3 16 12 2 0 6 17 4 13 7) on t0 … t17: position p holds
  the token i with σ(i) = p, i.e. t12 t7 t11 t8 t15 t1 t13 t17 t4 t2 t6 t0 t10 t16 t5 t3 t9 t14.
* Table 1 scores below: transformer/learned REGULAR 20, 22, 24 → mean 22, sample std 2,
  min–max 20–24; PERMUTED 19, 21 → mean 20, std √2, Δ −2; REVERSED 23 → Δ +1; PERPOSEMB 21.5 →
  Δ −0.5; transformer/sinusoidal REGULAR 30 (one seed: std undefined), PERMUTED 27, 29 → 28,
  Δ −2; lstm REGULAR 15, 17 → 16, PERMUTED 10, 12 → 11, Δ −5.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from phenomt.cli import build_parser
from phenomt.core.io import InputError, read_lines
from phenomt.core.permutation import (
    format_permutation,
    inverse_permutation,
    parse_permutation,
    permute_tokens,
    validate_permutation,
)
from phenomt.ldd.locality import (
    PAPER_PERMUTATION,
    Score,
    Setting,
    aggregate_scores,
    choose_permutation,
    display_table,
    heldout_sizes,
    indices_of_length,
    lang_suffix,
    length_histogram,
    most_common_length,
    paper_scores,
    prepare,
    random_permutation,
    read_paper_scores,
    read_scores,
    scores_frame,
    split_heldout,
    transform_source,
)

# --- length -------------------------------------------------------------------------------


def test_most_common_length_counts_whitespace_tokens():
    sources = ["a b", "a  b\tc", "x y", "", "p q"]
    assert length_histogram(sources) == {2: 3, 3: 1}
    assert most_common_length(sources) == 2


def test_most_common_length_tie_goes_to_the_shorter_length():
    assert most_common_length(["a b c", "a b", "c d e", "d e"]) == 2
    assert most_common_length(["a b c", "c d e", "a b c d e", "a b c d e"]) == 3


def test_most_common_length_ignores_empty_lines():
    assert most_common_length(["", "", "", "a"]) == 1
    with pytest.raises(ValueError):
        most_common_length(["", "  "])


def test_indices_of_length():
    assert indices_of_length(["a b", "a", "c d", "e f g"], 2) == [0, 2]


# --- held-out split -----------------------------------------------------------------------


def test_heldout_sizes_as_requested_while_half_stays_for_training():
    assert heldout_sizes(100, 30, 20) == (30, 20, [])


def test_heldout_sizes_fall_back_to_a_fraction_and_say_so():
    test, valid, notes = heldout_sizes(40, 1000, 500, fallback_fraction=0.1)
    assert (test, valid) == (4, 4)
    assert len(notes) == 1 and "only 40" in notes[0] and "1000" in notes[0]
    assert heldout_sizes(40, 1000, 0)[:2] == (4, 0)
    assert heldout_sizes(5, 1000, 500)[:2] == (1, 1)  # at least one sentence each


@pytest.mark.parametrize("args", [(2, 1, 0), (100, 0, 1), (100, 1, -1)])
def test_heldout_sizes_rejects_impossible_requests(args):
    with pytest.raises(ValueError):
        heldout_sizes(*args)


def test_split_is_a_deterministic_partition():
    a = split_heldout(50, 5, 3, seed=7)
    b = split_heldout(50, 5, 3, seed=7)
    assert a == b
    assert (len(a.train), len(a.valid), len(a.test)) == (42, 3, 5)
    assert sorted(a.train + a.valid + a.test) == list(range(50))
    for part in (a.train, a.valid, a.test):
        assert part == sorted(part)
    assert split_heldout(50, 5, 3, seed=8).test != a.test


# --- σ ------------------------------------------------------------------------------------


def test_paper_permutation_is_valid():
    assert validate_permutation(PAPER_PERMUTATION, 18) == PAPER_PERMUTATION


@pytest.mark.parametrize("perm", [[0, 0, 1], [1, 2], [0, 2, 3], [0, -1], [0, 1.0], [True, 0]])
def test_validate_permutation_rejects_non_permutations(perm):
    with pytest.raises(ValueError):
        validate_permutation(perm)


def test_validate_permutation_checks_the_length():
    with pytest.raises(ValueError, match="18 tokens"):
        validate_permutation([1, 0], 18)


def test_parse_and_format_permutation():
    assert parse_permutation("(2, 0, 3, 1)") == (2, 0, 3, 1)
    assert parse_permutation("2 0 3 1") == (2, 0, 3, 1)
    assert format_permutation((2, 0, 3, 1)) == "2,0,3,1"
    for bad in ("", "a,b", "0,0"):
        with pytest.raises(ValueError):
            parse_permutation(bad)


def test_inverse_permutation():
    assert inverse_permutation((2, 0, 3, 1)) == (1, 3, 0, 2)


def test_random_permutation_is_seeded_and_moves_something():
    perm = random_permutation(7, seed=3)
    assert perm == random_permutation(7, seed=3)
    assert validate_permutation(perm, 7) and perm != tuple(range(7))
    assert random_permutation(2, seed=0) == (1, 0)  # the only non-identity
    with pytest.raises(ValueError):
        random_permutation(1, seed=0)


def test_choose_permutation_uses_the_paper_for_length_18():
    assert choose_permutation(18, seed=5) == (PAPER_PERMUTATION, "paper")
    perm, source = choose_permutation(6, seed=5)
    assert source == "random" and perm == random_permutation(6, 5)


# --- settings on a hand-made sentence -----------------------------------------------------


def test_permute_tokens_moves_token_i_to_sigma_i():
    assert permute_tokens(["a", "b", "c", "d"], (2, 0, 3, 1)) == ["b", "d", "a", "c"]


def test_paper_permutation_on_a_sentence():
    tokens = [f"t{i}" for i in range(18)]
    expected = ["t12", "t7", "t11", "t8", "t15", "t1", "t13", "t17", "t4",
                "t2", "t6", "t0", "t10", "t16", "t5", "t3", "t9", "t14"]
    assert permute_tokens(tokens, PAPER_PERMUTATION) == expected


def test_transform_source_per_setting():
    line = "a  b c d"
    perm = (2, 0, 3, 1)
    assert transform_source(line, Setting.REGULAR, perm) == line
    assert transform_source(line, "perposemb", perm) == line
    assert transform_source(line, "reversed", perm) == "d c b a"
    assert transform_source(line, "permuted", perm) == "b d a c"
    with pytest.raises(ValueError):
        transform_source("a b c", "permuted", perm)
    with pytest.raises(ValueError):
        transform_source(line, "shuffled", perm)


def test_lang_suffix():
    assert lang_suffix("x/train.tok.de") == "de"
    assert lang_suffix("train.en.gz") == "en"
    with pytest.raises(ValueError):
        lang_suffix("train")


# --- preparing data -----------------------------------------------------------------------

SOURCES = [
    "w1 w2 w3 w4",   # 1  length 4
    "x y",           # 2
    "a b c d",       # 3  length 4
    "e f g h",       # 4  length 4
    "one two three",  # 5
    "i j k l",       # 6  length 4
    "m n o p",       # 7  length 4
    "q r s t",       # 8  length 4
    "",              # 9
    "u v w x",       # 10 length 4
]


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    src, tgt = tmp_path / "train.de", tmp_path / "train.en"
    src.write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    tgt.write_text("\n".join(f"T{i}" for i in range(1, len(SOURCES) + 1)) + "\n",
                   encoding="utf-8")
    return src, tgt


def test_prepare_writes_every_split_and_the_description(corpus, tmp_path):
    src, tgt = corpus
    out = tmp_path / "permuted"
    info = prepare(src, tgt, out, "permuted", n_test=1, n_valid=1, seed=3,
                   permutation=(2, 0, 3, 1))
    assert info["length"] == 4 and info["length_chosen"] == "most common"
    assert info["counts"] == {"corpus": 10, "pool": 7, "train": 5, "valid": 1, "test": 1}
    assert info["permutation"] == [2, 0, 3, 1] and info["permutation_source"] == "given"
    assert info["notes"] == []
    assert json.loads((out / "locality.json").read_text()) == info
    original = dict(zip(range(1, 11), SOURCES, strict=True))
    ids_seen = []
    for split in ("train", "valid", "test"):
        ids = [int(x) for x in read_lines(out / f"{split}.ids")]
        ids_seen += ids
        assert read_lines(out / f"{split}.en") == [f"T{i}" for i in ids]
        assert read_lines(out / f"{split}.de") == [
            " ".join(permute_tokens(original[i].split(), (2, 0, 3, 1))) for i in ids]
    assert sorted(ids_seen) == [1, 3, 4, 6, 7, 8, 10]


def test_prepare_gives_every_setting_the_same_split(corpus, tmp_path):
    src, tgt = corpus
    infos = {s.value: prepare(src, tgt, tmp_path / s.value, s, n_test=1, n_valid=1, seed=3)
             for s in Setting}
    for split in ("train", "valid", "test"):
        ids = {tuple(read_lines(tmp_path / s / f"{split}.ids")) for s in infos}
        assert len(ids) == 1
    regular = read_lines(tmp_path / "regular" / "test.de")
    assert read_lines(tmp_path / "perposemb" / "test.de") == regular
    assert read_lines(tmp_path / "reversed" / "test.de") == [
        " ".join(reversed(line.split())) for line in regular]
    perm = infos["permuted"]["permutation"]
    assert infos["permuted"]["permutation_source"] == "random"
    assert infos["permuted"]["permutation_seed"] == 3
    assert perm == list(random_permutation(4, 3))
    assert infos["perposemb"]["fairseq_model_args"] == [
        "--position-permutation", format_permutation(perm)]
    assert infos["regular"]["fairseq_model_args"] == []


def test_prepare_falls_back_to_a_fraction_for_small_pools(corpus, tmp_path):
    src, tgt = corpus
    info = prepare(src, tgt, tmp_path / "out", "regular", length=4, seed=1)
    assert info["length_chosen"] == "given"
    assert (info["counts"]["test"], info["counts"]["valid"]) == (1, 1)
    assert "only 7" in info["notes"][0]


def test_prepare_rejects_bad_input(corpus, tmp_path):
    src, tgt = corpus
    with pytest.raises(ValueError, match="4 tokens"):
        prepare(src, tgt, tmp_path / "a", "permuted", permutation=(1, 0))
    with pytest.raises(InputError, match="only 0"):
        prepare(src, tgt, tmp_path / "b", "regular", length=9)
    short = tmp_path / "short.en"
    short.write_text("T1\n", encoding="utf-8")
    with pytest.raises(InputError, match="differ in length"):
        prepare(src, short, tmp_path / "c", "regular")


# --- Table 1 ------------------------------------------------------------------------------

SCORES = [
    Score("regular", "learned", "transformer", 1, 20.0),
    Score("regular", "learned", "transformer", 2, 22.0),
    Score("regular", "learned", "transformer", 3, 24.0),
    Score("permuted", "learned", "transformer", 1, 19.0),
    Score("permuted", "learned", "transformer", 2, 21.0),
    Score("reversed", "learned", "transformer", 1, 23.0),
    Score("perposemb", "learned", "transformer", 1, 21.5),
    Score("permuted", "sinusoidal", "transformer", 1, 27.0),
    Score("permuted", "sinusoidal", "transformer", 2, 29.0),
    Score("regular", "sinusoidal", "transformer", 1, 30.0),
    Score("permuted", "none", "lstm", 1, 10.0),
    Score("permuted", "none", "lstm", 2, 12.0),
    Score("regular", "none", "lstm", 1, 15.0),
    Score("regular", "none", "lstm", 2, 17.0),
]


def test_aggregate_scores_by_hand():
    table = aggregate_scores(scores_frame(SCORES))
    keys = list(zip(table["arch"], table["pos_emb"], table["setting"], strict=True))
    assert keys == [
        ("transformer", "learned", "regular"), ("transformer", "learned", "permuted"),
        ("transformer", "learned", "reversed"), ("transformer", "learned", "perposemb"),
        ("transformer", "sinusoidal", "regular"), ("transformer", "sinusoidal", "permuted"),
        ("lstm", "none", "regular"), ("lstm", "none", "permuted")]
    assert table["seeds"].tolist() == [3, 2, 1, 1, 1, 2, 2, 2]
    assert table["mean"].tolist() == [22.0, 20.0, 23.0, 21.5, 30.0, 28.0, 16.0, 11.0]
    assert table["diff"].tolist() == [0.0, -2.0, 1.0, -0.5, 0.0, -2.0, 0.0, -5.0]
    assert table.loc[0, "std"] == pytest.approx(2.0)
    assert table.loc[1, "std"] == pytest.approx(math.sqrt(2))
    assert math.isnan(table.loc[4, "std"])
    assert (table.loc[0, "min"], table.loc[0, "max"]) == (20.0, 24.0)


def test_aggregate_without_regular_leaves_the_difference_empty():
    table = aggregate_scores(scores_frame([Score("permuted", "learned", "transformer", 1, 5)]))
    ours = table[table["seeds"] > 0]
    assert len(ours) == 1 and math.isnan(ours.iloc[0]["diff"])


def test_aggregate_shows_the_papers_table_1_by_default():
    table = aggregate_scores(scores_frame(SCORES))
    by_key = {(r["arch"], r["pos_emb"], r["setting"]): r for r in table.to_dict("records")}
    # Table 1: LearntPE PERMUTED 24.87 (+0.06); SinePEs PERMUTED 23.90 (-1.18); Nematus
    # REGULAR 22.32, PERMUTED 19.67 (-2.65). Section 3.1: 5 runs of LearntPE REGULAR, 1 of
    # REVERSED.
    learned = by_key[("transformer", "learned", "permuted")]
    assert (learned["paper_bleu"], learned["paper_diff"]) == (24.87, 0.06)
    sine = by_key[("transformer", "sinusoidal", "permuted")]
    assert (sine["paper_bleu"], sine["paper_diff"]) == (23.90, -1.18)
    lstm = by_key[("lstm", "none", "permuted")]
    assert (lstm["paper_bleu"], lstm["paper_diff"]) == (19.67, -2.65)
    assert by_key[("lstm", "none", "regular")]["paper_bleu"] == 22.32
    assert by_key[("transformer", "learned", "regular")]["paper_runs"] == 5
    assert by_key[("transformer", "learned", "reversed")]["paper_runs"] == 1
    assert len(table) == 8  # the paper's rows are exactly the configured ones
    # The printed differences agree with the paper's own BLEU.
    paper = paper_scores()
    regular = paper[paper["setting"] == "regular"].set_index(["arch", "pos_emb"])["bleu"]
    for row in paper[paper["setting"] != "regular"].itertuples():
        assert row.delta == pytest.approx(row.bleu - regular[(row.arch, row.pos_emb)], abs=0.005)
    shown = display_table(table)
    assert shown.loc[5, "paper BLEU"] == "23.90" and shown.loc[5, "paper Δ"] == "-1.18"
    assert shown.loc[0, "paper runs"] == "5"
    # A row only the paper has stays, with no seeds of ours.
    only = aggregate_scores(scores_frame([Score("regular", "learned", "transformer", 1, 20.0)]))
    reversed_row = only[only["setting"] == "reversed"].iloc[0]
    assert reversed_row["seeds"] == 0 and reversed_row["paper_bleu"] == 24.84


def test_aggregate_places_reference_numbers_beside_ours():
    # Synthetic reference values: they only exercise the merge, they are not the paper's.
    reference = pd.DataFrame({"setting": ["regular", "permuted", "regular"],
                              "pos_emb": ["learned", "learned", "sinusoidal"],
                              "arch": ["transformer"] * 3, "bleu": [10.0, 7.5, 9.0]})
    table = aggregate_scores(scores_frame(SCORES), reference)
    row = table[(table["pos_emb"] == "learned") & (table["setting"] == "permuted")].iloc[0]
    assert (row["paper_bleu"], row["paper_diff"]) == (7.5, -2.5)
    lstm = table[table["arch"] == "lstm"]
    assert lstm["paper_bleu"].isna().all()
    shown = display_table(table)
    assert "paper BLEU" in shown.columns
    assert shown.loc[0, "BLEU (mean ± std)"] == "22.00 ± 2.00"
    assert shown.loc[1, "Δ REGULAR"] == "-2.00"
    assert shown.loc[4, "BLEU (mean ± std)"] == "30.00"
    assert shown.loc[6, "positions"] == "—"


def test_scores_are_validated():
    dup = SCORES[:1] * 2
    with pytest.raises(InputError, match="more than one score"):
        scores_frame(dup)
    with pytest.raises(InputError, match="unknown setting"):
        scores_frame([Score("shuffled", "learned", "transformer", 1, 1.0)])
    with pytest.raises(InputError, match="unknown arch"):
        scores_frame([Score("regular", "learned", "nematus", 1, 1.0)])


def test_read_scores_from_json_and_csv(tmp_path):
    # a record of `phenomt score bleu --meta ...` (which stores the meta values as strings)
    (tmp_path / "s1.json").write_text(json.dumps(
        {"metric": "bleu", "score": 20.0, "signature": "sig", "sentences": 3, "ci": None,
         "meta": {"setting": "REGULAR", "pos_emb": "learned", "arch": "transformer",
                  "seed": "1"}}))
    # and a JSON list of rows written by hand
    (tmp_path / "s2.json").write_text(json.dumps(
        [{"bleu": 22.0, "setting": "regular", "pos_emb": "learned", "arch": "transformer",
          "seed": 2}]))
    (tmp_path / "more.csv").write_text("setting,pos_emb,arch,seed,bleu\n"
                                       "permuted,learned,transformer,1,19.0\n")
    frame = read_scores([tmp_path / "s1.json", tmp_path / "s2.json", tmp_path / "more.csv"])
    assert frame["setting"].tolist() == ["regular", "regular", "permuted"]
    assert frame["seed"].tolist() == [1, 2, 1]
    assert frame["bleu"].tolist() == [20.0, 22.0, 19.0]
    with pytest.raises(InputError, match="missing column"):
        (tmp_path / "bad.csv").write_text("setting,bleu\nregular,1\n")
        read_scores([tmp_path / "bad.csv"])
    (tmp_path / "paper.tsv").write_text("setting\tpos_emb\tarch\tbleu\n"
                                        "regular\tlearned\ttransformer\t1.0\n")
    assert read_paper_scores(tmp_path / "paper.tsv")["bleu"].tolist() == [1.0]


# --- command line -------------------------------------------------------------------------


def _run(argv: list[str]) -> int:
    args = build_parser(modules=("phenomt.ldd.locality",)).parse_args(argv)
    return int(args.handler(args) or 0)


def test_cli_prepare_table_and_permutation(corpus, tmp_path, capsys):
    src, tgt = corpus
    out = tmp_path / "cli"
    assert _run(["locality", "prepare", "--src", str(src), "--tgt", str(tgt),
                 "--setting", "permuted", "--length", "auto", "--n-test", "1",
                 "--n-valid", "1", "--seed", "3", "--permutation", "2,0,3,1",
                 "--out-dir", str(out)]) == 0
    assert json.loads((out / "locality.json").read_text())["permutation"] == [2, 0, 3, 1]

    scores = tmp_path / "scores.csv"
    scores_frame(SCORES).to_csv(scores, index=False)
    md, csv = tmp_path / "t1.md", tmp_path / "t1.csv"
    assert _run(["table", "locality", "--scores", str(scores), "--info",
                 str(out / "locality.json"), "--md", str(md), "--csv", str(csv),
                 "--note", "tiny models, 3 updates"]) == 0
    text = md.read_text()
    assert "Δ REGULAR" in text and "PERPOSEMB" in text
    assert "σ = (2 0 3 1), given" in text
    assert "Table 1" in text and "24.87" in text and "not directly comparable" in text
    assert "130,983 WMT2015 De-En training sentences of length 18" in text
    assert "not shown" not in text and "no reliable copy" not in text
    assert "- tiny models, 3 updates" in text
    assert pd.read_csv(csv)["diff"].tolist() == [0.0, -2.0, 1.0, -0.5, 0.0, -2.0, 0.0, -5.0]

    reference = tmp_path / "reference.tsv"
    reference.write_text("setting\tpos_emb\tarch\tbleu\nregular\tlearned\ttransformer\t1.5\n")
    assert _run(["table", "locality", "--scores", str(scores), "--paper", str(reference),
                 "--md", str(md), "--csv", str(csv)]) == 0
    assert "given with --paper" in md.read_text() and "24.87" not in md.read_text()
    assert pd.read_csv(csv)["paper_bleu"].dropna().tolist() == [1.5]

    capsys.readouterr()
    assert _run(["locality", "permutation", "--length", "18"]) == 0
    assert capsys.readouterr().out.strip() == format_permutation(PAPER_PERMUTATION)
    with pytest.raises(SystemExit):
        _run(["locality", "prepare", "--src", str(src), "--tgt", str(tgt), "--setting",
              "permuted", "--permutation", "0,0", "--out-dir", str(out)])
