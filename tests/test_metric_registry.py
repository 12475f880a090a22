"""The metric interface and registry (phenomt.core.metrics.base): every registered metric
scores as its reference implementation does, subsets sum, and the generic command works."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sacrebleu

from phenomt.cli import main
from phenomt.core.io import InputError
from phenomt.core.metrics import base
from phenomt.core.metrics.base import Metric
from phenomt.core.metrics.ribes import corpus_ribes_score, ribes_tokens
from phenomt.core.tables import load_score

HYPS = ["the cat sat on the mat .", "a dog dog barks loudly", "hello there", ""]
REFS = ["the cat sat on a mat .", "the dog barks", "hello there , friend", "nothing here"]
SRCS = ["die Katze sass auf der Matte .", "der Hund bellt", "hallo , Freund", "nichts"]


def test_the_registry_knows_every_metric():
    assert base.names() == ["bleu", "chrf", "comet", "crr", "drr", "ltcr", "ribes", "ter"]
    with pytest.raises(KeyError, match="unknown metric 'meteor'"):
        base.get("meteor")


def test_every_metric_class_in_the_package_is_registered():
    base.names()

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)
    concrete = {c for c in subclasses(Metric) if getattr(c, "name", None)
                and c.__module__.startswith("phenomt.core.metrics")}
    assert concrete == set(base.METRICS.values())


def test_a_second_metric_of_the_same_name_is_refused():
    class Other(base.Metric):
        name = "bleu"

    with pytest.raises(ValueError, match="two metrics named 'bleu'"):
        base.register(Other)


@pytest.mark.parametrize("name, reference", [
    ("bleu", lambda h, r: sacrebleu.corpus_bleu(h, [r]).score),
    ("chrf", lambda h, r: sacrebleu.corpus_chrf(h, [r]).score),
    ("ter", lambda h, r: sacrebleu.corpus_ter(h, [r]).score),
    ("ribes", lambda h, r: corpus_ribes_score(ribes_tokens(h), ribes_tokens(r))),
])
def test_summed_statistics_give_the_reference_implementations_score(name, reference):
    metric = base.get(name)
    assert metric.corpus_score(HYPS, REFS).value == pytest.approx(reference(HYPS, REFS))
    # a subset's rows give that subset's corpus score
    stats = metric.statistics(HYPS, REFS)
    assert stats.shape[0] == len(HYPS)
    assert metric.score(stats[:2].sum(axis=0)) == pytest.approx(reference(HYPS[:2], REFS[:2]))


def test_crr_and_drr_by_hand():
    # Moses tokens. "a dog dog barks loudly": one continuous pair of 4; "the cat sat on the mat
    # .": "the ... the" is discontinuous, but "the" is among the reference's stopwords (k = 1:
    # the most frequent reference token) and so exempt. Denominators 6 + 4 + 1 + 0 = 11.
    crr, drr = (base.get(n, target_lang="en", source_lang="de", stopword_count=1)
                for n in ("crr", "drr"))
    assert crr.corpus_score(HYPS, REFS, SRCS).value == pytest.approx(100 / 11)
    assert drr.corpus_score(HYPS, REFS, SRCS).value == pytest.approx(0.0)
    # without stopwords the repeated "the" counts
    drr0 = base.get("drr", target_lang="en", source_lang="de", stopword_count=0)
    assert drr0.corpus_score(HYPS, REFS, SRCS).value == pytest.approx(100 / 11)
    with pytest.raises(ValueError, match="needs one source sentence"):
        crr.statistics(HYPS, REFS)


def test_signatures_name_the_settings():
    assert "tok:zh" in base.get("bleu", tokenize="zh").signature()
    assert "nw:2" in base.get("chrf", word_order=2).signature()
    assert base.get("crr", target_lang="zh", source_lang="en").signature() == (
        "tok:moses|langs:en-zh|stopwords:3|synonyms:identical")


def test_compare_pairs_sentences():
    ter = base.get("ter")
    same = ter.compare(HYPS, HYPS, REFS, samples=50)
    assert (same.difference, same.p) == (0.0, 1.0)
    better = ter.compare(REFS, HYPS, REFS, samples=50)
    assert better.a == 0.0 and better.difference < 0


def test_score_record_pairs_with_the_baseline_like_compare():
    ter = base.get("ter")
    record = base.score_record(ter, REFS, REFS, samples=50, baseline=HYPS)
    assert record["baseline"] == ter.compare(REFS, HYPS, REFS, samples=50).as_dict()
    with pytest.raises(ValueError, match="hypotheses"):
        base.score_record(ter, REFS, REFS, baseline=HYPS[:-1])


def test_score_commands_are_generated_from_the_registry(tmp_path, capsys):
    hyp, ref = tmp_path / "hyp", tmp_path / "ref"
    hyp.write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    ref.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    out = tmp_path / "ter.json"
    assert main(["score", "ter", "--hyp", str(hyp), "--ref", str(ref), "--baseline", str(ref),
                 "--samples", "50", "--meta", "model=m", "--output", str(out)]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["score"] == pytest.approx(sacrebleu.corpus_ter(HYPS, [REFS]).score)
    assert record["higher_is_better"] is False and len(record["ci"]) == 2
    assert record["baseline"]["b"] == 0.0 and record["meta"] == {"model": "m"}
    assert record["statistics"]["columns"] == ["edits", "ref_length"]
    assert len(record["statistics"]["rows"]) == len(HYPS)
    assert load_score(out, "ter")["score"] == record["score"]
    # a setting of the metric's constructor is an option of the same name
    assert main(["score", "ter", "--hyp", str(hyp), "--ref", str(ref), "--case-sensitive",
                 "--output", str(out)]) == 0
    cased = json.loads(out.read_text(encoding="utf-8"))
    assert cased["score"] == pytest.approx(
        sacrebleu.metrics.TER(case_sensitive=True).corpus_score(HYPS, [REFS]).score)
    assert "case:lc" in record["signature"] and "case:mixed" in cased["signature"]
    assert "statistics" not in cased
    capsys.readouterr()
    with pytest.raises(SystemExit):  # not a setting of TER
        main(["score", "ter", "--hyp", str(hyp), "--ref", str(ref), "--tokenize", "13a"])
    with pytest.raises(SystemExit):  # CRR reads the source
        main(["score", "crr", "--hyp", str(hyp), "--ref", str(ref)])
    with pytest.raises(SystemExit):  # not one of sacreBLEU's tokenizers
        main(["score", "bleu", "--hyp", str(hyp), "--ref", str(ref), "--tokenize", "nope"])
    assert {f"score {name}" for name in base.names()} <= _commands()


def _commands() -> set[str]:
    from phenomt.cli import build_parser

    found = set()
    for group, parser in _subparsers(build_parser()).items():
        found.update(f"{group} {name}" for name in _subparsers(parser))
    return found


def _subparsers(parser) -> dict:
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_bleu_record_details_are_sacrebleus(tmp_path):
    hyp, ref = tmp_path / "hyp", tmp_path / "ref"
    hyp.write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    ref.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    out = tmp_path / "bleu.json"
    assert main(["score", "bleu", "--hyp", str(hyp), "--ref", str(ref), "--lowercase",
                 "--output", str(out)]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    expected = sacrebleu.corpus_bleu(HYPS, [REFS], lowercase=True)
    assert record["score"] == pytest.approx(expected.score)
    assert record["details"]["sys_len"] == expected.sys_len
    assert record["details"]["precisions"] == [round(p, 2) for p in expected.precisions]
    assert "case:lc" in record["signature"]


def test_load_score_names_the_file_it_refuses(tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"bleu": 20.0, "signature": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="other.json.*'phenomt score <metric>' record"):
        load_score(other)
    ter = tmp_path / "ter.json"
    ter.write_text(json.dumps({"metric": "ter", "score": 1.0, "signature": "s",
                               "sentences": 1, "ci": None, "meta": {}}), encoding="utf-8")
    with pytest.raises(InputError, match="scores 'ter', expected 'bleu'"):
        load_score(ter, "bleu")


def test_empty_corpus_statistics_have_the_metric_width():
    assert base.get("crr").statistics([], [], []).shape == (0, 3)
    assert np.isnan(base.get("ribes").score(np.zeros(2)))


@pytest.mark.parametrize("name", ["bleu", "chrf", "ter"])
def test_reference_information_is_extracted_once_and_in_steps(name, monkeypatch):
    """sacreBLEU's per-line reference information, kept per setting and reference lines:
    extracted in steps it is what sacreBLEU extracts at once, a second metric of the same
    setting reuses it, and the statistics on it are sacreBLEU's own."""
    monkeypatch.setattr(base, "_REFERENCE_INFO", {})
    metric = base.get(name)
    whole = base.get(name).metric._cache_references([REFS])
    assert len(metric.reference_info(REFS, limit=1)) == 1
    assert len(metric.reference_info(REFS, limit=3)) == 3
    info = metric.reference_info(REFS)
    assert info == whole
    again = base.get(name)
    assert again.reference_info(list(REFS)) is info
    fresh = base.get(name).metric
    expected = fresh._extract_corpus_statistics(HYPS, [REFS])
    assert again.statistics(HYPS, REFS).tolist() == np.asarray(expected, dtype=float).tolist()
    assert again.signature() == base.get(name).signature()  # nrefs:1 as before


def test_other_references_or_settings_get_their_own_information(monkeypatch):
    monkeypatch.setattr(base, "_REFERENCE_INFO", {})
    bleu = base.get("bleu")
    info = bleu.reference_info(REFS)
    other = [*REFS[:-1], "something else entirely"]  # as long, one line differs
    expected = base.get("bleu").metric._extract_corpus_statistics(HYPS, [other])
    assert bleu.statistics(HYPS, other).tolist() == np.asarray(expected, float).tolist()
    assert base.get("bleu", tokenize="none").reference_info(REFS) is not info
    # a few references are kept, the oldest dropped first
    for n in range(base.KEPT_REFERENCES + 2):
        bleu.reference_info([f"line {n}"] * len(REFS))
    assert len(base._REFERENCE_INFO) == base.KEPT_REFERENCES
    assert bleu.reference_info(REFS) is not info


def test_bleus_of_one_tokenizer_share_it_and_its_cache():
    """Every BLEU (and RIBES's tokens) of a tokenizer name uses one tokenizer, so a line
    sacreBLEU's LRU cache holds is not tokenized again by another metric."""
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    from phenomt.core.metrics.bleu import make_bleu
    from phenomt.core.metrics.ribes import ribes_tokens

    first, second = make_bleu("13a"), make_bleu("13a", lowercase=True)
    assert first.tokenizer is second.tokenizer
    assert make_bleu("none").tokenizer is not first.tokenizer
    line = "A line no other test tokenizes (made up: 3.14, & more)."
    hits = Tokenizer13a.__call__.cache_info().hits
    assert first._preprocess_segment(line) == "A line no other test tokenizes ( made up : " \
                                              "3.14 , & more ) ."
    assert ribes_tokens([line]) == [first.tokenizer(line).split()]
    assert Tokenizer13a.__call__.cache_info().hits == hits + 2
