"""TCP on a hand-made case (tests/data/lexcons/tcp), one document per category, window 2.

tense  ref "he went home and he slept" (6 tokens), hyp has 8 tokens (ratio 8/6):
       item 1:went,walked   → p = int(1·8/6) = 1, span hyp[0:3] "he walked home" → hit
       item 5:slept,fell asleep → p = int(5·8/6) = 6, span hyp[4:8] "fell asleep quickly ."
                                → hit (two-token alternative)                      2/2
conj   ref "it rained but we played", hyp "it rained and we played" (same length):
       item 2:but,however → span hyp[0:4] "it rained and we" → miss
       item 4:played      → span hyp[2:5] "and we played"    → hit                 1/2
pron   ref "Mary said she left" (4), hyp "Mary said that she had left" (6):
       item 2:she → p = int(2·6/4) = 3, span hyp[1:5] "said that she had" → hit   1/1
TCP = (1 · 0.5 · 1)^(1/3) = 0.7937…
"""

from __future__ import annotations

import json

import pytest

from phenomt.cli import build_parser
from phenomt.core.io import InputError
from phenomt.core.metrics import tcp
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "lexcons" / "tcp"


def test_hand_made_case():
    result = tcp.score_files(DATA / "hyp.txt", DATA / "ref.tok", DATA / "candidates",
                             groups=(1, 1, 1), window=2)
    assert (result["tense"]["hits"], result["tense"]["items"]) == (2, 2)
    assert (result["conjunction"]["hits"], result["conjunction"]["items"]) == (1, 2)
    assert (result["pronoun"]["hits"], result["pronoun"]["items"]) == (1, 1)
    assert result["tcp"] == pytest.approx(0.5 ** (1 / 3))


def test_window_bounds_and_token_matching():
    item = tcp.Item(0, (("fell", "asleep"),))
    assert not tcp.item_hit(["fell", "asleepy"], 2, item, 20)  # tokens, not substrings
    assert tcp.item_hit(["x", "fell", "asleep"], 3, item, 3)
    # window 2 around 0 covers hyp[0:2]: a phrase ending at index 2 is outside
    assert not tcp.item_hit(["x", "fell", "asleep"], 3, item, 2)


def test_sentence_file_grouped_by_counts_and_cli(tmp_path):
    out = tmp_path / "tcp.json"
    args = build_parser(["phenomt.core.metrics.tcp"]).parse_args([
        "score", "tcp", "--hyp", str(DATA / "hyp.sent"), "--n-sent", str(DATA / "n_sent"),
        "--reference", str(DATA / "ref.tok"), "--candidates", str(DATA / "candidates"),
        "--groups", "1", "1", "1", "--window", "2", "--output", str(out)])
    assert args.handler(args) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["tcp"] == pytest.approx(0.5 ** (1 / 3))


def test_a_zero_rate_gives_zero_and_bad_key_names_line(tmp_path):
    result = tcp.score([["a"], ["b"], ["c"]], [["x"], ["y"], ["z"]],
                       [[tcp.Item(0, (("x",),))], [tcp.Item(0, (("b",),))],
                        [tcp.Item(0, (("c",),))]], groups=(1, 1, 1))
    assert result["tense"]["rate"] == 0 and result["tcp"] == 0
    bad = tmp_path / "cands"
    bad.write_text("1:went\nfoo\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"cands:2"):
        tcp.parse_candidates(bad)


def test_real_key_scores_the_reference_perfectly(mirror):
    d2d = mirror / "doc2doc-zhen"
    result = tcp.score_files(d2d / "doc.en.tok", d2d / "doc.en.tok", d2d / "doc.en.candidates")
    assert result["tcp"] == pytest.approx(1.0)
    assert (result["tense"]["documents"], result["conjunction"]["documents"],
            result["pronoun"]["documents"]) == (50, 46, 52)


def test_a_sample_of_whole_documents_is_scored_per_sampled_category(tmp_path):
    """The conjunction document left out (document_step 2 keeps the 1st and 3rd): tense
    2/2 and pronoun 1/1 as above, conjunction has no document, so TCP is undefined."""
    sample = tmp_path / "hyp"
    sample.write_text("he walked home then\nfell asleep quickly .\nMary said that she had "
                      "left\n", encoding="utf-8")
    ids = tmp_path / "ids"
    ids.write_text("doc00001\ndoc00001\ndoc00003\n", encoding="utf-8")
    result = tcp.score_files(sample, DATA / "ref.tok", DATA / "candidates", DATA / "n_sent",
                             groups=(1, 1, 1), window=2, docids=ids)
    assert (result["tense"]["hits"], result["tense"]["items"]) == (2, 2)
    assert result["conjunction"] == {"hits": 0, "items": 0, "rate": None, "documents": 0}
    assert result["pronoun"]["rate"] == 1 and result["tcp"] is None
    # a document cut short is refused, naming the file and line
    ids.write_text("doc00001\ndoc00003\ndoc00003\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"ids:1.*1 lines here, 2 in"):
        tcp.score_files(sample, DATA / "ref.tok", DATA / "candidates", DATA / "n_sent",
                        groups=(1, 1, 1), window=2, docids=ids)
