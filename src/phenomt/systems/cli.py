"""``phenomt systems ...`` (prepare and score given system outputs) and
``phenomt table systems-...`` (their tables).

Every command takes plain paths and values and writes its JSON, text or table files
atomically.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from phenomt.core.cliargs import (
    cosine_similarity,
    language_code,
    named_file,
    non_negative_int,
    positive_int,
)
from phenomt.core.io import InputError, atomic_directory, check_line_count, load_json, write_json
from phenomt.core.metrics.bleu import default_tokenizer, tokenizers
from phenomt.core.tables import load_record, write_table
from phenomt.systems import challenge, mqm, outputs, scores, tables
from phenomt.systems.outputs import read_output, read_text


def _print(record: dict) -> None:
    print(json.dumps(record, indent=2, ensure_ascii=False, sort_keys=True))


def _add_identity(p: argparse.ArgumentParser) -> None:
    p.add_argument("--testset", required=True, help="test set name, e.g. newstest2017.en-de")
    p.add_argument("--system", required=True)
    p.add_argument("--kind", help="e.g. autoregressive, non-autoregressive")
    p.add_argument("--origin", help="where the output comes from (shown in the tables)")
    p.add_argument("--licence", help="its licence or terms (shown in the tables)")


def _mask_name(text: str) -> str:
    if text == scores.ALL_LINES:
        raise argparse.ArgumentTypeError(f"{text!r} is the name of the subset of all lines")
    return text


def _add_mask(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mask", help="1/0 a line: the main result on the marked lines, all lines "
                                  "secondary (newstest2021 zh-en official lines)")
    p.add_argument("--mask-name", type=_mask_name, default="official",
                   help=f"name of the masked subset (not {scores.ALL_LINES!r})")


def _add_redundancy_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--src", required=True, help="the test set's source (exemption quotas)")
    p.add_argument("--ref", required=True, help="the reference (stopwords, quotas)")
    p.add_argument("--source-lang", type=language_code, required=True)
    p.add_argument("--target-lang", type=language_code, required=True)
    p.add_argument("--stopword-count", type=non_negative_int,
                   help="k most frequent reference tokens (default 10, Chinese 3)")
    p.add_argument("--embeddings", help="vectors text file (or fairseq checkpoint with "
                                        "--embeddings-dict): enables synonyms")
    p.add_argument("--embeddings-dict")
    p.add_argument("--threshold", type=cosine_similarity,
                   help="cosine above which tokens are synonyms, in [-1, 1]")
    p.add_argument("--samples", type=positive_int, default=1000, help="bootstrap samples")
    p.add_argument("--seed", type=positive_int, default=scores.DEFAULT_SEED)
    p.add_argument("--tokens", nargs=2, metavar=("SRC_TOKENS", "REF_TOKENS"),
                   help="the test set's tokens written by `phenomt systems tokenize` "
                        "(default: tokenize --src and --ref here)")
    _add_mask(p)
    p.add_argument("--output", required=True)


def _check_embeddings(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if (args.embeddings is None) != (args.threshold is None):
        parser.error("--embeddings and --threshold go together")
    if args.embeddings_dict and not args.embeddings:
        parser.error("--embeddings-dict needs --embeddings")


# --------------------------------------------------------------------------- systems

def _check_command(args: argparse.Namespace) -> int:
    output = outputs.read_output(args.hyp, args.ref)
    summary = {"hypothesis": args.hyp, "reference": args.ref, **output.summary()}
    if args.mask:
        mask = outputs.read_mask(args.mask, len(output.lines), args.ref)
        summary["masked_lines"] = sum(mask)
    if args.output:
        write_json(args.output, summary)
    _print(summary)
    return 0


def _subset_command(args: argparse.Namespace) -> int:
    count = outputs.subset_file(args.input, args.mask, args.output)
    print(f"{args.output}: {count} lines")
    return 0


def _prepare_mqm_command(args: argparse.Namespace) -> int:
    rows = mqm.read_mqm(args.annotations)
    recovered = outputs.mqm_outputs(rows, args.annotations)
    if args.systems:
        recovered = outputs.select_systems(recovered, args.systems, args.annotations)
    # the folder is replaced whole: no half-written outputs, no stale systems of an earlier run
    with atomic_directory(args.outdir) as folder:
        manifest = outputs.write_mqm_outputs(recovered, folder, args.src_lang, args.tgt_lang,
                                             args.origin or str(args.annotations))
    print(f"{args.outdir}: {len(manifest['systems'])} systems x {manifest['segments']} "
          f"segments in {len(manifest['documents'])} documents")
    return 0


def metric_settings(texts: list[str]) -> dict:
    """``--setting`` values, typed by the registered metrics (a ValueError when one is
    wrong)."""
    from phenomt.core.metrics.base import parse_settings

    return parse_settings(texts)


def _add_setting_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--setting", nargs="+", action="extend", default=[],
                   metavar="METRIC.SETTING=VALUE",
                   help="a setting of a scored metric, as `phenomt score METRIC --help` lists "
                        "them (e.g. ltcr.pairs=FILE ltcr.align_model=DIR, "
                        "chrf.word_order=2)")


def _analysis_record(path: str) -> dict:
    """A ``phenomt systems analyse`` record, refused (naming the file) if it is another."""
    from phenomt.systems import analysis

    record = load_json(path)
    if record.get("schema") != analysis.SCHEMA:
        raise InputError(path, f"not a record of `phenomt systems analyse` ({analysis.SCHEMA})")
    return record


def _add_scores_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scores", nargs="+", action="extend", default=[], type=named_file,
                   metavar="SYSTEM=FILE",
                   help="systems' `systems score` records: their BLEU and chrF sentence "
                        "statistics are used where computed as here, not computed again")


def _add_texts(p: argparse.ArgumentParser) -> None:
    """Every system's output, the reference and the source of one test set."""
    p.add_argument("--hyp", nargs="+", action="extend", required=True, type=named_file,
                   metavar="SYSTEM=FILE", help="every system's output")
    p.add_argument("--ref", required=True)
    p.add_argument("--src", required=True)


def _refuse_repeats(args: argparse.Namespace, option: str, what: str,
                    names: list[str]) -> None:
    """A usage error when ``option`` names one ``what`` twice."""
    if len(set(names)) != len(names):
        args.systems_parser.error(f"{option}: a {what} named twice among {', '.join(names)}")


def _read_outputs(args: argparse.Namespace, warn: bool = True
                  ) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """The reference, the source and every ``--hyp SYSTEM=FILE`` output of a test set, each
    checked against the reference; a system named twice is a usage error."""
    _refuse_repeats(args, "--hyp", "system", [name for name, _ in args.hyp])
    references = read_text(args.ref)
    sources = read_text(args.src)
    check_line_count(args.src, len(sources), len(references), args.ref)
    return references, sources, {name: read_output(path, args.ref, warn=warn).lines
                                 for name, path in args.hyp}


def _hyp_tokens(args: argparse.Namespace, hyps: dict[str, str], lines: int
                ) -> dict[str, list[list[str]]]:
    """The ``--hyp-tokens SYSTEM=FILE`` word tokens, each of a system of ``--hyp``."""
    found = {}
    for name, path in args.hyp_tokens:
        if name not in hyps:
            args.systems_parser.error(f"--hyp-tokens {name}: not a system of --hyp")
        found[name] = scores.read_tokens(path, lines, hyps[name])
    return found


def _score_records(args: argparse.Namespace, hyps: dict[str, str], lines: int
                   ) -> dict[str, dict]:
    """The ``--scores SYSTEM=FILE`` records, each checked to be a score record of that
    system's ``--hyp`` file over the test set's lines."""
    found = {}
    for name, path in args.scores:
        record = load_json(path)
        if name not in hyps:
            args.systems_parser.error(f"--scores {name}: not a system of --hyp")
        if (not isinstance(record, dict) or "subsets" not in record
                or record.get("system") != name):
            raise InputError(path, f"not a `systems score` record of {name}")
        if (record.get("hypothesis"), record.get("reference"), record.get("lines")) != (
                hyps[name], args.ref, lines):
            raise InputError(path, f"scored {record.get('hypothesis')} against "
                                   f"{record.get('reference')} ({record.get('lines')} lines), "
                                   f"not {hyps[name]} against {args.ref} ({lines} lines)")
        found[name] = record
    return found


def _analyse_command(args: argparse.Namespace) -> int:
    from phenomt.systems import analysis

    if args.words_only and args.scores:
        args.systems_parser.error("--scores: their statistics make the length buckets and "
                                  "examples, which --words-only leaves out")
    references, sources, hypotheses = _read_outputs(args)
    names = list(hypotheses)
    tokenize = args.tokenize or default_tokenizer(args.target_lang)
    try:
        frequencies = (analysis.corpus_frequencies(read_text(args.freq_corpus), tokenize,
                                                   Path(args.freq_corpus).name)
                       if args.freq_corpus else
                       analysis.wordfreq_frequencies(args.target_lang))
        parse = None
        if args.ref_conllu:
            from phenomt.core.conllu import read_conllu

            parse = read_conllu(args.ref_conllu)
        # a file of the tagger alone (HEAD empty) is named as such in the tables
        what = ("parse" if parse is None or any(w.head is not None for s in parse
                                                 for w in s.words) else "tags")
        record = analysis.analysis_record(
            testset=args.testset, hypotheses=hypotheses, references=references,
            sources=sources, baseline=args.baseline or names[0],
            target_lang=args.target_lang, tokenize=tokenize, frequencies=frequencies,
            samples=args.samples, seed=args.seed, reference_parse=parse,
            parse_note=f"UDPipe {what} of the reference, model {args.udpipe_model}"
            if args.udpipe_model else f"UDPipe {what} of the reference",
            scored=_score_records(args, dict(args.hyp), len(references)),
            hypothesis_tokens=_hyp_tokens(args, dict(args.hyp), len(references)),
            words_only=args.words_only)
    except InputError:
        raise
    except ValueError as err:
        args.systems_parser.error(str(err))
    write_json(args.output, record)
    print(f"{args.testset}: buckets, n-grams and examples of {len(names)} systems against "
          f"{record['baseline']} -> {args.output}")
    return 0


def _analysis_merge_command(args: argparse.Namespace) -> int:
    from phenomt.systems import analysis

    _refuse_repeats(args, "--record", "system", [name for name, _ in args.record])
    records = {name: _analysis_record(path) for name, path in args.record}
    references, sources, hypotheses = _read_outputs(args, warn=False)
    try:
        record = analysis.merge_records(
            records, args.systems, hypotheses=hypotheses, references=references,
            sources=sources, scored=_score_records(args, dict(args.hyp), len(references)))
    except ValueError as err:
        args.systems_parser.error(str(err))
    write_json(args.output, record)
    print(f"{record['testset']}: the analyses of {len(records)} systems against "
          f"{record['baseline']} merged -> {args.output}")
    return 0


def _sentences_command(args: argparse.Namespace) -> int:
    from phenomt.systems import sentences

    if args.tokens and not (args.source_lang and args.target_lang):
        args.systems_parser.error("--tokens needs --source-lang and --target-lang")
    _refuse_repeats(args, "--set", "set", [name for name, _ in args.set])
    references, sources, hypotheses = _read_outputs(args, warn=False)
    record = _analysis_record(args.analysis) if args.analysis else None
    sets = {name: sentences.read_set(prefix) for name, prefix in args.set}
    setup = tokens = None
    if args.tokens:
        from phenomt.core.text import word_tokens

        src_tokens = scores.read_tokens(args.tokens[0], len(references), args.ref)
        ref_tokens = scores.read_tokens(args.tokens[1], len(references), args.ref)
        setup = scores.redundancy_setup(ref_tokens, args.target_lang, args.source_lang)
        tokens = (src_tokens, ref_tokens,
                  lambda line: word_tokens([line], args.target_lang)[0])
    pair_set = None
    if args.ltcr:
        from phenomt.core.metrics.ltcr import read_pair_file

        pair_set = (read_pair_file(args.ltcr[0]), args.ltcr[1])
    try:
        found = sentences.sentences_record(
            testset=args.testset, sources=sources, references=references,
            hypotheses=hypotheses, sets=sets, analysis=record, shown=args.shown,
            redundancy=setup, tokens=tokens, ltcr=pair_set)
    except ValueError as err:
        args.systems_parser.error(str(err))
    write_json(args.output, found)
    print(f"{args.testset}: {len(found['groups'])} groups of sentences, "
          f"{len(found['texts'])} lines -> {args.output}")
    return 0


def _analysis_table_command(args: argparse.Namespace) -> int:
    from phenomt.systems import analysis

    outputs = _kind_files(args)
    record = _analysis_record(args.record)
    lacking = [s for s in analysis.SCORE_SECTIONS if record.get(s) is None]
    if lacking and {"buckets", "examples"} & set(outputs):
        raise InputError(args.record, f"a record of one pair's words (`systems analyse "
                                      f"--words-only`) has no {' or '.join(lacking)}; its "
                                      f"tables come from `systems analysis-merge`'s record")
    for kind, (md, csv) in outputs.items():
        build, title = analysis.TABLE_KINDS[kind]
        frame, notes = build(record)
        write_table(frame, md, csv, f"{title}: {record['testset']}", notes)
    return 0


def _kind_files(args: argparse.Namespace) -> dict[str, tuple[str, str]]:
    """``--kind``'s tables with their ``--md`` and ``--csv`` files, paired in order."""
    if not len(args.kind) == len(args.md) == len(args.csv):
        args.systems_parser.error(f"{len(args.kind)} --kind, {len(args.md)} --md and "
                                  f"{len(args.csv)} --csv files: give one of each per table")
    _refuse_repeats(args, "--kind", "table", args.kind)
    return {kind: (md, csv) for kind, md, csv in zip(args.kind, args.md, args.csv,
                                                       strict=True)}


def _with_identity(record: dict, args: argparse.Namespace) -> dict:
    record.update(origin=args.origin, licence=args.licence)
    return record


def _score_command(args: argparse.Namespace) -> int:
    if (args.baseline is None) != (args.baseline_hyp is None) and args.baseline != args.system:
        args.systems_parser.error("--baseline needs --baseline-hyp (unless it is --system)")
    if args.baseline_record and not args.baseline_hyp:
        args.systems_parser.error("--baseline-record needs --baseline-hyp")
    try:
        record = scores.score_record(
            testset=args.testset, system=args.system, hyp=args.hyp, ref=args.ref,
            target_lang=args.target_lang, baseline=args.baseline,
            baseline_hyp=args.baseline_hyp, mask=args.mask, mask_name=args.mask_name,
            tokenize=args.tokenize, test=args.test, samples=args.samples, seed=args.seed,
            kind=args.kind, metrics=args.metrics, interval=args.interval, src=args.src,
            source_lang=args.source_lang, settings=metric_settings(args.setting),
            baseline_record=load_json(args.baseline_record) if args.baseline_record else None)
    except InputError:
        raise  # names its file and line; the CLI's entry point reports it
    except ValueError as err:
        args.systems_parser.error(str(err))
    write_json(args.output, _with_identity(record, args))
    main = record["subsets"][record["main"]]
    found = ", ".join(f"{key} {main[key]['score']:.2f} [{main[key]['ci_low']:.2f}, "
                      f"{main[key]['ci_high']:.2f}]" for key in record["metrics"])
    print(f"{args.testset} {args.system}: {found} -> {args.output}")
    return 0


def _redundancy_command(args: argparse.Namespace) -> int:
    _check_embeddings(args.systems_parser, args)
    record = scores.redundancy_record(
        testset=args.testset, system=args.system, hyp=args.hyp, src=args.src, ref=args.ref,
        source_lang=args.source_lang, target_lang=args.target_lang, mask=args.mask,
        mask_name=args.mask_name, stopword_count=args.stopword_count,
        embeddings=args.embeddings, embeddings_dict=args.embeddings_dict,
        threshold=args.threshold, samples=args.samples, seed=args.seed, kind=args.kind,
        tokens=args.tokens, tokens_out=args.tokens_out)
    write_json(args.output, _with_identity(record, args))
    main = record["subsets"][record["main"]]
    print(f"{args.testset} {args.system}: CRR {main['crr']}, DRR {main['drr']} -> "
          f"{args.output}")
    return 0


def _tokenize_command(args: argparse.Namespace) -> int:
    sources, references = scores.read_text(args.src), scores.read_text(args.ref)
    scores.check_line_count(args.src, len(sources), len(references), args.ref)
    scores.write_tokens(sources, args.source_lang, args.src_out)
    scores.write_tokens(references, args.target_lang, args.ref_out)
    print(f"{args.src_out}, {args.ref_out}: {len(references)} lines")
    return 0


def _redundancy_test_command(args: argparse.Namespace) -> int:
    _check_embeddings(args.systems_parser, args)
    (name_a, hyp_a), (name_b, hyp_b) = args.a, args.b
    if name_a == name_b:
        args.systems_parser.error("--a and --b must name different systems")
    try:
        record = scores.redundancy_comparison(
            testset=args.testset, system_a=name_a, hyp_a=hyp_a, system_b=name_b, hyp_b=hyp_b,
            src=args.src, ref=args.ref, source_lang=args.source_lang,
            target_lang=args.target_lang, mask=args.mask, mask_name=args.mask_name,
            stopword_count=args.stopword_count, embeddings=args.embeddings,
            embeddings_dict=args.embeddings_dict, threshold=args.threshold,
            samples=args.samples, trials=args.trials, seed=args.seed, tokens=args.tokens,
            records=(load_json(args.records[0]), load_json(args.records[1]))
            if args.records else None)
    except InputError:
        raise
    except ValueError as err:
        args.systems_parser.error(str(err))
    write_json(args.output, record)
    _print(record["subsets"])
    return 0


def _has_column(record: dict, column: str) -> bool:
    """Whether ``record`` has ``column`` as :func:`mqm.metric_from_record` looks it up (its
    value may be null: a metric without a value, not a misspelled one)."""
    subsets = record.get("subsets")
    if isinstance(subsets, dict) and record.get("main") in subsets \
            and column in subsets[record["main"]]:
        return True
    value: object = record
    for part in column.split("."):
        if not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    return True


def _record_columns(record: dict) -> set[str]:
    """The metric columns of a record: its main subset's and its own numeric keys."""
    def numeric(value: object) -> bool:
        return (isinstance(value, int | float) and not isinstance(value, bool)) or (
            isinstance(value, dict) and "score" in value)

    subsets = record.get("subsets")
    main = subsets.get(record.get("main")) if isinstance(subsets, dict) else None
    found = {k for k, v in main.items() if numeric(v)} if isinstance(main, dict) else set()
    return found | {k for k, v in record.items() if numeric(v)}


def _metric_columns(records: list[str], columns: list[str], named: list[tuple[str, str]],
                    parser: argparse.ArgumentParser) -> dict[str, dict]:
    """column -> system -> value, from score records (one per system); ``named`` records
    (e.g. LTCR's) have no system field and are given as (system, file).

    A column no record has, or a record with none of the columns, is refused: either would
    correlate nothing (n=0) and look like a result."""
    loaded = [(path, load_json(path)) for path in records]
    for system, path in named:
        record = load_json(path)
        if "system" in record and record["system"] != system:
            raise InputError(path, f"is system {record['system']!r}, given as {system!r}")
        loaded.append((path, {**record, "system": system}))
    known = sorted(set().union(*(_record_columns(r) for _, r in loaded)))
    for column in columns:
        if not any(_has_column(r, column) for _, r in loaded):
            parser.error(f"argument --metric: no record has {column!r}; their columns: "
                         f"{', '.join(known) or 'none'}")
    for path, record in loaded:
        if not any(_has_column(record, column) for column in columns):
            raise InputError(path, f"has none of the --metric columns ({', '.join(columns)}); "
                                   f"its columns: {', '.join(sorted(_record_columns(record)))}")
    found: dict[str, dict] = {}
    for column in columns:
        values: dict = {}
        for path, record in loaded:
            if "system" not in record:
                raise InputError(path, "not a per-system record: no 'system' field")
            try:
                value = mqm.metric_from_record(record, column)
            except ValueError as err:
                raise InputError(path, f"--metric {column}: {err}") from None
            if value is not None:
                if record["system"] in values:
                    raise InputError(path, f"a second {column!r} value for system "
                                           f"{record['system']!r}")
                values[record["system"]] = value
        found[column] = values
    return found


def _check_categories(path: str, categories: list[str], parser: argparse.ArgumentParser
                      ) -> None:
    """Refuse a category that neither the annotations nor the default set know: its rate
    would be 0 for every system, a result of a typo."""
    found = {row.category for row in mqm.read_mqm(path)} - {mqm.NO_ERROR}
    known = sorted(found | set(mqm.RELEVANT_CATEGORIES))
    unknown = [c for c in categories if c not in known]
    if unknown:
        parser.error(f"argument --categories: unknown {', '.join(map(repr, unknown))}; known "
                     f"(the error categories of {path} and the defaults): {', '.join(known)}")


def _mqm_command(args: argparse.Namespace) -> int:
    if bool(args.records or args.named_records) != bool(args.metric):
        args.systems_parser.error("--records (or --named-records) and --metric go together")
    _check_categories(args.annotations, args.categories, args.systems_parser)
    metrics = (_metric_columns(args.records, args.metric, args.named_records,
                               args.systems_parser) if args.metric else {})
    record = mqm.mqm_record(args.annotations, args.categories, metrics, args.weak_below,
                            args.reference)
    write_json(args.output, record)
    for c in record["correlations"]:
        rho = ("—" if c["rho"] is None else
               f"{c['rho']:+.3f} (p {c['p']:.4f}, Holm-adjusted {c['p_holm']:.4f})")
        print(f"{c['metric']} vs {c['category']}: n={c['n']} rho={rho}"
              + (" [weak]" if c["weak"] else ""), file=sys.stderr)
    return 0


def _ldd_score_command(args: argparse.Namespace) -> int:
    try:
        sets = [challenge.parse_set(text) for text in args.set]
    except ValueError as err:
        args.systems_parser.error(str(err))
    try:
        record = challenge.ldd_record(
            testset=args.testset, system=args.system, hyp=args.hyp, ref=args.ref,
            target_lang=args.target_lang, sets=sets, tokenize=args.tokenize,
            samples=args.samples, seed=args.seed, kind=args.kind, tokenized=args.tokenized,
            metrics=args.metrics, src=args.src, source_lang=args.source_lang,
            settings=metric_settings(args.setting),
            score_record=None if args.scores is None else load_json(args.scores))
    except InputError:
        raise  # names its file and line; the CLI's entry point reports it
    except ValueError as err:
        args.systems_parser.error(str(err))
    write_json(args.output, _with_identity(record, args))
    full = record[challenge.FULL]["bleu"]
    print(f"{args.testset} {args.system}: full test set BLEU {full['score']:.2f}; "
          + ", ".join(f"{name} {e['bleu']['score']:.2f} ({e['sentences']})"
                      for name, e in record["sets"].items() if e["bleu"])
          + f" -> {args.output}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- tables

# Fields every record of a kind has (a record of another command lacks some).
BLEU_KEYS = ("testset", "system", "main", "subsets", "test", "is_baseline", "metrics")
REDUNDANCY_KEYS = ("testset", "system", "main", "subsets", "settings", "bootstrap")
COMPARISON_KEYS = ("testset", "a", "b", "main", "subsets", "settings", "test")
MQM_KEYS = ("annotations", "rows", "categories", "category_totals", "systems", "weak_below",
            "correlations")


def _bleu_table_command(args: argparse.Namespace) -> int:
    records = [load_record(p, "--scores", "'phenomt systems score'", BLEU_KEYS)
               for p in args.scores]
    frame, notes = tables.bleu_table(records, tables.load_catalogue(args.catalogue))
    write_table(frame, args.md, args.csv, "Given systems: BLEU and chrF with 95% confidence "
                "intervals and paired significance against the baseline", notes)
    return 0


def _redundancy_table_command(args: argparse.Namespace) -> int:
    records = [load_record(p, "--records", "'phenomt systems redundancy'", REDUNDANCY_KEYS)
               for p in args.records]
    comparisons = [load_record(p, "--comparisons", "'phenomt systems redundancy-test'",
                               COMPARISON_KEYS) for p in args.comparisons]
    frame, notes = tables.redundancy_table(records, comparisons,
                                           tables.load_catalogue(args.catalogue))
    write_table(frame, args.md, args.csv, "Given systems: continuous and discontinuous "
                "redundancy (CRR, DRR) with sentence-bootstrap intervals", notes)
    return 0


def _mqm_table_command(args: argparse.Namespace) -> int:
    record = load_record(args.mqm, "--mqm", "'phenomt systems mqm'", MQM_KEYS)
    frame, notes = tables.mqm_table(record, tables.load_catalogue(args.catalogue), args.testset)
    write_table(frame, args.md, args.csv, f"MQM error rates beside metrics ({args.testset})",
                notes)
    return 0


#: Fields every `score ltcr` record has (a record of another command lacks some).
LTCR_KEYS = ("l_all", "pairs_all", "judged_all", "unjudged_all", "documents", "sentences",
             "intervals", "stemmer", "statistics")


def _ltcr_table_command(args: argparse.Namespace) -> int:
    records = {}
    for key, path in args.records:
        testset, sep, system = key.partition("/")
        if not sep or not testset or not system:
            args.systems_parser.error(f"--records expects TESTSET/SYSTEM=FILE, got {key!r}")
        records[(testset, system)] = (
            load_record(path, "--records", "'phenomt score ltcr'", LTCR_KEYS), path)
    baselines = dict(args.baseline)
    for testset, system in baselines.items():
        if (testset, system) not in records:
            args.systems_parser.error(f"--baseline {testset}={system}: no record of it")
    frame, notes = tables.ltcr_table(records, baselines, args.calibration, args.samples,
                                     args.seed)
    write_table(frame, args.md, args.csv, "Given systems: lexical translation consistency "
                "(LTCR, L-All) with document-bootstrap intervals and the reference's "
                "calibration", [*notes, *args.note])
    return 0


def _ldd_table_command(args: argparse.Namespace) -> int:
    outputs = _kind_files(args)
    records = [load_json(p) for p in args.records]
    for path, record in zip(args.records, records, strict=True):
        if record.get("schema") != challenge.SCHEMA:
            raise InputError(path, f"not a {challenge.SCHEMA} record")
    tables.check_ldd_records(records, args.records)
    catalogue = tables.load_catalogue(args.catalogue)
    aligner = None
    if args.aligner_settings:
        aligner = tables.aligner_note(load_json(args.aligner_settings), args.aligner_settings,
                                      args.alignment, args.aligned_source)
    extraction = {"udpipe": args.udpipe, "aligner": aligner}
    testset = records[0]["testset"]
    for kind, (md, csv) in outputs.items():
        if kind == "bleu":
            frame, notes = tables.ldd_bleu_table(records, catalogue, **extraction)
            title = "Given systems on the LDD challenge sets (Table 4): BLEU with 95% intervals"
        elif kind == "distance":
            frame, notes = tables.ldd_distance_table(records, catalogue, args.min_sentences,
                                                     **extraction)
            title = "Given systems on the LDD challenge sets by distance (Table 5)"
        elif kind == "metrics":
            frame, notes = tables.ldd_metrics_table(records, catalogue, **extraction)
            title = "Given systems on the LDD challenge sets: the other metrics"
        else:
            frame, notes = tables.ldd_ribes_table(records, catalogue, **extraction)
            title = "Given systems on the LDD reordering sets: RIBES (Table 6)"
        write_table(frame, md, csv, f"{title}, {testset}", notes)
    return 0


def _table_io(p: argparse.ArgumentParser, several: bool = False) -> None:
    p.add_argument("--catalogue", type=Path,
                   help="systems TSV (default: the package's sysout catalogue)")
    _table_files(p, several)


def _table_files(p: argparse.ArgumentParser, several: bool = False) -> None:
    """``--md`` and ``--csv``: one file each, or with ``several`` one per ``--kind``."""
    nargs = "+" if several else None
    p.add_argument("--md", required=True, nargs=nargs)
    p.add_argument("--csv", required=True, nargs=nargs)
    if several:
        p.set_defaults(systems_parser=p)


def register_cli(tree) -> None:
    p = tree.add("systems check", "Validate a system output against its reference",
                 _check_command)
    p.add_argument("--hyp", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--mask")
    p.add_argument("--output", help="also write the summary as JSON")

    p = tree.add("systems subset", "Keep the lines a 1/0 mask selects", _subset_command)
    p.add_argument("--input", required=True)
    p.add_argument("--mask", required=True)
    p.add_argument("--output", required=True)

    p = tree.add("systems prepare-mqm", "Recover plain system outputs, source and document ids "
                 "from an MQM annotation file", _prepare_mqm_command)
    p.add_argument("--annotations", required=True)
    p.add_argument("--src-lang", type=language_code, required=True)
    p.add_argument("--tgt-lang", type=language_code, required=True)
    p.add_argument("--origin", help="where the annotations come from (manifest)")
    p.add_argument("--systems", nargs="+", help="only these annotated systems (each must be "
                                                "in the file)")
    p.add_argument("--outdir", required=True, help="replaced whole")

    p = tree.add("systems score", "BLEU and chrF (or any registered metrics) with intervals "
                 "and the paired test against a baseline, as a JSON record", _score_command)
    _add_identity(p)
    p.add_argument("--hyp", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--src", help="the test set's source (for metrics that read it: crr, drr)")
    p.add_argument("--source-lang", type=language_code, help="the source language (with --src)")
    p.add_argument("--target-lang", type=language_code, required=True)
    p.add_argument("--metrics", nargs="+", choices=scores.metric_keys(),
                   default=list(scores.METRIC_KEYS), metavar="METRIC",
                   help="registered metrics, in the table's order "
                        f"({', '.join(scores.metric_keys())}; default: "
                        f"{' '.join(scores.METRIC_KEYS)})")
    _add_setting_option(p)
    p.add_argument("--interval", choices=sorted(scores.INTERVAL_METHODS),
                   default="percentile",
                   help="percentile bootstrap (default), or sacreBLEU's mean +- half-width "
                        "for comparison with published sacreBLEU intervals")
    p.add_argument("--baseline", help="name of the baseline system")
    p.add_argument("--baseline-hyp", help="the baseline's output")
    p.add_argument("--baseline-record", metavar="FILE",
                   help="the baseline's own `systems score` record of this test set: the "
                        "paired tests take its sentence statistics (where computed as here) "
                        "instead of scoring the baseline again")
    p.add_argument("--tokenize", choices=tokenizers(),
                   help="sacreBLEU tokenizer (default: by target language)")
    p.add_argument("--test", choices=sorted(scores.TESTS), default="bs")
    p.add_argument("--samples", type=positive_int,
                   help="bootstrap samples (bs, default 1000) or trials (ar, default 10000)")
    p.add_argument("--seed", type=positive_int, default=scores.DEFAULT_SEED)
    _add_mask(p)
    p.add_argument("--output", required=True)
    p.set_defaults(systems_parser=p)

    p = tree.add("systems analyse", "compare-mt's analyses of every system of a test set "
                 "against the baseline: word F by frequency bucket and BLEU by sentence "
                 "length with intervals and paired tests, n-gram differences, the sentences "
                 "that differ most", _analyse_command)
    p.add_argument("--testset", required=True)
    p.add_argument("--hyp", nargs="+", action="extend", required=True, type=named_file,
                   metavar="SYSTEM=FILE", help="every system's output (the first is the "
                                               "baseline unless --baseline names another)")
    p.add_argument("--baseline", help="the system the others are compared with")
    p.add_argument("--ref", required=True)
    p.add_argument("--src", required=True)
    p.add_argument("--target-lang", type=language_code, required=True)
    p.add_argument("--tokenize", choices=tokenizers(),
                   help="sacreBLEU tokenizer of the words (default: BLEU's for the language)")
    p.add_argument("--ref-conllu", metavar="FILE",
                   help="the UDPipe parse of the Moses-tokenized reference (sent_id = line): "
                        "word recall by part of speech")
    p.add_argument("--udpipe-model", help="the parse's model, for the table's note")
    p.add_argument("--freq-corpus", metavar="FILE",
                   help="target-language training text whose word counts make the frequency "
                        "buckets (default: the wordfreq list of the language)")
    _add_scores_option(p)
    p.add_argument("--hyp-tokens", nargs="+", action="extend", default=[], type=named_file,
                   metavar="SYSTEM=FILE",
                   help="systems' word tokens (`systems redundancy --tokens-out`): with "
                        "--ref-conllu, read instead of tokenizing the outputs again")
    p.add_argument("--words-only", action="store_true",
                   help="only the sections of the words (frequency and POS buckets, n-grams): "
                        "`systems analysis-merge` adds the length buckets and examples from "
                        "the score records")
    p.add_argument("--samples", type=positive_int, default=1000)
    p.add_argument("--seed", type=positive_int, default=scores.DEFAULT_SEED)
    p.add_argument("--output", required=True)
    p.set_defaults(systems_parser=p)

    p = tree.add("systems analysis-merge", "The test set's analysis of every system from the "
                 "analyses of each system against the baseline (`systems analyse` of the two), "
                 "with BLEU by sentence length and the examples of all systems",
                 _analysis_merge_command)
    p.add_argument("--systems", nargs="+", required=True, metavar="SYSTEM",
                   help="every system of the test set, the baseline among them, in the order "
                        "of the tables")
    p.add_argument("--record", nargs="+", action="extend", required=True, type=named_file,
                   metavar="SYSTEM=FILE", help="each system's analysis against the baseline")
    _add_texts(p)
    _add_scores_option(p)
    p.add_argument("--output", required=True)
    p.set_defaults(systems_parser=p)

    p = tree.add("systems sentences", "The sentences behind a test set's challenge-set, "
                 "bucket, example and LTCR cells (source, reference, every output, the phenomenon "
                 "marked), for the report's drill-down", _sentences_command)
    p.add_argument("--testset", required=True)
    _add_texts(p)
    p.add_argument("--set", nargs="+", action="extend", default=[], type=named_file,
                   metavar="NAME=PREFIX",
                   help="a challenge set: its PREFIX.ids and PREFIX.src_marked files")
    p.add_argument("--analysis", help="the test set's `phenomt systems analyse` record "
                                      "(its buckets and examples)")
    p.add_argument("--tokens", nargs=2, metavar=("SRC_TOKENS", "REF_TOKENS"),
                   help="the test set's word tokens (`systems tokenize`): mark each shown "
                        "output's redundant tokens as its CRR/DRR job counts them")
    p.add_argument("--source-lang", type=language_code, help="with --tokens")
    p.add_argument("--target-lang", type=language_code, help="with --tokens")
    p.add_argument("--ltcr", nargs=2, metavar=("PAIRS", "ALIGN_DIR"),
                   help="the test set's LTCR pair set (`lexcons pairs`) and aligner "
                        "(`lexcons align-train`): show its first pairs, each system's "
                        "aligned words and verdicts")
    p.add_argument("--shown", type=positive_int, default=20,
                   help="sentences shown per challenge set, LTCR pairs shown (default 20)")
    p.add_argument("--output", required=True)
    p.set_defaults(systems_parser=p)

    p = tree.add("systems redundancy", "Word-level CRR and DRR with sentence-bootstrap "
                 "intervals, as a JSON record", _redundancy_command)
    _add_identity(p)
    p.add_argument("--hyp", required=True)
    p.add_argument("--tokens-out", metavar="FILE",
                   help="also write the output's word tokens there, one line each (what "
                        "`systems analyse --hyp-tokens` reads)")
    _add_redundancy_options(p)
    p.set_defaults(systems_parser=p)

    p = tree.add("systems tokenize", "The word tokens of a test set's source and reference "
                 "(what CRR/DRR read), written once for all of its systems",
                 _tokenize_command)
    p.add_argument("--src", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--source-lang", type=language_code, required=True)
    p.add_argument("--target-lang", type=language_code, required=True)
    p.add_argument("--src-out", required=True)
    p.add_argument("--ref-out", required=True)

    p = tree.add("systems redundancy-test", "Paired test of CRR and DRR between two systems "
                 "(e.g. a non-autoregressive system against its AR twin)",
                 _redundancy_test_command)
    p.add_argument("--testset", required=True)
    p.add_argument("--a", required=True, type=named_file, metavar="NAME=FILE")
    p.add_argument("--b", required=True, type=named_file, metavar="NAME=FILE")
    p.add_argument("--trials", type=positive_int, default=10000, help="randomization trials")
    p.add_argument("--records", nargs=2, metavar=("A_RECORD", "B_RECORD"),
                   help="the two systems' own `systems redundancy` records: their kept "
                        "sentence counts (checked to be of these files and settings) are "
                        "tested instead of counting the outputs again")
    _add_redundancy_options(p)
    p.set_defaults(systems_parser=p)

    p = tree.add("systems mqm", "MQM category rates per system and their rank correlation "
                 "with metric columns", _mqm_command)
    p.add_argument("--annotations", required=True)
    p.add_argument("--categories", nargs="+", default=list(mqm.RELEVANT_CATEGORIES))
    p.add_argument("--records", nargs="*", default=[],
                   help="per-system score records of the annotated systems")
    p.add_argument("--named-records", nargs="*", default=[], type=named_file,
                   metavar="SYSTEM=FILE", help="records without a system field (e.g. LTCR's)")
    p.add_argument("--metric", nargs="*", default=[],
                   help="columns of the records: bleu, chrf, crr, drr, redundancy, or a key "
                        "(l_all: LTCR)")
    p.add_argument("--weak-below", type=positive_int, default=mqm.WEAK_BELOW)
    p.add_argument("--reference", help="the annotated output the metrics took as reference")
    p.add_argument("--output", required=True)
    p.set_defaults(systems_parser=p)

    p = tree.add("systems ldd-score", "BLEU with its 95% sentence-bootstrap interval (and "
                 "RIBES of the reordering sets) of one system on the LDD challenge sets of its "
                 "test set and on the full test set, as a JSON record", _ldd_score_command)
    _add_identity(p)
    p.add_argument("--hyp", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--target-lang", type=language_code, required=True)
    p.add_argument("--set", nargs="+", required=True, metavar="PHENOMENON.BIN=PREFIX",
                   help="a challenge set: PREFIX.ids (1-based lines) and PREFIX.ref")
    p.add_argument("--tokenized", nargs=2, metavar=("SRC_TOKENS", "REF_TOKENS"),
                   help="the test set's tokenized source and reference the sets were parsed "
                        "and aligned from: the record names the lines kept out as too long")
    p.add_argument("--tokenize", choices=tokenizers(),
                   help="sacreBLEU tokenizer (default: by target language)")
    p.add_argument("--samples", type=positive_int, default=1000, help="bootstrap samples")
    p.add_argument("--seed", type=positive_int, default=scores.DEFAULT_SEED)
    p.add_argument("--metrics", nargs="+", default=[], metavar="METRIC",
                   choices=[m for m in scores.metric_keys() if m != "bleu"],
                   help="more registered metrics scored on the full test set and every set "
                        "like BLEU (table systems-ldd --kind metrics)")
    _add_setting_option(p)
    p.add_argument("--src", help="the test set's source (for metrics that read it: crr, drr)")
    p.add_argument("--source-lang", type=language_code, help="the source language (with --src)")
    p.add_argument("--scores", metavar="RECORD",
                   help="the system's record of 'phenomt systems score' on the same files: "
                        "its per-sentence statistics are used where they were computed as "
                        "here (same signature), instead of scoring the output again")
    p.add_argument("--output", required=True)
    p.set_defaults(systems_parser=p)

    p = tree.add("table systems-ldd", "LDD challenge sets of a test set with the given "
                 "systems as columns: BLEU (Table 4), BLEU by distance (Table 5), RIBES "
                 "(Table 6) or the other metrics; several kinds in one call", _ldd_table_command)
    p.add_argument("--kind", required=True, nargs="+",
                   choices=["bleu", "distance", "ribes", "metrics"],
                   help="the tables, each with its --md and --csv file in the same order")
    p.add_argument("--records", nargs="+", required=True,
                   help="records of 'phenomt systems ldd-score', one per system")
    p.add_argument("--min-sentences", type=positive_int, default=50,
                   help="smallest set shown by distance")
    p.add_argument("--udpipe", help="the UDPipe model the lexical sets come from (notes)")
    p.add_argument("--aligner-settings", metavar="SETTINGS_JSON",
                   help="settings.json of the aligner the reordering set comes from: the "
                        "notes name the corpora it was trained on")
    p.add_argument("--alignment", help="which of its alignments the reordering set reads "
                                       "(notes)")
    p.add_argument("--aligned-source", metavar="FILE",
                   help="the test set's tokenized source as aligned: the notes say whether it "
                        "is among the aligner's training corpora")
    _table_io(p, several=True)

    p = tree.add("table systems-bleu", "BLEU/chrF of given systems with intervals and "
                 "significance", _bleu_table_command)
    p.add_argument("--scores", nargs="+", required=True)
    _table_io(p)

    p = tree.add("table systems-redundancy", "CRR/DRR of given systems with intervals and "
                 "paired tests", _redundancy_table_command)
    p.add_argument("--records", nargs="+", required=True)
    p.add_argument("--comparisons", nargs="*", default=[])
    _table_io(p)

    p = tree.add("table systems-ltcr", "LTCR (L-All) of given systems with intervals, the "
                 "paired test against the baseline and the reference's calibration",
                 _ltcr_table_command)
    p.add_argument("--records", nargs="+", required=True, type=named_file,
                   metavar="TESTSET/SYSTEM=JSON", help="`phenomt score ltcr` records")
    p.add_argument("--baseline", nargs="*", default=[], type=named_file,
                   metavar="TESTSET=SYSTEM", help="the system each test set's others are "
                                                  "tested against")
    p.add_argument("--calibration", default="reference",
                   help="the system name of the reference scored as a hypothesis")
    p.add_argument("--samples", type=positive_int, default=1000,
                   help="bootstrap samples of the paired test")
    p.add_argument("--seed", type=positive_int, default=scores.DEFAULT_SEED)
    p.add_argument("--note", action="append", default=[], help="a note under the table")
    p.set_defaults(systems_parser=p)
    _table_io(p)

    p = tree.add("table systems-analysis", "Tables of `systems analyse`: the buckets, the "
                 "n-gram differences, the examples; several kinds in one call",
                 _analysis_table_command)
    p.add_argument("--record", required=True, help="record of `phenomt systems analyse`")
    p.add_argument("--kind", required=True, nargs="+", choices=["buckets", "ngrams", "examples"],
                   help="the tables, each with its --md and --csv file in the same order")
    _table_files(p, several=True)

    p = tree.add("table systems-mqm", "MQM error rates beside metrics, with Spearman's rho",
                 _mqm_table_command)
    p.add_argument("--mqm", required=True, help="record of 'phenomt systems mqm'")
    p.add_argument("--testset", required=True)
    _table_io(p)
