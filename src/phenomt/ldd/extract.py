"""Long-distance-dependency (LDD) challenge sets (Choshen & Abend, CoNLL 2019).

**Lexical LDD** sets are read off a UD parse of the source side. An *instance* is a
(head, dependent) pair of syntactic words:

* ``reflexive``: a word whose FEATS has ``Reflex=Yes``, with its head;
* ``particle``: a word with deprel ``compound:prt`` (or the pre-v2 ``prt``), with its head verb;
* ``preposition-stranding``: a word with deprel ``obl`` or a subtype ``obl:*`` and UPOS ``ADP``,
  with its head. Defined for English sources only; asking for it with another language is an
  error.

A word attached to the root (HEAD 0) or without a HEAD has no head word and gives no instance.

**Distance** is the number of words strictly between head and dependent, ``|i - j| - 1`` for
word ids *i* and *j*: adjacent words are at distance 0. Word ids count *syntactic words*, not
surface tokens: a multiword token such as German ``zum`` (= ``zu dem``) counts as two words, and
empty nodes (``5.1``) are not words of the basic tree, so they count as nothing.

A set is defined by a distance bin: *minimum* bins ``≥k`` (``≥0`` is "All") or *exact* bins
``=k``. A sentence is selected when at least one of its instances falls in the bin. The paper's
sets are ``≥0, ≥1, ≥2, ≥3`` and ``=0 … =5`` (:data:`LEXICAL_BINS`). The reference
implementation keeps a pair when ``|i - j| > k``, at least ``k`` words between them: its file
``k`` is this module's ``≥k`` (its unsuffixed file, ``k = 1``, the paper's d ≥ 1), its
"exactly" file ``k`` this module's ``=k``.

**Reordering LDD** sets come from a word alignment in Pharaoh format (``i-j``, 0-based source
and target token indices, tokens split on whitespace): a sentence pair is kept when some aligned
pair has ``|i - j| ≥ d`` (``d = 5`` by default). Here the distance is the plain index difference,
as in the paper.

**Output.** A set with prefix ``P`` is written as ``P.src`` and ``P.ref`` (the selected source
and reference lines), ``P.ids`` (1-based positions of the selected sentences in the input,
ascending, one a line), ``P.src_marked`` (the source tokens with the head and dependent, or the
far-aligned source tokens, written ``*like-this*``) and, for lexical sets, ``P.conllu`` (the
selected sentences' CoNLL-U exactly as read). In ``P.src_marked`` a lexical sentence is shown
as its surface tokens, so a starred multiword token marks the word inside it. An empty set is
written as empty files. Every file is written atomically and extraction is deterministic, so a
re-run writes byte-identical files.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from phenomt.core.bins import DistanceBin, parse_bin
from phenomt.core.cliargs import non_negative_int
from phenomt.core.conllu import Sentence, Word, read_conllu
from phenomt.core.io import InputError, atomic_write, read_lines, write_lines

if TYPE_CHECKING:
    from phenomt.core.cliargs import CommandTree

REFLEXIVE = "reflexive"
PARTICLE = "particle"
PREPOSITION_STRANDING = "preposition-stranding"
LEXICAL_PHENOMENA: tuple[str, ...] = (PARTICLE, REFLEXIVE, PREPOSITION_STRANDING)
REORDER = "reorder"
STRANDING_LANGUAGES = frozenset({"en"})
DEFAULT_REORDER_DISTANCE = 5

LEXICAL_SUFFIXES: tuple[str, ...] = (".src", ".ref", ".ids", ".src_marked", ".conllu")
REORDER_SUFFIXES: tuple[str, ...] = (".src", ".ref", ".ids", ".src_marked")
_ALIGNMENT_POINT = re.compile(r"([0-9]+)-([0-9]+)")


MINIMUM_BINS: tuple[DistanceBin, ...] = tuple(DistanceBin(k) for k in range(4))
EXACT_BINS: tuple[DistanceBin, ...] = tuple(DistanceBin(k, exact=True) for k in range(6))
LEXICAL_BINS: tuple[DistanceBin, ...] = MINIMUM_BINS + EXACT_BINS


@dataclass(frozen=True, slots=True, order=True)
class Instance:
    """One lexical LDD instance.

    ``sentence`` is the 1-based position of the sentence in the input; ``head`` and
    ``dependent`` are 1-based CoNLL-U word ids; ``distance`` is the number of words between.
    """

    sentence: int
    head: int
    dependent: int
    distance: int
    phenomenon: str


@dataclass(frozen=True, slots=True, order=True)
class ReorderInstance:
    """One far-aligned pair: 1-based ``sentence``, 0-based ``source`` and ``target`` token
    indices as in the alignment file, and ``distance = |source - target|``."""

    sentence: int
    source: int
    target: int
    distance: int


class _HasPosition(Protocol):
    @property
    def sentence(self) -> int: ...

    @property
    def distance(self) -> int: ...


@dataclass(frozen=True)
class ExtractionResult:
    """What an extraction wrote: the selected 1-based ids out of ``total`` sentences."""

    prefix: Path
    ids: tuple[int, ...]
    total: int
    instances: int
    files: tuple[Path, ...]


def word_distance(head: int, dependent: int) -> int:
    """Number of words strictly between two distinct word ids: ``|head - dependent| - 1``."""
    if head == dependent:
        raise ValueError(f"a word cannot be paired with itself (id {head})")
    return abs(head - dependent) - 1


def check_phenomenon(phenomenon: str, lang: str | None = None) -> None:
    """Raise ``ValueError`` for an unknown phenomenon or stranding on a non-English source."""
    _check_name(phenomenon)
    if phenomenon == PREPOSITION_STRANDING and (lang or "").lower() not in STRANDING_LANGUAGES:
        given = f"a {lang!r} source" if lang else "a source of unspecified language"
        raise ValueError(f"preposition stranding is defined for English sources only, not for "
                         f"{given}; pass the source language 'en'")


def _check_name(phenomenon: str) -> None:
    if phenomenon not in LEXICAL_PHENOMENA:
        raise ValueError(f"unknown lexical phenomenon {phenomenon!r}; "
                         f"choose from {', '.join(LEXICAL_PHENOMENA)}")


def _is_dependent(word: Word, phenomenon: str) -> bool:
    if phenomenon == REFLEXIVE:
        return word.has_feature("Reflex", "Yes")
    if phenomenon == PARTICLE:
        return word.deprel in ("compound:prt", "prt")
    return word.upos == "ADP" and (word.deprel == "obl" or word.deprel.startswith("obl:"))


def phenomenon_pairs(sentence: Sentence, phenomenon: str) -> list[tuple[int, int]]:
    """The sentence's ``(head, dependent)`` word-id pairs for ``phenomenon``, by dependent.

    The language restriction is not checked here; see :func:`check_phenomenon`.
    """
    _check_name(phenomenon)
    return [(word.head, word.id) for word in sentence.words
            if word.head and _is_dependent(word, phenomenon)]


def lexical_instances(sentences: Iterable[Sentence], phenomenon: str,
                      lang: str | None = None) -> list[Instance]:
    """All instances of ``phenomenon`` in ``sentences`` (numbered from 1), in input order."""
    check_phenomenon(phenomenon, lang)
    return [Instance(number, head, dependent, word_distance(head, dependent), phenomenon)
            for number, sentence in enumerate(sentences, start=1)
            for head, dependent in phenomenon_pairs(sentence, phenomenon)]


def select_ids(instances: Iterable[_HasPosition], distance_bin: DistanceBin) -> list[int]:
    """Ascending 1-based ids of the sentences with at least one instance in the bin."""
    return sorted({item.sentence for item in instances if distance_bin.admits(item.distance)})


def star(token: str) -> str:
    """Mark a token for the ``_marked`` files."""
    return f"*{token}*"


def mark_words(sentence: Sentence, word_ids: Iterable[int]) -> str:
    """The sentence's surface tokens joined by spaces, starring those holding ``word_ids``."""
    wanted = set(word_ids)
    return " ".join(
        star(token.form)
        if any(i in wanted for i in range(token.first_word, token.last_word + 1))
        else token.form
        for token in sentence.surface_tokens())


def mark_tokens(tokens: Sequence[str], indices: Iterable[int]) -> str:
    """Tokens joined by spaces, starring the 0-based ``indices``."""
    wanted = set(indices)
    return " ".join(star(token) if index in wanted else token
                    for index, token in enumerate(tokens))


def _check_same_count(path: str | os.PathLike[str], count: int, what: str,
                      other: str | os.PathLike[str], other_count: int, other_what: str) -> None:
    if count != other_count:
        raise InputError(path, f"has {count} {what} but {other} has {other_count} "
                               f"{other_what}; they must correspond one to one")


def _output_path(prefix: str | os.PathLike[str], suffix: str) -> Path:
    # Appended, not Path.with_suffix: prefixes such as "news.de.particle.ge1" contain dots.
    return Path(f"{os.fspath(prefix)}{suffix}")


def write_challenge_set(prefix: str | os.PathLike[str], ids: Sequence[int],
                        src: Sequence[str], ref: Sequence[str] | None,
                        marked: Sequence[str], conllu: Sequence[str] | None = None
                        ) -> tuple[Path, ...]:
    """Write one set's files atomically and return their paths.

    ``src``, ``ref`` and ``marked`` hold one line per selected sentence, ``conllu`` one
    complete CoNLL-U block (ending in its blank line) per selected sentence. ``ref`` or
    ``conllu`` given as ``None`` are not written.
    """
    lengths = {len(ids), len(src), len(marked)} | {len(x) for x in (ref, conllu) if x is not None}
    if len(lengths) != 1:
        raise ValueError("ids, src, ref, marked and conllu must have one entry per sentence")
    written = [_output_path(prefix, ".src")]
    write_lines(written[-1], src)
    if ref is not None:
        written.append(_output_path(prefix, ".ref"))
        write_lines(written[-1], ref)
    written.append(_output_path(prefix, ".ids"))
    write_lines(written[-1], (str(i) for i in ids))
    written.append(_output_path(prefix, ".src_marked"))
    write_lines(written[-1], marked)
    if conllu is not None:
        written.append(_output_path(prefix, ".conllu"))
        with atomic_write(written[-1]) as out:
            out.writelines(conllu)
    return tuple(written)


def extract_lexical(conllu_path: str | os.PathLike[str], phenomenon: str,
                    out_prefix: str | os.PathLike[str], min_distance: int = 0,
                    exact: bool = False, lang: str | None = None,
                    src_path: str | os.PathLike[str] | None = None,
                    ref_path: str | os.PathLike[str] | None = None) -> ExtractionResult:
    """Extract a lexical LDD set from a source-side parse and write it under ``out_prefix``.

    ``src_path``/``ref_path`` are text files whose line *k* belongs to sentence *k* of the
    CoNLL-U. Without ``src_path`` the source line is the sentence's ``# text`` comment, or its
    surface tokens joined by spaces; without ``ref_path`` no ``.ref`` file is written (one
    left by an earlier run is not touched). Heads are taken from the parse as they are: a
    particle's head is not re-checked to be a VERB.
    """
    return extract_lexical_bins(conllu_path, phenomenon,
                                [(DistanceBin(min_distance, exact), out_prefix)], lang,
                                src_path, ref_path)[0]


def extract_lexical_bins(conllu_path: str | os.PathLike[str], phenomenon: str,
                         outputs: Sequence[tuple[DistanceBin, str | os.PathLike[str]]],
                         lang: str | None = None,
                         src_path: str | os.PathLike[str] | None = None,
                         ref_path: str | os.PathLike[str] | None = None
                         ) -> list[ExtractionResult]:
    """:func:`extract_lexical` for several distance bins, each written under its own prefix,
    from one reading of the parse."""
    check_phenomenon(phenomenon, lang)
    sentences = read_conllu(conllu_path)
    src = _aligned_text(src_path, conllu_path, len(sentences))
    if src is None:
        src = [sentence.surface_text() for sentence in sentences]
    ref = _aligned_text(ref_path, conllu_path, len(sentences))
    found = list(lexical_instances(sentences, phenomenon, lang))
    results = []
    for distance_bin, out_prefix in outputs:
        instances = [item for item in found if distance_bin.admits(item.distance)]
        ids = select_ids(instances, distance_bin)
        marked_words: dict[int, set[int]] = {}
        for item in instances:
            marked_words.setdefault(item.sentence, set()).update((item.head, item.dependent))
        files = write_challenge_set(
            out_prefix, ids,
            [src[i - 1] for i in ids],
            None if ref is None else [ref[i - 1] for i in ids],
            [mark_words(sentences[i - 1], marked_words[i]) for i in ids],
            [sentences[i - 1].to_conllu() for i in ids])
        results.append(ExtractionResult(Path(out_prefix), tuple(ids), len(sentences),
                                        len(instances), files))
    return results


def _aligned_text(path: str | os.PathLike[str] | None, conllu_path: str | os.PathLike[str],
                  sentences: int) -> list[str] | None:
    if path is None:
        return None
    lines = read_lines(path)
    _check_same_count(conllu_path, sentences, "sentences", path, len(lines), "lines")
    return lines


def parse_alignment(text: str, source_length: int, target_length: int,
                    path: str | os.PathLike[str] = "<alignment>", line: int | None = None
                    ) -> list[tuple[int, int]]:
    """Parse one Pharaoh alignment line (``0-0 1-2 ...``) into 0-based index pairs.

    A malformed point or an index outside the sentence pair's token counts raises
    :class:`InputError` naming ``path`` and ``line``.
    """
    pairs: list[tuple[int, int]] = []
    for point in text.split():
        match = _ALIGNMENT_POINT.fullmatch(point)
        if match is None:
            raise InputError(path, f"malformed alignment point {point!r}: expected i-j", line)
        source, target = int(match[1]), int(match[2])
        if source >= source_length or target >= target_length:
            raise InputError(path, f"alignment point {point} out of range: the source has "
                                   f"{source_length} tokens and the target {target_length} "
                                   f"(indices are 0-based)", line)
        pairs.append((source, target))
    return pairs


def _read_parallel(src_path: str | os.PathLike[str], tgt_path: str | os.PathLike[str],
                   alignment_path: str | os.PathLike[str]
                   ) -> tuple[list[str], list[str], list[str]]:
    src, tgt, alignment = read_lines(src_path), read_lines(tgt_path), read_lines(alignment_path)
    _check_same_count(src_path, len(src), "lines", tgt_path, len(tgt), "lines")
    _check_same_count(alignment_path, len(alignment), "lines", src_path, len(src), "lines")
    return src, tgt, alignment


def _far_pairs(src: Sequence[str], tgt: Sequence[str], alignment: Sequence[str],
               alignment_path: str | os.PathLike[str], min_distance: int
               ) -> list[ReorderInstance]:
    far: list[ReorderInstance] = []
    for number, (source, target, points) in enumerate(zip(src, tgt, alignment, strict=True),
                                                      start=1):
        pairs = parse_alignment(points, len(source.split()), len(target.split()),
                                alignment_path, number)
        far.extend(ReorderInstance(number, i, j, abs(i - j)) for i, j in sorted(set(pairs))
                   if abs(i - j) >= min_distance)
    return far


def reorder_instances(src_path: str | os.PathLike[str], tgt_path: str | os.PathLike[str],
                      alignment_path: str | os.PathLike[str],
                      min_distance: int = DEFAULT_REORDER_DISTANCE) -> list[ReorderInstance]:
    """Aligned pairs with ``|i - j| >= min_distance``, by sentence then source index."""
    if min_distance < 0:
        raise ValueError(f"distance must be non-negative, got {min_distance}")
    src, tgt, alignment = _read_parallel(src_path, tgt_path, alignment_path)
    return _far_pairs(src, tgt, alignment, alignment_path, min_distance)


def extract_reorder(src_path: str | os.PathLike[str], tgt_path: str | os.PathLike[str],
                    alignment_path: str | os.PathLike[str], out_prefix: str | os.PathLike[str],
                    min_distance: int = DEFAULT_REORDER_DISTANCE) -> ExtractionResult:
    """Extract a reordering LDD set and write it under ``out_prefix`` (``.ref`` = target).

    ``src_path`` and ``tgt_path`` are the tokenized texts the alignment was computed on.
    """
    if min_distance < 0:
        raise ValueError(f"distance must be non-negative, got {min_distance}")
    src, tgt, alignment = _read_parallel(src_path, tgt_path, alignment_path)
    instances = _far_pairs(src, tgt, alignment, alignment_path, min_distance)
    ids = select_ids(instances, DistanceBin(min_distance))
    starred: dict[int, set[int]] = {}
    for item in instances:
        starred.setdefault(item.sentence, set()).add(item.source)
    files = write_challenge_set(
        out_prefix, ids,
        [src[i - 1] for i in ids],
        [tgt[i - 1] for i in ids],
        [mark_tokens(src[i - 1].split(), starred[i]) for i in ids])
    return ExtractionResult(Path(out_prefix), tuple(ids), len(src), len(instances), files)


def _report(name: str, result: ExtractionResult) -> None:
    print(f"{name}: {len(result.ids)} of {result.total} sentences selected "
          f"({result.instances} instances) -> {result.prefix}.*", file=sys.stderr)


def _cmd_lexical(args: argparse.Namespace) -> int:
    try:
        check_phenomenon(args.phenomenon, args.lang)
    except ValueError as err:
        print(f"phenomt: error: {err}", file=sys.stderr)
        return 2
    if args.bins:
        if args.min_distance or args.exact:
            raise InputError("--bins", "give the bins either as --bins or as --min-distance "
                                       "and --exact, not both")
        try:
            bins = [parse_bin(label) for label in args.bins]
        except ValueError as err:
            raise InputError("--bins", str(err)) from None
        outputs = [(b, f"{args.out_prefix}.{b.label}") for b in bins]
    else:
        outputs = [(DistanceBin(args.min_distance, args.exact), args.out_prefix)]
    results = extract_lexical_bins(args.conllu, args.phenomenon, outputs, args.lang, args.src,
                                   args.ref)
    for (distance_bin, _), result in zip(outputs, results, strict=True):
        _report(f"{args.phenomenon} {distance_bin.label}", result)
    return 0


def _cmd_reorder(args: argparse.Namespace) -> int:
    result = extract_reorder(args.src, args.tgt, args.alignment, args.out_prefix,
                             args.min_distance)
    _report(f"{REORDER} >={args.min_distance}", result)
    return 0


def register_cli(tree: CommandTree) -> None:
    """Add ``extract lexical`` and ``extract reorder``."""
    sub = tree.add("extract lexical", "Extract a lexical long-distance-dependency challenge set "
                                      "from a source-side CoNLL-U parse.", _cmd_lexical)
    sub.add_argument("--conllu", required=True, help="source-side parse")
    sub.add_argument("--phenomenon", required=True, choices=LEXICAL_PHENOMENA)
    sub.add_argument("--min-distance", type=non_negative_int, default=0,
                     help="words strictly between head and dependent (default 0 = all)")
    sub.add_argument("--exact", action="store_true",
                     help="select distance exactly --min-distance instead of at least")
    sub.add_argument("--lang", choices=("de", "en"), default=None,
                     help="source language; preposition-stranding needs 'en'")
    sub.add_argument("--src", default=None,
                     help="source text, one line per CoNLL-U sentence (default: # text)")
    sub.add_argument("--ref", default=None,
                     help="reference text, one line per sentence (no .ref file without it)")
    sub.add_argument("--bins", nargs="+", metavar="BIN",
                     help="several sets at once, by distance bin (all, ge<k>, eq<k>), each "
                          "written under <prefix>.<bin>; instead of --min-distance/--exact")
    sub.add_argument("--out-prefix", required=True, help="write <prefix>.src, .ref, .ids, "
                                                         ".src_marked, .conllu")

    sub = tree.add("extract reorder", "Extract a reordering long-distance-dependency challenge "
                                      "set from a word alignment.", _cmd_reorder)
    sub.add_argument("--src", required=True, help="tokenized source text")
    sub.add_argument("--tgt", required=True, help="tokenized target (reference) text")
    sub.add_argument("--alignment", required=True, help="Pharaoh i-j alignment, one line a pair")
    sub.add_argument("--min-distance", type=non_negative_int, default=DEFAULT_REORDER_DISTANCE,
                     help=f"keep pairs with |i - j| >= this (default {DEFAULT_REORDER_DISTANCE})")
    sub.add_argument("--out-prefix", required=True,
                     help="write <prefix>.src, .ref, .ids, .src_marked")
