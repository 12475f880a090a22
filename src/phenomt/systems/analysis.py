"""What compare-mt (Neubig et al., NAACL 2019 demos) shows of a set of systems, on phenomt's
one resampling engine: accuracy by bucket, n-gram differences and the sentences where two
systems differ most. In the pipeline one job analyses the words of each system against the
baseline (the pair's record, :func:`analysis_record` of the two, ``words_only``) while the
systems are scored; :func:`merge_records` makes the test set's record of every system from
them and adds the sections made from the score records' sentence statistics (length buckets,
examples). Every cell and test of a pair depends on that pair alone (the resamples are drawn
from the test set's size and the seed, Holm runs over one system's buckets), so the merged
record is the one an analysis of all systems at once gives, and adding a system analyses that
system's words only.

**Word F-measure by frequency bucket.** Words are the target language's sacreBLEU tokens (the
BLEU tokenizer of the test set). Each word goes to the bucket of its frequency: its count in a
training corpus when one is given (compare-mt's cutoffs 1, 2, 3, 4, 5, 10, 100, 1000: unseen,
1, 2, 3, 4, [5, 10), [10, 100), [100, 1000), 1000 and more), else its Zipf frequency in the
maintained list of ``wordfreq`` for the language (cutoffs 1 ... 7: log10 of the count per
billion words). Frequencies are looked up lower-cased; matching keeps case, as BLEU does. In a
sentence, a word's matches are the smaller of its counts in hypothesis and reference (a bag of
words, as compare-mt matches); a bucket's precision is its matched over its hypothesis words,
recall its matched over its reference words, F = 2PR / (P + R), in percent, from the
statistics summed over the test set (so the bootstrap resamples sentences, as for BLEU).
Punctuation tokens (no letter or digit) are left out: a frequency list has no entry for them,
so they would fill the rarest bucket (compare-mt counts them where its corpus does).

**BLEU by sentence length**: BLEU of the sentences whose reference has a number of tokens in a
bucket (compare-mt's cutoffs 10 ... 60), a slice of the test set's resamples.

Every bucket value has its 95% percentile interval and, for each system but the baseline, the
paired difference against the baseline on the same resamples with its p, Holm-adjusted over a
system's buckets of one analysis. A bucket's sentences are those whose reference has a word of
it (for a length bucket, its sentences); a bucket of fewer than
:data:`~phenomt.core.metrics.resample.MIN_INTERVAL_SENTENCES` keeps its value, interval and
difference but gets no p and stays out of the Holm family, as a small challenge set does
(resampling a handful of sentences understates the spread).

**Word recall by part of speech** (with the reference's UDPipe tags, for a test set with
challenge sets: the LDD stages' parse of that side where they parse it, else the tagger alone,
which gives the same tags in two thirds of the time): of the reference words with a universal
POS tag, the share the hypothesis contains, in percent. The tagger reads the Moses-tokenized
reference, so the hypothesis is Moses-tokenized the same way; a hypothesis word matches a
reference word of the same form in the same sentence, each hypothesis token once (clipped
counts, taken in reference order). compare-mt computes F here, with tags on both sides that the
user brings; tagging every system's output would cost a UDPipe run per system, so this is
recall, from the one tagging of the reference. A multiword token (German *zum*) counts once,
with its first word's tag.
Punctuation and symbols are no words, as in the frequency buckets.

**N-gram differences** (compare-mt's ``--compare_ngrams`` with its defaults): for every n-gram
(n = 1 ... 4), how often each system produced it where the reference has it (clipped counts per
sentence, summed); an n-gram is ranked by (matches of the system + 1) / (matches of both + 2),
and each side lists its top ones with their counts.

**Examples**: the sentences with the largest difference in sentence chrF (sacreBLEU's, through
the registered metric) between each system and the baseline, both ways.
"""

from __future__ import annotations

import bisect
import heapq
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from phenomt.core.metrics import base as metrics
from phenomt.core.metrics import resample
from phenomt.core.metrics.ribes import iter_tokens, ribes_tokens
from phenomt.systems.scores import recorded_statistics

SCHEMA = "phenomt.systems.analysis/1"
CORPUS_CUTOFFS = (1, 2, 3, 4, 5, 10, 100, 1000)
ZIPF_CUTOFFS = (1, 2, 3, 4, 5, 6, 7)
LENGTH_CUTOFFS = (10, 20, 30, 40, 50, 60)
MAX_NGRAM = 4
NGRAMS_SHOWN = 20
SMOOTHING = 1.0
EXAMPLES = 10
#: Sentences of a bucket the record lists for the report to show (the first ones, by line).
BUCKET_LINES = 20
#: Universal POS tags of the POS buckets, content words first (PUNCT, SYM and X left out).
POS_TAGS = ("NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM", "PRON", "DET", "ADP", "AUX", "CCONJ",
            "SCONJ", "PART", "INTJ")


# --------------------------------------------------------------------------- buckets

def bucket_labels(cutoffs: Sequence[float], discrete: bool = True) -> list[str]:
    """Names of the buckets cut at ``cutoffs``: ``<c0``, then ``c`` where a bucket holds one
    whole number (of a ``discrete`` quantity: counts, lengths), else ``[a, b)``, and
    ``>=c_last``. A continuous quantity (Zipf frequencies) always gets ranges: its [3, 4)
    holds 3.5 too."""
    labels = [f"<{_number(cutoffs[0])}"]
    for low, high in zip(cutoffs, cutoffs[1:], strict=False):
        whole = discrete and float(low).is_integer() and high - low == 1
        labels.append(_number(low) if whole else f"[{_number(low)}, {_number(high)})")
    labels.append(f">={_number(cutoffs[-1])}")
    return labels


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def bucket_of(value: float, cutoffs: Sequence[float]) -> int:
    """The index of the bucket of ``value``: the number of cutoffs at or below it."""
    return bisect.bisect_right(cutoffs, value)


@dataclass(frozen=True)
class Frequencies:
    """Where a word's frequency comes from, and the buckets it is cut into."""

    description: str
    lookup: Callable[[str], float]
    cutoffs: tuple[float, ...]
    #: whether the frequencies are whole numbers (counts) rather than continuous (Zipf)
    discrete: bool = True
    _buckets: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def bucket(self, word: str) -> int:
        """The word's bucket (looked up once per word form)."""
        found = self._buckets.get(word)
        if found is None:
            found = self._buckets[word] = bucket_of(self.lookup(word.lower()), self.cutoffs)
        return found


def corpus_frequencies(lines: Iterable[str], tokenize: str, name: str) -> Frequencies:
    """Counts of the lower-cased tokens of a training corpus (one sentence a line), counted
    line by line: a corpus of millions of lines is never held as tokens."""
    counts: Counter[str] = Counter()
    for tokens in iter_tokens(lines, tokenize, lowercase=True):
        counts.update(tokens)
    total = sum(counts.values())
    return Frequencies(f"counts in {name} ({total:,} tokens, {len(counts):,} types, "
                       f"sacreBLEU {tokenize} tokens, lower-cased)",
                       lambda word: float(counts.get(word, 0)), CORPUS_CUTOFFS)


def wordfreq_frequencies(lang: str) -> Frequencies:
    """Zipf frequencies of the ``wordfreq`` list of ``lang`` (0 for a word it lacks)."""
    from importlib import metadata

    import wordfreq

    if lang not in wordfreq.available_languages():
        raise ValueError(f"wordfreq has no word list for {lang!r}: give a training corpus "
                         "of the target language (--freq-corpus)")
    cache: dict[str, float] = {}
    table = wordfreq_table(lang)

    def zipf(word: str) -> float:
        if word not in cache:
            cache[word] = (_plain_zipf(table, word) if table is not None and _PLAIN.fullmatch(word)
                           else float(wordfreq.zipf_frequency(word, lang)))
        return cache[word]

    return Frequencies(f"Zipf frequency in wordfreq {metadata.version('wordfreq')}'s {lang} "
                       "list (log10 per billion words; 0 where it lacks the word)",
                       zipf, ZIPF_CUTOFFS, discrete=False)


def wordfreq_table(lang: str) -> Mapping[str, float] | None:
    """wordfreq's frequency table of ``lang`` where its words are looked up directly (a
    language its regex tokenizer splits), else None. wordfreq caches the table by these
    arguments: a job server that calls this before it forks hands the loaded table to every
    analysis (about 0.5 s each)."""
    import wordfreq

    if wordfreq.get_language_info(lang)["tokenizer"] != "regex":
        return None
    return wordfreq.get_frequency_dict(lang, "best")


#: Words that wordfreq's regex tokenizer keeps whole and its normalisation (NFC, case
#: folding, number smashing, transliteration) leaves alone: for these ``zipf_frequency`` is a
#: plain look-up in the frequency table, over ten times faster than its general path.
_PLAIN = re.compile(r"[a-z]+")


def _plain_zipf(table: Mapping[str, float], word: str) -> float:
    """``wordfreq.zipf_frequency(word, lang)`` (minimum 0) of a :data:`_PLAIN` word, from the
    language's frequency table: wordfreq's rounding to 3 significant digits, then to 0.01 Zipf
    (tests/test_analysis.py checks that the two agree)."""
    floor = 1e-9  # wordfreq.zipf_to_freq(0): Zipf 0, the minimum
    found = table.get(word)
    if found is None:
        freq = floor
    else:
        # wordfreq's own steps for one token: 1 / (1 / f), the minimum, 3 significant digits
        freq = max(1.0 / (1.0 / found), floor)
        freq = round(freq, math.floor(-math.log(freq, 10)) + 3)
    return round(math.log(freq, 10) + 9, 2)


def is_word(token: str) -> bool:
    """A token with a letter or a digit: punctuation is no word of the frequency buckets
    (a frequency list has none, so it would fill the rarest bucket)."""
    return any(ch.isalnum() for ch in token)


def word_statistics(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
                    frequencies: Frequencies) -> np.ndarray:
    """Per sentence and bucket: matched words, reference words, hypothesis words (columns
    ``3b``, ``3b + 1``, ``3b + 2`` of bucket ``b``)."""
    buckets = len(frequencies.cutoffs) + 1
    rows = np.zeros((len(references), 3 * buckets), dtype=np.float64)
    column = _Columns(frequencies)
    for row, (hyp, ref) in enumerate(zip(hypotheses, references, strict=True)):
        hyp_counts = Counter(hyp)
        for word, count in Counter(ref).items():
            b = column[word]
            if b >= 0:
                rows[row, b] += min(count, hyp_counts.get(word, 0))
                rows[row, b + 1] += count
        for word, count in hyp_counts.items():
            b = column[word]
            if b >= 0:
                rows[row, b + 2] += count
    return rows


class _Columns(dict):
    """Token -> 3 x its frequency bucket (the first of its columns), -1 for a non-word;
    each token looked up once."""

    def __init__(self, frequencies: Frequencies):
        super().__init__()
        self.frequencies = frequencies

    def __missing__(self, token: str) -> int:
        found = self[token] = 3 * self.frequencies.bucket(token) if is_word(token) else -1
        return found


def bucket_words(references: Sequence[Sequence[str]], frequencies: Frequencies,
                 shown: int = BUCKET_LINES) -> list[list[tuple[int, list[str]]]]:
    """Per frequency bucket, the first ``shown`` sentences (1-based lines) whose reference has
    words in it, each with those words (once each, in reference order): what a reader checks
    a bucket's value against."""
    found: list[list[tuple[int, list[str]]]] = [[] for _ in range(len(frequencies.cutoffs) + 1)]
    for row, ref in enumerate(references):
        per_bucket: dict[int, list[str]] = {}
        for word in dict.fromkeys(t for t in ref if is_word(t)):
            per_bucket.setdefault(frequencies.bucket(word), []).append(word)
        for b, listed in per_bucket.items():
            if len(found[b]) < shown:
                found[b].append((row + 1, listed))
    return found


def f_measure(totals: np.ndarray) -> float:
    """F (percent) of one bucket's summed (matched, reference, hypothesis) words; NaN where
    the bucket has no word on either side."""
    return float(f_measures(np.atleast_2d(totals))[0])


def f_measures(totals: np.ndarray) -> np.ndarray:
    """:func:`f_measure` of every row: 2 matched / (reference + hypothesis words), which is
    2PR / (P + R) (0 when nothing matched)."""
    matched, ref, hyp = totals[:, 0], totals[:, 1], totals[:, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ref + hyp > 0, 200.0 * matched / (ref + hyp), np.nan)


f_measure.batch = f_measures  # type: ignore[attr-defined]  # resample.batch_scores uses it


def length_rows(lengths: Sequence[int], cutoffs: Sequence[float] = LENGTH_CUTOFFS
                ) -> list[list[int]]:
    """The sentence indices of each reference-length bucket (``lengths``: tokens per
    reference)."""
    rows: list[list[int]] = [[] for _ in range(len(cutoffs) + 1)]
    for index, length in enumerate(lengths):
        rows[bucket_of(length, cutoffs)].append(index)
    return rows


# --------------------------------------------------------------------------- cells

def _cells(engine: resample.Resampler, score: Callable, stats: Mapping[str, np.ndarray],
           baseline: str, rows: Sequence[int] | None, counts: Mapping[str, dict],
           sentences: int) -> dict[str, dict]:
    """One bucket: every system's value with its interval and its paired difference to the
    baseline, all on the engine's resamples; the difference's p only for a bucket of
    ``sentences`` >= :data:`~phenomt.core.metrics.resample.MIN_INTERVAL_SENTENCES` (a smaller
    one gets no test and stays out of the Holm family, as a small challenge set does)."""
    found = {}
    base_score, base_values = engine.resampled(score, stats[baseline], rows)
    for system, system_stats in stats.items():
        value, values = engine.resampled(score, system_stats, rows)
        low, high = engine.interval(values)
        cell = {"score": _finite(value), "ci": [_finite(low), _finite(high)],
                **counts[system], "difference": None, "difference_ci": None,
                "p_value": None, "p_adjusted": None}
        if system != baseline and math.isfinite(value) and math.isfinite(base_score):
            tested = engine.compare(value, values, base_score, base_values)
            cell.update(difference=tested.difference,
                        difference_ci=[_finite(tested.low), _finite(tested.high)],
                        p_value=_finite(tested.p) if judged(sentences) else None)
        found[system] = cell
    return found


def judged(sentences: int) -> bool:
    """Whether a bucket of that many sentences gets a test against the baseline."""
    return sentences >= resample.MIN_INTERVAL_SENTENCES


def _with_words(columns: np.ndarray, column: int) -> int:
    """Sentences with a reference word in a bucket (``column``: its reference words)."""
    return int(np.count_nonzero(columns[:, column]))


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def _adjust(buckets: list[dict], systems: Sequence[str]) -> None:
    """Holm over each system's buckets of one analysis."""
    for system in systems:
        cells = [b["systems"][system] for b in buckets
                 if b["systems"][system]["p_value"] is not None]
        for cell, q in zip(cells, resample.holm([c["p_value"] for c in cells]), strict=True):
            cell["p_adjusted"] = q


def frequency_buckets(engine: resample.Resampler, tokens: Mapping[str, list[list[str]]],
                      references: Sequence[Sequence[str]], frequencies: Frequencies,
                      baseline: str) -> dict:
    """Word F-measure per frequency bucket of every system."""
    stats = {s: word_statistics(t, references, frequencies) for s, t in tokens.items()}
    words = bucket_words(references, frequencies)
    buckets = []
    for b, label in enumerate(bucket_labels(frequencies.cutoffs, frequencies.discrete)):
        columns = {s: st[:, 3 * b:3 * b + 3] for s, st in stats.items()}
        counts = {s: {"matched": int(c[:, 0].sum()), "ref_words": int(c[:, 1].sum()),
                      "hyp_words": int(c[:, 2].sum())} for s, c in columns.items()}
        sentences = _with_words(columns[baseline], 1)
        buckets.append({"bucket": label, "sentences": sentences,
                        "systems": _cells(engine, f_measure, columns, baseline, None, counts,
                                          sentences),
                        "lines": {str(line): found for line, found in words[b]}})
    _adjust(buckets, list(tokens))
    return {"frequencies": frequencies.description, "buckets": buckets}


def length_buckets(engine: resample.Resampler, bleu_stats: Mapping[str, np.ndarray],
                   baseline: str, bleu: metrics.Metric) -> dict:
    """BLEU per reference-length bucket of every system (buckets without a sentence are
    listed with no score). A reference's length is its BLEU statistics' ``ref_len``: its
    number of tokens of the BLEU tokenizer."""
    lengths = bleu_stats[baseline][:, bleu.columns.index("ref_len")].astype(int).tolist()
    buckets = []
    for label, rows in zip(bucket_labels(LENGTH_CUTOFFS), length_rows(lengths), strict=True):
        if not rows:
            buckets.append({"bucket": label, "sentences": 0, "lines": [], "systems": {
                s: {"score": None, "ci": None, "difference": None, "difference_ci": None,
                    "p_value": None, "p_adjusted": None} for s in bleu_stats}})
            continue
        counts = {s: {} for s in bleu_stats}
        buckets.append({"bucket": label, "sentences": len(rows),
                        "systems": _cells(engine, bleu.score, bleu_stats, baseline, rows,
                                          counts, len(rows)),
                        "lines": [r + 1 for r in rows[:BUCKET_LINES]]})
    _adjust(buckets, list(bleu_stats))
    return {"reference_tokens": "sacreBLEU tokens of the BLEU tokenizer",
            "signature": bleu.signature(), "buckets": buckets}


def tagged_words(parse: Iterable[Any], sentences: int) -> list[list[tuple[str, str]]]:
    """Per test-set line, the (form, UPOS) of its reference's surface tokens from a CoNLL-U
    parse whose ``sent_id`` is the 1-based line (lines the parse lacks have none)."""
    tagged: list[list[tuple[str, str]]] = [[] for _ in range(sentences)]
    for sentence in parse:
        line = int(sentence.sent_id) if (sentence.sent_id or "").isdigit() else 0
        if not 1 <= line <= sentences:
            raise ValueError(f"parse sentence id {sentence.sent_id!r} is no line of the "
                             f"{sentences}-line test set")
        tagged[line - 1] = [(token.form, sentence.word(token.first_word).upos)
                            for token in sentence.surface_tokens()]
    return tagged


def pos_statistics(hypotheses: Sequence[Sequence[str]],
                   tagged: Sequence[Sequence[tuple[str, str]]]) -> np.ndarray:
    """Per sentence and tag of :data:`POS_TAGS`: matched reference words, reference words
    (columns ``2t``, ``2t + 1``). Each hypothesis token matches one reference word of its
    form, in reference order."""
    column = {tag: 2 * t for t, tag in enumerate(POS_TAGS)}
    rows = np.zeros((len(tagged), 2 * len(POS_TAGS)), dtype=np.float64)
    for row, (hyp, ref) in enumerate(zip(hypotheses, tagged, strict=True)):
        left = Counter(hyp)
        for form, tag in ref:
            if tag not in column:
                continue
            rows[row, column[tag] + 1] += 1
            if left[form] > 0:
                left[form] -= 1
                rows[row, column[tag]] += 1
    return rows


def recall(totals: np.ndarray) -> float:
    """Matched over reference words, in percent (NaN without reference words)."""
    return float(recalls(totals)[0])


def recalls(totals: np.ndarray) -> np.ndarray:
    rows = np.atleast_2d(np.asarray(totals, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rows[:, 1] > 0, 100 * rows[:, 0] / rows[:, 1], np.nan)


recall.batch = recalls  # type: ignore[attr-defined]  # resample.batch_scores uses it


def pos_words(tagged: Sequence[Sequence[tuple[str, str]]], shown: int = BUCKET_LINES
              ) -> dict[str, list[tuple[int, list[str]]]]:
    """Per tag, the first ``shown`` lines whose reference has words of it, with those words."""
    found: dict[str, list[tuple[int, list[str]]]] = {tag: [] for tag in POS_TAGS}
    for row, ref in enumerate(tagged):
        per_tag: dict[str, list[str]] = {}
        for form, tag in ref:
            if tag in found and form not in per_tag.setdefault(tag, []):
                per_tag[tag].append(form)
        for tag, forms in per_tag.items():
            if len(found[tag]) < shown:
                found[tag].append((row + 1, forms))
    return found


def pos_buckets(engine: resample.Resampler, tokens: Mapping[str, list[list[str]]],
                tagged: Sequence[Sequence[tuple[str, str]]], baseline: str, parse: str
                ) -> dict:
    """Word recall per universal POS tag of every system (tags without a reference word
    left out)."""
    stats = {s: pos_statistics(t, tagged) for s, t in tokens.items()}
    words = pos_words(tagged)
    buckets = []
    for t, tag in enumerate(POS_TAGS):
        columns = {s: st[:, 2 * t:2 * t + 2] for s, st in stats.items()}
        counts = {s: {"matched": int(c[:, 0].sum()), "ref_words": int(c[:, 1].sum())}
                  for s, c in columns.items()}
        if not counts[baseline]["ref_words"]:
            continue
        sentences = _with_words(columns[baseline], 1)
        buckets.append({"bucket": tag, "sentences": sentences,
                        "systems": _cells(engine, recall, columns, baseline, None, counts,
                                          sentences),
                        "lines": {str(line): found for line, found in words[tag]}})
    _adjust(buckets, list(tokens))
    return {"parse": parse, "hypothesis_tokens": "Moses tokens (sacremoses), as the parse read "
                                                 "the reference", "buckets": buckets}


# --------------------------------------------------------------------------- n-grams

def matched_ngrams(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
                   max_n: int = MAX_NGRAM) -> Counter:
    """How often each n-gram (n = 1 ... ``max_n``) of the hypotheses matches the reference:
    per sentence the smaller of its two counts, summed over the test set."""
    found: Counter = Counter()
    for hyp, ref in zip(hypotheses, references, strict=True):
        found.update(_ngram_counts(hyp, max_n) & _ngram_counts(ref, max_n))
    return found


def _ngram_counts(tokens: Sequence[str], max_n: int) -> Counter:
    """Counts of every n-gram (n = 1 ... ``max_n``) of one sentence, as tuples; one Counter for
    all orders (an n-gram's length tells its order)."""
    counts: Counter = Counter()
    for n in range(1, max_n + 1):
        # the shifted copies differ in length: zip stops at the shortest, the last n-gram
        counts.update(zip(*(tokens[i:] for i in range(n)), strict=False))
    return counts


def ngram_differences(system: Counter, baseline: Counter, shown: int = NGRAMS_SHOWN,
                      alpha: float = SMOOTHING) -> dict[str, list[dict]]:
    """The n-grams the system matches more often than the baseline and the reverse, ranked
    by the smoothed share (matches + alpha) / (both + 2 alpha); ties by count, then text."""
    def share(gram: tuple[str, ...], mine: Counter, theirs: Counter) -> float:
        return (mine[gram] + alpha) / (mine[gram] + theirs[gram] + 2 * alpha)

    def top(mine: Counter, theirs: Counter) -> list[dict]:
        # the first `shown` of the whole ranking (heapq: without sorting every n-gram)
        grams = heapq.nsmallest(shown, set(mine) | set(theirs),
                                key=lambda g: (-share(g, mine, theirs), -mine[g], " ".join(g)))
        return [{"ngram": " ".join(g), "n": len(g), "system": mine[g], "baseline": theirs[g],
                 "share": round(share(g, mine, theirs), 6)}
                for g in grams[:shown] if mine[g] > theirs[g]]

    better = top(system, baseline)
    worse = [{**e, "system": e["baseline"], "baseline": e["system"]}
             for e in top(baseline, system)]
    return {"system_better": better, "baseline_better": worse}


# --------------------------------------------------------------------------- examples

def examples(chrf: Sequence[float], base_chrf: Sequence[float], shown: int = EXAMPLES
             ) -> dict[str, list[dict]]:
    """The sentences (1-based lines) with the largest sentence-chrF difference against the
    baseline, both ways; ties in line order."""
    diff = np.asarray(chrf, dtype=float) - np.asarray(base_chrf, dtype=float)
    order = np.argsort(-diff, kind="stable")
    better = [int(i) for i in order[:shown] if diff[i] > 0]
    worse = [int(i) for i in np.argsort(diff, kind="stable")[:shown] if diff[i] < 0]

    def entry(i: int) -> dict:
        return {"line": i + 1, "chrf": round(float(chrf[i]), 4),
                "baseline_chrf": round(float(base_chrf[i]), 4),
                "difference": round(float(diff[i]), 4)}
    return {"system_better": [entry(i) for i in better],
            "baseline_better": [entry(i) for i in worse]}


# --------------------------------------------------------------------------- the record

def analysis_record(*, testset: str, hypotheses: Mapping[str, Sequence[str]],
                    references: Sequence[str], sources: Sequence[str], baseline: str,
                    target_lang: str, tokenize: str, frequencies: Frequencies,
                    samples: int = resample.DEFAULT_SAMPLES,
                    seed: int = resample.DEFAULT_SEED,
                    reference_parse: Sequence[Any] | None = None,
                    parse_note: str = "",
                    scored: Mapping[str, Mapping[str, Any]] | None = None,
                    hypothesis_tokens: Mapping[str, Sequence[Sequence[str]]] | None = None,
                    words_only: bool = False) -> dict:
    """Buckets, n-gram differences and examples of every system of one test set against the
    baseline; every interval and test on one set of resamples of the test set.
    ``hypothesis_tokens``: systems' Moses word tokens (:func:`phenomt.core.text.word_tokens`,
    as their CRR/DRR jobs wrote them), taken for the POS buckets instead of tokenizing again.
    ``scored``: see :func:`score_sections`. ``words_only``: the sections of the words alone
    (frequency and POS buckets, n-grams); :data:`SCORE_SECTIONS` are left empty, for
    :func:`merge_records` to fill from the systems' score records."""
    if baseline not in hypotheses:
        raise ValueError(f"baseline {baseline!r} is not one of the systems")
    for system, lines in hypotheses.items():
        if len(lines) != len(references) or len(sources) != len(references):
            raise ValueError(f"{system}: {len(lines)} lines for {len(references)} references")
    engine = resample.Resampler(len(references), samples, seed)
    ref_tokens = ribes_tokens(references, tokenize)
    tokens = {s: ribes_tokens(lines, tokenize) for s, lines in hypotheses.items()}
    matched = {s: matched_ngrams(t, ref_tokens) for s, t in tokens.items()}
    others = [s for s in hypotheses if s != baseline]
    pos = None
    if reference_parse is not None:
        from phenomt.core.text import word_tokens

        given = hypothesis_tokens or {}
        pos = pos_buckets(engine, {s: given[s] if s in given else word_tokens(lines, target_lang)
                                   for s, lines in hypotheses.items()},
                          tagged_words(reference_parse, len(references)), baseline,
                          parse_note or "UDPipe parse of the reference")
    record = {
        "schema": SCHEMA, "testset": testset, "baseline": baseline,
        "systems": list(hypotheses), "sentences": len(references),
        "target_lang": target_lang, "tokenize": tokenize,
        "test": {"samples": samples, "seed": seed, "confidence": resample.CONFIDENCE,
                 "unit": "sentence", "source": "phenomt.core.metrics.resample"},
        "frequency": frequency_buckets(engine, tokens, ref_tokens, frequencies, baseline),
        "length": None,
        "pos": pos,
        "ngrams": {"max_n": MAX_NGRAM, "smoothing": SMOOTHING, "shown": NGRAMS_SHOWN,
                   "systems": {s: ngram_differences(matched[s], matched[baseline])
                               for s in others}},
        "examples": None,
    }
    if not words_only:
        record.update(score_sections(engine, hypotheses=hypotheses, references=references,
                                     sources=sources, baseline=baseline, tokenize=tokenize,
                                     scored=scored))
    return record


#: The sections made from the systems' BLEU and chrF sentence statistics, which their score
#: records hold: the pipeline analyses each pair's words while the systems are scored, then
#: adds these when it merges the pairs (:func:`merge_records`).
SCORE_SECTIONS = ("length", "examples")


def score_sections(engine: resample.Resampler, *, hypotheses: Mapping[str, Sequence[str]],
                   references: Sequence[str], sources: Sequence[str], baseline: str,
                   tokenize: str, scored: Mapping[str, Mapping[str, Any]] | None = None
                   ) -> dict:
    """BLEU by reference length and the examples (sentence chrF) of every system against the
    baseline. ``scored``: systems' ``systems score`` records, whose BLEU and chrF sentence
    statistics are taken instead of computed again where they were computed the same way."""
    scored = scored or {}
    bleu = metrics.get("bleu", tokenize=tokenize)
    chrf = metrics.get("chrf")

    def statistics(metric: Any, system: str) -> np.ndarray:
        record = scored.get(system)
        found = None if record is None else recorded_statistics(
            record["subsets"].get("all", {}).get(metric.name), metric, len(references))
        return found if found is not None else metric.statistics(hypotheses[system],
                                                                 references)

    bleu_stats = {s: statistics(bleu, s) for s in hypotheses}
    sentence_chrf = {s: [chrf.score(row) for row in statistics(chrf, s)] for s in hypotheses}
    return {
        "length": length_buckets(engine, bleu_stats, baseline, bleu),
        "examples": {"metric": "sentence chrF", "signature": chrf.signature(),
                     "shown": EXAMPLES,
                     "systems": {s: _with_texts(examples(sentence_chrf[s],
                                                         sentence_chrf[baseline]),
                                                sources, references, hypotheses[s],
                                                hypotheses[baseline])
                                 for s in hypotheses if s != baseline}},
    }


def _with_texts(found: dict[str, list[dict]], sources: Sequence[str],
                references: Sequence[str], hypothesis: Sequence[str],
                baseline: Sequence[str]) -> dict[str, list[dict]]:
    """Each example with its sentences: a reader checks a number by reading them."""
    return {side: [{**e, "source": sources[e["line"] - 1],
                    "reference": references[e["line"] - 1],
                    "hypothesis": hypothesis[e["line"] - 1],
                    "baseline_hypothesis": baseline[e["line"] - 1]} for e in entries]
            for side, entries in found.items()}


#: The parts of a record that hold a cell per system (bucket sections) or an entry per system
#: but the baseline (n-grams, examples).
BUCKET_SECTIONS = ("frequency", "length", "pos")
PAIR_SECTIONS = ("ngrams", "examples")


def merge_records(records: Mapping[str, Mapping[str, Any]], systems: Sequence[str], *,
                  hypotheses: Mapping[str, Sequence[str]], references: Sequence[str],
                  sources: Sequence[str],
                  scored: Mapping[str, Mapping[str, Any]] | None = None) -> dict:
    """The test set's analysis of ``systems`` (in that order) from each system's pair record
    (``records``: system but the baseline -> :func:`analysis_record` of it and the baseline)
    and the :data:`SCORE_SECTIONS` of all systems at once (:func:`score_sections` of
    ``hypotheses``, ``scored``). The pairs must be of one test set, baseline and setting, with
    the same baseline cells; else ValueError naming the system."""
    if not records:
        raise ValueError("no pair record to merge")
    first = next(iter(records.values()))
    baseline = first["baseline"]
    if baseline not in systems or set(records) != set(systems) - {baseline}:
        raise ValueError(f"the records are of {', '.join(sorted(records))} against {baseline}, "
                         f"not of every system of {', '.join(systems)} but the baseline")
    if set(hypotheses) != set(systems):
        raise ValueError(f"outputs of {', '.join(sorted(hypotheses))}, not of every system of "
                         f"{', '.join(systems)}")
    frame = _frame(first)
    for system, record in records.items():
        if record.get("schema") != SCHEMA or set(record["systems"]) != {baseline, system}:
            raise ValueError(f"{system}: no analysis record of {system} against {baseline}")
        if _frame(record) != frame:
            raise ValueError(f"{system}: its pair was analysed on other data or settings "
                             "than the other pairs")
    if first["sentences"] != len(references):
        raise ValueError(f"the pairs were analysed on {first['sentences']} sentences, the "
                         f"test set has {len(references)}")
    merged = {**first, "systems": list(systems)}
    for section in BUCKET_SECTIONS:
        if first[section] is None or section in SCORE_SECTIONS:
            continue
        buckets = []
        for index, template in enumerate(first[section]["buckets"]):
            base = template["systems"][baseline]
            cells = {}
            for system in systems:
                pair = records[system][section]["buckets"][index]["systems"] if (
                    system != baseline) else None
                if pair is not None and pair[baseline] != base:
                    raise ValueError(f"{system}: its baseline cells differ from the other "
                                     "pairs'")
                cells[system] = base if pair is None else pair[system]
            buckets.append({**template, "systems": cells})
        merged[section] = {**first[section], "buckets": buckets}
    for section in PAIR_SECTIONS:
        if section not in SCORE_SECTIONS:
            merged[section] = {**first[section], "systems": {
                s: records[s][section]["systems"][s] for s in systems if s != baseline}}
    engine = resample.Resampler(len(references), first["test"]["samples"],
                                first["test"]["seed"])
    merged.update(score_sections(engine, hypotheses={s: hypotheses[s] for s in systems},
                                 references=references, sources=sources, baseline=baseline,
                                 tokenize=first["tokenize"], scored=scored))
    return merged


def _frame(record: Mapping[str, Any]) -> Any:
    """A record without its per-system parts and its :data:`SCORE_SECTIONS`: what every pair
    of one analysis shares."""
    frame = {k: v for k, v in record.items()
             if k != "systems" and k not in PAIR_SECTIONS and k not in SCORE_SECTIONS}
    for section in BUCKET_SECTIONS:
        if frame.get(section) is not None:
            frame[section] = {**frame[section], "buckets": [
                {k: v for k, v in b.items() if k != "systems"}
                for b in frame[section]["buckets"]]}
    for section in PAIR_SECTIONS:
        if section not in SCORE_SECTIONS:
            frame[section] = {k: v for k, v in record[section].items() if k != "systems"}
    return frame


# --------------------------------------------------------------------------- tables

def _interval(cell: Mapping, key: str = "score", ci: str = "ci") -> str | None:
    if cell.get(key) is None:
        return None
    bounds = cell.get(ci)
    text = f"{cell[key]:.2f}"
    if bounds and bounds[0] is not None:
        text += f" [{bounds[0]:.2f}, {bounds[1]:.2f}]"
    return text


def _p(cell: Mapping, sentences: int | None) -> str | None:
    if cell.get("p_adjusted") is None:
        if cell.get("difference") is not None and sentences is not None \
                and not judged(sentences):
            return f"— (under {resample.MIN_INTERVAL_SENTENCES} sentences)"
        return None
    return f"{cell['p_adjusted']:.4f}" + (" *" if cell["p_adjusted"] < resample.ALPHA else "")


def buckets_table(record: Mapping) -> tuple[Any, list[str]]:
    """One row per analysis, bucket and system: the value with its interval, Δ against the
    baseline with its paired interval, and the Holm-adjusted p."""
    import pandas as pd

    rows = []
    for name, title in (("frequency", "word F by frequency"),
                        ("length", "BLEU by reference length"),
                        ("pos", "word recall by POS")):
        if not record.get(name):
            continue
        for bucket in record[name]["buckets"]:
            # a record of an earlier layout has no sentence count for its word buckets
            sentences = bucket.get("sentences")
            for system in record["systems"]:
                cell = bucket["systems"][system]
                words = cell.get("ref_words")
                rows.append({
                    "analysis": title, "bucket": bucket["bucket"],
                    # text: a column of counts and None would turn the counts into floats
                    "words": None if words is None else str(words), "sentences": sentences,
                    "system": system + (" (baseline)" if system == record["baseline"] else ""),
                    "value [95% CI]": _interval(cell),
                    "Δ vs baseline [95% CI]": _interval(cell, "difference", "difference_ci"),
                    "p adj.": _p(cell, sentences)})
    test = record["test"]
    notes = [
        f"{record['testset']} ({record['sentences']} sentences), baseline "
        f"{record['baseline']}. Word F: per frequency bucket, 2 x matched / (reference + "
        "hypothesis words) in percent, a word matching up to its count in the reference (bag "
        "of words per sentence; punctuation left out); words = reference words in the "
        "bucket, sentences = sentences whose reference has one. Frequencies: "
        f"{record['frequency']['frequencies']}. BLEU by length: the sentences whose "
        "reference has that many tokens; signature "
        f"`{record['length']['signature']}`."
        + (f" Word recall by POS: of the reference words with a universal POS tag "
           f"({record['pos']['parse']}), the share the hypothesis contains (its Moses tokens, "
           "each once); words = reference words with the tag, sentences = sentences whose "
           "reference has one. Recall, not compare-mt's F: only the reference is parsed."
           if record.get("pos") else ""),
        f"Intervals: 95% percentile bootstrap over the test sentences ({test['samples']} "
        f"resamples, seed {test['seed']}, drawn once for every system and bucket); Δ: paired on "
        "the same resamples; p adj.: Holm over a system's buckets of one analysis, * < 0.05. "
        f"A bucket of fewer than {resample.MIN_INTERVAL_SENTENCES} sentences gets no test and "
        "stays out of that family: resampling a handful of sentences understates the spread, "
        "so its intervals are too narrow to trust. "
        "Each system is one given output: intervals cover test sentences only.",
        "compare-mt's analyses (Neubig et al., 2019), not a table of the four papers: no paper "
        "numbers to stand beside these."]
    return pd.DataFrame(rows), notes


def ngrams_table(record: Mapping) -> tuple[Any, list[str]]:
    """The n-grams each system matches more often than the baseline, and the reverse."""
    import pandas as pd

    rows = []
    for system, found in record["ngrams"]["systems"].items():
        for side, label in (("system_better", f"{system} more often"),
                            ("baseline_better", f"{record['baseline']} more often")):
            for rank, entry in enumerate(found[side], start=1):
                rows.append({"system": system, "matched": label, "rank": rank,
                             "n-gram": entry["ngram"], "n": entry["n"],
                             "system matches": entry["system"],
                             "baseline matches": entry["baseline"],
                             "share": f"{entry['share']:.3f}"})
    ngrams = record["ngrams"]
    notes = [f"{record['testset']}: every n-gram (n = 1-{ngrams['max_n']}) of each system and "
             f"of the baseline {record['baseline']} counted where the reference has it "
             "(clipped per sentence), on sacreBLEU tokens; ranked by (matches + "
             f"{ngrams['smoothing']:g}) / (both systems' matches + {2 * ngrams['smoothing']:g})"
             f", top {ngrams['shown']} per side. Counts, no test: it shows where to look.",
             "compare-mt's n-gram analysis (Neubig et al., 2019), not a table of the four "
             "papers."]
    return pd.DataFrame(rows, columns=["system", "matched", "rank", "n-gram", "n",
                                       "system matches", "baseline matches", "share"]), notes


def examples_table(record: Mapping) -> tuple[Any, list[str]]:
    """The sentences where each system and the baseline differ most in sentence chrF."""
    import pandas as pd

    rows = []
    for system, found in record["examples"]["systems"].items():
        for side in ("system_better", "baseline_better"):
            for entry in found[side]:
                rows.append({"system": system, "line": entry["line"],
                             "Δ chrF": f"{entry['difference']:+.2f}",
                             "source": entry["source"], "reference": entry["reference"],
                             "system output": entry["hypothesis"],
                             "baseline output": entry["baseline_hypothesis"]})
    notes = [f"{record['testset']}: per system, the {record['examples']['shown']} sentences "
             f"with the largest sentence-chrF gain over the baseline {record['baseline']} and "
             f"the {record['examples']['shown']} with the largest loss (Δ = system - baseline; "
             f"chrF signature `{record['examples']['signature']}`). Sentence scores are noisy: "
             "these are sentences to read, not a finding."]
    return pd.DataFrame(rows, columns=["system", "line", "Δ chrF", "source", "reference",
                                       "system output", "baseline output"]), notes


TABLE_KINDS = {"buckets": (buckets_table, "Buckets of given systems"),
               "ngrams": (ngrams_table, "N-gram differences against the baseline"),
               "examples": (examples_table, "Sentences where systems differ most")}
