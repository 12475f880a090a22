"""Reading corpora in their upstream formats, validating and cleaning them.

Formats (``format:`` of a corpus in the config):

* ``plain``      one segment a line per language file (``.gz`` is read transparently);
* ``tsv``        one file, one pair a line, languages in given columns (``columns:``);
* ``iwslt_tags`` IWSLT ``train.tags.*`` files: metadata lines dropped, ``<title>`` and
  ``<description>`` kept without their tags (as in the common fairseq recipe);
* ``xml_seg``    IWSLT ``*.xml`` and WMT ``*.sgm`` files: the text of each ``<seg>``;
* ``tmx``        a TMX translation memory (ParaCrawl), ``<tuv xml:lang=..>`` per language;
* ``released_layout`` a document folder in the layout of the released lexical-consistency
  test set (:mod:`phenomt.core.layout`; the raw ``zh ||| en`` layer, documents in order).

``documents: K`` keeps the first K documents of a corpus with document ids, and
``document_step: N`` every N-th one before that (whole documents, for document-level metrics
on a quick run; a step spreads the sample over a set ordered by category, as Doc2Doc is).

``moses_escaped: true`` undoes Moses' XML escaping (``&apos;`` ...), as in the OPUS Books
challenge-set release.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from phenomt.core import layout
from phenomt.core.cliargs import non_negative_int, positive_int
from phenomt.core.doccontext import NO_DOCUMENT
from phenomt.core.io import (
    InputError,
    _gzip_errors,
    iter_lines,
    open_binary,
    write_json,
    write_lines,
)

DOCIDS_FORMATS = ("wmt_details", "n_sent", "blank_lines", "released_layout", "lines")
_SEG = re.compile(r"<seg[^>]*>(.*)</seg>\s*$", re.IGNORECASE)
_KEPT_TAG = re.compile(r"</?(title|description)>", re.IGNORECASE)
_MOSES_ESCAPES = {"&bar;": "|", "&lt;": "<", "&gt;": ">", "&bra;": "[", "&ket;": "]",
                  "&quot;": '"', "&apos;": "'", "&#91;": "[", "&#93;": "]", "&amp;": "&"}
_MOSES_ESCAPE_RE = re.compile("|".join(re.escape(k) for k in _MOSES_ESCAPES))


def moses_unescape(text: str) -> str:
    """Undo Moses tokenizer escaping (``&apos;`` → ``'`` ...) in one pass."""
    return _MOSES_ESCAPE_RE.sub(lambda m: _MOSES_ESCAPES[m.group(0)], text)


def read_plain(path: str | Path) -> list[str]:
    return list(iter_lines(path))


def read_iwslt_tags(path: str | Path) -> list[str]:
    out = []
    for line in iter_lines(path):
        stripped = line.strip()
        if stripped.startswith("<") and not _KEPT_TAG.match(stripped):
            continue
        out.append(_KEPT_TAG.sub("", stripped).strip())
    return out


def read_xml_seg(path: str | Path) -> list[str]:
    out = []
    for line in iter_lines(path):
        match = _SEG.search(line)
        if match:
            out.append(html.unescape(match.group(1)).strip())
    return out


def read_tsv(path: str | Path, columns: Sequence[int]) -> list[list[str]]:
    """Columns of a TSV file (0-based indices); a short row is an error naming its line. An
    empty line is an empty pair (News Commentary separates its documents by empty lines)."""
    cols: list[list[str]] = [[] for _ in columns]
    for number, line in enumerate(iter_lines(path), start=1):
        if not line.strip():
            for col in cols:
                col.append("")
            continue
        fields = line.split("\t")
        if len(fields) <= max(columns):
            raise InputError(path, f"expected at least {max(columns) + 1} tab-separated "
                                   f"fields, found {len(fields)}", number)
        for slot, col in enumerate(columns):
            cols[slot].append(fields[col])
    return cols


def read_tmx(path: str | Path, langs: Sequence[str]) -> list[list[str]]:
    """Segments of a TMX file for the given languages; units missing a language are skipped."""
    cols: list[list[str]] = [[] for _ in langs]
    lang_attr = "{http://www.w3.org/XML/1998/namespace}lang"
    with _gzip_errors(path), open_binary(path) as handle:
        try:
            for _, elem in ET.iterparse(handle, events=("end",)):
                if elem.tag != "tu":
                    continue
                found: dict[str, str] = {}
                for tuv in elem.iter("tuv"):
                    lang = (tuv.get(lang_attr) or tuv.get("lang") or "").split("-")[0].lower()
                    seg = tuv.find("seg")
                    if seg is not None:
                        found[lang] = "".join(seg.itertext())
                if all(lang in found for lang in langs):
                    for slot, lang in enumerate(langs):
                        cols[slot].append(found[lang])
                elem.clear()
        except ET.ParseError as err:  # a truncated or empty download, say
            line, column = err.position
            reason = str(err).rsplit(": line ", 1)[0]
            raise InputError(path, f"not well-formed XML: {reason} (column {column})",
                             line) from None
    return cols


def read_corpus(fmt: str, files: dict[str, Path], langs: Sequence[str],
                columns: dict[str, int] | None = None, moses_escaped: bool = False,
                limit: int | None = None) -> list[list[str]]:
    """Read one corpus; returns one list of lines per language in ``langs`` order.

    ``limit`` keeps only the first pairs (after the length check), for quick runs.
    """
    if fmt in ("tsv", "tmx", "released_layout"):
        (path,) = set(files.values())
        if fmt == "released_layout":
            src, ref, _ = layout.read_corpus(path)
            cols = [src if n == 0 else ref for n, _ in enumerate(langs)]
        elif fmt == "tsv":
            if not columns:
                raise ValueError("format tsv needs 'columns'")
            cols = read_tsv(path, [columns[lang] for lang in langs])
        else:
            cols = read_tmx(path, langs)
    else:
        reader = {"plain": read_plain, "iwslt_tags": read_iwslt_tags,
                  "xml_seg": read_xml_seg}.get(fmt)
        if reader is None:
            raise ValueError(f"unknown corpus format {fmt!r}")
        cols = [reader(files[lang]) for lang in langs]
        lengths = {lang: len(col) for lang, col in zip(langs, cols, strict=True)}
        if len(set(lengths.values())) > 1:
            detail = ", ".join(f"{files[lang]}: {n} lines" for lang, n in lengths.items())
            raise InputError(files[langs[0]], f"parallel files differ in length ({detail})")
    if limit is not None:
        cols = [col[:limit] for col in cols]
    if moses_escaped:
        cols = [[moses_unescape(line) for line in col] for col in cols]
    return cols


def read_docids(fmt: str, path: str | Path) -> list[str]:
    """Document id of every segment: from a WMT ``details.tsv``, a Doc2Doc ``n_sent`` file
    (sentences per document), ``blank_lines``, a text file whose documents are separated
    by blank lines (each blank line takes the id of the document it closes; cleaning drops
    it as an empty pair), a ``released_layout`` folder (the document file names), or
    ``lines``, one id a line (an empty line is an error naming it)."""
    if fmt == "wmt_details":
        return read_tsv(path, [3])[0]
    if fmt == "lines":
        ids = [line.strip() for line in iter_lines(path)]
        if "" in ids:
            raise InputError(path, "empty document id: one id a line", ids.index("") + 1)
        return ids
    if fmt == "blank_lines":
        ids, document, open_document = [], 1, False
        for line in iter_lines(path):
            if line.strip():
                open_document = True
            elif open_document:
                ids.append(f"doc{document:05d}")
                document, open_document = document + 1, False
                continue
            ids.append(f"doc{document:05d}")
        return ids
    if fmt == "released_layout":
        return layout.read_corpus(path)[2]
    if fmt == "n_sent":
        ids: list[str] = []
        for number, line in enumerate(iter_lines(path), start=1):
            if not line.strip().isdigit():
                raise InputError(path, f"expected a sentence count, found {line!r}", number)
            ids.extend([f"doc{number:05d}"] * int(line))
        return ids
    raise ValueError(f"unknown docids format {fmt!r}")


# --- validation and cleaning -------------------------------------------------------------

def strip_controls(text: str) -> str:
    """Remove control characters (tabs become spaces) and surrounding whitespace."""
    if text.isprintable():
        return text.strip()
    chars = (" " if ch == "\t" else ch for ch in text
             if ch == "\t" or unicodedata.category(ch) != "Cc")
    return "".join(chars).strip()


@dataclass
class CleanPolicy:
    """What to do with empty and over-long pairs (length in whitespace tokens)."""

    empty: str = "drop"  # drop | keep
    long: str = "drop"   # drop | keep
    max_tokens: int = 250


@dataclass
class CleanReport:
    input_pairs: int = 0
    output_pairs: int = 0
    control_chars_stripped: int = 0
    empty: int = 0
    long: int = 0
    dropped: int = 0
    kept_lines: list[int] = field(default_factory=list)


def clean_pairs(cols: Sequence[Sequence[str]], policy: CleanPolicy
                ) -> tuple[list[list[str]], CleanReport]:
    """Strip control characters and drop or keep empty/over-long pairs, counting each case.

    ``report.kept_lines`` holds the 1-based input line of every output pair, so side files
    (document ids) can follow the same selection.
    """
    report = CleanReport(input_pairs=len(cols[0]))
    out: list[list[str]] = [[] for _ in cols]
    for index, pair in enumerate(zip(*cols, strict=True)):
        cleaned = [strip_controls(text) for text in pair]
        report.control_chars_stripped += sum(
            a.strip() != b for a, b in zip(pair, cleaned, strict=True))
        is_empty = any(not text for text in cleaned)
        is_long = any(len(text.split()) > policy.max_tokens for text in cleaned)
        report.empty += is_empty
        report.long += is_long
        if (is_empty and policy.empty == "drop") or (is_long and policy.long == "drop"):
            report.dropped += 1
            continue
        for slot, text in enumerate(cleaned):
            out[slot].append(text)
        report.kept_lines.append(index + 1)
    report.output_pairs = len(out[0])
    return out, report


def document_lines(ids: Sequence[str], documents: int | None, step: int | None,
                   source: str | Path) -> list[int]:
    """0-based lines of the documents kept by :func:`~phenomt.core.layout.sample_documents`.
    Ids of a document are consecutive, so whole documents are kept."""
    starts = [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]]
    ends = [*starts[1:], len(ids)]
    runs = list(zip(starts, ends, strict=True))
    return [line for start, end in layout.sample_documents(runs, documents, step, source)
            for line in range(start, end)]


def _read_selected(fmt: str, files: dict[str, Path], langs: Sequence[str],
                   columns: dict[str, int] | None, moses_escaped: bool, limit: int | None,
                   docids: tuple[str, Path] | None, documents: int | None,
                   document_step: int | None = None
                   ) -> tuple[list[list[str]], list[str] | None]:
    """The corpus lines (and their document ids) after ``limit``, ``document_step`` and
    ``documents``."""
    cols = read_corpus(fmt, files, langs, columns, moses_escaped, limit)
    if docids is None:
        if documents is not None or document_step is not None:
            raise ValueError("'documents' and 'document_step' need the corpus's document ids")
        return cols, None
    ids = read_docids(*docids)
    ids = ids[:limit] if limit is not None else ids
    if len(ids) != len(cols[0]):
        raise InputError(docids[1], f"{len(ids)} document ids for {len(cols[0])} "
                                    f"segments of {files[langs[0]]}")
    if documents is not None or document_step is not None:
        kept = document_lines(ids, documents, document_step, docids[1])
        cols = [[col[i] for i in kept] for col in cols]
        ids = [ids[i] for i in kept]
    return cols, ids


def prepare_corpus(fmt: str, files: dict[str, Path], langs: Sequence[str],
                   outputs: dict[str, Path], report_path: Path, policy: CleanPolicy,
                   columns: dict[str, int] | None = None, moses_escaped: bool = False,
                   limit: int | None = None, docids: tuple[str, Path] | None = None,
                   documents: int | None = None,
                   document_step: int | None = None) -> CleanReport:
    """Read, validate and clean one corpus; write the sides named in ``outputs`` and a report.

    Validation always reads both sides, so writing one side at a time gives the same lines.
    ``document_step`` keeps every N-th document and ``documents`` the first N of those, by
    ``docids`` (format, file).
    """
    unknown = set(outputs) - set(langs)
    if unknown:
        raise ValueError(f"outputs for languages {sorted(unknown)} not in {list(langs)}")
    cols, _ = _read_selected(fmt, files, langs, columns, moses_escaped, limit, docids,
                             documents, document_step)
    cleaned, report = clean_pairs(cols, policy)
    for lang, col in zip(langs, cleaned, strict=True):
        if lang in outputs:
            write_lines(outputs[lang], col)
    summary = asdict(report)
    summary.pop("kept_lines")
    write_json(report_path, summary)
    return report


def prepare_docids(fmt: str, files: dict[str, Path], langs: Sequence[str], policy: CleanPolicy,
                   docids: tuple[str, Path], output: Path,
                   columns: dict[str, int] | None = None, moses_escaped: bool = False,
                   limit: int | None = None, documents: int | None = None,
                   document_step: int | None = None) -> int:
    """Write the document id of every segment kept by :func:`prepare_corpus`.

    The corpus is read and cleaned again (cheap and deterministic) so that the ids follow
    exactly the same selection of lines.
    """
    cols, ids = _read_selected(fmt, files, langs, columns, moses_escaped, limit, docids,
                               documents, document_step)
    _, report = clean_pairs(cols, policy)
    return write_lines(output, (ids[n - 1] for n in report.kept_lines))


def read_parallel(paths: Sequence[str | Path]) -> list[list[str]]:
    """Read parallel plain-text files, failing when their line counts differ."""
    cols = [list(iter_lines(p)) for p in paths]
    if len({len(c) for c in cols}) > 1:
        detail = ", ".join(f"{p}: {len(c)} lines" for p, c in zip(paths, cols, strict=True))
        raise InputError(paths[0], f"parallel files differ in length ({detail})")
    return cols


def assemble_train(train: Sequence[Sequence[Path]], heldout: Sequence[Sequence[Path]],
                   outputs: Sequence[Path], train_docids: Sequence[Path] | None = None,
                   docids_output: Path | None = None) -> dict[str, int]:
    """Concatenate training corpora, drop duplicate pairs and any pair leaking held-out text.

    A training pair leaks when its source or its target side equals (case-insensitively,
    ignoring spacing) a source or target sentence of a validation or test corpus.
    ``train_docids`` (one file per corpus, or ``-`` for a corpus without documents) gives the
    document id of every pair, written for the kept pairs to ``docids_output`` (ids are
    prefixed with the corpus's number, so that documents of different corpora stay apart;
    pairs of a corpus without documents get ``-``). ``outputs`` may be empty when only the ids
    are wanted.
    """
    def key(text: str) -> str:
        return " ".join(text.lower().split())

    if (train_docids is None) != (docids_output is None):
        raise ValueError("give both train_docids and docids_output, or neither")
    if train_docids is not None and len(train_docids) != len(train):
        raise ValueError(f"{len(train_docids)} document-id files for {len(train)} corpora")
    held: list[set[str]] = [set(), set()]
    for paths in heldout:
        for side, col in enumerate(read_parallel(paths)):
            held[side].update(key(t) for t in col)
    seen: set[tuple[str, ...]] = set()
    stats = {"input_pairs": 0, "duplicates": 0, "leaks": 0, "output_pairs": 0}
    out: list[list[str]] = [[] for _ in train[0]] if train else []
    kept_ids: list[str] = []
    for number, paths in enumerate(train):
        cols = read_parallel(paths)
        ids = None
        if train_docids is not None and str(train_docids[number]) == NO_DOCUMENT:
            ids = [NO_DOCUMENT] * len(cols[0])  # a corpus without documents: marked
        elif train_docids is not None:
            ids = list(iter_lines(train_docids[number]))
            if len(ids) != len(cols[0]):
                raise InputError(train_docids[number], f"{len(ids)} document ids for "
                                 f"{len(cols[0])} lines of {paths[0]}")
        for index, pair in enumerate(zip(*cols, strict=True)):
            stats["input_pairs"] += 1
            keys = tuple(key(t) for t in pair)
            if keys in seen:
                stats["duplicates"] += 1
                continue
            seen.add(keys)
            if any(k in held[0] or k in held[1] for k in keys):
                stats["leaks"] += 1
                continue
            for slot, text in enumerate(pair):
                out[slot].append(text)
            if ids is not None:
                kept_ids.append(NO_DOCUMENT if ids[index] == NO_DOCUMENT
                                else f"{number}:{ids[index]}")
    for path, col in zip(outputs, out, strict=False):
        write_lines(path, col)
    if docids_output is not None:
        write_lines(docids_output, kept_ids)
    stats["output_pairs"] = len(out[0]) if out else 0
    return stats


def _check_corpus_args(args: argparse.Namespace) -> None:
    """Refuse option values that disagree with each other, before any file is read."""
    langs = args.langs
    if len(set(langs)) != len(langs):
        raise InputError("--langs", f"a language is given twice: {' '.join(langs)}")
    if len(args.inputs) != len(langs):
        raise InputError("--inputs", f"{len(args.inputs)} files for the {len(langs)} languages "
                                     f"of --langs ({' '.join(langs)}); give one per language")
    if args.format in ("tsv", "tmx", "released_layout") and len(set(args.inputs)) > 1:
        raise InputError("--inputs", f"format {args.format} reads one file: give the same file "
                                     "for every language")
    if args.format == "tsv" and not args.columns:
        raise InputError("--columns", "format tsv needs a column per language")
    if args.columns and len(args.columns) != len(langs):
        raise InputError("--columns", f"{len(args.columns)} columns for the {len(langs)} "
                                      f"languages of --langs ({' '.join(langs)})")
    if (args.docids is None) != (args.docids_format is None):
        raise InputError("--docids", "give both --docids and --docids-format, or neither")
    for option, value in (("--documents", args.documents),
                          ("--document-step", args.document_step)):
        if value is not None and args.docids is None:
            raise InputError(option, "needs the corpus's document ids: give --docids and "
                                     "--docids-format")


def _corpus_args(args: argparse.Namespace) -> dict:
    _check_corpus_args(args)
    langs = args.langs
    return {
        "fmt": args.format, "langs": langs,
        "files": {lang: Path(p) for lang, p in zip(langs, args.inputs, strict=True)},
        "columns": dict(zip(langs, args.columns, strict=True)) if args.columns else None,
        "moses_escaped": args.moses_escaped,
        "policy": CleanPolicy(args.empty, args.long, args.max_tokens),
        "limit": args.limit,
        "documents": args.documents,
        "document_step": args.document_step,
        "docids": (args.docids_format, Path(args.docids)) if args.docids else None,
    }


def _prepare_command(args: argparse.Namespace) -> int:
    corpus_args = _corpus_args(args)
    if args.side:
        if args.side not in args.langs:
            raise InputError("--side", f"{args.side!r} is not one of --langs "
                                       f"({' '.join(args.langs)})")
        if not args.output:
            raise InputError("--side", "needs --output, the file of that side")
        outputs = {args.side: Path(args.output)}
    else:
        if len(args.outputs) != len(args.langs):
            raise InputError("--outputs", f"{len(args.outputs)} files for the "
                                          f"{len(args.langs)} languages of --langs "
                                          f"({' '.join(args.langs)}); give one per language")
        outputs = {lang: Path(p) for lang, p in zip(args.langs, args.outputs, strict=True)}
    report = prepare_corpus(outputs=outputs, report_path=Path(args.report), **corpus_args)
    print(f"{report.output_pairs} of {report.input_pairs} pairs kept "
          f"(empty {report.empty}, long {report.long}, dropped {report.dropped})")
    return 0


def _docids_command(args: argparse.Namespace) -> int:
    if args.docids is None or args.docids_format is None:
        raise InputError("corpus docids", "give --docids and --docids-format")
    n = prepare_docids(output=Path(args.output), **_corpus_args(args))
    print(f"{args.output}: {n} document ids")
    return 0


def _add_corpus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", required=True,
                   choices=["plain", "tsv", "iwslt_tags", "xml_seg", "tmx", "released_layout"])
    p.add_argument("--langs", nargs="+", required=True)
    p.add_argument("--inputs", nargs="+", required=True, help="one file per language "
                   "(the same file repeated for tsv/tmx)")
    p.add_argument("--columns", nargs="+", type=non_negative_int,
                   help="tsv: 0-based column per language")
    p.add_argument("--moses-escaped", action="store_true")
    p.add_argument("--empty", choices=["drop", "keep"], default="drop")
    p.add_argument("--long", choices=["drop", "keep"], default="drop")
    # All counts at least 1 (as the config schema says): 0 would keep nothing (or, for a
    # step, everything); a negative count counts from the end.
    p.add_argument("--max-tokens", type=positive_int, default=250)
    p.add_argument("--limit", type=positive_int, help="keep only the first N pairs")
    p.add_argument("--documents", type=positive_int, help="keep only the first N documents "
                   "(needs --docids)")
    p.add_argument("--document-step", type=positive_int, help="keep every N-th document, the "
                   "first included, before --documents (needs --docids)")
    p.add_argument("--docids", help="document ids of the corpus's lines")
    p.add_argument("--docids-format", choices=DOCIDS_FORMATS)


def _check_pairs(option: str, files: Sequence[str]) -> None:
    """A leftover file would be read as a corpus of its own side only."""
    if len(files) % 2:
        raise InputError(option, f"expected src tgt pairs of files, got {len(files)} files: "
                                 f"{' '.join(files)}")


def _assemble_command(args: argparse.Namespace) -> int:
    n = 2  # src and tgt files per corpus
    _check_pairs("--train", args.train)
    _check_pairs("--heldout", args.heldout)
    if args.train_docids and len(args.train_docids) != len(args.train) // n:
        raise InputError("--train-docids", f"{len(args.train_docids)} document-id files for "
                                           f"the {len(args.train) // n} corpora of --train; "
                                           f"give one per corpus ({NO_DOCUMENT!r} for a corpus "
                                           "without documents)")
    if bool(args.train_docids) != bool(args.docids_output):
        raise InputError("--train-docids", "give both --train-docids and --docids-output, "
                                           "or neither")
    groups = [[Path(p) for p in args.train[i:i + n]] for i in range(0, len(args.train), n)]
    held = [[Path(p) for p in args.heldout[i:i + n]] for i in range(0, len(args.heldout), n)]
    if not args.outputs and not args.docids_output:
        raise InputError("corpus assemble", "give --outputs, --docids-output or both")
    stats = assemble_train(groups, held, [Path(p) for p in args.outputs or []],
                           [Path(p) for p in args.train_docids] if args.train_docids else None,
                           Path(args.docids_output) if args.docids_output else None)
    if args.report:
        write_json(args.report, stats)
    print(json.dumps(stats, sort_keys=True))
    return 0


def register_cli(tree) -> None:
    p = tree.add("corpus prepare", "Read, validate and clean one corpus", _prepare_command)
    _add_corpus_arguments(p)
    out = p.add_mutually_exclusive_group(required=True)
    out.add_argument("--outputs", nargs="+", help="one output file per language")
    out.add_argument("--side", help="write only this language's side (to --output)")
    p.add_argument("--output")
    p.add_argument("--report", required=True)
    p = tree.add("corpus docids", "Document ids of the segments a prepared corpus keeps",
                 _docids_command)
    _add_corpus_arguments(p)
    p.add_argument("--output", required=True)
    p = tree.add("corpus assemble", "Concatenate, deduplicate and leak-check training data",
                 _assemble_command)
    p.add_argument("--outputs", nargs=2, help="src and tgt output files")
    p.add_argument("--train", nargs="+", required=True, help="src tgt [src tgt ...]")
    p.add_argument("--heldout", nargs="*", default=[], help="src tgt [src tgt ...]")
    p.add_argument("--report")
    p.add_argument("--train-docids", nargs="+", help="document ids, one file per training "
                   f"corpus ({NO_DOCUMENT!r} for a corpus without documents)")
    p.add_argument("--docids-output", help="document ids of the kept pairs")
