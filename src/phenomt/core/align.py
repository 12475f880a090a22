"""Word alignment with sil-thot's ``FastAlignModel`` (fast_align, Dyer et al. 2013).

Two models are trained, forward (source→target) and reverse (target→source), with thot's
fast_align defaults: a diagonal-favouring alignment distribution whose tension is optimised
during training, and a Dirichlet prior on the lexical table (variational Bayes, alpha 0.01,
null probability 0.08). Both models are saved under a model directory beside
``settings.json``, which records the training settings and the model files; aligning new
data loads the saved models and never retrains. With ``$PHENOMT_CACHE`` set,
``phenomt align train`` keeps the models in its ``align/`` folder and a later training on the
same bytes copies them (:func:`train_or_reuse`).

Alignments are written in Pharaoh format: one line per sentence pair, ``i-j`` points with
0-based source index ``i`` and target index ``j``, sorted by ``(i, j)``. The reverse alignment
is written in the same source-target orientation. The symmetrised alignment is thot's
grow-diag-final-and, the same procedure as fast_align's ``atools -c grow-diag-final-and``.

A pair with a side over the length limit (:data:`phenomt.core.linelimit.MAX_TOKENS`, the limit
the parse keeps too) is kept out of training and aligning: it is written as an empty line,
counted and logged. The limit lies below thot's own ``max_sentence_length`` (1,024 tokens),
beyond which thot would silently leave a pair unaligned. Empty sentences also give empty lines.

Input files hold one tokenized sentence per line; tokens are separated by whitespace
(:func:`split_tokens`).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import glob
import itertools
import json
import logging
import multiprocessing
import os
import shutil
import sys
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phenomt.core import cache
from phenomt.core.cliargs import positive_int
from phenomt.core.io import InputError, atomic_write, count_lines, iter_lines, write_lines
from phenomt.core.linelimit import MAX_TOKENS, name_lines

if TYPE_CHECKING:
    from thot.alignment import FastAlignModel
    from thot.common import WordAlignmentMatrix

    from phenomt.core.cliargs import CommandTree

log = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]
Tokens = list[str]

DEFAULT_ITERATIONS = 5
"""EM iterations per model, fast_align's default (``-I 5``)."""

SETTINGS_FILE = "settings.json"
FORWARD_PREFIX = "src_trg"
REVERSE_PREFIX = "trg_src"
_FORMAT_VERSION = 1


# Words thot's vocabulary reserves (null word, unknown word, padding).
_THOT_RESERVED = frozenset({"NULL", "UNKNOWN_WORD", "<UNUSED_WORD>"})
_ESCAPE_MARK = "~"


def split_tokens(line: str) -> Tokens:
    """Tokens of one tokenized sentence: whitespace-separated, empty strings dropped."""
    return line.split()


def _thot_tokens(tokens: Tokens) -> Tokens:
    """Tokens with thot's reserved words made ordinary, so a corpus word ``NULL`` is not the
    null word. A reserved word, possibly followed by marks, gains one more mark: injective."""
    if not any(t.rstrip(_ESCAPE_MARK) in _THOT_RESERVED for t in tokens):
        return tokens
    return [t + _ESCAPE_MARK if t.rstrip(_ESCAPE_MARK) in _THOT_RESERVED else t for t in tokens]


# --------------------------------------------------------------------------------------------
# Parallel input


def check_parallel(src: PathLike, tgt: PathLike) -> int:
    """Return the common line count of two parallel files, or raise :class:`InputError`."""
    n_src, n_tgt = count_lines(src), count_lines(tgt)
    if n_src != n_tgt:
        raise InputError(src, f"has {n_src} lines but its parallel file {tgt} has {n_tgt}; "
                              "parallel files must have equal line counts")
    return n_src


def iter_parallel(src: PathLike, tgt: PathLike) -> Iterator[tuple[Tokens, Tokens]]:
    """Yield tokenized sentence pairs of two parallel files after checking their line counts."""
    check_parallel(src, tgt)
    for src_line, tgt_line in zip(iter_lines(src), iter_lines(tgt), strict=True):
        yield split_tokens(src_line), split_tokens(tgt_line)


def read_parallel(src: PathLike, tgt: PathLike) -> tuple[list[Tokens], list[Tokens]]:
    """All tokenized sentences of two parallel files, as (source list, target list)."""
    src_sents: list[Tokens] = []
    tgt_sents: list[Tokens] = []
    for s, t in iter_parallel(src, tgt):
        src_sents.append(s)
        tgt_sents.append(t)
    return src_sents, tgt_sents


# --------------------------------------------------------------------------------------------
# OpenMP control


def _openmp_libraries() -> list[ctypes.CDLL]:
    """Every OpenMP runtime in this process: the one bundled with thot and any other loaded.

    When another library (torch) brought its own libgomp first, thot's OpenMP calls may bind
    to that copy, so the thread count is set on all of them. Looked up on each use, since such
    a library can be imported after thot.
    """
    import thot

    # The wheel bundles its own libgomp; loading it again by path returns the same instance.
    bundled = Path(thot.__file__).parent / "sil_thot.libs"
    candidates = sorted(glob.glob(str(bundled / "libgomp*")))
    with contextlib.suppress(OSError), open("/proc/self/maps", encoding="utf-8") as maps:
        candidates += sorted({line.split()[-1] for line in maps
                              if "libgomp" in line or "libomp" in line})
    libraries = []
    for path in dict.fromkeys(candidates):
        with contextlib.suppress(OSError, AttributeError):
            lib = ctypes.CDLL(path)
            lib.omp_set_num_threads.argtypes = [ctypes.c_int]
            lib.omp_get_max_threads.restype = ctypes.c_int
            libraries.append(lib)
    return libraries


@contextlib.contextmanager
def openmp_threads(n: int) -> Iterator[None]:
    """Run thot's OpenMP loops on ``n`` threads in this thread, restoring the setting after.

    Training accumulates counts with OpenMP reductions and atomic additions whose order varies
    between runs, so only a single thread gives byte-identical models. Aligning is limited too,
    so that ``jobs`` processes use ``jobs`` cores.
    """
    libraries = _openmp_libraries()
    if not libraries:
        log.debug("OpenMP runtime of thot not found; thread count left unchanged")
    previous = [lib.omp_get_max_threads() for lib in libraries]
    for lib in libraries:
        lib.omp_set_num_threads(n)
    try:
        yield
    finally:
        for lib, count in zip(libraries, previous, strict=True):
            lib.omp_set_num_threads(count)


# --------------------------------------------------------------------------------------------
# Training


def _new_model() -> FastAlignModel:
    from thot.alignment import FastAlignModel

    return FastAlignModel()


def _fit(model: FastAlignModel, iterations: int) -> None:
    """Run batch EM on the sentence pairs added to ``model``."""
    with openmp_threads(1):
        model.start_training()
        for _ in range(iterations):
            model.train()
        model.end_training()


def _save(model: FastAlignModel, model_dir: Path, prefix: str) -> list[str]:
    """Write ``model`` under ``model_dir/prefix.*`` and return the names of its files."""
    for stale in model_dir.glob(f"{prefix}.*"):
        stale.unlink()
    if not model.print(str(model_dir / prefix)):
        raise OSError(f"thot could not write the model {model_dir / prefix}")
    return sorted(p.name for p in model_dir.glob(f"{prefix}.*"))


def _model_facts(model: FastAlignModel, model_dir: Path, prefix: str) -> dict[str, Any]:
    """Settings thot stores with a saved model, for the record in ``settings.json``."""
    config: dict[str, str] = {}
    for line in (model_dir / f"{prefix}.yml").read_text(encoding="utf-8").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            config[key.strip()] = value.strip()
    _, tension = (model_dir / f"{prefix}.params").read_text().split()  # feature sum, tension
    return {
        "prefix": prefix,
        "src_vocab_size": model.src_vocab_size,
        "trg_vocab_size": model.trg_vocab_size,
        "variational_bayes": model.variational_bayes,
        "alpha": float(config["alpha"]),
        "fast_align_p0": model.fast_align_p0,
        "final_diagonal_tension": float(tension),
    }


def train_models(corpora: Sequence[tuple[PathLike, PathLike]], model_dir: PathLike,
                 iterations: int = DEFAULT_ITERATIONS) -> dict[str, Any]:
    """Train forward and reverse fast_align models on parallel tokenized corpora.

    ``corpora`` lists (source file, target file) pairs: normally the corpus to be aligned
    first, then any extra training data. Pairs with an empty side or a side longer than the
    aligner's limit cannot be trained on and are skipped (and counted). The models are written
    to ``model_dir`` and ``settings.json`` last, so an interrupted run leaves no settings file
    and is not mistaken for a trained model. Returns the recorded settings.
    """
    if not corpora:
        raise ValueError("no training corpus given")
    if iterations < 1:
        raise ValueError(f"iterations must be at least 1, got {iterations}")
    counts = [check_parallel(src, tgt) for src, tgt in corpora]

    out = Path(model_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / SETTINGS_FILE).unlink(missing_ok=True)

    forward, reverse = _new_model(), _new_model()
    limit = min(MAX_TOKENS, forward.max_sentence_length)
    added = skipped = 0
    for src, tgt in corpora:
        for s, t in iter_parallel(src, tgt):
            if not s or not t or len(s) > limit or len(t) > limit:
                skipped += 1
                continue
            s, t = _thot_tokens(s), _thot_tokens(t)
            forward.add_sentence_pair(s, t)
            reverse.add_sentence_pair(t, s)
            added += 1
    if added == 0:
        raise InputError(corpora[0][0], "no sentence pair usable for training "
                                        f"(all empty or longer than {limit} tokens)")
    if skipped:
        log.warning("training: skipped %d of %d sentence pairs that are empty or longer than "
                    "%d tokens on a side", skipped, added + skipped, limit)

    _fit(forward, iterations)
    _fit(reverse, iterations)
    files = {"forward": _save(forward, out, FORWARD_PREFIX),
             "reverse": _save(reverse, out, REVERSE_PREFIX)}
    settings = {
        "format_version": _FORMAT_VERSION,
        "aligner": "sil-thot FastAlignModel",
        "thot_version": metadata.version("sil-thot"),
        "iterations": iterations,
        "openmp_threads_training": 1,
        "max_sentence_length": limit,
        "tokenization": "str.split",
        "corpora": _corpora_record(corpora, counts),
        "training_pairs": added,
        "skipped_pairs": skipped,
        "forward": {**_model_facts(forward, out, FORWARD_PREFIX), "files": files["forward"]},
        "reverse": {**_model_facts(reverse, out, REVERSE_PREFIX), "files": files["reverse"]},
    }
    with atomic_write(out / SETTINGS_FILE) as handle:
        handle.write(_json_text(settings))
    log.info("trained fast_align models on %d sentence pairs (%d iterations) in %s",
             added, iterations, out)
    return settings


def _corpora_record(corpora: Sequence[tuple[PathLike, PathLike]], counts: Sequence[int]
                    ) -> list[dict[str, Any]]:
    return [{"src": str(src), "tgt": str(tgt), "lines": n}
            for (src, tgt), n in zip(corpora, counts, strict=True)]


def _json_text(record: dict[str, Any]) -> str:
    return json.dumps(record, indent=2, sort_keys=True) + "\n"


# --------------------------------------------------------------------------------------------
# The cache of trained models

#: Part of every cache key: raise it when :func:`train_models` writes other models for the same
#: corpora, so that no model of an earlier version is reused.
CACHE_FORMAT = 1
#: What a cache entry holds besides the model files: the training's settings, and the SHA-256
#: of every model file, checked before the entry is copied.
_CACHED_SETTINGS = "settings.json"
_CACHED_DIGESTS = "sha256.json"


def cache_key(corpora: Sequence[tuple[PathLike, PathLike]], iterations: int) -> str:
    """The SHA-256 naming a training in the cache: of every corpus file's bytes in order, the
    iterations, the length limit, sil-thot's version and :data:`CACHE_FORMAT`. Training
    runs on one thread (:func:`openmp_threads`) and depends on nothing else, so a key found
    in the cache names the models this training would write."""
    files = [path for pair in corpora for path in pair]
    return cache.key(f"phenomt align {CACHE_FORMAT}; model format {_FORMAT_VERSION}; "
                     f"sil-thot {metadata.version('sil-thot')}; iterations {iterations}; "
                     f"max tokens {MAX_TOKENS}; corpora {len(corpora)}", files)


def train_cached(corpora: Sequence[tuple[PathLike, PathLike]], model_dir: PathLike,
                 iterations: int = DEFAULT_ITERATIONS) -> tuple[dict[str, Any], Path | None]:
    """:func:`train_models`, through ``$PHENOMT_CACHE/align/`` where that is set
    (:func:`train_or_reuse`): the settings, and the cache entry the models were copied from
    (None where they were trained)."""
    folder = cache.folder("align")
    if folder is None:
        return train_models(corpora, model_dir, iterations), None
    return train_or_reuse(corpora, model_dir, iterations, folder)


def train_or_reuse(corpora: Sequence[tuple[PathLike, PathLike]], model_dir: PathLike,
                   iterations: int, cache_folder: Path) -> tuple[dict[str, Any], Path | None]:
    """:func:`train_models` through the cache folder ``cache_folder``: the settings, and the
    cache entry the models were copied from (None where they were trained, then kept there;
    a cache that cannot be written only logs a warning). Copied models are the same bytes a
    training would write, and ``settings.json`` names this call's corpus files."""
    entry = cache_folder / cache_key(corpora, iterations)
    settings = _reuse(entry, corpora, Path(model_dir))
    if settings is not None:
        return settings, entry
    settings = train_models(corpora, model_dir, iterations)
    try:
        _keep(Path(model_dir), settings, entry)
    except OSError as err:
        log.warning("could not keep the aligner models in the cache %s: %s", cache_folder, err)
    return settings, None


def _model_files(settings: dict[str, Any]) -> list[str]:
    return [name for direction in ("forward", "reverse") for name in settings[direction]["files"]]


def _keep(model_dir: Path, settings: dict[str, Any], entry: Path) -> None:
    """Keep a training's model files in the cache, with its settings and their digests."""
    if entry.is_dir():
        return
    files = [model_dir / name for name in _model_files(settings)]
    digests = {path.name: cache.file_sha256(path) for path in files}
    cache.keep_folder(files, entry, {_CACHED_SETTINGS: _json_text(settings),
                                     _CACHED_DIGESTS: _json_text(digests)})


def _reuse(entry: Path, corpora: Sequence[tuple[PathLike, PathLike]], model_dir: Path
           ) -> dict[str, Any] | None:
    """Copy a cache entry's models into ``model_dir`` and write its ``settings.json`` (with
    this call's corpus paths) last; None, copying nothing, where the entry is missing or
    damaged (a file gone, or not the bytes it was kept with; such an entry is removed)."""
    try:
        settings = json.loads((entry / _CACHED_SETTINGS).read_text(encoding="utf-8"))
        digests = json.loads((entry / _CACHED_DIGESTS).read_text(encoding="utf-8"))
        names = _model_files(settings)
        if sorted(digests) != sorted(names) or any(
                cache.file_sha256(entry / name) != digests[name] for name in names):
            raise ValueError("model files differ from the digests they were kept with")
    except (OSError, ValueError, KeyError, TypeError) as err:
        if entry.exists():
            # removed, so that this call's training is kept in its place
            log.warning("cache entry %s unusable (%s): training instead", entry, err)
            shutil.rmtree(entry, ignore_errors=True)
        return None
    # the same corpora by content as the entry's; the paths are this call's
    settings["corpora"] = _corpora_record(corpora, [check_parallel(*pair) for pair in corpora])
    model_dir.mkdir(parents=True, exist_ok=True)
    (model_dir / SETTINGS_FILE).unlink(missing_ok=True)
    for prefix in (FORWARD_PREFIX, REVERSE_PREFIX):
        for stale in model_dir.glob(f"{prefix}.*"):
            stale.unlink()
    for name in names:
        shutil.copyfile(entry / name, model_dir / name)
    with atomic_write(model_dir / SETTINGS_FILE) as handle:
        handle.write(_json_text(settings))
    return settings


# --------------------------------------------------------------------------------------------
# Loading


def read_settings(model_dir: PathLike) -> dict[str, Any]:
    """Settings of a trained model directory, after checking that all model files exist."""
    path = Path(model_dir) / SETTINGS_FILE
    if not path.exists():
        raise InputError(path, "missing model settings: no trained models here "
                               "(run `phenomt align train`)")
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
        directions = [settings["forward"], settings["reverse"]]
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise InputError(path, f"unreadable model settings: {err}") from None
    for direction in directions:
        for name in direction["files"]:
            if not (Path(model_dir) / name).is_file():
                raise InputError(Path(model_dir) / name, "missing model file")
    return settings


def _load_model(model_dir: Path, facts: dict[str, Any]) -> FastAlignModel:
    model = _new_model()
    prefix = model_dir / facts["prefix"]
    if not model.load(str(prefix)):
        raise InputError(prefix, "thot could not load this model")
    # thot skips unreadable vocabularies without an error; a mismatch reveals it.
    sizes = (model.src_vocab_size, model.trg_vocab_size)
    if sizes != (facts["src_vocab_size"], facts["trg_vocab_size"]):
        raise InputError(prefix, f"vocabulary sizes {sizes} differ from those recorded at "
                                 "training; the model files are damaged or mixed")
    return model


# --------------------------------------------------------------------------------------------
# Aligning


@dataclass(frozen=True)
class Alignments:
    """Pharaoh lines for a list of sentence pairs, and the pairs left unaligned as too long."""

    forward: list[str]
    reverse: list[str]
    gdfa: list[str]
    too_long_lines: tuple[int, ...]
    """1-based positions of pairs with a side over the length limit
    (:data:`~phenomt.core.linelimit.MAX_TOKENS`), written as empty lines."""

    @property
    def pairs(self) -> int:
        """Number of sentence pairs (lines)."""
        return len(self.forward)

    @property
    def too_long(self) -> int:
        """Number of pairs left unaligned because a side is over the length limit."""
        return len(self.too_long_lines)


def _points(matrix: WordAlignmentMatrix) -> list[tuple[int, int]]:
    """Aligned (i, j) points of a source×target matrix, sorted by (i, j)."""
    import numpy as np

    rows, cols = np.nonzero(matrix.to_numpy())
    return list(zip(rows.tolist(), cols.tolist(), strict=True))


def _pharaoh(matrix: WordAlignmentMatrix) -> str:
    """One Pharaoh line: the sorted ``i-j`` points of a source×target matrix."""
    return " ".join([f"{i}-{j}" for i, j in _points(matrix)])


def grow_diag_final_and(forward: Iterable[tuple[int, int]], reverse: Iterable[tuple[int, int]],
                        src_len: int, tgt_len: int) -> list[tuple[int, int]]:
    """Symmetrise two source-target point sets with thot's grow-diag-final-and.

    Both sets use (source index, target index) orientation. The final-and step adds forward
    points before reverse ones. Returns the points sorted by (i, j).
    """
    from thot.common import WordAlignmentMatrix

    matrices = []
    for points in (forward, reverse):
        matrix = WordAlignmentMatrix(src_len, tgt_len)
        for i, j in points:
            if not (0 <= i < src_len and 0 <= j < tgt_len):
                raise ValueError(f"point {i}-{j} outside a {src_len}x{tgt_len} alignment")
            matrix.set(i, j)
        matrices.append(matrix)
    matrices[0].grow_diag_final_and(matrices[1])
    return _points(matrices[0])


class Aligner:
    """A forward and a reverse fast_align model loaded once from a model directory."""

    def __init__(self, model_dir: PathLike):
        directory = Path(model_dir)
        self.settings = read_settings(directory)
        self.forward = _load_model(directory, self.settings["forward"])
        self.reverse = _load_model(directory, self.settings["reverse"])
        self.max_length = min(MAX_TOKENS, self.forward.max_sentence_length)

    def align(self, src_sents: Sequence[Tokens], tgt_sents: Sequence[Tokens]) -> Alignments:
        """Align tokenized sentence pairs in this process (single OpenMP thread)."""
        if len(src_sents) != len(tgt_sents):
            raise ValueError(f"{len(src_sents)} source but {len(tgt_sents)} target sentences")
        too_long: list[int] = []
        todo: list[int] = []  # 1-based positions to hand to thot
        for n, (s, t) in enumerate(zip(src_sents, tgt_sents, strict=True), start=1):
            if len(s) > self.max_length or len(t) > self.max_length:
                too_long.append(n)
            elif s and t:
                todo.append(n)
        src_todo = [_thot_tokens(src_sents[n - 1]) for n in todo]
        tgt_todo = [_thot_tokens(tgt_sents[n - 1]) for n in todo]
        with openmp_threads(1):
            fwd = self.forward.get_best_alignments(src_todo, tgt_todo)
            rev = self.reverse.get_best_alignments(tgt_todo, src_todo)
        forward = [""] * len(src_sents)
        reverse = [""] * len(src_sents)
        gdfa = [""] * len(src_sents)
        for n, (_, f_matrix), (_, r_matrix) in zip(todo, fwd, rev, strict=True):
            r_matrix.transpose()
            forward[n - 1] = _pharaoh(f_matrix)
            reverse[n - 1] = _pharaoh(r_matrix)
            f_matrix.grow_diag_final_and(r_matrix)  # in place: f_matrix becomes the result
            gdfa[n - 1] = _pharaoh(f_matrix)
        return Alignments(forward, reverse, gdfa, tuple(too_long))


def shard_bounds(n: int, shards: int) -> list[tuple[int, int]]:
    """Split ``range(n)`` into at most ``shards`` contiguous near-equal ranges, none empty
    unless ``n`` is 0 (then one empty range)."""
    if shards < 1:
        raise ValueError(f"shards must be at least 1, got {shards}")
    shards = max(1, min(shards, n))
    size, extra = divmod(n, shards)
    bounds = []
    start = 0
    for k in range(shards):
        end = start + size + (1 if k < extra else 0)
        bounds.append((start, end))
        start = end
    return bounds


_worker_aligner: Aligner | None = None


def _init_worker(model_dir: str) -> None:
    global _worker_aligner
    _worker_aligner = Aligner(model_dir)


def _align_in_worker(src_sents: list[Tokens], tgt_sents: list[Tokens]) -> Alignments:
    assert _worker_aligner is not None, "worker not initialised"
    return _worker_aligner.align(src_sents, tgt_sents)


def _concat(parts: Sequence[Alignments], starts: Sequence[int]) -> Alignments:
    return Alignments(
        forward=list(itertools.chain.from_iterable(p.forward for p in parts)),
        reverse=list(itertools.chain.from_iterable(p.reverse for p in parts)),
        gdfa=list(itertools.chain.from_iterable(p.gdfa for p in parts)),
        too_long_lines=tuple(start + n for p, start in zip(parts, starts, strict=True)
                             for n in p.too_long_lines),
    )


def align_sentences(model_dir: PathLike, src_sents: Sequence[Tokens],
                    tgt_sents: Sequence[Tokens], jobs: int = 1) -> Alignments:
    """Align tokenized sentence pairs with the saved models in ``model_dir``.

    With ``jobs`` > 1 the pairs are split into contiguous shards aligned in parallel worker
    processes, each loading the models once; every pair is aligned independently, so the
    concatenated result equals the single-process one. Too-long pairs are logged.
    """
    if len(src_sents) != len(tgt_sents):
        raise ValueError(f"{len(src_sents)} source but {len(tgt_sents)} target sentences")
    bounds = shard_bounds(len(src_sents), jobs)
    if len(bounds) == 1:
        result = Aligner(model_dir).align(src_sents, tgt_sents)
    else:
        read_settings(model_dir)  # fail here, with a clear error, rather than in every worker
        # spawn, not fork: a forked child of a process that ran OpenMP code can deadlock.
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=len(bounds), mp_context=context,
                                 initializer=_init_worker,
                                 initargs=(str(model_dir),)) as pool:
            futures = [pool.submit(_align_in_worker, list(src_sents[a:b]),
                                   list(tgt_sents[a:b])) for a, b in bounds]
            result = _concat([f.result() for f in futures], [a for a, _ in bounds])
    _log_too_long(result)
    return result


def _log_too_long(result: Alignments) -> None:
    if result.too_long:
        log.warning("%d of %d sentence pairs have a side over %d tokens and are kept out of "
                    "the alignment (empty lines): %s", result.too_long, result.pairs,
                    MAX_TOKENS, name_lines(result.too_long_lines, 10))
    else:
        log.info("aligned %d sentence pairs; none over the length limit", result.pairs)


def align_files(model_dir: PathLike, src: PathLike, tgt: PathLike, out_forward: PathLike,
                out_reverse: PathLike, out_gdfa: PathLike, jobs: int = 1) -> Alignments:
    """Align two parallel tokenized files and atomically write the three Pharaoh files."""
    read_settings(model_dir)
    src_sents, tgt_sents = read_parallel(src, tgt)
    result = align_sentences(model_dir, src_sents, tgt_sents, jobs=jobs)
    write_lines(out_forward, result.forward)
    write_lines(out_reverse, result.reverse)
    write_lines(out_gdfa, result.gdfa)
    return result


# --------------------------------------------------------------------------------------------
# Command line


def _cmd_train(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if len(args.extra_src) != len(args.extra_tgt):
        parser.error(f"--extra-src has {len(args.extra_src)} files but --extra-tgt has "
                     f"{len(args.extra_tgt)}; give them in matching order")
    corpora = [(args.src, args.tgt), *zip(args.extra_src, args.extra_tgt, strict=True)]
    _, reused = train_cached(corpora, args.model_dir, args.iterations)
    if reused is not None:
        print(f"copied the trained models into {args.model_dir} from the cache: {reused}",
              file=sys.stderr)
    return 0


def _cmd_apply(args: argparse.Namespace) -> int:
    align_files(args.model_dir, args.src, args.tgt, args.out_forward, args.out_reverse,
                args.out_gdfa, jobs=args.jobs)
    return 0


def register_cli(tree: CommandTree) -> None:
    """Add ``phenomt align train`` and ``phenomt align apply``."""
    def train_handler(args: argparse.Namespace) -> int:
        return _cmd_train(args, train)

    train = tree.add("align train", "Train forward and reverse fast_align models (sil-thot).",
                     train_handler)
    train.add_argument("--src", required=True, help="tokenized source file to be aligned")
    train.add_argument("--tgt", required=True, help="tokenized target file, line-parallel")
    train.add_argument("--extra-src", nargs="+", action="extend", default=[], metavar="FILE",
                       help="extra tokenized source training files")
    train.add_argument("--extra-tgt", nargs="+", action="extend", default=[], metavar="FILE",
                       help="extra target training files, in the order of --extra-src")
    train.add_argument("--model-dir", required=True, help="directory to write the models to")
    train.add_argument("--iterations", type=positive_int, default=DEFAULT_ITERATIONS,
                       help=f"EM iterations per model (default {DEFAULT_ITERATIONS})")
    train.epilog = (f"With ${cache.CACHE_ENV} set to a folder, models trained on the same "
                    f"files' bytes with the same settings are copied from "
                    f"${cache.CACHE_ENV}/align/ (keyed by their SHA-256, the iterations and "
                    "sil-thot's version) instead of trained again, and each new training is "
                    "kept there.")

    apply = tree.add("align apply", "Align parallel tokenized files with trained models; "
                                    "writes forward, reverse and grow-diag-final-and Pharaoh "
                                    "alignments.", _cmd_apply)
    apply.add_argument("--model-dir", required=True, help="directory of `align train`")
    apply.add_argument("--src", required=True, help="tokenized source file")
    apply.add_argument("--tgt", required=True, help="tokenized target file, line-parallel")
    apply.add_argument("--out-forward", required=True, help="forward (src→tgt) alignment")
    apply.add_argument("--out-reverse", required=True,
                       help="reverse (tgt→src) alignment, written as src-tgt i-j")
    apply.add_argument("--out-gdfa", required=True, help="grow-diag-final-and alignment")
    apply.add_argument("--jobs", type=positive_int, default=1,
                       help="parallel worker processes (contiguous shards; default 1)")
