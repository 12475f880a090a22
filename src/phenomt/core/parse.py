"""Universal Dependencies parsing with UDPipe 1 (``ufal.udpipe``).

Input is pre-tokenized text in UDPipe's *horizontal* format: one sentence per line, tokens
separated by spaces (a no-break space U+00A0 inside a token stands for a space in it). Each input
line becomes exactly one CoNLL-U sentence, so sentence *k* of the output is line *k* of the
input; an empty line, which UDPipe would silently read as a paragraph break, is an error.

Every output sentence carries exactly two comments, ``# sent_id = N`` (the 1-based input line)
and ``# text = <the input line>``. A line over the length limit
(:data:`phenomt.core.linelimit.MAX_TOKENS` tokens) is not given to UDPipe, whose parse time grows
with the square of the length: it becomes a placeholder sentence with ``# sent_id`` and
``# skipped = ...`` (no ``# text``) and one word, ``_``, attached to the root, so that it holds no
phenomenon and the parse stays line-parallel with its input (:func:`is_skipped`).
UDPipe's own ``# newdoc``/``# newpar`` comments are dropped:
they depend on where a file starts, which would make a sharded parse differ from an unsharded
one. For scatter/gather, :func:`split_text` cuts the input into contiguous shards and
:func:`merge_conllu` concatenates the parsed shards, renumbering ``sent_id`` so that the result
is byte-identical to parsing the whole file at once.

:func:`train_model` builds a model from CoNLL-U treebanks with ``ufal.udpipe.Trainer``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import logging
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from phenomt.core import cache
from phenomt.core.cache import CACHE_ENV
from phenomt.core.conllu import Sentence, parse_conllu_lines
from phenomt.core.io import InputError, atomic_write, count_lines, iter_lines, open_binary
from phenomt.core.linelimit import MAX_TOKENS, name_lines, token_count

if TYPE_CHECKING:
    import ufal.udpipe

    from phenomt.core.cliargs import CommandTree

log = logging.getLogger(__name__)

SENT_ID_PREFIX = "# sent_id = "
SKIPPED_KEY = "skipped"
TRAIN_METHOD = "morphodita_parsito"


def _udpipe() -> ModuleType:
    """Import ``ufal.udpipe`` lazily, so the rest of the package works without it."""
    import ufal.udpipe

    return ufal.udpipe


def load_model(path: str | os.PathLike[str]) -> ufal.udpipe.Model:
    """Load a UDPipe 1 model; a missing or unloadable file raises :class:`InputError`."""
    model_path = Path(path)
    if not model_path.is_file():
        raise InputError(model_path, "UDPipe model file not found")
    model = _udpipe().Model.load(str(model_path))
    if model is None:
        raise InputError(model_path, "cannot load UDPipe model (not a UDPipe 1 model, "
                                     "or the file is corrupt)")
    return model


def skipped_block(sent_id: int, tokens: int) -> str:
    """The placeholder CoNLL-U sentence of a line kept out of the parse as too long: its
    ``sent_id``, a ``# skipped`` comment and one word ``_`` attached to the root (a sentence
    needs a word), which no phenomenon matches."""
    return (f"{SENT_ID_PREFIX}{sent_id}\n# {SKIPPED_KEY} = {tokens} tokens, over the limit of "
            f"{MAX_TOKENS}: not parsed\n1\t_\t_\tX\t_\t_\t0\troot\t_\t_\n\n")


def is_skipped(sentence: Sentence) -> bool:
    """Whether a parsed sentence is the placeholder of a line kept out as too long."""
    return SKIPPED_KEY in sentence.metadata


def parse_lines(model: ufal.udpipe.Model, lines: Iterable[str],
                source: str | os.PathLike[str] = "<input>", first_id: int = 1,
                skipped: list[int] | None = None, tag_only: bool = False) -> Iterator[str]:
    """Tag and parse pre-tokenized sentences, yielding one CoNLL-U block per input line.

    ``model`` is a loaded ``ufal.udpipe.Model`` (see :func:`load_model`). Each block ends with
    its blank line. ``sent_id`` counts from ``first_id``; ``source`` names the input in errors.
    ``tag_only``: the tagger's columns alone (HEAD and DEPREL ``_``), for readers of the part
    of speech: the parser, a third of UDPipe's time, changes none of them.
    A line over :data:`~phenomt.core.linelimit.MAX_TOKENS` tokens never reaches the model:
    it gives :func:`skipped_block`, and its ``sent_id`` is appended to ``skipped`` if given.
    """
    udpipe = _udpipe()
    reader = udpipe.InputFormat.newHorizontalInputFormat()
    writer = udpipe.OutputFormat.newOutputFormat("conllu")
    error = udpipe.ProcessingError()
    for offset, line in enumerate(lines):
        number = offset + 1
        if line.strip() == "":
            raise InputError(source, "empty line: every line must hold one tokenized sentence",
                             number)
        tokens = token_count(line)
        if tokens > MAX_TOKENS:
            if skipped is not None:
                skipped.append(first_id + offset)
            yield skipped_block(first_id + offset, tokens)
            continue
        reader.setText(line + "\n")
        sentence = udpipe.Sentence()
        if not reader.nextSentence(sentence, error) or len(sentence.words) <= 1:
            cause = error.message if error.occurred() else "no tokens read"
            raise InputError(source, f"UDPipe could not read the line: {cause}", number)
        if not model.tag(sentence, model.DEFAULT, error) or (
                not tag_only and not model.parse(sentence, model.DEFAULT, error)):
            raise InputError(source, f"UDPipe failed: {error.message}", number)
        sentence.comments.clear()
        sentence.setSentId(str(first_id + offset))
        sentence.setText(line)
        yield writer.writeSentence(sentence)


#: Part of every cache key: raise it when :func:`parse_lines` writes other CoNLL-U for the same
#: input, so that no parse of an earlier version is reused.
CACHE_FORMAT = 1


def cache_dir() -> Path | None:
    """The folder of cached parses from ``$PHENOMT_CACHE`` (its ``udpipe/``), or None."""
    return cache.folder("udpipe")


def cache_key(model_path: str | os.PathLike[str], input_path: str | os.PathLike[str],
              tag_only: bool) -> str:
    """The SHA-256 naming a parse in the cache: of the model's and the input's bytes, the
    UDPipe version, the length limit, ``tag_only`` and :data:`CACHE_FORMAT`. A parse depends
    on nothing else, so a key found in the cache is the parse this call would make."""
    from importlib.metadata import version

    return cache.key(f"phenomt parse {CACHE_FORMAT}; ufal.udpipe {version('ufal.udpipe')}; "
                     f"max tokens {MAX_TOKENS}; tag only {tag_only}", (model_path, input_path))


def _cached(entry: Path, lines: int) -> bytes | None:
    """A cached parse's bytes if it holds one sentence per input line, else None (a cache
    entry is written atomically, so only a damaged folder holds another)."""
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    whole = data.count(b"\n\n") == lines and (data.endswith(b"\n\n") or not data)
    return data if whole else None


def parse_file(model_path: str | os.PathLike[str], input_path: str | os.PathLike[str],
               output_path: str | os.PathLike[str], first_id: int = 1,
               tag_only: bool = False) -> int:
    """Parse (or only tag, see :func:`parse_lines`) a tokenized text file into a CoNLL-U
    file; returns the number of sentences.

    The model is loaded once for the whole file; the output is written atomically. Lines kept
    out as too long (:func:`parse_lines`) are logged. :func:`parse_or_reuse` does the same
    through a cache of parses.
    """
    model = load_model(model_path)
    count = 0
    skipped: list[int] = []
    with atomic_write(output_path) as out:
        for block in parse_lines(model, iter_lines(input_path), input_path, first_id,
                                 skipped, tag_only):
            out.write(block)
            count += 1
    if skipped:
        log.warning("%s: %d of %d lines over %d tokens kept out of the parse (placeholder "
                    "sentences): %s", input_path, len(skipped), count, MAX_TOKENS,
                    name_lines(skipped))
    return count


def parse_or_reuse(model_path: str | os.PathLike[str], input_path: str | os.PathLike[str],
                   output_path: str | os.PathLike[str], tag_only: bool,
                   cache: Path) -> tuple[int, Path | None]:
    """:func:`parse_file` through the cache folder ``cache``: the number of sentences, and
    the cache entry the parse was copied from (None where it was made, then kept there; a
    cache that cannot be written only logs a warning)."""
    entry = cache / f"{cache_key(model_path, input_path, tag_only)}.conllu"
    lines = count_lines(input_path)
    data = _cached(entry, lines)
    if data is not None:
        with atomic_write(output_path, "wb") as out:
            out.write(data)
        return lines, entry
    count = parse_file(model_path, input_path, output_path, 1, tag_only)
    try:
        with open_binary(output_path) as parsed, atomic_write(entry, "wb") as kept:
            kept.write(parsed.read())
    except OSError as err:
        log.warning("could not keep the parse in the cache %s: %s", entry.parent, err)
    return count, None


def shard_sizes(total: int, shards: int) -> list[int]:
    """Sizes of ``shards`` contiguous shards of ``total`` lines, as even as possible.

    The first ``total % shards`` shards get one line more; shards may be empty.
    """
    if shards < 1:
        raise ValueError(f"number of shards must be at least 1, got {shards}")
    base, extra = divmod(total, shards)
    return [base + (1 if index < extra else 0) for index in range(shards)]


def split_text(input_path: str | os.PathLike[str],
               output_paths: Sequence[str | os.PathLike[str]]) -> list[int]:
    """Split a text file into ``len(output_paths)`` contiguous shards; returns their sizes.

    Concatenating the shards in order gives the input back (line endings become ``\\n``).
    """
    sizes = shard_sizes(count_lines(input_path), len(output_paths))
    with contextlib.closing(iter_lines(input_path)) as lines:
        for path, size in zip(output_paths, sizes, strict=True):
            with atomic_write(path) as out:
                for line in itertools.islice(lines, size):
                    out.write(line)
                    out.write("\n")
    return sizes


def merge_conllu(shard_paths: Sequence[str | os.PathLike[str]],
                 output_path: str | os.PathLike[str]) -> int:
    """Concatenate parsed shards in order, renumbering ``# sent_id`` from 1.

    Each shard is validated as CoNLL-U. Returns the number of sentences written.
    """
    count = 0
    with atomic_write(output_path) as out:
        for shard in shard_paths:
            for sentence in parse_conllu_lines(iter_lines(shard), shard):
                count += 1
                for line in sentence.lines:
                    out.write(f"{SENT_ID_PREFIX}{count}" if line.startswith(SENT_ID_PREFIX)
                              else line)
                    out.write("\n")
                out.write("\n")
    return count


def _with_iterations(options: str, key: str, value: int | None) -> str:
    """Add ``key=value`` to a UDPipe option string unless the component is disabled."""
    if value is None or options == "none":
        return options
    if options in ("", "default"):
        return f"{key}={value}"
    return f"{options};{key}={value}"


def _read_treebank(paths: Sequence[str | os.PathLike[str]]) -> ufal.udpipe.Sentences:
    """Validate CoNLL-U treebanks and load them into a ``ufal.udpipe.Sentences`` vector."""
    udpipe = _udpipe()
    sentences = udpipe.Sentences()
    error = udpipe.ProcessingError()
    for path in paths:
        # Our reader first: its errors name the file and line, UDPipe's do not.
        for _ in parse_conllu_lines(iter_lines(path), path):
            pass
        with open_binary(path) as handle:
            text = handle.read().decode("utf-8")
        reader = udpipe.InputFormat.newConlluInputFormat()
        reader.setText(text)
        sentence = udpipe.Sentence()
        while reader.nextSentence(sentence, error):
            sentences.append(sentence)
            sentence = udpipe.Sentence()
        if error.occurred():
            raise InputError(path, f"UDPipe cannot read the treebank: {error.message}")
    return sentences


def train_model(conllu_paths: Sequence[str | os.PathLike[str]],
                output_model: str | os.PathLike[str],
                heldout_paths: Sequence[str | os.PathLike[str]] = (),
                iterations: int | None = None,
                tokenizer: str = "none",
                tagger: str = "default",
                parser: str = "default") -> Path:
    """Train a UDPipe 1 model (tagger and parser) on CoNLL-U treebanks and save it.

    ``tokenizer``/``tagger``/``parser`` are UDPipe option strings (``"key=value;..."``),
    ``"default"`` or ``"none"``. The tokenizer is off by default because this package only
    parses pre-tokenized text; pass ``"default"`` to train one. ``iterations``, when given,
    sets the tagger's and the parser's training iterations (the tokenizer's epochs). Held-out
    treebanks, if any, are handed to UDPipe, which evaluates on them while training (see its
    ``early_stopping`` options). Returns the model path.
    """
    if not conllu_paths:
        raise ValueError("at least one training treebank is needed")
    train = _read_treebank(conllu_paths)
    if len(train) == 0:
        raise InputError(conllu_paths[0], "training treebanks contain no sentences")
    heldout = _read_treebank(heldout_paths)
    udpipe = _udpipe()
    error = udpipe.ProcessingError()
    model = udpipe.Trainer.train(
        TRAIN_METHOD, train, heldout,
        _with_iterations(tokenizer, "epochs", iterations),
        _with_iterations(tagger, "iterations", iterations),
        _with_iterations(parser, "iterations", iterations),
        error)
    if error.occurred() or not model:
        raise RuntimeError(f"UDPipe training failed: {error.message}")
    with atomic_write(output_model, mode="wb") as out:
        out.write(model)
    return Path(output_model)


def _cmd_parse(args: argparse.Namespace) -> int:
    cache, reused = cache_dir(), None
    if cache is None:
        count = parse_file(args.model, args.input, args.output, tag_only=args.tag_only)
    else:
        count, reused = parse_or_reuse(args.model, args.input, args.output, args.tag_only,
                                       cache)
    done = "tagged" if args.tag_only else "parsed"
    print(f"{done} {count} sentences into {args.output}"
          + (f" (copied from the cache: {reused})" if reused else ""), file=sys.stderr)
    return 0


def _cmd_scatter(args: argparse.Namespace) -> int:
    sizes = split_text(args.input, args.outputs)
    print(f"split {sum(sizes)} lines into {len(sizes)} shards: {sizes}", file=sys.stderr)
    return 0


def _cmd_gather(args: argparse.Namespace) -> int:
    count = merge_conllu(args.inputs, args.output)
    print(f"merged {count} sentences into {args.output}", file=sys.stderr)
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    path = train_model(args.treebank, args.output, args.heldout, args.iterations,
                       args.tokenizer, args.tagger, args.parser)
    print(f"wrote UDPipe model {path}", file=sys.stderr)
    return 0


def register_cli(tree: CommandTree) -> None:
    """Add ``parse``, ``parse-scatter``, ``parse-gather`` and ``udpipe-train``."""
    sub = tree.add("parse run", "Parse tokenized text (one sentence a line) into CoNLL-U with "
                            "UDPipe.", _cmd_parse)
    sub.add_argument("--model", required=True, help="UDPipe 1 model file")
    sub.add_argument("--input", required=True, help="tokenized text, one sentence a line")
    sub.add_argument("--output", required=True, help="CoNLL-U file to write")
    sub.add_argument("--tag-only", action="store_true",
                     help="tag without parsing (HEAD and DEPREL left empty): for the part of "
                          "speech alone, in two thirds of the time")
    sub.epilog = (f"With ${CACHE_ENV} set to a folder, a parse of the same input bytes by the "
                  f"same model is copied from ${CACHE_ENV}/udpipe/ (keyed by their SHA-256, "
                  "the UDPipe version and the options) instead of made again, and each new "
                  "parse is kept there.")

    sub = tree.add("parse scatter", "Split a text file into contiguous shards for parallel "
                                    "parsing.", _cmd_scatter)
    sub.add_argument("--input", required=True, help="text file to split")
    sub.add_argument("--outputs", required=True, nargs="+", help="shard files, in order")

    sub = tree.add("parse gather", "Concatenate parsed CoNLL-U shards, renumbering sent_id.",
                   _cmd_gather)
    sub.add_argument("--inputs", required=True, nargs="+", help="CoNLL-U shards, in order")
    sub.add_argument("--output", required=True, help="merged CoNLL-U file")

    sub = tree.add("parse train", "Train a UDPipe model from CoNLL-U treebanks.", _cmd_train)
    sub.add_argument("--treebank", required=True, nargs="+", help="training CoNLL-U files")
    sub.add_argument("--heldout", nargs="*", default=[], help="held-out CoNLL-U files")
    sub.add_argument("--output", required=True, help="model file to write")
    sub.add_argument("--iterations", type=int, default=None,
                     help="tagger and parser iterations (default: UDPipe's)")
    sub.add_argument("--tokenizer", default="none",
                     help="tokenizer options, 'default' or 'none' (default: none)")
    sub.add_argument("--tagger", default="default", help="tagger options (default: default)")
    sub.add_argument("--parser", default="default", help="parser options (default: default)")
