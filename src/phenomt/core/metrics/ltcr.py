"""LTCR, the lexical translation consistency ratio (Lyu et al., EMNLP 2021), as used by
Lei et al. (LREC-COLING 2024).

Definitions:

* A **pair** is two occurrences of the same repeated source word in one document; a word
  occurring k times gives k(k-1)/2 pairs. Which pairs are scored is decided by the caller:
  L-All takes every pair of repeated content words, L-Anno the pairs inside annotated chains.
* The **translation of an occurrence** is the set of hypothesis tokens aligned to it, in
  hypothesis order, lower-cased, each token stemmed, with punctuation-only tokens dropped
  (currency signs are kept: "€" translates 欧元) and English function words
  (``data/english_function_words.txt``) dropped; an acronym in
  capitals ("US") is not a function word. The paper (footnote 1, after Lyu et al.) says only
  "same (stemmed if necessary)"; the filter keeps the aligner's links to articles and
  prepositions from deciding a pair.
* Two occurrences are **consistent** when their translations are equal (same stems, same
  order). A pair where either translation is empty cannot be judged: it is counted as
  *unjudged* and left out of the ratio.
* LTCR = consistent / judged, micro-averaged over all pairs of the test set (``None`` when no
  pair can be judged). Confidence intervals resample documents (percentile bootstrap). A
  record keeps each document's judged and consistent pairs, so that two hypotheses of the
  same test set get a paired test over documents (:func:`paired_test`).

Alignment: a Pharaoh file given by the caller, or sil-thot fast_align models
(:mod:`phenomt.core.align`) trained once per test set on lower-cased tokens and applied to
source–hypothesis pairs, symmetrised with grow-diag-final-and.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from phenomt.core.io import InputError, iter_lines, write_lines
from phenomt.core.metrics import resample
from phenomt.core.metrics.base import Metric, register
from phenomt.core.text import is_punctuation

log = logging.getLogger(__name__)

Position = tuple[int, int]
"""(sentence index within the document, token index), both 0-based."""
Points = list[tuple[int, int]]

FUNCTION_WORDS_FILE = Path(__file__).parent / "data" / "english_function_words.txt"
DISTANCE_BINS = ("0", "1", "2", "3", "4", "ge5")
STEMMERS = ("porter", "snowball")
DEFAULT_STEMMER = "porter"
DEFAULT_SAMPLES = 1000
DEFAULT_SEED = 12345
DEFAULT_LEVEL = 0.95
#: Per-document columns of a record's ``statistics`` (the rows of a paired test).
STATISTICS_COLUMNS = ("judged_all", "consistent_all", "judged_anno", "consistent_anno")


# --------------------------------------------------------------------------------------------
# Pairs and translations


@dataclass(frozen=True)
class Pair:
    """Two occurrences of one source word in document ``document`` (0-based)."""

    document: int
    first: Position
    second: Position
    word_class: str
    in_all: bool
    """Counted in L-All (all pairs of repeated content words)."""
    in_anno: bool
    """Counted in L-Anno (inside an annotated chain)."""

    @property
    def distance(self) -> int:
        """Sentence distance d of the pair."""
        return abs(self.second[0] - self.first[0])


def distance_bin(distance: int) -> str:
    """The paper's Table 3/5 bin of a sentence distance: 0, 1, 2, 3, 4 or ge5."""
    return DISTANCE_BINS[min(distance, 5)]


def load_function_words(path: str | Path = FUNCTION_WORDS_FILE) -> frozenset[str]:
    """Lower-cased function words, one a line; ``#`` lines are comments."""
    return frozenset(w.strip().lower() for w in iter_lines(path)
                     if w.strip() and not w.startswith("#"))


@dataclass(frozen=True)
class Stemmer:
    """A named stemming function."""

    name: str
    description: str
    stem: Callable[[str], str]


def make_stemmer(name: str = DEFAULT_STEMMER) -> Stemmer:
    """nltk's Porter stemmer (NLTK extensions mode) or English Snowball stemmer."""
    from nltk.stem import PorterStemmer
    from nltk.stem.snowball import SnowballStemmer

    version = metadata.version("nltk")
    if name == "porter":
        porter = PorterStemmer()
        return Stemmer(name, f"nltk {version} PorterStemmer (NLTK_EXTENSIONS)", porter.stem)
    if name == "snowball":
        snowball = SnowballStemmer("english")
        return Stemmer(name, f"nltk {version} SnowballStemmer('english')", snowball.stem)
    raise ValueError(f"unknown stemmer {name!r}; choose one of {STEMMERS}")


def is_function_word(token: str, function_words: frozenset[str]) -> bool:
    """Whether ``token`` is one of ``function_words`` (compared lower-cased), except an
    acronym written in capitals: "US" and "IT" are names, not "us" and "it"."""
    if len(token) > 1 and token.isupper():
        return False
    return token.lower() in function_words


def normalise(tokens: Sequence[str], stemmer: Stemmer, function_words: frozenset[str]
              ) -> tuple[str, ...]:
    """Tokens of a translation as compared: lower-cased, content only, stemmed.

    A translation made only of function words ("would", "the") is empty, and its pairs
    unjudged. Comparing such translations as they stand was measured on the released set
    with the reference as hypothesis: 18,400 more L-All pairs judged, mostly inconsistent
    (L-All 49.2% -> 42.0%, L-Anno 79.4% -> 77.8%), i.e. the aligner's stray links to
    articles, not translations.
    """
    return tuple(stemmer.stem(token.lower()) for token in tokens
                 if not is_punctuation(token) and not is_function_word(token, function_words))


def aligned_targets(points: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    """Source index → sorted target indices of one sentence's alignment points."""
    targets: dict[int, list[int]] = {}
    for i, j in points:
        targets.setdefault(i, []).append(j)
    return {i: sorted(set(js)) for i, js in targets.items()}


def occurrence_translations(positions: Iterable[tuple[int, Position]],
                            document_offsets: Sequence[int],
                            hypotheses: Sequence[Sequence[str]],
                            alignments: Sequence[Points], stemmer: Stemmer,
                            function_words: frozenset[str]
                            ) -> dict[tuple[int, Position], tuple[str, ...]]:
    """The normalised translation of every (document, position) asked for.

    ``document_offsets[d]`` is the index of document ``d``'s first sentence in
    ``hypotheses`` and ``alignments``.
    """
    by_sentence: dict[int, dict[int, list[int]]] = {}
    result = {}
    for document, (sentence, token) in positions:
        row = document_offsets[document] + sentence
        if row not in by_sentence:
            by_sentence[row] = aligned_targets(alignments[row])
        hyp = hypotheses[row]
        words = [hyp[j] for j in by_sentence[row].get(token, [])]
        result[(document, (sentence, token))] = normalise(words, stemmer, function_words)
    return result


def judge(pairs: Sequence[Pair], translations: Mapping[tuple[int, Position], tuple[str, ...]]
          ) -> list[bool | None]:
    """Per pair: consistent (True), inconsistent (False), or unjudged (None)."""
    verdicts: list[bool | None] = []
    for pair in pairs:
        a = translations[(pair.document, pair.first)]
        b = translations[(pair.document, pair.second)]
        verdicts.append(None if not a or not b else a == b)
    return verdicts


def judge_hypothesis(pairs: Sequence[Pair], document_offsets: Sequence[int],
                     hypotheses: Sequence[Sequence[str]], alignments: Sequence[Points],
                     stemmer: Stemmer, function_words: frozenset[str]) -> list[bool | None]:
    """Verdicts of all ``pairs`` for one aligned hypothesis."""
    if len(hypotheses) != len(alignments):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(alignments)} alignments")
    positions = {(p.document, pos) for p in pairs for pos in (p.first, p.second)}
    translations = occurrence_translations(sorted(positions), document_offsets, hypotheses,
                                           alignments, stemmer, function_words)
    return judge(pairs, translations)


# --------------------------------------------------------------------------------------------
# Counting


@dataclass
class Counts:
    """Pairs, judged pairs and consistent pairs of one selection."""

    pairs: int = 0
    judged: int = 0
    consistent: int = 0

    def add(self, verdict: bool | None) -> None:
        self.pairs += 1
        if verdict is not None:
            self.judged += 1
            self.consistent += int(verdict)

    @property
    def ratio(self) -> float | None:
        return self.consistent / self.judged if self.judged else None

    def record(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "judged": self.judged, "unjudged": self.pairs - self.judged,
                "consistent": self.consistent, "ltcr": self.ratio}


def per_document(pairs: Sequence[Pair], verdicts: Sequence[bool | None], documents: int,
                 subset: str) -> np.ndarray:
    """Judged and consistent pair counts per document, shape (documents, 2), for ``subset``
    ``all`` or ``anno``."""
    counts = np.zeros((documents, 2), dtype=np.int64)
    for pair, verdict in zip(pairs, verdicts, strict=True):
        if verdict is not None and (pair.in_all if subset == "all" else pair.in_anno):
            counts[pair.document, 0] += 1
            counts[pair.document, 1] += int(verdict)
    return counts


def bootstrap_ratios(counts: np.ndarray, samples: int, seed: int, size: int | None = None
                     ) -> np.ndarray:
    """Micro-averaged ratios of ``samples`` document resamples drawn with replacement (``size``
    documents each, default all); samples with nothing judged give NaN."""
    picks = resample.resample_indices(counts.shape[0], samples, seed, size)
    judged = counts[picks, 0].sum(axis=1)
    consistent = counts[picks, 1].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(judged > 0, consistent / np.maximum(judged, 1), np.nan)


def percentile_interval(ratios: np.ndarray, level: float) -> list[float] | None:
    """The central ``level`` percentile interval of the finite ratios, or None."""
    low, high = resample.interval_of(ratios, "percentile", level)
    if not np.isfinite(low):
        return None
    return [round(float(low), 6), round(float(high), 6)]


def curve_sizes(documents: int, steps: int = 10) -> list[int]:
    """Sample sizes of Figure 3: ``steps`` even fractions of the documents (distinct, >= 1)."""
    return sorted({max(1, round(documents * k / steps)) for k in range(1, steps + 1)})


def sample_size_curve(counts: np.ndarray, sizes: Sequence[int], samples: int, seed: int,
                      level: float = DEFAULT_LEVEL) -> list[dict[str, Any]]:
    """LTCR against the number of documents sampled (Figure 3): mean and percentile band of
    ``samples`` resamples for each size."""
    curve = []
    for offset, size in enumerate(sizes):
        ratios = bootstrap_ratios(counts, samples, seed + offset, size)
        finite = ratios[np.isfinite(ratios)]
        curve.append({"documents": int(size),
                      "mean": round(float(finite.mean()), 6) if finite.size else None,
                      "interval": percentile_interval(ratios, level)})
    return curve


def bootstrap_text(intervals: Mapping[str, Any], documents: int | None = None) -> str:
    """How a record's intervals (its ``intervals`` settings) were drawn: level, unit,
    resamples and resampling seed, and ``documents`` when given; "not recorded" where a
    record lacks a setting."""
    level, samples, seed = (intervals.get(k) for k in ("level", "samples", "seed"))
    unit = intervals.get("unit") or "document"
    return (f"{'' if level is None else f'{100 * level:g}% '}percentile bootstrap over the "
            + ("" if documents is None else f"{documents:,} ") + f"test {unit}s ("
            + (f"{samples:,} resamples" if samples is not None else "resamples not recorded")
            + (f", resampling seed {seed}" if seed is not None else ", seed not recorded")
            + ")")


def summarise(pairs: Sequence[Pair], verdicts: Sequence[bool | None], documents: int,
              classes: Sequence[str], samples: int = DEFAULT_SAMPLES,
              seed: int = DEFAULT_SEED, level: float = DEFAULT_LEVEL) -> dict[str, Any]:
    """The LTCR record: overall, by word class, by distance bin, with bootstrap intervals."""
    totals = {"all": Counts(), "anno": Counts()}
    by_class = {c: {"all": Counts(), "anno": Counts()} for c in classes}
    by_bin = {b: {"all": Counts(), "anno": Counts()} for b in DISTANCE_BINS}
    for pair, verdict in zip(pairs, verdicts, strict=True):
        for subset, member in (("all", pair.in_all), ("anno", pair.in_anno)):
            if member:
                totals[subset].add(verdict)
                by_class[pair.word_class][subset].add(verdict)
                by_bin[distance_bin(pair.distance)][subset].add(verdict)
    intervals: dict[str, Any] = {"level": level, "samples": samples, "seed": seed,
                                 "unit": "document"}
    curve: dict[str, Any] = {"sizes": curve_sizes(documents)}
    by_document = []
    for subset in ("all", "anno"):
        counts = per_document(pairs, verdicts, documents, subset)
        by_document.append(counts)
        # separate streams for the two subsets, both fixed by the seed
        ratios = bootstrap_ratios(counts, samples, seed + (subset == "anno"))
        intervals[f"l_{subset}"] = percentile_interval(ratios, level)
        curve[f"l_{subset}"] = sample_size_curve(counts, curve["sizes"], samples,
                                                 seed + 2 + (subset == "anno"), level)
    record: dict[str, Any] = {}
    for subset in ("all", "anno"):
        c = totals[subset]
        record.update({f"l_{subset}": c.ratio, f"pairs_{subset}": c.pairs,
                       f"judged_{subset}": c.judged, f"unjudged_{subset}": c.pairs - c.judged,
                       f"consistent_{subset}": c.consistent})
    record["by_pos"] = {c: {s: v.record() for s, v in sub.items()} for c, sub in by_class.items()}
    record["by_distance"] = {b: {s: v.record() for s, v in sub.items()}
                             for b, sub in by_bin.items()}
    record["intervals"] = intervals
    record["curve"] = curve
    record["statistics"] = {"unit": "document", "columns": list(STATISTICS_COLUMNS),
                            "rows": np.hstack(by_document).tolist()}
    return record


def document_statistics(record: Mapping[str, Any], path: str | Path) -> np.ndarray:
    """The per-document rows (:data:`STATISTICS_COLUMNS`) a record keeps; an error naming the
    file when it has none (a record written before they were kept)."""
    return resample.record_statistics(record, path, STATISTICS_COLUMNS,
                                      "no per-document LTCR statistics: score it again with "
                                      "`phenomt score ltcr`")


def paired_test(stats_a: np.ndarray, stats_b: np.ndarray, subset: str = "all",
                samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED
                ) -> resample.Comparison:
    """L-All (``subset`` ``all``) or L-Anno of hypothesis a minus that of b on the same test
    set, by a paired bootstrap over documents (both resampled with the same documents)."""
    judged = STATISTICS_COLUMNS.index(f"judged_{subset}")
    consistent = STATISTICS_COLUMNS.index(f"consistent_{subset}")
    return resample.paired_bootstrap(stats_a, stats_b, resample.ratio(consistent, judged),
                                     samples=samples, seed=seed)


# --------------------------------------------------------------------------------------------
# Alignment


def tokenize_hypotheses(lines: Iterable[str]) -> list[list[str]]:
    """Hypothesis lines tokenized as the references are (sacremoses, aggressive dashes)."""
    from phenomt.core.text import tokenize

    return [tokenize(line, "en").split() for line in lines]


def read_alignment(path: str | Path, sources: Sequence[Sequence[str]],
                   targets: Sequence[Sequence[str]]) -> list[Points]:
    """A Pharaoh file (``i-j``, 0-based source-target), checked against both sides."""
    alignments: list[Points] = []
    for number, line in enumerate(iter_lines(path), start=1):
        if number > len(sources):
            raise InputError(path, f"more lines than the {len(sources)} sentences", number)
        points = []
        for item in line.split():
            i, sep, j = item.partition("-")
            if not sep or not i.isdigit() or not j.isdigit():
                raise InputError(path, f"{item!r} is not a Pharaoh point i-j", number)
            if int(i) >= len(sources[number - 1]) or int(j) >= len(targets[number - 1]):
                raise InputError(path, f"point {item} outside the sentence pair "
                                       f"({len(sources[number - 1])} source, "
                                       f"{len(targets[number - 1])} target tokens)", number)
            points.append((int(i), int(j)))
        alignments.append(points)
    if len(alignments) != len(sources):
        raise InputError(path, f"has {len(alignments)} lines for {len(sources)} sentences",
                         len(alignments))
    return alignments


def _lower(sentences: Iterable[Sequence[str]]) -> Iterable[str]:
    return (" ".join(sentence).lower() for sentence in sentences)


def train_aligner(model_dir: str | Path,
                  corpora: Sequence[tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]]],
                  extra_files: Sequence[tuple[str | Path, str | Path]] = (),
                  iterations: int | None = None) -> dict[str, Any]:
    """Train fast_align models on lower-cased tokenized sentence pairs.

    ``corpora`` are in-memory (source sentences, target sentences) lists, e.g. the test set's
    source with its reference; ``extra_files`` are tokenized parallel files added after
    them. Everything is lower-cased (small test sets leave case variants unaligned) and
    written to ``model_dir/train.{src,tgt}`` so the settings name what was trained on.
    With ``$PHENOMT_CACHE`` set, models trained on the same bytes before are copied
    (:func:`phenomt.core.align.train_cached`).
    """
    from phenomt.core.align import DEFAULT_ITERATIONS, read_parallel, train_cached

    model_dir = Path(model_dir)
    src_lines: list[str] = []
    tgt_lines: list[str] = []
    for sources, targets in corpora:
        if len(sources) != len(targets):
            raise ValueError(f"{len(sources)} source but {len(targets)} target sentences")
        src_lines.extend(_lower(sources))
        tgt_lines.extend(_lower(targets))
    for src, tgt in extra_files:
        sources, targets = read_parallel(src, tgt)
        src_lines.extend(_lower(sources))
        tgt_lines.extend(_lower(targets))
    write_lines(model_dir / "train.src", src_lines)
    write_lines(model_dir / "train.tgt", tgt_lines)
    settings, reused = train_cached([(model_dir / "train.src", model_dir / "train.tgt")],
                                    model_dir, iterations or DEFAULT_ITERATIONS)
    if reused is not None:
        log.info("aligner models copied from the cache: %s", reused)
    return settings


def align(model_dir: str | Path, sources: Sequence[Sequence[str]],
          targets: Sequence[Sequence[str]], jobs: int = 1) -> list[Points]:
    """grow-diag-final-and alignments of lower-cased sentence pairs with trained models."""
    from phenomt.core.align import align_sentences

    lowered_src = [[t.lower() for t in s] for s in sources]
    lowered_tgt = [[t.lower() for t in s] for s in targets]
    result = align_sentences(model_dir, lowered_src, lowered_tgt, jobs=jobs)
    return [[(int(i), int(j)) for i, _, j in (p.partition("-") for p in line.split())]
            for line in result.gdfa]


def pharaoh_lines(alignments: Sequence[Points]) -> list[str]:
    """Alignments as Pharaoh lines (to keep the alignment a score was computed from)."""
    return [" ".join(f"{i}-{j}" for i, j in sorted(points)) for points in alignments]


# --------------------------------------------------------------------------------------------
# The registered metric

SUBSETS = ("all", "anno")
#: The format of a pair-set file (``phenomt lexcons pairs``), which the registered metric reads.
PAIRS_SCHEMA = "phenomt.ltcr.pairs/1"


@dataclass(frozen=True)
class PairFile:
    """A test set's pairs as the registered metric needs them, read from the file that
    ``phenomt lexcons pairs`` writes (the tagging and the chains stay in ``lexcons``)."""

    name: str
    pairs: list[Pair]
    offsets: list[int]
    """Index of each document's first sentence among all sentences."""
    sentences: list[int]
    """Sentences of each document."""
    source: list[tuple[str, ...]]
    """Tokenized source sentences, documents in order (the aligner's input)."""
    annotated: bool

    @property
    def documents(self) -> int:
        return len(self.offsets)


def pair_record(name: str, pairs: Sequence[Pair], offsets: Sequence[int],
                sentences: Sequence[int], source: Sequence[Sequence[str]],
                annotated: bool) -> dict[str, Any]:
    """The JSON of a pair-set file (:func:`read_pair_file` reads it back)."""
    return {"schema": PAIRS_SCHEMA, "testset": name, "annotated": annotated,
            "offsets": list(offsets), "sentences": list(sentences),
            "source": [list(s) for s in source],
            "columns": ["document", "sentence_a", "token_a", "sentence_b", "token_b", "class",
                        "in_all", "in_anno"],
            "pairs": [[p.document, *p.first, *p.second, p.word_class, p.in_all, p.in_anno]
                      for p in pairs]}


def read_pair_file(path: str | Path) -> PairFile:
    """A pair-set file, checked: an InputError naming the file when it is not one."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InputError(path, f"not a readable pair-set file ({err})") from None
    if not isinstance(record, dict) or record.get("schema") != PAIRS_SCHEMA:
        raise InputError(path, f"not a pair-set file of `phenomt lexcons pairs` "
                               f"({PAIRS_SCHEMA})")
    sentences = record["sentences"]
    pairs = [Pair(d, (sa, ta), (sb, tb), c, bool(a), bool(n))
             for d, sa, ta, sb, tb, c, a, n in record["pairs"]]
    if any(not 0 <= p.document < len(sentences) or p.second[0] >= sentences[p.document]
           for p in pairs) or sum(sentences) != len(record["source"]):
        raise InputError(path, "pairs or sentences outside the test set it describes")
    return PairFile(record["testset"], pairs, record["offsets"], sentences,
                    [tuple(s) for s in record["source"]], bool(record["annotated"]))


def sentence_rows(pairs: Sequence[Pair], verdicts: Sequence[bool | None],
                  document_offsets: Sequence[int], sentences: int, subset: str) -> np.ndarray:
    """Judged and consistent pairs of ``subset`` per sentence, shape (sentences, 2): a pair
    is counted at the sentence of its later occurrence, so a slice of sentences counts the
    pairs that end in it and the whole test set every pair once."""
    rows = np.zeros((sentences, 2), dtype=np.float64)
    for pair, verdict in zip(pairs, verdicts, strict=True):
        if verdict is not None and (pair.in_all if subset == "all" else pair.in_anno):
            row = document_offsets[pair.document] + pair.second[0]
            rows[row, 0] += 1
            rows[row, 1] += int(verdict)
    return rows


@register
class Ltcr(Metric):
    """Lexical translation consistency ratio (Lyu et al., 2021), percent; resampled by
    document."""

    name = "ltcr"
    label = "LTCR"
    columns = ("judged", "consistent")
    # ``phenomt score ltcr`` (phenomt.lexcons.chains) writes the fuller record: L-All
    # and L-Anno, by word class and distance, the sample-size curve
    command = False

    def __init__(self, pairs: str | None = None, align_model: str | None = None,
                 subset: str = "all", stemmer: str = DEFAULT_STEMMER) -> None:
        """``pairs``: the test set's pairs of repeated source words (``phenomt lexcons
        pairs`` writes them from the released layout); ``align_model``: fast_align models
        for its source and the hypotheses (``lexcons align-train``); ``subset``: L-All
        (``all``) or L-Anno (``anno``, the annotated chains)."""
        if subset not in SUBSETS:
            raise ValueError(f"unknown LTCR subset {subset!r}; one of {SUBSETS}")
        if stemmer not in STEMMERS:
            raise ValueError(f"unknown stemmer {stemmer!r}; one of {STEMMERS}")
        self.pairs, self.align_model = pairs, align_model
        self.subset, self.stemmer = subset, stemmer
        self._pair_file: PairFile | None = None

    @classmethod
    def choices(cls) -> dict[str, list[str]]:
        return {"subset": list(SUBSETS), "stemmer": list(STEMMERS)}

    def _pairs(self) -> PairFile:
        """The pair set, read once."""
        if self.pairs is None or self.align_model is None:
            raise ValueError("ltcr needs the test set's pairs and its aligner: settings pairs "
                             "and align_model")
        if self._pair_file is None:
            found = read_pair_file(self.pairs)
            if self.subset == "anno" and not found.annotated:
                raise InputError(self.pairs, "L-Anno needs a test set with annotated chains")
            self._pair_file = found
        return self._pair_file

    def signature(self) -> str:
        if self.pairs is None:
            return f"ltcr|subset:{self.subset}|stem:{self.stemmer}"
        found = self._pairs()
        return (f"ltcr|subset:{self.subset}|testset:{found.name}|docs:{found.documents}"
                f"|pairs:{len(found.pairs)}|align:fast_align-lc-gdfa|stem:{self.stemmer}"
                f"|fw:{len(load_function_words())}|unit:document")

    def clusters(self, sentences: int) -> list[str]:
        found = self._pairs()
        if sentences != sum(found.sentences):
            raise ValueError(f"{sentences} rows for the {sum(found.sentences)} sentences of "
                             f"{self.pairs}")
        return [str(d) for d, n in enumerate(found.sentences) for _ in range(n)]

    def statistics(self, hypotheses: Sequence[str], references: Sequence[str],
                   sources: Sequence[str] | None = None) -> np.ndarray:
        self._check(hypotheses, references, sources)
        found = self._pairs()
        if len(hypotheses) != len(found.source):
            raise ValueError(f"{len(hypotheses)} hypotheses for the {len(found.source)} "
                             f"sentences of {self.pairs}")
        tokens = tokenize_hypotheses(hypotheses)
        alignments = align(self.align_model, found.source, tokens)
        verdicts = judge_hypothesis(found.pairs, found.offsets, tokens, alignments,
                                    make_stemmer(self.stemmer), load_function_words())
        return sentence_rows(found.pairs, verdicts, found.offsets, len(tokens), self.subset)

    def score(self, totals: np.ndarray) -> float:
        judged, consistent = totals
        return 100.0 * consistent / judged if judged else float("nan")

    def scores(self, totals: np.ndarray) -> np.ndarray:
        totals = np.atleast_2d(totals)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(totals[:, 0] > 0, 100.0 * totals[:, 1] / totals[:, 0], np.nan)

    def details(self, totals: np.ndarray) -> dict[str, Any]:
        return {"judged": int(totals[0]), "consistent": int(totals[1])}
