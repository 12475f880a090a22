"""The length limit of the parse and the alignment (phenomt.core.linelimit): which lines are
kept out, and the challenge-set tables' note naming them."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from phenomt.core import linelimit
from phenomt.core.io import InputError
from phenomt.core.linelimit import MAX_TOKENS
from tests.test_systems_ldd import _write, run

REFS = ["the cat sat on mats", "a dog ran far away", "birds sing in the morning"]
HUGE = "a " * 500_000  # a 1 MB line


def test_the_limit_counts_whitespace_tokens():
    assert linelimit.token_count("  a  b\tc ") == 3
    at, over = " ".join(["x"] * MAX_TOKENS), " ".join(["x"] * (MAX_TOKENS + 1))
    assert not linelimit.over_limit(at) and linelimit.over_limit(over)
    assert linelimit.over_limit(HUGE) and linelimit.over_limit(MAX_TOKENS + 1)
    assert not linelimit.over_limit(over.split()[:MAX_TOKENS])
    # a single 1 MB token is one token: UDPipe and the aligner take it in stride
    assert not linelimit.over_limit("b" * 1_000_000)


def test_kept_out_separates_parse_and_alignment():
    src = ["short", HUGE, "short", "short", HUGE]
    tgt = ["short", "short", HUGE, "short", HUGE]
    found = linelimit.kept_out(src, tgt)
    assert found == {"limit": MAX_TOKENS, "unit": "whitespace tokens of the tokenized line",
                     "lines": 5, "parse_and_alignment": [2, 5], "alignment_only": [3]}
    assert linelimit.kept_out_note(found) == (
        "2 lines over 1,000 tokens (lines 2, 5) were kept out of parsing and alignment; 1 line "
        "whose target side is over 1,000 tokens (line 3) was kept out of alignment (the source "
        "was parsed): such a line holds no challenge-set instance but stays in the full test "
        "set and its BLEU.")
    assert linelimit.kept_out_note(linelimit.kept_out(["short"], ["short"])) is None
    assert linelimit.kept_out_note(None) is None
    with pytest.raises(ValueError):
        linelimit.kept_out(src, tgt[:2])


def test_a_long_list_of_lines_is_cut_short():
    assert linelimit.name_lines([4]) == "line 4"
    assert linelimit.name_lines(list(range(1, 8)), limit=3) == "lines 1, 2, 3 and 4 more"


@pytest.fixture
def testset(tmp_path: Path) -> dict:
    """30 lines: a 1 MB tokenized source on line 17, a target over the limit on line 20, and
    one lexical challenge set of lines 1 and 2."""
    refs = REFS * 10
    ref = _write(tmp_path / "ref.en", refs)
    src_tok = [f"das ist satz {n} ." for n in range(1, 31)]
    src_tok[16] = HUGE.strip()
    ref_tok = list(refs)
    ref_tok[19] = " ".join(["w"] * (MAX_TOKENS + 1))
    _write(tmp_path / "particle.ge1.ids", ["1", "2"])
    _write(tmp_path / "particle.ge1.ref", refs[:2])
    return {"dir": tmp_path, "ref": ref, "hyp": _write(tmp_path / "hyp.en", refs),
            "tokenized": [_write(tmp_path / "src.tok", src_tok),
                          _write(tmp_path / "ref.tok", ref_tok)],
            "set": f"particle.ge1={tmp_path / 'particle.ge1'}"}


def test_challenge_tables_name_the_lines_kept_out(testset):
    d = testset["dir"]
    record = d / "A.ldd.json"
    assert run("systems", "ldd-score", "--testset", "toy", "--system", "A", "--hyp",
               testset["hyp"], "--ref", testset["ref"], "--target-lang", "en", "--set",
               testset["set"], "--tokenized", *testset["tokenized"], "--samples", "50",
               "--output", record) == 0
    saved = json.loads(record.read_text(encoding="utf-8"))
    assert saved["kept_out"]["parse_and_alignment"] == [17]
    assert saved["kept_out"]["alignment_only"] == [20]
    # the line stays in the full test set
    assert saved["full"]["sentences"] == 30
    for kind in ("bleu", "distance", "ribes"):
        md = d / f"{kind}.md"
        assert run("table", "systems-ldd", "--kind", kind, "--records", record,
                   "--md", md, "--csv", d / f"{kind}.csv") == 0
        text = md.read_text(encoding="utf-8")
        assert ("toy: 1 line over 1,000 tokens (line 17) was kept out of parsing and "
                "alignment; 1 line whose target side is over 1,000 tokens (line 20) was kept "
                "out of alignment") in text


def test_tokenized_files_must_match_the_test_set(testset):
    short = _write(testset["dir"] / "short.tok", ["a b"] * 29)
    with pytest.raises(InputError, match="has 29 lines but the test set's reference"):
        run("systems", "ldd-score", "--testset", "toy", "--system", "A", "--hyp",
            testset["hyp"], "--ref", testset["ref"], "--target-lang", "en", "--set",
            testset["set"], "--tokenized", short, short, "--output", testset["dir"] / "x")


def test_plan_passes_the_tokenized_test_set_to_the_challenge_scores():
    from phenomt.plan import Plan, load_config
    from phenomt.plan.systems import ldd_corpus
    from tests.conftest import ROOT

    plan = Plan(load_config(ROOT / "config" / "config.yaml"))
    testset = plan.systems.ldd_testsets[0]
    tokenized = plan.systems.ldd_tokenized(testset)
    corpus, direction = ldd_corpus(testset), plan.systems.direction(testset)
    # what the parse and the aligner read
    assert tokenized[0] == plan.ldd.parse_input(corpus, direction.split("-")[0])
    assert tokenized == [plan.ldd.source(corpus, direction), plan.ldd.target(corpus, direction)]
    assert set(tokenized) <= set(plan.systems.ldd_set_files(testset))
    args = shlex.split(plan.systems.ldd_set_args(testset))
    assert args[args.index("--tokenized") + 1:args.index("--tokenized") + 3] == tokenized


def test_a_1mb_hypothesis_line_gets_no_ribes_but_keeps_its_bleu(testset):
    """nltk's RIBES refuses (or, older, takes hours over) a 500,000-token line: the line is left
    out of the RIBES mean and named, and scored by BLEU as the rest."""
    d = testset["dir"]
    refs = REFS * 10
    hyps = list(refs)
    hyps[2] = HUGE.strip()  # line 3: every other line equals its reference
    hyp = _write(d / "huge.en", hyps)
    _write(d / "reorder.ge5.ids", ["1", "3", "4"])
    _write(d / "reorder.ge5.ref", [refs[0], refs[2], refs[3]])
    record = d / "H.ldd.json"
    assert run("systems", "ldd-score", "--testset", "toy", "--system", "H", "--hyp", hyp,
               "--ref", testset["ref"], "--target-lang", "en", "--set", testset["set"],
               f"reorder.ge5={d / 'reorder.ge5'}", "--samples", "50", "--output",
               record) == 0
    saved = json.loads(record.read_text(encoding="utf-8"))
    assert saved["ribes_unscored"] == [3]
    # the other lines equal their references: RIBES 1 over them
    assert saved["full"]["ribes"]["score"] == 1.0 and saved["full"]["ribes"]["unscored"] == 1
    reorder = saved["sets"]["reorder.ge5"]
    assert reorder["ribes"]["score"] == 1.0 and reorder["ribes"]["unscored"] == 1
    # BLEU still scores line 3: far below 100 on the set holding it, within 0-100
    assert 0.0 <= reorder["bleu"]["ci_low"] <= reorder["bleu"]["score"] < 100.0
    md = d / "ribes.md"
    assert run("table", "systems-ldd", "--kind", "ribes", "--records", record,
               "--md", md, "--csv", d / "ribes.csv") == 0
    assert ("RIBES leaves out the lines whose hypothesis or reference has over 1,000 tokens "
            "(nltk's word alignment is super-linear in length); they stay in BLEU: H: line 3."
            ) in md.read_text(encoding="utf-8")
