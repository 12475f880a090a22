"""compare-mt's analyses on the one resampling engine (phenomt.systems.analysis), on hand-made
cases whose answers are worked out in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from phenomt.core.io import InputError
from phenomt.core.metrics import base as metrics
from phenomt.core.metrics import resample
from phenomt.systems import analysis, scores
from phenomt.systems.analysis import Frequencies


def test_bucket_labels_and_membership():
    assert analysis.bucket_labels(analysis.CORPUS_CUTOFFS) == [
        "<1", "1", "2", "3", "4", "[5, 10)", "[10, 100)", "[100, 1000)", ">=1000"]
    assert analysis.bucket_labels(analysis.LENGTH_CUTOFFS) == [
        "<10", "[10, 20)", "[20, 30)", "[30, 40)", "[40, 50)", "[50, 60)", ">=60"]
    # Zipf frequencies are continuous: the bucket from 3 to 4 holds 3.5 as well
    assert analysis.bucket_labels(analysis.ZIPF_CUTOFFS, discrete=False) == [
        "<1", "[1, 2)", "[2, 3)", "[3, 4)", "[4, 5)", "[5, 6)", "[6, 7)", ">=7"]
    assert analysis.wordfreq_frequencies("en").discrete is False
    cut = analysis.CORPUS_CUTOFFS
    assert [analysis.bucket_of(v, cut) for v in (0, 1, 4, 5, 9, 10, 999, 1000, 10**6)] == [
        0, 1, 4, 5, 5, 6, 7, 8, 8]


FREQ = {"the": 50, "cat": 3, "on": 20, "mat": 2, "a": 100}
# buckets: 0 unseen, 1 [1, 10), 2 >= 10
HAND = Frequencies("hand", lambda w: float(FREQ.get(w, 0)), (1, 10))


def test_word_statistics_by_hand():
    ref = [["the", "cat", "sat", "on", "the", "mat"]]
    hyp = [["The", "cat", "sits", "on", "a", "mat"]]
    # bucket 0: ref "sat", hyp "sits", nothing matched; bucket 1: cat, mat on both sides,
    # both matched; bucket 2: ref the x2 + on, hyp The + on + a (The looks up "the" but
    # matches only "The"): matched on = 1 of 3 and 3
    rows = analysis.word_statistics(hyp, ref, HAND)
    assert rows.tolist() == [[0, 1, 1, 2, 2, 2, 1, 3, 3]]
    # lower-case hypothesis: the matches once (min(1, 2)), on once: 2 of 3 and 3
    rows = analysis.word_statistics([["the", "cat", "sits", "on", "a", "mat"]], ref, HAND)
    assert rows[0, 6:].tolist() == [2, 3, 3]
    assert analysis.f_measure(rows[0, 6:]) == pytest.approx(200 * 2 / 6)  # P = R = 2/3
    assert analysis.f_measure(rows[0, 0:3]) == 0.0
    assert np.isnan(analysis.f_measure(np.zeros(3)))
    assert analysis.f_measures(np.array([[1, 1, 3], [0, 0, 0]]))[0] == pytest.approx(50.0)
    # punctuation is no word: it counts in no bucket
    with_stops = analysis.word_statistics([["cat", ",", "."]], [["cat", "."]], HAND)
    assert with_stops.tolist() == [[0, 0, 0, 1, 1, 1, 0, 0, 0]]


def test_bucket_words_list_each_buckets_first_sentences_by_hand():
    refs = [["the", "cat", "sat", "on", "the", "mat", "."], ["a", "dog"], ["the", "end"]]
    # bucket 0 (unseen): sat (line 1), dog (2), end (3); bucket 1: cat, mat (line 1);
    # bucket 2: the (once), on (line 1), a (2), the (3); "." is no word
    found = analysis.bucket_words(refs, HAND)
    assert found == [[(1, ["sat"]), (2, ["dog"]), (3, ["end"])], [(1, ["cat", "mat"])],
                     [(1, ["the", "on"]), (2, ["a"]), (3, ["the"])]]
    assert analysis.bucket_words(refs, HAND, shown=1)[0] == [(1, ["sat"])]


def test_length_rows_by_hand():
    assert analysis.length_rows([3, 10, 19, 60, 75]) == [[0], [1, 2], [], [], [], [], [3, 4]]


def test_a_reference_length_is_its_bleu_token_count():
    refs = ["The cat, the mat.", "", "a b c d e f g h i j"]  # 6, 0 and 10 13a tokens
    stats = metrics.get("bleu", tokenize="13a").statistics(["x"] * 3, refs)
    found = analysis.length_buckets(resample.Resampler(3, 20, 1), {"b": stats}, "b",
                                    metrics.get("bleu", tokenize="13a"))
    assert [(b["bucket"], b["sentences"]) for b in found["buckets"] if b["sentences"]] == \
        [("<10", 2), ("[10, 20)", 1)]


def test_ngram_differences_by_hand():
    ref = [["a", "b", "c"]]
    # system matches a, b and "a b"; baseline a and c
    system = analysis.matched_ngrams([["a", "b", "d"]], ref)
    base = analysis.matched_ngrams([["a", "x", "c"]], ref)
    assert system == {("a",): 1, ("b",): 1, ("a", "b"): 1}
    assert base == {("a",): 1, ("c",): 1}
    found = analysis.ngram_differences(system, base)
    # "a b" and "b": (1 + 1) / (1 + 0 + 2) = 2/3 each, "a b" first by text; "a" is a tie
    assert [(e["ngram"], e["system"], e["baseline"]) for e in found["system_better"]] == [
        ("a b", 1, 0), ("b", 1, 0)]
    assert found["system_better"][0]["share"] == pytest.approx(2 / 3, abs=1e-6)
    assert [(e["ngram"], e["system"], e["baseline"]) for e in found["baseline_better"]] == [
        ("c", 0, 1)]
    # clipped: a hypothesis "a a" matches a reference "a" once
    assert analysis.matched_ngrams([["a", "a"]], [["a"]]) == {("a",): 1}


def test_examples_by_hand():
    found = analysis.examples([50, 60, 40, 55], [50, 40, 70, 50], shown=2)
    # differences 0, +20, -30, +5
    assert [e["line"] for e in found["system_better"]] == [2, 4]
    assert [e["line"] for e in found["baseline_better"]] == [3]
    assert found["baseline_better"][0]["difference"] == -30


def _test_set(n: int = 80) -> tuple[list[str], dict[str, list[str]]]:
    """Sentences of three frequent words and one rare one: "good" copies the reference, "bad"
    misses the rare word of every sentence, "same" is "bad" again."""
    refs = [f"the cat sees zebra{i} today" for i in range(n)]
    bad = ["the cat sees something today" for _ in range(n)]
    return refs, {"bad": bad, "good": list(refs), "same": list(bad)}


def test_the_record_finds_the_rare_words_the_baseline_misses():
    refs, hyps = _test_set()
    freq = analysis.corpus_frequencies(["the cat sees today"] * 20, "13a", "toy")
    record = analysis.analysis_record(testset="toy", hypotheses=hyps, references=refs,
                                      sources=refs, baseline="bad", target_lang="en",
                                      tokenize="13a", frequencies=freq, samples=200, seed=3)
    buckets = {b["bucket"]: b["systems"] for b in record["frequency"]["buckets"]}
    unseen, frequent = buckets["<1"], buckets["[10, 100)"]
    sizes = {b["bucket"]: b["sentences"] for b in record["frequency"]["buckets"]}
    assert sizes["<1"] == sizes["[10, 100)"] == 80 and sizes["1"] == 0
    assert unseen["bad"]["score"] == 0.0 and unseen["good"]["score"] == 100.0
    assert unseen["good"]["difference"] == 100.0 and unseen["good"]["p_adjusted"] < 0.05
    assert unseen["bad"]["difference"] is None  # the baseline itself
    # identical to the baseline: no difference, p = 1
    assert unseen["same"]["difference"] == 0.0 and unseen["same"]["p_value"] == 1.0
    # 20 occurrences of the, cat, sees, today: all matched by everyone
    assert frequent["good"]["score"] == frequent["bad"]["score"] == 100.0
    assert frequent["good"]["ref_words"] == 4 * 80
    low, high = unseen["bad"]["ci"]
    assert low <= 0.0 <= high
    # every reference has 5 tokens: one length bucket holds them all
    lengths = {b["bucket"]: b for b in record["length"]["buckets"]}
    assert lengths["<10"]["sentences"] == 80 and lengths["[10, 20)"]["sentences"] == 0
    assert lengths["<10"]["systems"]["good"]["score"] == pytest.approx(100.0)
    grams = record["ngrams"]["systems"]["good"]["system_better"]
    # only n-grams with a rare word tell the two apart, each matched once by "good" only
    assert len(grams) == analysis.NGRAMS_SHOWN
    assert all("zebra" in g["ngram"] and (g["system"], g["baseline"]) == (1, 0) for g in grams)
    assert record["ngrams"]["systems"]["good"]["baseline_better"] == []
    better = record["examples"]["systems"]["good"]["system_better"]
    assert len(better) == analysis.EXAMPLES and better[0]["difference"] > 0
    assert record["examples"]["systems"]["same"] == {"system_better": [],
                                                     "baseline_better": []}


def test_a_bucket_of_fewer_than_ten_sentences_gets_no_test():
    # the rare word in 9 of 80 sentences, which "good" copies and "bad" misses: the unseen
    # bucket's difference is 100 points, but 9 sentences are too few for a test
    refs = [f"the cat sees zebra{i} today" if i < 9 else "the cat sees today"
            for i in range(80)]
    hyps = {"bad": ["the cat sees today"] * 80, "good": list(refs)}
    record = analysis.analysis_record(
        testset="toy", hypotheses=hyps, references=refs, sources=refs, baseline="bad",
        target_lang="en", tokenize="13a", samples=200, seed=3,
        frequencies=analysis.corpus_frequencies(["the cat sees today"] * 20, "13a", "toy"))
    buckets = {b["bucket"]: b for b in record["frequency"]["buckets"]}
    unseen, frequent = buckets["<1"], buckets["[10, 100)"]
    assert unseen["sentences"] == 9 and frequent["sentences"] == 80
    cell = unseen["systems"]["good"]
    # value, interval and difference stay; no p, so no Holm-adjusted p and no place in
    # the family either
    assert cell["score"] == 100.0 and cell["difference"] == 100.0
    assert cell["difference_ci"] is not None
    assert cell["p_value"] is None and cell["p_adjusted"] is None
    tested = frequent["systems"]["good"]
    assert tested["p_value"] == 1.0 and tested["p_adjusted"] == 1.0
    assert analysis.judged(10) and not analysis.judged(9)
    frame, notes = analysis.buckets_table(record)
    rows = {(r["bucket"], r["system"]): r for r in frame.to_dict("records")}
    small = rows[("<1", "good")]
    assert (small["words"], small["sentences"]) == ("9", 9)
    assert small["p adj."] == "— (under 10 sentences)"
    assert rows[("<1", "bad (baseline)")]["p adj."] is None
    assert rows[("[10, 100)", "good")]["p adj."] == "1.0000"
    assert "fewer than 10 sentences gets no test" in notes[1]


def test_record_is_deterministic_and_checks_its_inputs():
    refs, hyps = _test_set(30)
    freq = analysis.corpus_frequencies(["the cat"], "13a", "toy")
    common = dict(testset="toy", references=refs, sources=refs, target_lang="en",
                  tokenize="13a", frequencies=freq, samples=100, seed=5)
    assert analysis.analysis_record(hypotheses=hyps, baseline="bad", **common) == \
        analysis.analysis_record(hypotheses=hyps, baseline="bad", **common)
    with pytest.raises(ValueError, match="baseline 'x' is not one of the systems"):
        analysis.analysis_record(hypotheses=hyps, baseline="x", **common)
    with pytest.raises(ValueError, match="good: 29 lines for 30 references"):
        analysis.analysis_record(hypotheses={**hyps, "good": refs[:-1]}, baseline="bad",
                                 **common)


def test_wordfreq_buckets_by_zipf_frequency():
    freq = analysis.wordfreq_frequencies("en")
    assert freq.bucket("the") == len(analysis.ZIPF_CUTOFFS)  # Zipf 7.7: >= 7
    assert freq.bucket("The") == freq.bucket("the")
    assert freq.bucket("xqzzyv") == 0  # not in the list: Zipf 0
    assert "wordfreq" in freq.description
    with pytest.raises(ValueError, match="no word list for 'xx'"):
        analysis.wordfreq_frequencies("xx")


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
def test_the_plain_word_lookup_equals_wordfreq(lang):
    import wordfreq

    # Lower-case ASCII words skip wordfreq's tokenizer: they must get its exact Zipf value.
    # Every 7th plain word of the list (frequent to rare), absent words, and words that take
    # wordfreq's own path (case, a digit, ß, an apostrophe, a hyphen).
    plain = [w for w in wordfreq.get_frequency_dict(lang) if analysis._PLAIN.fullmatch(w)]
    words = plain[::7] + ["xqzzyv", "qqqqwwwwzzz", "Haus", "straße", "2019", "don't",
                          "e-mail", "über", "café"]
    freq = analysis.wordfreq_frequencies(lang)
    assert len(plain) > 1000
    assert [w for w in words if freq.lookup(w) != wordfreq.zipf_frequency(w, lang)] == []


CONLLU = """# sent_id = 2
# text = The cats sat on the mat .
1	The	the	DET	DT	_	2	det	_	_
2	cats	cat	NOUN	NNS	_	3	nsubj	_	_
3	sat	sit	VERB	VBD	_	0	root	_	_
4	on	on	ADP	IN	_	6	case	_	_
5	the	the	DET	DT	_	6	det	_	_
6	mat	mat	NOUN	NN	_	3	obl	_	_
7	.	.	PUNCT	.	_	3	punct	_	_

# sent_id = 1
# text = zum Haus
1-2	zum	_	_	_	_	_	_	_	_
1	zu	zu	ADP	APPR	_	3	case	_	_
2	dem	der	DET	ART	_	3	det	_	_
3	Haus	Haus	NOUN	NN	_	0	root	_	_

"""


def test_pos_statistics_match_each_hypothesis_token_once_by_hand():
    from phenomt.core.conllu import parse_conllu

    tagged = analysis.tagged_words(parse_conllu(CONLLU), 3)
    # line 1: the multiword token counts once with its first word's tag; line 3 is unparsed
    assert tagged == [[("zum", "ADP"), ("Haus", "NOUN")],
                      [("The", "DET"), ("cats", "NOUN"), ("sat", "VERB"), ("on", "ADP"),
                       ("the", "DET"), ("mat", "NOUN"), (".", "PUNCT")], []]
    hyps = [["zum", "Hause"], ["the", "cats", "sat", "the", "mat", "mat", "."], ["x"]]
    rows = analysis.pos_statistics(hyps, tagged)
    col = {tag: 2 * i for i, tag in enumerate(analysis.POS_TAGS)}
    # line 1: ADP zum matched (1 of 1), NOUN Haus not (0 of 1)
    assert rows[0, col["ADP"]:col["ADP"] + 2].tolist() == [1, 1]
    assert rows[0, col["NOUN"]:col["NOUN"] + 2].tolist() == [0, 1]
    # line 2: DET The (case differs) not, the matched: 1 of 2; NOUN cats, mat: 2 of 2 (the
    # second mat has no reference word left); VERB 1 of 1; ADP on 0 of 1; PUNCT not counted
    assert rows[1, col["DET"]:col["DET"] + 2].tolist() == [1, 2]
    assert rows[1, col["NOUN"]:col["NOUN"] + 2].tolist() == [2, 2]
    assert rows[1, col["ADP"]:col["ADP"] + 2].tolist() == [0, 1]
    assert rows[2].sum() == 0
    assert analysis.recall(rows.sum(axis=0)[col["NOUN"]:col["NOUN"] + 2]) == \
        pytest.approx(100 * 2 / 3)
    assert np.isnan(analysis.recall(np.zeros(2)))
    # the resamples' recalls at once, as the engine scores them: the same values row by row
    totals = np.array([[2, 3], [0, 0], [1, 4]], dtype=np.float64)
    batch = resample.batch_scores(analysis.recall, totals)
    assert batch[0] == pytest.approx(100 * 2 / 3) and np.isnan(batch[1]) and batch[2] == 25
    with pytest.raises(ValueError, match="no line of the 1-line test set"):
        analysis.tagged_words(parse_conllu(CONLLU), 1)


def test_the_record_has_pos_buckets_when_given_the_reference_parse():
    from phenomt.core.conllu import parse_conllu

    refs = ["zum Haus", "The cats sat on the mat.", "A dog."]
    hyps = {"base": ["zum Hause", "The cat sat on a mat.", "A dog."],
            "good": ["zum Haus", "The cats sat on the mat.", "A dog."]}
    freq = analysis.corpus_frequencies(refs, "13a", "toy")
    record = analysis.analysis_record(
        testset="toy", hypotheses=hyps, references=refs, sources=refs, baseline="base",
        target_lang="en", tokenize="13a", frequencies=freq, samples=50,
        reference_parse=parse_conllu(CONLLU), parse_note="hand parse")
    buckets = {b["bucket"]: b for b in record["pos"]["buckets"]}
    assert list(buckets) == ["NOUN", "VERB", "DET", "ADP"]  # tags with reference words
    assert buckets["NOUN"]["systems"]["good"]["score"] == pytest.approx(100.0)
    assert buckets["NOUN"]["systems"]["base"]["score"] == pytest.approx(100 * 1 / 3)  # mat
    assert buckets["NOUN"]["lines"] == {"1": ["Haus"], "2": ["cats", "mat"]}
    frame, notes = analysis.buckets_table(record)
    assert "word recall by POS" in set(frame["analysis"])
    assert "hand parse" in notes[0]
    # the outputs' word tokens as their CRR/DRR jobs wrote them: read, not made again
    from phenomt.core.text import word_tokens

    given = {"base": word_tokens(hyps["base"], "en"), "good": [[], ["cats"], []]}
    taken = analysis.analysis_record(
        testset="toy", hypotheses=hyps, references=refs, sources=refs, baseline="base",
        target_lang="en", tokenize="13a", frequencies=freq, samples=50,
        reference_parse=parse_conllu(CONLLU), parse_note="hand parse", hypothesis_tokens=given)
    assert taken["pos"]["buckets"][0]["systems"]["base"] == \
        record["pos"]["buckets"][0]["systems"]["base"]
    nouns = {b["bucket"]: b for b in taken["pos"]["buckets"]}["NOUN"]["systems"]["good"]
    assert nouns["matched"] == 1 and nouns["score"] == pytest.approx(100 * 1 / 3)
    plain = analysis.analysis_record(
        testset="toy", hypotheses=hyps, references=refs, sources=refs, baseline="base",
        target_lang="en", tokenize="13a", frequencies=freq, samples=50)
    assert plain["pos"] is None
    assert "word recall by POS" not in set(analysis.buckets_table(plain)[0]["analysis"])


def test_the_pairs_merged_are_the_analysis_of_every_system_at_once():
    from phenomt.core.conllu import parse_conllu

    refs = ["zum Haus", "The cats sat on the mat.", "A dog."]
    hyps = {"good": ["zum Haus", "The cats sat on the mat.", "A dog."],
            "base": ["zum Hause", "The cat sat on a mat.", "A dog."],
            "odd": ["Haus", "cats sat on the mat", "A cat."]}
    common = dict(testset="toy", references=refs, sources=refs, baseline="base",
                  target_lang="en", tokenize="13a", samples=50, seed=4,
                  frequencies=analysis.corpus_frequencies(refs, "13a", "toy"),
                  reference_parse=parse_conllu(CONLLU), parse_note="hand parse")
    whole = analysis.analysis_record(hypotheses=hyps, **common)

    def pair(system: str, **changed) -> dict:
        return analysis.analysis_record(
            hypotheses={s: h for s, h in hyps.items() if s in (system, "base")},
            **{**common, **changed})

    pairs = {"odd": pair("odd", words_only=True), "good": pair("good", words_only=True)}
    assert pairs["odd"]["length"] is None and pairs["odd"]["examples"] is None
    texts = dict(hypotheses=hyps, references=refs, sources=refs)
    merged = analysis.merge_records(pairs, list(hyps), **texts)
    # the same record, the systems in the same order: the same bytes once written
    assert json.dumps(merged) == json.dumps(whole)
    assert merged["systems"] == ["good", "base", "odd"]
    # pairs with every section: their length buckets and examples are made again, the same
    full = {"odd": pair("odd"), "good": pair("good")}
    assert json.dumps(analysis.merge_records(full, list(hyps), **texts)) == json.dumps(whole)
    with pytest.raises(ValueError, match="not of every system"):
        analysis.merge_records({"odd": pairs["odd"]}, list(hyps), **texts)
    with pytest.raises(ValueError, match="outputs of base, good, not of every system"):
        analysis.merge_records(pairs, list(hyps), **{
            **texts, "hypotheses": {s: hyps[s] for s in ("good", "base")}})
    with pytest.raises(ValueError, match="good: its pair was analysed on other data"):
        analysis.merge_records({"odd": pairs["odd"], "good": pair("good", seed=5)},
                               list(hyps), **texts)
    with pytest.raises(ValueError, match="good: no analysis record of good against base"):
        analysis.merge_records({"odd": pairs["odd"], "good": pairs["odd"]}, list(hyps),
                               **texts)
    with pytest.raises(ValueError, match="analysed on 3 sentences, the test set has 2"):
        analysis.merge_records(pairs, list(hyps), hypotheses={s: h[:2] for s, h in
                                                             hyps.items()},
                               references=refs[:2], sources=refs[:2])
    # another baseline output: the same settings, other baseline cells
    other = dict(hyps, base=hyps["odd"])
    moved = analysis.analysis_record(hypotheses={s: other[s] for s in ("good", "base")},
                                     **common)
    with pytest.raises(ValueError, match="good: its baseline cells differ"):
        analysis.merge_records({"odd": pairs["odd"], "good": moved}, list(hyps), **texts)


def _scored(tmp_path, refs: list[str], hyps: dict[str, list[str]]) -> dict[str, Path]:
    """Each system's ``systems score`` record (BLEU and chrF) of the toy test set."""
    from phenomt.cli import build_parser

    (tmp_path / "ref.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
    found = {}
    for name, lines in hyps.items():
        hyp, out = tmp_path / f"{name}.txt", tmp_path / f"{name}.bleu.json"
        hyp.write_text("\n".join(lines) + "\n", encoding="utf-8")
        args = build_parser(["phenomt.systems.cli"]).parse_args(
            ["systems", "score", "--testset", "toy", "--system", name, "--hyp", str(hyp),
             "--ref", str(tmp_path / "ref.txt"), "--src", str(tmp_path / "ref.txt"),
             "--target-lang", "en", "--metrics", "bleu", "chrf", "--samples", "10",
             "--output", str(out)])
        assert args.handler(args) == 0
        found[name] = out
    return found


def test_the_score_records_statistics_are_taken_as_computed(tmp_path):
    refs, hyps = _test_set(30)
    freq = analysis.corpus_frequencies(["the cat"], "13a", "toy")
    common = dict(testset="toy", hypotheses=hyps, references=refs, sources=refs,
                  baseline="bad", target_lang="en", tokenize="13a", frequencies=freq,
                  samples=100, seed=5)
    records = {n: json.loads(p.read_text("utf-8")) for n, p in _scored(tmp_path, refs,
                                                                         hyps).items()}
    plain = analysis.analysis_record(**common)
    assert analysis.analysis_record(**common, scored=records) == plain
    # the records' rows are what is used: "good" given "bad"'s chrF rows has no examples
    swapped = json.loads(json.dumps(records))
    swapped["good"]["subsets"]["all"]["chrf"] = records["bad"]["subsets"]["all"]["chrf"]
    taken = analysis.analysis_record(**common, scored=swapped)
    assert plain["examples"]["systems"]["good"]["system_better"]
    assert taken["examples"]["systems"]["good"] == {"system_better": [], "baseline_better": []}
    # computed another way (another signature) or over other lines: computed again here
    swapped["good"]["subsets"]["all"]["chrf"]["signature"] += "|other"
    assert analysis.analysis_record(**common, scored=swapped) == plain
    cell = records["good"]["subsets"]["all"]["chrf"]
    assert scores.recorded_statistics(cell, metrics.get("chrf"), 30) is not None
    assert scores.recorded_statistics(cell, metrics.get("chrf"), 29) is None
    assert scores.recorded_statistics(cell, metrics.get("bleu"), 30) is None


def test_the_analyse_command_refuses_a_record_of_another_file(tmp_path):
    from phenomt.cli import build_parser

    refs, hyps = _test_set(30)
    paths = _scored(tmp_path, refs, hyps)
    argv = ["systems", "analyse", "--testset", "toy", "--hyp",
            *(f"{n}={tmp_path / n}.txt" for n in hyps), "--src", str(tmp_path / "ref.txt"),
            "--ref", str(tmp_path / "ref.txt"), "--target-lang", "en",
            "--freq-corpus", str(tmp_path / "ref.txt"), "--samples", "20",
            "--output", str(tmp_path / "out.json"), "--scores",
            f"bad={paths['bad']}", f"good={paths['same']}"]
    args = build_parser(["phenomt.systems.cli"]).parse_args(argv)
    with pytest.raises(InputError, match=r"same\.bleu\.json: not a `systems score` record "
                                         "of good"):
        args.handler(args)
    argv[-1] = f"good={paths['good']}"
    args = build_parser(["phenomt.systems.cli"]).parse_args(argv)
    assert args.handler(args) == 0


def test_the_pipelines_pairs_and_merge_write_the_analysis_of_all_at_once(tmp_path, capsys):
    """The words of each pair analysed without the scores, then merged with the score
    records: the bytes of one analysis of all systems."""
    from phenomt.cli import main

    refs, hyps = _test_set(30)
    paths = _scored(tmp_path, refs, hyps)
    ref = str(tmp_path / "ref.txt")
    common = ["--testset", "toy", "--src", ref, "--ref", ref, "--target-lang", "en",
              "--freq-corpus", ref, "--samples", "20", "--baseline", "bad"]
    named = {n: f"{n}={tmp_path / n}.txt" for n in hyps}
    scores_args = ["--scores", *(f"{n}={p}" for n, p in paths.items() if n in hyps)]
    assert main(["systems", "analyse", *common, "--hyp", *named.values(), *scores_args,
                 "--output", str(tmp_path / "whole.json")]) == 0
    for system in ("good", "same"):
        assert main(["systems", "analyse", *common, "--hyp", named["bad"], named[system],
                     "--words-only", "--output", str(tmp_path / f"{system}.json")]) == 0
    assert main(["systems", "analysis-merge", "--systems", *hyps,
                 "--record", *(f"{s}={tmp_path / s}.json" for s in ("good", "same")),
                 "--hyp", *named.values(), "--src", ref, "--ref", ref, *scores_args,
                 "--output", str(tmp_path / "merged.json")]) == 0
    assert (tmp_path / "merged.json").read_bytes() == (tmp_path / "whole.json").read_bytes()
    with pytest.raises(SystemExit):
        main(["systems", "analyse", *common, "--hyp", named["bad"], named["good"],
              "--words-only", *scores_args[:2], "--output", str(tmp_path / "x.json")])
    assert "which --words-only leaves out" in capsys.readouterr().err


def test_one_table_command_writes_each_kind_to_its_own_files(tmp_path, capsys):
    from phenomt.cli import main

    refs, hyps = _test_set(30)
    paths = _scored(tmp_path, refs, hyps)
    record = tmp_path / "analysis.json"
    assert main(["systems", "analyse", "--testset", "toy", "--hyp",
                 *(f"{n}={tmp_path / n}.txt" for n in hyps), "--src", str(tmp_path / "ref.txt"),
                 "--ref", str(tmp_path / "ref.txt"), "--target-lang", "en", "--freq-corpus",
                 str(tmp_path / "ref.txt"), "--samples", "20", "--output", str(record),
                 "--scores", *(f"{n}={p}" for n, p in paths.items() if n in hyps)]) == 0
    kinds = ["ngrams", "buckets", "examples"]
    files = [(tmp_path / f"{k}.md", tmp_path / f"{k}.csv") for k in kinds]
    assert main(["table", "systems-analysis", "--record", str(record), "--kind", *kinds,
                 "--md", *(str(md) for md, _ in files),
                 "--csv", *(str(csv) for _, csv in files)]) == 0
    for kind, (md, csv) in zip(kinds, files, strict=True):
        _, title = analysis.TABLE_KINDS[kind]
        assert md.read_text("utf-8").startswith(f"# {title}: toy\n"), kind
        assert csv.with_suffix(".json").is_file() and csv.read_text("utf-8")
    # the same table alone is the same file
    alone = tmp_path / "alone"
    assert main(["table", "systems-analysis", "--record", str(record), "--kind", "buckets",
                 "--md", f"{alone}.md", "--csv", f"{alone}.csv"]) == 0
    assert Path(f"{alone}.md").read_bytes() == files[1][0].read_bytes()
    # the files must pair up with the kinds, each kind once
    for wrong in (["--kind", "buckets", "ngrams", "--md", "a.md", "--csv", "a.csv", "b.csv"],
                  ["--kind", "buckets", "buckets", "--md", "a.md", "b.md", "--csv", "a.csv",
                   "b.csv"]):
        with pytest.raises(SystemExit) as refused:
            main(["table", "systems-analysis", "--record", str(record), *wrong])
        assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "2 --kind, 1 --md and 2 --csv files" in err and "named twice" in err
    assert not (tmp_path / "a.md").exists()
