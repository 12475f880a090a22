"""``python -m phenomt.jobs SOCKET [--wordfreq LANG]... [--ldd] [--reference FILE
--target-lang LANG --metrics NAME,...]``: the job server of ``phenomt evaluate``
(:mod:`phenomt.core.jobserver`) bound to the ``phenomt`` commands. It prints one line when it
listens and serves until SIGTERM or the end of its standard input. Between requests it
imports what the commands use, extracts the reference's n-grams for the sacreBLEU metrics
(after the score module) and loads each ``--wordfreq`` language's frequency table (after
the analysis module), so that the jobs forked later share them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from phenomt.cli import COMMAND_MODULES, run
from phenomt.core.jobserver import PRELOAD, Step, serve

#: The step after which the server loads the wordfreq tables (the module that reads them).
WORDFREQ_AFTER = "phenomt.systems.analysis"
#: The step after which it extracts the reference's n-grams for the score jobs.
REFERENCE_AFTER = "phenomt.systems.scores"
#: What the jobs of the LDD challenge sets import besides (``--ldd``): nltk's RIBES, 0.35 s;
#: scipy.stats for the correlation of BLEU with distance in their tables, 0.4 s (no job of a
#: run without them imports it).
LDD_PRELOAD = ("nltk.translate.ribes_score", "phenomt.core.metrics.ribes",
               "phenomt.core.conllu", "scipy.stats")


def warm_wordfreq(languages: Sequence[str]) -> None:
    """Load wordfreq's table of each language it has a list for (the others are the
    analysis job's own error to report)."""
    import wordfreq

    from phenomt.systems.analysis import wordfreq_table

    for lang in languages:
        if lang in wordfreq.available_languages():
            wordfreq_table(lang)


def preload(languages: Sequence[str], ldd: bool = False,
            reference: tuple[str, str, Sequence[str]] | None = None) -> list[Step]:
    """The server's steps: :data:`PRELOAD`, the reference's sacreBLEU information right
    after the score module (``reference``: its path, the target language and the metrics,
    see :func:`phenomt.systems.scores.reference_steps`), the wordfreq tables of
    ``languages`` right after the analysis module, with ``ldd`` :data:`LDD_PRELOAD`, then
    the other command modules."""
    steps: list[Step] = []
    for module in dict.fromkeys((*PRELOAD, *(LDD_PRELOAD if ldd else ()), *COMMAND_MODULES)):
        steps.append(module)
        if module == REFERENCE_AFTER and reference is not None:
            steps.append(lambda: _reference_steps(*reference))
        if module == WORDFREQ_AFTER and languages:
            steps.append(_wordfreq_step(languages))
    return steps


def _wordfreq_step(languages: Sequence[str]) -> Step:
    def step() -> None:
        warm_wordfreq(languages)

    step.slow = True  # type: ignore[attr-defined] -- 0.5 s for German: a stand-in serves
    return step


def _reference_steps(path: str, target_lang: str, keys: Sequence[str]) -> Step | None:
    from phenomt.systems.scores import reference_steps

    return reference_steps(path, target_lang, keys)()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m phenomt.jobs")
    parser.add_argument("socket")
    parser.add_argument("--wordfreq", action="append", default=[], metavar="LANG")
    parser.add_argument("--ldd", action="store_true",
                        help="the run scores LDD challenge sets: import what they use")
    parser.add_argument("--reference", metavar="FILE",
                        help="the test set's reference: extract its n-grams for the scores")
    parser.add_argument("--target-lang", default="und",
                        help="the reference's language (its BLEU tokenizer)")
    parser.add_argument("--metrics", default="", metavar="NAME,...",
                        help="the metrics the score jobs compute, comma-separated")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    reference = (None if args.reference is None
                 else (args.reference, args.target_lang, args.metrics.split(",")))

    def ready() -> None:
        print("listening", flush=True)

    try:
        serve(args.socket, run, preload=preload(args.wordfreq, args.ldd, reference),
              ready=ready, owner=sys.stdin.fileno())
    finally:
        Path(args.socket).unlink(missing_ok=True)


if __name__ == "__main__":
    main()
