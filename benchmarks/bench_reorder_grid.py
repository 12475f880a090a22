"""Reordering-set fidelity on newstest2013 De→En, end to end from the data mirror.

Prepares and tokenizes the default configuration's aligner training data (the LDD corpora
newstest2013 and the first 3,000 Books pairs, then ``ldd.align.extra``: Multi30k train,
newstest2012 and newstest2014; train splits cleaned as the default ``clean.train`` policy),
trains forward and reverse fast_align models (5 iterations, as ``ldd.align``), aligns
newstest2013, and writes the grid of reordering-set sizes (d × alignment × punctuation ×
``≥``/``>``) beside the paper's Table 2.

``--variants`` adds the same grid under other aligner settings, to see whether they explain
the gap to the paper: ``nt13-only`` (trained on newstest2013 alone), ``whitespace`` (the
default corpora split on whitespace instead of Moses-tokenized) and ``all-mirror``
(newstest2013, all of the mirror's Books part, and the De→En models' training corpora:
Multi30k train, newstest2008-2012 and 2014-2019; about 5 minutes on one core). For every
grid it also prints how many pairs differ in length by at least 5 tokens and how many have two
crossing links at least 5 apart on both sides. Stages whose outputs exist in ``--workdir``
are reused unless ``--fresh``; the wall time of every stage run is printed.

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/bench_reorder_grid.py \
        [--workdir /tmp/reorder_bench] [--out benchmarks/results] [--fresh] \
        [--variants nt13-only whitespace all-mirror]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from phenomt.core import align
from phenomt.core.corpus import CleanPolicy, clean_pairs, read_corpus
from phenomt.core.fetch import find_mirror
from phenomt.core.io import write_lines
from phenomt.core.text import tokenize
from phenomt.ldd import fidelity

ROOT = Path(__file__).resolve().parents[1]
TRAIN_POLICY = CleanPolicy(empty="drop", long="drop", max_tokens=250)
TEST_POLICY = CleanPolicy(empty="keep", long="keep", max_tokens=250)

LANGS = ("de", "en")
Spec = tuple[str, dict[str, str], dict[str, int] | None, bool, int | None, CleanPolicy]


def _plain(name: str, policy: CleanPolicy = TRAIN_POLICY) -> Spec:
    return ("plain", {lang: f"wmt/de-en/{name}.{lang}" for lang in LANGS}, None, False, None,
            policy)


def _books(limit: int | None, policy: CleanPolicy) -> Spec:
    path = "books/books.de-en.partial.tsv.gz"
    return ("tsv", {lang: path for lang in LANGS}, {"de": 1, "en": 2}, True, limit, policy)


MULTI30K: Spec = ("plain", {lang: f"multi30k/train.{lang}.gz" for lang in LANGS}, None, False,
                  None, TRAIN_POLICY)
# Corpus name -> how to read it from the mirror: format, files by language, TSV columns,
# Moses-escaped, first-pairs limit, cleaning policy.
CORPORA: dict[str, Spec] = {
    "newstest2013": _plain("newstest2013", TEST_POLICY),
    "books": _books(3000, TEST_POLICY),
    "multi30k.train": MULTI30K,
    "newstest2012": _plain("newstest2012"),
    "newstest2014": _plain("newstest2014"),
    "books.all": _books(None, TRAIN_POLICY),
    **{name: _plain(name) for name in (
        "news-test2008", "newstest2009", "newstest2010", "newstest2011", "newstest2015",
        "newstest2016", "newstest2017", "newstest2018", "newstest2019")},
}
DEFAULT_TRAINING = ("newstest2013", "books", "multi30k.train", "newstest2012", "newstest2014")
# Variant -> (tokenization, aligner training corpora in order; the first is aligned).
VARIANTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "default": ("moses", DEFAULT_TRAINING),
    "nt13-only": ("moses", ("newstest2013",)),
    "whitespace": ("whitespace", DEFAULT_TRAINING),
    "all-mirror": ("moses", ("newstest2013", "books.all", "multi30k.train", "newstest2012",
                             "newstest2014", "news-test2008", "newstest2009", "newstest2010",
                             "newstest2011", "newstest2015", "newstest2016", "newstest2017",
                             "newstest2018", "newstest2019")),
}
DIAGNOSTIC_D = 5
T = TypeVar("T")


def timed(label: str, run: Callable[[], T]) -> T:
    """Run one stage and print its wall and CPU time."""
    start, start_cpu = time.perf_counter(), time.process_time()
    result = run()
    print(f"{label:<36} {time.perf_counter() - start:8.1f} s wall "
          f"{time.process_time() - start_cpu:8.1f} s CPU", flush=True)
    return result


def split_text(line: str, lang: str, tokenization: str) -> str:
    """One line tokenized as the project does (``moses``) or only split on whitespace."""
    return tokenize(line, lang) if tokenization == "moses" else " ".join(line.split())


def prepare(mirror: Path, work: Path, names: tuple[str, ...], tokenization: str
            ) -> list[tuple[Path, Path]]:
    """Tokenized (de, en) files of the named corpora, in order; existing files are reused."""
    pairs = []
    for name in names:
        fmt, files, columns, escaped, limit, policy = CORPORA[name]
        out = {lang: work / f"tok-{tokenization}" / f"{name}.{lang}" for lang in LANGS}
        if not all(path.exists() for path in out.values()):
            cols = read_corpus(fmt, {lang: mirror / files[lang] for lang in LANGS}, LANGS,
                               columns, escaped, limit)
            cleaned, _ = clean_pairs(cols, policy)
            for lang, col in zip(LANGS, cleaned, strict=True):
                write_lines(out[lang], (split_text(line, lang, tokenization) for line in col))
        pairs.append((out["de"], out["en"]))
    return pairs


def crosses(links: frozenset[tuple[int, int]], d: int) -> bool:
    """Whether two links cross with both their source and target ends at least ``d`` apart."""
    ordered = sorted(links)
    return any(i2 - i1 >= d and j1 - j2 >= d
               for k, (i1, j1) in enumerate(ordered) for i2, j2 in ordered[k + 1:])


def diagnostics(pairs: list[fidelity.SentencePair], d: int) -> str:
    """Length differences and long crossings, beside the grid's raw index differences."""
    drift = sum(abs(len(p.src) - len(p.tgt)) >= d for p in pairs)
    crossing = ", ".join(f"{kind} {sum(crosses(p.links(kind), d) for p in pairs)}"
                         for kind in fidelity.ALIGNMENTS)
    return (f"pairs whose lengths differ by >= {d} tokens: {drift}; pairs with two links "
            f"crossing >= {d} apart on both sides: {crossing}")


def run_variant(name: str, mirror: Path, work: Path, out: Path, jobs: int) -> None:
    """Train, align and write the grid of one variant; print its d = 5 row and diagnostics."""
    tokenization, names = VARIANTS[name]
    corpora = timed(f"[{name}] prepare + tokenize",
                    lambda: prepare(mirror, work, names, tokenization))
    model_dir = work / f"model-{name}"
    if not (model_dir / align.SETTINGS_FILE).exists():
        timed(f"[{name}] train fwd+rev (5 iter.)",
              lambda: align.train_models(corpora, model_dir))
    settings = align.read_settings(model_dir)
    print(f"[{name}] aligner trained on {settings['training_pairs']} pairs "
          f"({settings['skipped_pairs']} skipped): "
          + ", ".join(f"{Path(c['src']).stem} {c['lines']}" for c in settings["corpora"]))

    src, tgt = corpora[0]
    links = {kind: work / f"newstest2013.{name}.{kind}" for kind in ("forward", "reverse",
                                                                      "gdfa")}
    if not all(path.exists() for path in links.values()):
        timed(f"[{name}] align newstest2013", lambda: align.align_files(
            model_dir, src, tgt, links["forward"], links["reverse"], links["gdfa"],
            jobs=jobs))
    suffix = "" if name == "default" else f".{name}"
    md, csv = out / f"reorder_grid{suffix}.md", out / f"reorder_grid{suffix}.csv"
    frame = timed(f"[{name}] grid", lambda: fidelity.write_grid(
        src, tgt, links["forward"], links["reverse"], links["gdfa"], md, csv))
    wide = fidelity.wide_table(frame)
    print(wide[wide["d"] == fidelity.PAPER_DISTANCE].to_string(index=False))
    pairs = fidelity.read_pairs(src, tgt, links["forward"], links["reverse"], links["gdfa"])
    print(f"[{name}] {diagnostics(pairs, DIAGNOSTIC_D)}")
    print(f"[{name}] -> {md}, {csv}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/reorder_bench",
                        help="tokenized data, models and alignments (reused between runs)")
    parser.add_argument("--out", default="/tmp/reorder_bench/results",
                        help="directory for the reorder_grid*.md and .csv files")
    parser.add_argument("--jobs", type=int, default=2, help="aligning processes")
    parser.add_argument("--variants", nargs="*", default=[],
                        choices=[v for v in VARIANTS if v != "default"],
                        help="further aligner settings to grid")
    parser.add_argument("--fresh", action="store_true", help="delete --workdir first")
    args = parser.parse_args()

    mirror = find_mirror(None, ROOT)
    if mirror is None:
        raise SystemExit("no data mirror: set PHENOMT_MIRROR or provide ../shared/data")
    work = Path(args.workdir)
    if args.fresh and work.exists():
        shutil.rmtree(work)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs visible, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, Python "
          f"{platform.python_version()}; mirror {mirror}")
    for name in ["default", *args.variants]:
        run_variant(name, mirror, work, Path(args.out), args.jobs)


if __name__ == "__main__":
    main()
