"""Command-line interface of the LDD wing (``phenomt ldd ...``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from phenomt.core.bins import parse_bin
from phenomt.core.cliargs import non_negative_int, positive_int
from phenomt.core.io import (
    InputError,
    count_lines,
    read_lines,
    write_json,
    write_lines,
)
from phenomt.core.lazy import pandas as pd
from phenomt.core.metrics.bleu import tokenizers
from phenomt.core.tables import write_table

if TYPE_CHECKING:
    from phenomt.core.cliargs import CommandTree
from phenomt.ldd.control import DEFAULT_DRAWS, DEFAULT_SEED, DEFAULT_TOLERANCE, control_record
from phenomt.ldd.score import score_set
from phenomt.ldd.sets import (
    BASELINE,
    CONTROL_SCHEMA,
    PHENOMENA,
    SCORE_SCHEMA,
    SCORES_SCHEMA,
    SetKey,
    check_parallel,
    check_selection,
    parse_assignment,
    read_ids,
    select_file,
    select_lines,
)
from phenomt.ldd.sheet import export_sheet, precision_table, read_sheet
from phenomt.ldd.tables import (
    DISTANCE_BINS,
    bleu_table,
    control_table,
    distance_table,
    load_records,
    record_bleu,
    ribes_table,
    sizes_from_ids,
    sizes_from_records,
    sizes_table,
)


def _key_from_args(args: argparse.Namespace) -> SetKey:
    try:
        return SetKey(args.corpus, args.direction, args.phenomenon, args.bin)
    except ValueError as err:
        raise InputError("command line", str(err)) from None


def _selected(path: str, ids: list[int] | None, ids_path: str | None) -> list[str]:
    lines = read_lines(path)
    return lines if ids is None else select_lines(lines, ids, ids_path or "<ids>", path)


def _cmd_select(args: argparse.Namespace) -> int:
    count = write_lines(args.output, select_file(args.full, args.ids))
    print(f"selected {count} lines -> {args.output}", file=sys.stderr)
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    key = _key_from_args(args)
    if key.phenomenon == BASELINE and args.ids:
        raise InputError(args.ids, "the baseline is the full corpus: give no --ids")
    ids = read_ids(args.ids) if args.ids else None
    full_hyp, full_ref = read_lines(args.hyp), read_lines(args.ref)
    check_parallel([args.hyp, args.ref], [full_hyp, full_ref])
    hyps = full_hyp if ids is None else select_lines(full_hyp, ids, args.ids, args.hyp)
    refs = full_ref if ids is None else select_lines(full_ref, ids, args.ids, args.ref)
    if args.set_ref:
        check_selection(refs, args.set_ref)
    ribes_hyps = ribes_refs = None
    if args.ribes_hyp or args.ribes_ref:
        if not (args.ribes_hyp and args.ribes_ref):
            raise InputError(args.ribes_hyp or args.ribes_ref,
                             "give both --ribes-hyp and --ribes-ref")
        ribes_hyps = _selected(args.ribes_hyp, ids, args.ids)
        ribes_refs = _selected(args.ribes_ref, ids, args.ids)
        check_parallel([args.ribes_hyp, args.hyp], [ribes_hyps, hyps])
        check_parallel([args.ribes_ref, args.ref], [ribes_refs, refs])
    corpus_sentences = args.corpus_sentences
    if corpus_sentences is None and (ids is not None or key.phenomenon == BASELINE):
        corpus_sentences = len(full_hyp)
    record = score_set(key, args.model, hyps, refs, corpus_sentences, args.tokenize,
                       args.lowercase, args.ribes, ribes_hyps, ribes_refs)
    write_json(args.output, record)
    ribes = f", RIBES {record['ribes']['score']}" if record["ribes"] else ""
    print(f"{key} ({args.model}): {record['sentences']} sentences, BLEU "
          f"{record_bleu(record)}{ribes} -> {args.output}", file=sys.stderr)
    return 0


def _set_assignment(corpus: str, direction: str, item: str) -> tuple[SetKey, str]:
    """``PHENOMENON.BIN=PATH`` of ``ldd score-sets --set`` → the set and its ids file."""
    name, sep, path = item.partition("=")
    phenomenon, dot, label = name.partition(".")
    if not (sep and dot and path):
        raise InputError("--set", f"bad value {item!r}: expected PHENOMENON.BIN=PATH")
    try:
        return SetKey(corpus, direction, phenomenon, label), path
    except ValueError as err:
        raise InputError("--set", f"{item!r}: {err}") from None


def _cmd_score_sets(args: argparse.Namespace) -> int:
    full_hyp, full_ref = read_lines(args.hyp), read_lines(args.ref)
    check_parallel([args.hyp, args.ref], [full_hyp, full_ref])
    sets = [_set_assignment(args.corpus, args.direction, item) for item in args.set]
    keys = [key for key, _ in sets]
    if len(set(keys)) != len(keys) or any(k.phenomenon == BASELINE for k in keys):
        raise InputError("--set", "each set once, and not the baseline (always scored)")
    baseline = SetKey(args.corpus, args.direction, BASELINE, "all")
    records = [score_set(baseline, args.model, full_hyp, full_ref, len(full_hyp), args.tokenize,
                         args.lowercase)]
    for key, path in sets:
        ids = read_ids(path)
        records.append(score_set(key, args.model, select_lines(full_hyp, ids, path, args.hyp),
                                 select_lines(full_ref, ids, path, args.ref), len(full_hyp),
                                 args.tokenize, args.lowercase))
    write_json(args.output, {"schema": SCORES_SCHEMA, "records": records})
    print(f"{args.corpus}/{args.direction} ({args.model}): baseline BLEU "
          f"{record_bleu(records[0])} and {len(sets)} sets -> {args.output}", file=sys.stderr)
    return 0


def _cmd_control(args: argparse.Namespace) -> int:
    key = _key_from_args(args)
    hyps, refs, srcs = read_lines(args.hyp), read_lines(args.ref), read_lines(args.src)
    check_parallel([args.hyp, args.ref, args.src], [hyps, refs, srcs])
    ids = read_ids(args.ids)
    select_lines(hyps, ids, args.ids, args.hyp)  # range check with a file-and-line error
    try:
        record = control_record(key, args.model, hyps, refs, srcs, ids, args.draws, args.seed,
                                args.tolerance, args.exclude_set, args.tokenize, args.lowercase)
    except ValueError as err:
        raise InputError(args.ids, str(err)) from None
    write_json(args.output, record)
    control = record["control"]
    summary = (f"BLEU {record['bleu']}, control {control['mean']} ± {control['std']}, rank "
               f"{control['rank']}/{control['of']}" if control else "empty set, no control")
    print(f"{key} ({args.model}): {summary} -> {args.output}", file=sys.stderr)
    return 0


def _assignments(items: Sequence[str], option: str) -> list[tuple[SetKey, str]]:
    parsed = []
    for item in items:
        try:
            parsed.append(parse_assignment(item))
        except ValueError as err:
            raise InputError(option, str(err)) from None
    return parsed


def _cmd_table_sizes(args: argparse.Namespace) -> int:
    if not (args.scores or args.ids):
        raise InputError("--ids", "give the sets' .ids files (--ids) or score files (--scores)")
    sizes: dict[SetKey, int] = {}
    totals: dict[tuple[str, str], int] = {}
    if args.scores:
        records = load_records(args.scores, SCORE_SCHEMA)
        try:
            sizes.update(sizes_from_records(records))
        except ValueError as err:
            raise InputError(args.scores[0], str(err)) from None
        totals.update({(r["corpus"], r["direction"]): r["corpus_sentences"] for r in records
                       if r.get("corpus_sentences") is not None})
    sizes.update(sizes_from_ids(dict(_assignments(args.ids or [], "--ids"))))
    for item in args.corpus or []:
        name, sep, path = item.partition("=")
        corpus, slash, direction = name.partition("/")
        if not (sep and slash and path):
            raise InputError("--corpus", f"bad value {item!r}: expected corpus/direction=PATH")
        totals[(corpus, direction)] = count_lines(path)
    frame, notes = sizes_table(sizes, totals)
    write_table(frame, args.md, args.csv, "LDD challenge-set sizes (paper Tables 2 and 3)",
                notes + args.note)
    return 0


def _check_bins(labels: Sequence[str]) -> list[str]:
    try:
        for label in labels:
            parse_bin(label)
    except ValueError as err:
        raise InputError("--bins", str(err)) from None
    return list(labels)


_TableBuilder = Callable[[list[dict[str, Any]], argparse.Namespace],
                         "tuple[pd.DataFrame, list[str]]"]
#: The tables built from records: builder(records, args), record schema, title.
_RECORD_TABLES: dict[str, tuple[_TableBuilder, str, str]] = {
    "bleu": (lambda records, args: bleu_table(records, args.models), SCORE_SCHEMA,
             "BLEU on the LDD challenge sets and the full-corpus baseline (paper Table 4)"),
    "distance": (lambda records, args: distance_table(records, _check_bins(args.bins),
                                                      args.models), SCORE_SCHEMA,
                 "BLEU by head–dependent distance, with Spearman's ρ (paper Table 5)"),
    "ribes": (lambda records, args: ribes_table(records, args.models), SCORE_SCHEMA,
              "RIBES on the reordering sets and the full-corpus baseline (paper Table 6)"),
    "control": (lambda records, args: control_table(records, args.models), CONTROL_SCHEMA,
                "Length-matched random control of the LDD sets"),
}


def _cmd_record_table(args: argparse.Namespace) -> int:
    build, schema, title = _RECORD_TABLES[args.table]
    frame, notes = build(load_records(args.inputs, schema), args)
    write_table(frame, args.md, args.csv, title, notes + args.note)
    return 0


def _cmd_sheet_export(args: argparse.Namespace) -> int:
    count = export_sheet(_assignments(args.set, "--set"), args.output, args.per_set, args.seed)
    print(f"{count} sentences to validate -> {args.output}", file=sys.stderr)
    return 0


def _cmd_sheet_import(args: argparse.Namespace) -> int:
    frame, notes = precision_table(read_sheet(args.sheet, args.allow_blank))
    write_table(frame, args.md, args.csv, "Manual validation of the LDD challenge sets",
                notes + args.note)
    return 0


def _add_corpus_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="model name shown in the tables")
    parser.add_argument("--corpus", required=True, help="corpus (domain) name, e.g. news")
    parser.add_argument("--direction", required=True, help="translation direction, e.g. de-en")


def _add_set_options(parser: argparse.ArgumentParser) -> None:
    _add_corpus_options(parser)
    parser.add_argument("--phenomenon", required=True, choices=PHENOMENA,
                        help=f"'{BASELINE}' scores the full corpus")
    parser.add_argument("--bin", default="all",
                        help="distance bin: all, ge<k> or eq<k> (reordering: ge<d>)")


def _add_bleu_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tokenize", default="13a", choices=tokenizers(),
                        help="sacreBLEU tokenizer (default 13a); 'none' on Moses-tokenized "
                             "--hyp/--ref is the paper's multi-bleu setting")
    parser.add_argument("--lowercase", action="store_true")


def _add_table_outputs(parser: argparse.ArgumentParser, models: bool = True) -> None:
    if models:
        parser.add_argument("--models", nargs="*", default=[],
                            help="model-card JSON files (phenomt table model-card) for the notes")
    parser.add_argument("--note", action="append", default=[],
                        help="a further note under the table, e.g. that a corpus is a biased "
                             "sample (repeatable)")
    parser.add_argument("--md", required=True)
    parser.add_argument("--csv", required=True)


def register_cli(tree: CommandTree) -> None:
    """Add the ``ldd`` commands: select, score, control, table …, sheet export|import."""
    p = tree.add("ldd select", "Select the lines of a full-corpus file (e.g. hypotheses) at a "
                               "challenge set's .ids", _cmd_select)
    p.add_argument("--full", required=True, help="full-corpus file, one sentence a line")
    p.add_argument("--ids", required=True, help="the set's .ids file (1-based)")
    p.add_argument("--output", required=True)

    p = tree.add("ldd score", "Score one challenge set (or the baseline) of one model: BLEU "
                              "with its signature, RIBES for reordering sets, as JSON",
                 _cmd_score)
    _add_set_options(p)
    p.add_argument("--hyp", required=True,
                   help="full-corpus hypotheses (with --ids), else the set's own")
    p.add_argument("--ref", required=True, help="full-corpus references (with --ids)")
    p.add_argument("--ids", help="the set's .ids; not for the baseline")
    p.add_argument("--set-ref", help="check that the selected references equal this file")
    p.add_argument("--corpus-sentences", type=non_negative_int,
                   help="full-corpus size, when --hyp/--ref are the set's own lines")
    _add_bleu_options(p)
    p.add_argument("--ribes", action=argparse.BooleanOptionalAction, default=None,
                   help="compute RIBES (default: for reordering sets and the baseline)")
    p.add_argument("--ribes-hyp", help="pre-tokenized hypotheses for RIBES (same lines as --hyp)")
    p.add_argument("--ribes-ref", help="pre-tokenized references for RIBES (same lines as --ref)")
    p.add_argument("--output", required=True, help="score JSON")

    p = tree.add("ldd score-sets", "Score the baseline and every given set of one corpus "
                                   "for one model (as ldd score), into one JSON file",
                 _cmd_score_sets)
    _add_corpus_options(p)
    p.add_argument("--hyp", required=True, help="full-corpus hypotheses")
    p.add_argument("--ref", required=True, help="full-corpus references")
    p.add_argument("--set", nargs="*", default=[], metavar="PHENOMENON.BIN=IDS",
                   help="a set and its .ids file, e.g. particle.ge1=path.ids")
    _add_bleu_options(p)
    p.add_argument("--output", required=True, help="JSON file of the score records")

    p = tree.add("ldd control", "Length-matched random control: the set's BLEU against random "
                                "corpora of matching source lengths, as JSON", _cmd_control)
    _add_set_options(p)
    p.add_argument("--hyp", required=True, help="full-corpus hypotheses")
    p.add_argument("--ref", required=True, help="full-corpus references")
    p.add_argument("--src", required=True, help="full-corpus tokenized source (for lengths)")
    p.add_argument("--ids", required=True, help="the set's .ids")
    p.add_argument("--draws", type=positive_int, default=DEFAULT_DRAWS)
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--tolerance", type=non_negative_int, default=DEFAULT_TOLERANCE,
                   help="length window ± tokens (default 1)")
    p.add_argument("--exclude-set", action="store_true",
                   help="draw from the sentences outside the set only")
    _add_bleu_options(p)
    p.add_argument("--output", required=True, help="control JSON")

    p = tree.add("table ldd-sizes", "Table 2/3: challenge-set sizes beside the paper's",
                 _cmd_table_sizes)
    p.add_argument("--ids", nargs="*", metavar="SET=PATH",
                   help="corpus/direction/phenomenon/bin=path.ids")
    p.add_argument("--scores", nargs="*", help="score JSON files (their set sizes)")
    p.add_argument("--corpus", nargs="*", metavar="CORPUS/DIRECTION=PATH",
                   help="full-corpus text files, counted for the notes")
    _add_table_outputs(p, models=False)

    for name, what in (("bleu", "Table 4: BLEU per set and baseline"),
                       ("distance", "Table 5: BLEU by minimum distance with Spearman's ρ"),
                       ("ribes", "Table 6: RIBES of the reordering sets and baseline"),
                       ("control", "The length-matched control table")):
        p = tree.add(f"table ldd-{name}", what, _cmd_record_table)
        p.set_defaults(table=name)
        if name == "control":
            p.add_argument("--controls", dest="inputs", nargs="+", required=True,
                           help="control JSON files")
        else:
            p.add_argument("--scores", dest="inputs", nargs="+", required=True,
                           help="score JSON files")
        if name == "distance":
            p.add_argument("--bins", nargs="+", default=list(DISTANCE_BINS),
                           help="bins to correlate (default: all ge1 ge2 ge3)")
        _add_table_outputs(p)

    p = tree.add("ldd sheet-export", "Manual-validation sheet: random sentences of each set "
                                     "with the marked words, as TSV", _cmd_sheet_export)
    p.add_argument("--set", nargs="+", required=True, metavar="SET=PREFIX",
                   help="corpus/direction/phenomenon/bin=set prefix")
    p.add_argument("--per-set", type=positive_int, default=20,
                   help="sentences per set (default 20)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--output", required=True)

    p = tree.add("ldd sheet-import", "Precision per phenomenon from a filled validation sheet",
                 _cmd_sheet_import)
    p.add_argument("--sheet", required=True)
    p.add_argument("--allow-blank", action="store_true",
                   help="skip rows whose 'correct' cell is empty instead of failing")
    _add_table_outputs(p, models=False)
