"""Evaluation tables of the LDD challenge sets: selection, BLEU/RIBES records, Spearman,
length-matched control, validation sheet and tables.

Expected values are worked out by hand in the comments next to each case.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pytest
import sacrebleu

from phenomt.cli import COMMAND_MODULES, build_parser
from phenomt.core.bins import bin_title, parse_bin
from phenomt.core.cliargs import CommandTree
from phenomt.core.io import InputError
from phenomt.core.metrics.base import get
from phenomt.core.metrics.ribes import (
    RIBES_ALPHA,
    RIBES_BETA,
    corpus_ribes_score,
    mean_ribes,
    sentence_ribes_scores,
)
from phenomt.core.tables import write_table
from phenomt.ldd.cli import register_cli
from phenomt.ldd.control import (
    control_record,
    control_summary,
    length_matched_control,
    length_matched_draws,
)
from phenomt.ldd.extract import extract_lexical, extract_reorder
from phenomt.ldd.score import score_set
from phenomt.ldd.sets import (
    CONTROL_SCHEMA,
    SCORE_SCHEMA,
    SetKey,
    check_selection,
    parse_assignment,
    read_ids,
    select_file,
    select_lines,
)
from phenomt.ldd.sheet import (
    SHEET_COLUMNS,
    export_sheet,
    parse_judgement,
    precision_table,
    read_sheet,
    sheet_rows,
)
from phenomt.ldd.tables import (
    bleu_table,
    control_table,
    distance_correlation,
    distance_table,
    paper_size,
    ribes_table,
    sizes_from_ids,
    sizes_from_records,
    sizes_table,
)

LDD = Path(__file__).parent / "data" / "ldd"


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="phenomt")
    register_cli(CommandTree(parser))
    args = parser.parse_args(argv)
    return args.handler(args)


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


# --- names and bins -----------------------------------------------------------------------------

def test_bins_and_set_names() -> None:
    assert parse_bin("all").distance == 0 and not parse_bin("all").exact
    assert parse_bin("ge3").distance == 3
    assert parse_bin("eq0").exact and parse_bin("eq0").distance == 0
    with pytest.raises(ValueError, match="write 'all'"):
        parse_bin("ge0")
    with pytest.raises(ValueError, match="bad distance bin"):
        parse_bin("3")
    assert [bin_title(b) for b in ("all", "ge2", "eq4")] == ["All", "≥2", "=4"]
    key = SetKey.parse("news/de-en/particle/ge1")
    assert str(key) == "news/de-en/particle/ge1" and key.source_lang == "de"
    assert parse_assignment("news/en-de/reorder/ge5=a/b.ids") == (
        SetKey("news", "en-de", "reorder", "ge5"), "a/b.ids")
    with pytest.raises(ValueError, match="unknown phenomenon"):
        SetKey.parse("news/de-en/passive/all")
    with pytest.raises(ValueError, match="bin 'all'"):
        SetKey("news", "de-en", "baseline", "ge1")


# --- selection by ids ---------------------------------------------------------------------------

def test_select_lines_by_one_based_ids(tmp_path: Path) -> None:
    full = write(tmp_path / "hyp", ["h1", "h2", "h3", "h4"])
    ids = write(tmp_path / "set.ids", ["2", "4"])
    assert select_file(full, ids) == ["h2", "h4"]
    assert select_lines(["a", "b", "c"], [1, 3]) == ["a", "c"]
    write(tmp_path / "bad.ids", ["1", "5"])
    with pytest.raises(InputError, match=r"bad\.ids:2: sentence id 5 is outside"):
        select_file(full, tmp_path / "bad.ids")


def test_read_ids_rejects_bad_lines(tmp_path: Path) -> None:
    write(tmp_path / "a.ids", ["1", "3", "3"])
    with pytest.raises(InputError, match=r"a\.ids:3: ids must be strictly ascending"):
        read_ids(tmp_path / "a.ids")
    write(tmp_path / "b.ids", ["0"])
    with pytest.raises(InputError, match=r"b\.ids:1: expected a positive sentence id"):
        read_ids(tmp_path / "b.ids")
    write(tmp_path / "empty.ids", [])
    assert read_ids(tmp_path / "empty.ids") == []


def test_check_selection_against_the_sets_reference(tmp_path: Path) -> None:
    write(tmp_path / "set.ref", ["r2", "r4"])
    check_selection(["r2", "r4"], tmp_path / "set.ref")
    with pytest.raises(InputError, match=r"set\.ref:2: differs"):
        check_selection(["r2", "r5"], tmp_path / "set.ref")


# --- BLEU and RIBES records ---------------------------------------------------------------------

def test_ribes_hand_computed() -> None:
    # nltk: RIBES = NKT * P1^alpha * BP^beta with NKT = (tau + 1) / 2,
    # P1 = |worder| / |hyp|, BP = min(1, exp(1 - |ref| / |hyp|)).
    ref = ["a", "b", "c", "d", "e"]
    # hyp 1 "b a c d": every word occurs once on both sides, worder = [1, 0, 2, 3];
    # increasing pairs: all but (1, 0) = 5 of 6, tau = 2*5/6 - 1 = 2/3, NKT = 5/6;
    # P1 = 4/4 = 1; BP = exp(1 - 5/4) = exp(-0.25), BP^0.10 = exp(-0.025) = 0.975310;
    # RIBES = 5/6 * 0.975310 = 0.812758.
    one = 5 / 6 * math.exp(-0.025)
    assert corpus_ribes_score([["b", "a", "c", "d"]], [ref]) == pytest.approx(one, abs=1e-9)
    assert round(one, 6) == 0.812758
    # hyp 2 "b a x c d": x is not in the reference, worder = [1, 0, 2, 3] again, NKT = 5/6;
    # P1 = 4/5, P1^0.25 = 0.945742; BP = min(1, exp(1 - 5/5)) = 1;
    # RIBES = 5/6 * 0.945742 = 0.788118.
    two = 5 / 6 * 0.8 ** 0.25
    assert round(two, 6) == 0.788118
    # The corpus score is the mean over sentences: (0.812758 + 0.788118) / 2 = 0.800438.
    score = corpus_ribes_score([["b", "a", "c", "d"], ["b", "a", "x", "c", "d"]], [ref, ref])
    assert score == pytest.approx((one + two) / 2, abs=1e-9)
    assert round(score, 6) == 0.800438
    assert (RIBES_ALPHA, RIBES_BETA) == (0.25, 0.10)


def test_a_subsets_ribes_from_the_sentence_scores_is_its_corpus_ribes() -> None:
    # The same two sentences as above (0.812758 and 0.788118) and a third, "e": worder = [4]
    # has no pairs, for which nltk takes the lowest tau, -1, so NKT = 0 and RIBES 0.
    ref = ["a", "b", "c", "d", "e"]
    hyps = [["b", "a", "c", "d"], ["b", "a", "x", "c", "d"], ["e"]]
    scores = sentence_ribes_scores(hyps, [ref] * 3)
    assert scores == pytest.approx([5 / 6 * math.exp(-0.025), 5 / 6 * 0.8 ** 0.25, 0.0])
    # every subset's mean is, bit for bit, nltk's corpus RIBES of the subset
    for subset in ([0, 1], [1, 2], [0, 2], [2]):
        assert mean_ribes(scores[i] for i in subset) == corpus_ribes_score(
            [hyps[i] for i in subset], [ref] * len(subset))
    assert round(mean_ribes(scores[:2]), 6) == 0.800438 and mean_ribes([]) == 0.0


def test_score_set_records_bleu_signature_and_ribes() -> None:
    key = SetKey("news", "de-en", "reorder", "ge5")
    hyps, refs = ["b a c d"], ["a b c d e"]
    record = score_set(key, "m", hyps, refs, corpus_sentences=10, tokenize="none")
    assert record["schema"] == SCORE_SCHEMA
    assert record["bleu"]["bleu"] == round(
        sacrebleu.corpus_bleu(hyps, [refs], tokenize="none").score, 2)  # sacreBLEU's own
    assert "tok:none" in record["bleu"]["signature"] and record["scoring"] == "multi-bleu"
    # Tokens are the BLEU input split on whitespace (tokenize none): RIBES 0.812758 as above.
    assert record["ribes"]["score"] == 0.8128
    assert (record["ribes"]["alpha"], record["ribes"]["beta"]) == (0.25, 0.10)
    assert record["ribes"]["tokens"] == "BLEU input split on whitespace"
    assert record["ribes"]["implementation"].startswith("nltk ")
    # Lexical sets get no RIBES unless asked. The baseline gets it, on detokenized text split
    # by sacreBLEU's 13a tokenizer ("Es geht." -> "Es geht ."): identical lines give RIBES 1.
    lexical = score_set(SetKey("news", "de-en", "particle", "ge1"), "m", hyps, refs)
    assert lexical["ribes"] is None and lexical["scoring"] == "sacrebleu"
    same = score_set(SetKey("news", "de-en", "baseline", "all"), "m", ["Es geht."],
                     ["Es geht."])
    assert same["ribes"]["score"] == 1.0
    assert "13a" in same["ribes"]["tokens"]
    pre = score_set(key, "m", ["x"], ["y"], ribes_hypotheses=["b a c d"],
                    ribes_references=["a b c d e"])
    assert pre["ribes"]["score"] == 0.8128
    assert pre["ribes"]["tokens"] == "pre-tokenized files split on whitespace"


# --- Spearman -----------------------------------------------------------------------------------

def test_spearman_known_case() -> None:
    # Distances 0..3 have ranks 1..4; BLEU 30, 25, 27, 20 has ranks 4, 2, 3, 1.
    # d = 3, 0, 0, -3; sum d^2 = 18; rho = 1 - 6*18 / (4 * (16 - 1)) = 1 - 108/60 = -0.8.
    result = distance_correlation([0, 1, 2, 3], [30, 25, 27, 20])
    assert result["rho"] == pytest.approx(-0.8)
    assert "p" not in result  # nested bins, four points: no test (see distance_table)
    assert result["n"] == 4 and result["note"] is None


def test_spearman_undefined_cases_are_reported_not_nan() -> None:
    constant = distance_correlation([0, 1, 2, 3], [25.0, 25.0, 25.0, 25.0])
    assert constant["rho"] is None
    assert "same at every distance" in constant["note"]
    short = distance_correlation([0, 1], [30.0, 20.0])
    assert short["rho"] is None and "only 2 distance bins" in short["note"]
    single = distance_correlation([2, 2, 2], [30.0, 20.0, 10.0])
    assert single["rho"] is None and "single distance" in single["note"]
    assert json.dumps(constant)  # no NaN in the JSON


# --- length-matched control ---------------------------------------------------------------------

def test_control_summary_hand_computed() -> None:
    # Set BLEU 20 against 10, 20, 25, 30: one lower, one tie.
    # rank = 1 + 1 = 2 of 5; percentile = 100 * (1 + 0.5) / 4 = 37.5;
    # p_lower = (1 + 1 + 1) / (4 + 1) = 0.6; mean = 85 / 4 = 21.25;
    # sample std = sqrt((11.25^2 + 1.25^2 + 3.75^2 + 8.75^2) / 3) = sqrt(218.75 / 3) = 8.539.
    summary = control_summary(20.0, [10.0, 20.0, 25.0, 30.0])
    assert summary == {"mean": 21.25, "std": 8.54, "min": 10.0, "max": 30.0, "rank": 2,
                       "of": 5, "percentile": 37.5, "p_lower": 0.6}


LENGTHS = [3, 4, 5, 9, 10, 11, 4, 5, 10, 3, 20, 4, 5, 6, 9, 10, 4]


def test_draws_match_length_within_one_token_and_are_deterministic() -> None:
    set_indices = [1, 4, 13]  # lengths 4, 10, 6
    first = length_matched_draws(LENGTHS, set_indices, draws=30, seed=7)
    again = length_matched_draws(LENGTHS, set_indices, draws=30, seed=7)
    other = length_matched_draws(LENGTHS, set_indices, draws=30, seed=8)
    assert first == again
    assert first.corpora != other.corpora
    assert len(first.corpora) == 30 and (first.reused, first.widened) == (0, 0)
    for corpus in first.corpora:
        assert len(corpus) == 3 and len(set(corpus)) == 3  # no sentence twice in a corpus
        for index, drawn in zip(set_indices, corpus, strict=True):
            assert abs(LENGTHS[drawn] - LENGTHS[index]) <= 1
    # Length 6 has candidates 5, 6, 7 -> indices 2, 7, 12 (5) and 13 (6): all get used.
    assert {corpus[2] for corpus in first.corpora} == {2, 7, 12, 13}


def test_draws_exclude_set_widen_and_reuse() -> None:
    # lengths [5, 5, 20]; the set is sentences 0 and 1. Without them only sentence 2 (length
    # 20) is left: no candidate within 5 ± 1, so both set sentences are widened (2), and
    # each corpus takes sentence 2 for the first and must reuse it for the second (1 a draw).
    drawn = length_matched_draws([5, 5, 20], [0, 1], draws=3, seed=1, exclude_set=True)
    assert drawn.corpora == ((2, 2),) * 3
    assert (drawn.widened, drawn.reused) == (2, 3)
    # With the set in the pool the two length-5 sentences match each other, without reuse.
    kept = length_matched_draws([5, 5, 20], [0, 1], draws=3, seed=1)
    assert all(sorted(c) == [0, 1] for c in kept.corpora) and kept.reused == 0


def test_control_with_a_forced_answer() -> None:
    # Six 5-word sentences; the set (ids 1, 2) is translated completely wrong (BLEU 0), the
    # other four perfectly. Excluding the set, every random corpus is two perfect sentences:
    # BLEU 100 each, so the set ranks 1 of 11, percentile 0, p_lower = (1 + 0) / 11 = 0.0909.
    refs = [f"w{i} a{i} b{i} c{i} d{i}" for i in range(6)]
    hyps = ["x y z u v", "x y z u v", *refs[2:]]
    rows = get("bleu", tokenize="none").statistics(hyps, refs)
    result = length_matched_control(rows, [5] * 6, [1, 2], draws=10, seed=3, exclude_set=True,
                                    tokenize="none")
    assert result["bleu"] == 0.0
    control = result["control"]
    assert control["bleu"] == [100.0] * 10
    assert (control["rank"], control["of"], control["percentile"]) == (1, 11, 0.0)
    assert control["p_lower"] == 0.0909
    assert (control["mean"], control["std"]) == (100.0, 0.0)


def test_statistics_reproduce_corpus_bleu() -> None:
    hyps = ["Er ruft sie morgen an.", "He washes himself.", "That is good!", "He starts today."]
    refs = ["He will call her tomorrow.", "I wash myself.", "That is good.",
            "Luckily, he starts today."]
    rows = get("bleu").statistics(hyps, refs)
    for subset in ([0, 1, 2, 3], [1, 3], [2]):
        direct = {"bleu": round(sacrebleu.corpus_bleu([hyps[i] for i in subset],
                                                      [[refs[i] for i in subset]]).score, 2)}
        assert round(get("bleu").score(rows[subset].sum(axis=0)), 2) == direct["bleu"]


def test_control_record_is_deterministic(tmp_path: Path) -> None:
    refs = [f"r{i} " * (3 + i % 5) for i in range(40)]
    hyps = [r if i % 3 else "zz " * 4 for i, r in enumerate(refs)]
    srcs = [f"s{i} " * (3 + i % 5) for i in range(40)]
    key = SetKey("news", "de-en", "particle", "ge1")
    first = control_record(key, "m", hyps, refs, srcs, [1, 4, 7, 20], draws=20, seed=5)
    second = control_record(key, "m", hyps, refs, srcs, [1, 4, 7, 20], draws=20, seed=5)
    assert first == second
    assert first["schema"] == CONTROL_SCHEMA and first["sentences"] == 4
    assert first["bleu"] == round(sacrebleu.corpus_bleu(
        [hyps[i - 1] for i in (1, 4, 7, 20)], [[refs[i - 1] for i in (1, 4, 7, 20)]]).score, 2)
    assert "nrefs:1" in first["signature"]
    assert len(first["control"]["bleu"]) == 20 and first["control"]["seed"] == 5


# --- validation sheet ---------------------------------------------------------------------------

def _particle_set(tmp_path: Path) -> Path:
    prefix = tmp_path / "news.de.particle.ge2"
    extract_lexical(LDD / "de_lexical.conllu", "particle", prefix, 2,
                    src_path=LDD / "de_lexical.de", ref_path=LDD / "de_lexical.en")
    return prefix


def test_sheet_rows_show_the_instances_in_the_bin(tmp_path: Path) -> None:
    # Particle pairs at distance >= 2 (tests/test_challenge.py): sentences 1 (ruft..an, 2),
    # 4 (fängt..an, 4), 5 (kauft..ein, 4), 8 (stellt..vor, 5), 9 (ruft..zurück, 3; its pair
    # rufe..an at distance 1 is outside the bin and not listed).
    key = SetKey("news", "de-en", "particle", "ge2")
    rows = sheet_rows(key, _particle_set(tmp_path), per_set=10, seed=1)
    assert [r["sentence_id"] for r in rows] == ["1", "4", "5", "8", "9"]
    last = rows[-1]
    assert (last["head"], last["dependent"], last["distance"]) == ("ruft", "zurück", "3")
    assert last["marked_source"] == "Ich rufe ihn an und er *ruft* mich heute Abend *zurück* ."
    assert last["reference"] == "I call him and he calls me back tonight ."
    assert rows[1]["distance"] == "4" and all(r["correct"] == "" for r in rows)
    two = sheet_rows(key, tmp_path / "news.de.particle.ge2", per_set=2, seed=1)
    assert two == sheet_rows(key, tmp_path / "news.de.particle.ge2", per_set=2, seed=1)
    assert len(two) == 2 and int(two[0]["sentence_id"]) < int(two[1]["sentence_id"])


def test_sheet_round_trip_and_precision(tmp_path: Path) -> None:
    lexical = _particle_set(tmp_path)
    reorder = tmp_path / "news.de.reorder.ge5"
    extract_reorder(LDD / "reorder.de", LDD / "reorder.en", LDD / "reorder.align", reorder, 5)
    # A hand-made set whose source starts with a quote character, which csv must quote.
    quoted = tmp_path / "quoted"
    write(Path(f"{quoted}.ids"), ["3"])
    write(Path(f"{quoted}.src_marked"), ['"Hallo" , *sagte* er \t.'])
    sets = [(SetKey("news", "de-en", "particle", "ge2"), lexical),
            (SetKey("news", "de-en", "reorder", "ge5"), reorder),
            (SetKey("books", "de-en", "reorder", "ge5"), quoted)]
    sheet = tmp_path / "sheet.tsv"
    assert export_sheet(sets, sheet, per_set=10, seed=1) == 5 + 2 + 1
    assert sheet.read_text(encoding="utf-8").splitlines()[0] == "\t".join(SHEET_COLUMNS)
    rows = read_sheet(sheet, allow_blank=True)
    assert len(rows) == 8 and all(r["correct"] is None for r in rows)
    assert rows[-1]["marked_source"] == '"Hallo" , *sagte* er \t.'
    assert rows[-1]["reference"] == "" and rows[5]["head"] == ""  # no .ref / no parse
    # Fill: particle y, n, 1, 0, YES (3 of 5 correct); reorder yes, no; quoted 1.
    lines = sheet.read_text(encoding="utf-8").split("\n")
    answers = ["y", "n", "1", "0", "YES", "yes", "no", "1"]
    filled = [lines[0]] + [line + answer for line, answer in zip(lines[1:9], answers,
                                                                  strict=True)]
    write(sheet, filled)
    judged = read_sheet(sheet)
    assert [r["correct"] for r in judged] == [True, False, True, False, True, True, False,
                                              True]
    frame, notes = precision_table(judged)
    table = {(r["corpus"], r["direction"], r["phenomenon"]): r for r in frame.to_dict("records")}
    # News particle 3/5 = 60.0 %; News reorder 1/2 = 50.0 %; News De→En 4/7 = 57.1 %;
    # Books reorder 1/1; all 5/8 = 62.5 %.
    assert table[("news", "de-en", "particle")]["precision (%)"] == "60.0"
    assert table[("news", "de-en", "reorder")]["precision (%)"] == "50.0"
    assert table[("news", "de-en", "all")]["precision (%)"] == "57.1"
    assert table[("books", "de-en", "all")]["precision (%)"] == "100.0"
    assert table[("all", "all", "all")]["precision (%)"] == "62.5"
    # Section 4.3: 85% of the (over 180) German Books sentences; German News was not validated.
    assert table[("books", "de-en", "all")]["paper precision (%)"] == "85"
    assert table[("books", "de-en", "all")]["paper annotated"] == 180
    assert table[("news", "de-en", "all")]["paper precision (%)"] is None
    assert table[("all", "all", "all")]["paper precision (%)"] is None
    assert any("Section 4.3" in note for note in notes)


def test_precision_beside_the_papers_per_source_language_and_corpus() -> None:
    # Section 4.3: 87% of the English News sentences and 86% of the 45 English Books ones.
    rows = [{"set": "news/en-de/particle/ge1", "corpus": "news", "direction": "en-de",
             "phenomenon": "particle", "correct": True},
            {"set": "news/en-de/reflexive/ge1", "corpus": "news", "direction": "en-de",
             "phenomenon": "reflexive", "correct": False},
            {"set": "books/en-de/preposition-stranding/ge1", "direction": "en-de",
             "phenomenon": "preposition-stranding", "correct": True}]  # corpus from the set
    frame, _ = precision_table(rows)
    table = {(r["corpus"], r["phenomenon"]): r for r in frame.to_dict("records")}
    assert table[("news", "all")]["precision (%)"] == "50.0"
    assert table[("news", "all")]["paper precision (%)"] == "87"
    assert table[("news", "all")]["paper annotated"] is None  # not printed for News alone
    assert table[("books", "all")]["paper precision (%)"] == "86"
    assert table[("books", "all")]["paper annotated"] == 45
    assert table[("news", "particle")]["paper precision (%)"] is None


def test_sheet_bad_and_blank_values(tmp_path: Path) -> None:
    header = "\t".join(SHEET_COLUMNS)
    row = "news/de-en/particle/ge1\tnews\tde-en\tparticle\tge1\t1\tx\ty\th\td\t2\t"
    write(tmp_path / "bad.tsv", [header, row + "y", row + "maybe"])
    with pytest.raises(InputError, match=r"bad\.tsv:3: bad judgement 'maybe'"):
        read_sheet(tmp_path / "bad.tsv")
    write(tmp_path / "blank.tsv", [header, row + "n", row])
    with pytest.raises(InputError, match=r"blank\.tsv:3: the 'correct' cell is empty"):
        read_sheet(tmp_path / "blank.tsv")
    assert [r["correct"] for r in read_sheet(tmp_path / "blank.tsv", allow_blank=True)] == [
        False, None]
    write(tmp_path / "nocol.tsv", ["set\tphenomenon", "a\tb"])
    with pytest.raises(InputError, match=r"nocol\.tsv:1: missing column"):
        read_sheet(tmp_path / "nocol.tsv")
    assert parse_judgement(" No ") is False and parse_judgement("1") is True
    with pytest.raises(ValueError):
        parse_judgement("true")


# --- tables -------------------------------------------------------------------------------------

def _score(model: str, phenomenon: str, bin_: str, bleu: float, sentences: int = 10,
           ribes: float | None = None, direction: str = "de-en", corpus: str = "news") -> dict:
    return {"schema": SCORE_SCHEMA, "model": model, "corpus": corpus, "direction": direction,
            "phenomenon": phenomenon, "bin": bin_, "sentences": sentences,
            "corpus_sentences": 3000, "scoring": "sacrebleu",
            "bleu": {"bleu": bleu, "signature": "nrefs:1|case:mixed|tok:13a"},
            "ribes": None if ribes is None else {"score": ribes, "alpha": 0.25, "beta": 0.1,
                                                 "tokens": "t", "implementation": "nltk"}}


def test_sizes_table_shows_paper_numbers(tmp_path: Path) -> None:
    write(tmp_path / "p.ids", [str(i) for i in range(1, 231)])
    sizes = sizes_from_ids({SetKey("news", "de-en", "particle", "ge1"): tmp_path / "p.ids"})
    sizes[SetKey("news", "de-en", "particle", "ge2")] = 120
    sizes[SetKey("news", "en-de", "reorder", "ge5")] = 300
    sizes[SetKey("news", "de-en", "particle", "all")] = 400
    sizes[SetKey("books", "en-de", "preposition-stranding", "ge3")] = 12
    sizes[SetKey("books", "de-en", "reorder", "ge6")] = 50
    frame, notes = sizes_table(sizes, {("news", "de-en"): 3000})
    rows = frame.to_dict("records")
    assert [r["bin"] for r in rows[:2]] == ["ge6", "ge3"]  # books de-en, then books en-de
    by_set = {(r["corpus"], r["direction"], r["phenomenon"], r["bin"]): r for r in rows}
    assert [r["bin"] for r in rows if r["corpus"] == "news" and r["phenomenon"] == "particle"
            ] == ["all", "ge1", "ge2"]  # natural bin order
    news_particle = by_set[("news", "de-en", "particle", "ge1")]
    assert news_particle["sentences"] == 230
    # Table 3: News (newstest2013) German particle ≥1 = 232; News has no ≥2 or All column.
    assert news_particle["paper sentences"] == 232
    assert by_set[("news", "de-en", "particle", "ge2")]["paper sentences"] is None
    assert by_set[("news", "de-en", "particle", "all")]["paper sentences"] is None
    # Table 2: Reorder 306 on Newstest2013 (printed once for De↔En).
    assert by_set[("news", "en-de", "reorder", "ge5")]["paper sentences"] == 306
    assert by_set[("books", "de-en", "reorder", "ge6")]["paper sentences"] is None
    # Table 3: Books English preposition stranding ≥3 = 40.
    assert by_set[("books", "en-de", "preposition-stranding", "ge3")]["paper sentences"] == 40
    # Table 2: Baseline (full dataset) 3,000 for Newstest2013, 51,467 for Books.
    assert news_particle["corpus sentences"] == 3000
    assert news_particle["paper corpus sentences"] == 3000
    assert by_set[("books", "de-en", "reorder", "ge6")]["paper corpus sentences"] == 51467
    md, csv_path = tmp_path / "t.md", tmp_path / "t.csv"
    write_table(frame, md, csv_path, "sizes", notes)
    text = md.read_text(encoding="utf-8")
    assert "| news" in text and "232" in text and "—" in text and "Table 3" in text
    assert "3000 sentences" in text and "not directly comparable" in text
    assert "not available" not in text and "could not be retrieved" not in text
    assert paper_size(SetKey("news", "en-de", "preposition-stranding", "ge1")) == 8
    assert paper_size(SetKey("books", "de-en", "reflexive", "all")) == 13207


def test_sizes_from_records_must_agree() -> None:
    records = [_score("a", "particle", "ge1", 20.0, 5), _score("b", "particle", "ge1", 21.0, 5),
               _score("a", "baseline", "all", 25.0, 3000)]
    assert sizes_from_records(records) == {SetKey("news", "de-en", "particle", "ge1"): 5}
    with pytest.raises(ValueError, match="5 sentences in one record and 6"):
        sizes_from_records([*records, _score("c", "particle", "ge1", 20.0, 6)])


def test_bleu_table_pairs_sets_with_their_baseline() -> None:
    records = [_score("m1", "baseline", "all", 30.0, 3000), _score("m1", "particle", "ge1", 25.5),
               _score("m2", "particle", "ge1", 22.0)]
    frame, notes = bleu_table(records)
    rows = frame.to_dict("records")
    assert [r["model"] for r in rows] == ["m1", "m2"]
    # 25.5 - 30.0 = -4.50; m2 has no baseline record.
    assert (rows[0]["BLEU"], rows[0]["baseline BLEU"], rows[0]["Δ BLEU"]) == (
        "25.50", "30.00", "-4.50")
    assert rows[1]["baseline BLEU"] is None
    assert any("tok:13a" in n for n in notes) and any("Table 4" in n for n in notes)
    # Table 4, News De→En: Particle 27.46 (Transformer) / 23.98 (Nematus), Baseline 28.23 /
    # 26.32; printed as in the paper.
    assert (rows[0]["paper BLEU (Transformer)"], rows[0]["paper BLEU (Nematus)"]) == (
        "27.46", "23.98")
    assert (rows[0]["paper baseline BLEU (Transformer)"],
            rows[0]["paper baseline BLEU (Nematus)"]) == ("28.23", "26.32")
    assert list(frame.columns).index("paper BLEU (Transformer)") == (
        list(frame.columns).index("BLEU") + 1)
    assert any("Transformer column is the comparable one" in n for n in notes)
    assert any("10,000 (Transformer) and 1,000 (Nematus)" in n for n in notes)
    # En→De Books: Baseline 6.33, Reorder 4.31 (Transformer); a ≥2 set is not in Table 4.
    books = [_score("m1", "baseline", "all", 7.0, 3000, direction="en-de", corpus="books"),
             _score("m1", "reorder", "ge5", 5.0, direction="en-de", corpus="books"),
             _score("m1", "particle", "ge2", 5.0, direction="en-de", corpus="books")]
    rows = {r["bin"]: r for r in bleu_table(books)[0].to_dict("records")}
    assert rows["ge5"]["paper BLEU (Transformer)"] == "4.31"
    assert rows["ge5"]["paper baseline BLEU (Transformer)"] == "6.33"
    assert rows["ge2"]["paper BLEU (Transformer)"] is None
    assert rows["ge2"]["paper BLEU (Nematus)"] is None
    assert rows["ge2"]["paper baseline BLEU (Nematus)"] == "12.25"
    assert any("3000 sentences in the full corpus" in n for n in notes)
    # A multi-bleu score pairs with the multi-bleu baseline only.
    multi = {**_score("m1", "particle", "ge1", 27.0), "scoring": "multi-bleu"}
    multi["bleu"] = {"bleu": 27.0, "signature": "nrefs:1|case:mixed|tok:none"}
    base = {**_score("m1", "baseline", "all", 31.0, 3000), "scoring": "multi-bleu"}
    frame, notes = bleu_table([*records, multi, base])
    rows = frame.to_dict("records")
    assert [(r["scoring"], r["Δ BLEU"]) for r in rows] == [
        ("multi-bleu", "-4.00"), ("sacrebleu", "-4.50"), ("sacrebleu", None)]
    assert any(n.startswith("multi-bleu style") and "tok:none" in n for n in notes)


def test_distance_table_correlates_bleu_with_distance(tmp_path: Path) -> None:
    # particle: 30, 25, 27, 20 at 0..3 -> rho -0.800 (see test_spearman_known_case).
    records = [_score("m", "particle", b, v) for b, v in
               zip(("all", "ge1", "ge2", "ge3"), (30.0, 25.0, 27.0, 20.0), strict=True)]
    records += [_score("m", "reflexive", b, 18.0) for b in ("all", "ge1", "ge2", "ge3")]
    # preposition stranding: 20, 25, 23, 30 -> ranks 1 3 2 4, rho +0.800
    records += [_score("m", "preposition-stranding", b, v) for b, v in
                zip(("all", "ge1", "ge2", "ge3"), (20.0, 25.0, 23.0, 30.0), strict=True)]
    records += [_score("m", "particle", "eq1", 10.0), _score("m", "baseline", "all", 31.0)]
    frame, notes = distance_table(records)
    rows = {r["phenomenon"]: r for r in frame.to_dict("records")}
    assert rows["particle"]["BLEU ≥1"] == "25.00"
    assert rows["particle"]["Spearman ρ"] == "-0.800"
    assert rows["preposition-stranding"]["Spearman ρ"] == "0.800"
    # no p: nested bins and four points (the exact p of rho = 1 would be 2/24)
    assert "p" not in frame.columns and "p (Holm)" not in frame.columns
    assert any("no p-value is given" in note and "2/24 = 0.083" in note for note in notes)
    assert rows["reflexive"]["Spearman ρ"] is None
    assert "same at every distance" in rows["reflexive"]["note"]
    # Pearson: x - 1.5 = -1.5, -0.5, 0.5, 1.5; y - 25.5 = 4.5, -0.5, 1.5, -5.5; Sxy = -14,
    # Sxx = 5, Syy = 53; r = -14 / sqrt(265) = -0.860.
    assert rows["particle"]["Pearson r"] == "-0.86"
    # The paper's Table 5 has Books only: News rows get empty paper cells.
    assert rows["particle"]["paper BLEU ≥1 (Transformer)"] is None
    assert rows["particle"]["paper corr. (Transformer)"] is None
    md = tmp_path / "d.md"
    write_table(frame, md, tmp_path / "d.csv", "distance", notes)
    text = md.read_text(encoding="utf-8")
    assert "-0.800" in text and "labelled Spearman" in text and "Pearson" in text


def test_distance_table_shows_the_papers_books_rows() -> None:
    records = [_score("m", "particle", b, v, corpus="books") for b, v in
               zip(("all", "ge1", "ge2", "ge3"), (9.0, 8.0, 8.5, 7.0), strict=True)]
    frame, _ = distance_table(records)
    row = frame.to_dict("records")[0]
    # Table 5, Transformer German Particle: 7.56, 7.52, 7.5, 7.49, "Spearman" -0.96;
    # Nematus German Particle: 15.48, 15.41, 14.45, 12.36, -0.92.
    assert [row[f"paper BLEU {t} (Transformer)"] for t in ("All", "≥1", "≥2", "≥3")] == [
        "7.56", "7.52", "7.5", "7.49"]
    assert [row[f"paper BLEU {t} (Nematus)"] for t in ("All", "≥1", "≥2", "≥3")] == [
        "15.48", "15.41", "14.45", "12.36"]
    assert (row["paper corr. (Transformer)"], row["paper corr. (Nematus)"]) == ("-0.96", "-0.92")
    # The paper's "Spearman" is Pearson's r of its own row: r(0..3; 7.56, 7.52, 7.5, 7.49)
    # = -0.959, while Spearman's rho of that strictly falling row is -1.
    paper = distance_correlation([0, 1, 2, 3], [7.56, 7.52, 7.5, 7.49])
    assert round(paper["r"], 2) == -0.96 and paper["rho"] == pytest.approx(-1.0)


def test_ribes_table() -> None:
    records = [_score("m", "reorder", "ge5", 20.0, ribes=0.7012),
               _score("m", "baseline", "all", 28.0, 3000, ribes=0.8123)]
    frame, notes = ribes_table(records)
    row = frame.to_dict("records")[0]
    # 0.7012 - 0.8123 = -0.1111
    assert (row["RIBES"], row["baseline RIBES"], row["Δ RIBES"]) == (
        "0.7012", "0.8123", "-0.1111")
    assert any("α = 0.25, β = 0.1" in n for n in notes)
    # Table 6, German source, News: Reorder 0.79, Baseline 0.82 (the Transformer).
    assert (row["paper RIBES"], row["paper baseline RIBES"]) == ("0.79", "0.82")
    assert any("Table 6" in n for n in notes)
    # English source, Books: Reorder 0.53, Baseline 0.56; a d ≥ 7 set is not in the paper.
    books = [_score("m", "reorder", "ge5", 5.0, ribes=0.5, direction="en-de", corpus="books"),
             _score("m", "reorder", "ge7", 5.0, ribes=0.5, direction="en-de", corpus="books"),
             _score("m", "baseline", "all", 7.0, 3000, ribes=0.6, direction="en-de",
                    corpus="books")]
    rows = {r["bin"]: r for r in ribes_table(books)[0].to_dict("records")}
    assert (rows["ge5"]["paper RIBES"], rows["ge5"]["paper baseline RIBES"]) == ("0.53", "0.56")
    assert rows["ge7"]["paper RIBES"] is None


def test_control_table() -> None:
    refs = [f"r{i} a b c d" for i in range(8)]
    hyps = ["x y z u v", *refs[1:]]
    record = control_record(SetKey("news", "de-en", "reflexive", "ge2"), "m", hyps, refs,
                            ["s"] * 8, [1], draws=4, seed=2, exclude_set=True)
    frame, notes = control_table([record])
    row = frame.to_dict("records")[0]
    assert (row["BLEU"], row["control mean"], row["rank"]) == ("0.00", "100.00", "1/5")
    assert any("4 random corpora" in n and "seed 2" in n for n in notes)
    assert any("Section 4.3" in n and "no numbers" in n for n in notes)
    # a set of one sentence gets no p: a handful of length-matched sentences says nothing
    assert row["p (lower)"] is None and row["p (Holm)"] is None


def test_control_table_holm_adjusts_the_sets_as_one_family() -> None:
    import copy

    refs = [f"r{i} a b c d" for i in range(8)]
    base = control_record(SetKey("news", "de-en", "reflexive", "ge2"), "m", refs, refs,
                          ["s"] * 8, [1], draws=4, seed=2, exclude_set=True)
    records = []
    for bin_, p_lower in (("ge1", 0.01), ("ge2", 0.04), ("ge3", 0.03)):
        record = copy.deepcopy(base)
        record.update(bin=bin_, sentences=12)
        record["control"].update(draws=99, p_lower=p_lower)
        records.append(record)
    frame, notes = control_table(records)
    rows = {r["bin"]: r for r in frame.to_dict("records")}
    # Holm over 3: 0.01 x 3 = 0.03; 0.03 x 2 = 0.06; 0.04 x 1 = 0.04 -> max so far 0.06
    assert [rows[b]["p (Holm)"] for b in ("ge1", "ge3", "ge2")] == ["0.0300", "0.0600", "0.0600"]
    note = next(n for n in notes if "p (Holm)" in n)
    assert "3 tested sets" in note and "1/(draws + 1) = 0.0100" in note
    assert "at least 59 draws" in note  # 20 x 3 - 1


# --- command line -------------------------------------------------------------------------------

def test_cli_is_registered_beside_the_other_commands() -> None:
    assert "phenomt.ldd.cli" in COMMAND_MODULES
    parser = build_parser(COMMAND_MODULES)
    args = parser.parse_args(["table", "ldd-bleu", "--scores", "a.json", "--md", "x.md",
                              "--csv", "x.csv"])
    assert (args.table, args.inputs) == ("bleu", ["a.json"])


def test_cli_select_score_control_and_tables(tmp_path: Path) -> None:
    refs = write(tmp_path / "full.en", [f"the {w} sat on the mat ." for w in
                                        ("cat", "dog", "bird", "cow", "fox", "owl")])
    hyps = write(tmp_path / "full.hyp", ["the cat sat on the mat .", "a dog sits on a mat .",
                                         "the bird sat on the mat .", "cow mat",
                                         "the fox sat on the mat .", "the owl sat on a mat ."])
    srcs = write(tmp_path / "full.tok.de", ["die Katze saß auf der Matte ."] * 6)
    ids = write(tmp_path / "set.ids", ["2", "4"])
    write(tmp_path / "set.ref", ["the dog sat on the mat .", "the cow sat on the mat ."])
    assert run_cli(["ldd", "select", "--full", str(hyps), "--ids", str(ids),
                    "--output", str(tmp_path / "set.hyp")]) == 0
    assert (tmp_path / "set.hyp").read_text() == "a dog sits on a mat .\ncow mat\n"
    common = ["--model", "m", "--corpus", "news", "--direction", "de-en"]
    assert run_cli(["ldd", "score", *common, "--phenomenon", "particle", "--bin", "ge1",
                    "--hyp", str(hyps), "--ref", str(refs), "--ids", str(ids),
                    "--set-ref", str(tmp_path / "set.ref"),
                    "--output", str(tmp_path / "s.json")]) == 0
    score = json.loads((tmp_path / "s.json").read_text())
    assert (score["sentences"], score["corpus_sentences"]) == (2, 6)
    assert score["bleu"] == get("bleu").summary(
        ["a dog sits on a mat .", "cow mat"],
        ["the dog sat on the mat .", "the cow sat on the mat ."])
    assert score["bleu"]["bleu"] == round(sacrebleu.corpus_bleu(
        ["a dog sits on a mat .", "cow mat"],
        [["the dog sat on the mat .", "the cow sat on the mat ."]]).score, 2)
    assert run_cli(["ldd", "score", *common, "--phenomenon", "baseline", "--hyp", str(hyps),
                    "--ref", str(refs), "--output", str(tmp_path / "b.json")]) == 0
    baseline = json.loads((tmp_path / "b.json").read_text())
    assert baseline["sentences"] == 6 and baseline["ribes"] is not None
    with pytest.raises(InputError, match=r"full\.en: has 6 lines but the ids select 2"):
        run_cli(["ldd", "score", *common, "--phenomenon", "particle", "--hyp", str(hyps),
                 "--ref", str(refs), "--ids", str(ids), "--set-ref", str(refs),
                 "--output", str(tmp_path / "x.json")])
    control_args = ["ldd", "control", *common, "--phenomenon", "particle", "--bin", "ge1",
                    "--hyp", str(hyps), "--ref", str(refs), "--src", str(srcs), "--ids",
                    str(ids), "--draws", "5", "--seed", "3"]
    assert run_cli([*control_args, "--output", str(tmp_path / "c1.json")]) == 0
    assert run_cli([*control_args, "--output", str(tmp_path / "c2.json")]) == 0
    assert (tmp_path / "c1.json").read_bytes() == (tmp_path / "c2.json").read_bytes()
    s_json, b_json, c_json = (str(tmp_path / f"{n}.json") for n in ("s", "b", "c1"))
    for table, inputs in (("sizes", ["--scores", s_json]),
                          ("bleu", ["--scores", s_json, b_json]),
                          ("distance", ["--scores", s_json]),
                          ("ribes", ["--scores", b_json]),
                          ("control", ["--controls", c_json])):
        md, csv_path = tmp_path / f"{table}.md", tmp_path / f"{table}.csv"
        assert run_cli(["table", f"ldd-{table}", *inputs, "--md", str(md),
                        "--csv", str(csv_path)]) == 0
        assert md.read_text(encoding="utf-8").startswith("# ") and csv_path.is_file()
    # One file for the baseline and every set: the same records as one command per set.
    together = tmp_path / "all.json"
    assert run_cli(["ldd", "score-sets", *common, "--hyp", str(hyps), "--ref", str(refs),
                    "--set", f"particle.ge1={ids}", "--output", str(together)]) == 0
    bundle = json.loads(together.read_text())
    assert bundle["schema"] == "phenomt.ldd.scores/1"
    assert bundle["records"] == [baseline, score]
    from_bundle, md = tmp_path / "bundle.csv", tmp_path / "bundle.md"
    assert run_cli(["table", "ldd-bleu", "--scores", str(together), "--md", str(md),
                    "--csv", str(from_bundle)]) == 0
    assert from_bundle.read_text() == (tmp_path / "bleu.csv").read_text()
    for bad, message in (("particle=x.ids", "expected PHENOMENON.BIN=PATH"),
                         ("baseline.all=x.ids", "not the baseline"),
                         ("particle.ge0=x.ids", "bad distance bin")):
        with pytest.raises(InputError, match=message):
            run_cli(["ldd", "score-sets", *common, "--hyp", str(hyps), "--ref", str(refs),
                     "--set", bad, "--output", str(tmp_path / "x.json")])
    assert not (tmp_path / "x.json").exists()
    with pytest.raises(InputError, match="command line: bad distance bin 'ge0'"):
        run_cli([*control_args, "--bin", "ge0", "--output", str(tmp_path / "x.json")])
    with pytest.raises(InputError, match="not a phenomt.ldd.score/1 record"):
        run_cli(["table", "ldd-bleu", "--scores", str(tmp_path / "c1.json"),
                 "--md", str(tmp_path / "x.md"), "--csv", str(tmp_path / "x.csv")])


def test_cli_sheet_export_and_import(tmp_path: Path) -> None:
    prefix = _particle_set(tmp_path)
    sheet = tmp_path / "sheet.tsv"
    assert run_cli(["ldd", "sheet-export", "--set", f"news/de-en/particle/ge2={prefix}",
                    "--per-set", "3", "--seed", "4", "--output", str(sheet)]) == 0
    lines = sheet.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4
    write(sheet, [lines[0], *(line + "y" for line in lines[1:])])
    md = tmp_path / "p.md"
    assert run_cli(["ldd", "sheet-import", "--sheet", str(sheet), "--md", str(md),
                    "--csv", str(tmp_path / "p.csv")]) == 0
    assert "100.0" in md.read_text(encoding="utf-8")


def test_empty_sets_are_scored_as_empty_and_shown_in_the_tables() -> None:
    # Extraction writes an empty set as empty files; it has no BLEU, RIBES or control.
    key = SetKey("news", "en-de", "reorder", "ge5")
    empty = score_set(key, "m", [], [], corpus_sentences=3000)
    assert (empty["sentences"], empty["bleu"], empty["ribes"]) == (0, None, None)
    control = control_record(key, "m", ["a b"], ["a b"], ["x y"], [])
    assert (control["bleu"], control["signature"], control["control"]) == (None, None, None)
    baseline = _score("m", "baseline", "all", 30.0, 3000, ribes=0.8, direction="en-de")
    rows = bleu_table([empty, baseline])[0].to_dict("records")
    assert (rows[0]["sentences"], rows[0]["BLEU"], rows[0]["Δ BLEU"]) == (0, None, None)
    assert ribes_table([empty, baseline])[0].to_dict("records")[0]["RIBES"] is None
    assert control_table([control])[0].to_dict("records")[0]["rank"] is None
