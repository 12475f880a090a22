"""The sentences behind the cells of a test set's tables, for the report's drill-down.

A number in a table is checked by reading its sentences: a challenge set's value by its
sentences with the phenomenon marked, a bucket's by the sentences in it, an example by every
system's output of its line. One record per test set lists them as *groups*, keyed the way a
table's rows name them (:func:`group_key`):

- ``set:NAME``: a challenge set (its ``.ids`` and ``.src_marked`` files): the first
  ``shown`` sentences, each source with the phenomenon's words in ``*stars*`` (the head and
  dependent of a lexical set, the far-aligned words of the reordering set);
- ``length:BUCKET``: the first sentences whose reference length is in the bucket;
  ``frequency:BUCKET`` and ``pos:TAG``: the first sentences whose reference has words of that
  frequency bucket or part of speech, with those words (all from the ``systems analyse``
  record);
- ``line:N``: one line, as an example of the examples table;
- ``ltcr:TESTSET``: the first pairs of the test set's LTCR (L-All): two occurrences of a
  repeated source word in one document, the word in *stars* in the segmented source of both
  lines, and per system the words aligned to each occurrence and its verdict (consistent,
  inconsistent or unjudged), as the LTCR metric judges them (:func:`ltcr_group`).

With the test set's word tokens, each output of a shown line also carries its redundant tokens
as the systems' CRR/DRR jobs count them (:func:`phenomt.systems.scores.redundancy_setup`, the
same stopwords and exemptions): the later token of each continuous pair and of each
discontinuous pair.

``texts`` holds, for every line of a group, the source, the reference and every system's
output, so the report shows each line once however many groups list it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from phenomt.core.io import InputError, read_lines

SCHEMA = "phenomt.systems.sentences/1"
#: Sentences shown per challenge set (the analyses record their buckets' first 20 as well).
SHOWN = 20
#: What the stars of a challenge set's marked source mean.
MARKING = ("the phenomenon's source words in *stars*: the head and dependent of a lexical "
           "set, the far-aligned words of the reordering set")


def group_key(kind: str, name: Any) -> str:
    """``set:particle.ge1``, ``line:12``, ``length:[10, 20)``."""
    return f"{kind}:{name}"


def read_set(prefix: str | os.PathLike[str]) -> tuple[list[int], list[str]]:
    """A challenge set's test-set lines (1-based, its ``.ids``) and marked sources."""
    ids_path, marked_path = f"{prefix}.ids", f"{prefix}.src_marked"
    ids = []
    for number, text in enumerate(read_lines(ids_path), 1):
        if not text.strip().isdigit() or int(text) < 1:
            raise InputError(ids_path, f"{text!r} is not a line number", number)
        ids.append(int(text))
    marked = read_lines(marked_path)
    if len(marked) != len(ids):
        raise InputError(marked_path, f"{len(marked)} lines, but {ids_path} lists {len(ids)}")
    return ids, marked


def _set_groups(sets: Mapping[str, tuple[list[int], list[str]]], shown: int,
                lines: int) -> dict[str, dict]:
    groups = {}
    for name, (ids, marked) in sets.items():
        beyond = [i for i in ids if i > lines]
        if beyond:
            raise ValueError(f"challenge set {name}: line {beyond[0]} beyond the test set's "
                             f"{lines} lines")
        groups[group_key("set", name)] = {
            "label": f"challenge set {name}", "size": len(ids), "lines": ids[:shown],
            "marked_source": {str(i): m for i, m in zip(ids[:shown], marked[:shown],
                                                         strict=True)},
            "marking": MARKING}
    return groups


#: Sections of a ``systems analyse`` record a ``--words-only`` pair record leaves empty (the
#: merge fills them): its groups are left out, with a note.
SCORE_SECTIONS = {"length": "length buckets", "examples": "example lines"}


def analysis_notes(record: Mapping[str, Any]) -> list[str]:
    """What an analysis record lacks, so its groups are missing (a words-only record)."""
    absent = [name for key, name in SCORE_SECTIONS.items() if not record.get(key)]
    return [f"the analysis record has no {' or '.join(absent)} (a --words-only record: "
            "`systems analysis-merge` adds them); their groups are left out"] if absent else []


def _analysis_groups(record: Mapping[str, Any]) -> dict[str, dict]:
    groups = {}
    length = record.get("length") or {"buckets": []}
    for bucket in length["buckets"]:
        groups[group_key("length", bucket["bucket"])] = {
            "label": f"reference length {bucket['bucket']}", "size": bucket["sentences"],
            "lines": list(bucket["lines"])}
    for bucket in record["frequency"]["buckets"]:
        words = bucket["lines"]
        groups[group_key("frequency", bucket["bucket"])] = {
            "label": f"reference words of frequency {bucket['bucket']} "
                     f"({record['frequency']['frequencies']})",
            "size": None, "lines": sorted(int(line) for line in words),
            "reference_words": dict(words)}
    pos = record.get("pos") or {"buckets": []}
    for bucket in pos["buckets"]:
        words = bucket["lines"]
        groups[group_key("pos", bucket["bucket"])] = {
            "label": f"reference words tagged {bucket['bucket']} ({pos['parse']})",
            "size": None, "lines": sorted(int(line) for line in words),
            "reference_words": dict(words)}
    examples = record.get("examples") or {"systems": {}}
    for found in examples["systems"].values():
        for entries in found.values():
            for entry in entries:
                groups[group_key("line", entry["line"])] = {
                    "label": f"line {entry['line']}", "size": 1, "lines": [entry["line"]]}
    return groups


def ltcr_group(testset: str, pair_file: Any, hypotheses: Mapping[str, Sequence[str]],
               align_model: str | os.PathLike[str], shown: int = SHOWN) -> dict[str, Any]:
    """The first ``shown`` L-All pairs of a test set (in test-set order) with every system's
    translation of both occurrences and its verdict.

    The verdicts are the registered metric's: hypotheses tokenized as it does, aligned with
    the test set's LTCR aligner, judged with its default stemmer and function words. Only the
    shown pairs' lines are aligned; a trained model aligns each sentence on its own, so they
    get the alignment the metric's full pass gives them."""
    from phenomt.core.metrics import ltcr

    pairs = [p for p in pair_file.pairs if p.in_all][:shown]
    rows = sorted({pair_file.offsets[p.document] + pos[0] for p in pairs
                   for pos in (p.first, p.second)})
    at = {row: k for k, row in enumerate(rows)}
    source = [pair_file.source[row] for row in rows]
    # the pairs re-indexed onto the shown rows: document 0 starts at row 0 of ``rows``
    local = [ltcr.Pair(0, (at[pair_file.offsets[p.document] + p.first[0]], p.first[1]),
                       (at[pair_file.offsets[p.document] + p.second[0]], p.second[1]),
                       p.word_class, p.in_all, p.in_anno) for p in pairs]
    stemmer, function_words = ltcr.make_stemmer(), ltcr.load_function_words()
    starred: dict[int, set[int]] = {}
    for pair in local:
        for sentence, token in (pair.first, pair.second):
            starred.setdefault(sentence, set()).add(token)
    verdict_names = {True: "consistent", False: "inconsistent", None: "unjudged"}
    entries = [{"word": source[p.first[0]][p.first[1]], "class": p.word_class,
                "lines": [rows[p.first[0]] + 1, rows[p.second[0]] + 1], "systems": {}}
               for p in local]
    aligned: dict[str, dict[str, Any]] = {str(row + 1): {} for row in rows}
    for system, lines in hypotheses.items():
        tokens = ltcr.tokenize_hypotheses(lines[row] for row in rows)
        alignments = ltcr.align(align_model, source, tokens)
        targets = [ltcr.aligned_targets(points) for points in alignments]
        verdicts = ltcr.judge_hypothesis(local, [0], tokens, alignments, stemmer,
                                         function_words)
        for entry, pair, verdict in zip(entries, local, verdicts, strict=True):
            words = [" ".join(tokens[s][j] for j in targets[s].get(t, []))
                     for s, t in (pair.first, pair.second)]
            entry["systems"][system] = {"first": words[0], "second": words[1],
                                        "verdict": verdict_names[verdict]}
        for k, row in enumerate(rows):
            marked = sorted({j for t in starred[k] for j in targets[k].get(t, [])})
            aligned[str(row + 1)][system] = {"tokens": tokens[k], "marked": marked}
    return {"label": f"LTCR pairs of {testset} (L-All)",
            "size": sum(p.in_all for p in pair_file.pairs), "unit": "pairs",
            "lines": [row + 1 for row in rows],
            "marked_source": {str(row + 1): " ".join(f"*{w}*" if j in starred[k] else w
                                                     for j, w in enumerate(source[k]))
                              for k, row in enumerate(rows)},
            "marking": "the repeated source word of each pair marked in the segmented "
                       "source, and in each output the words aligned to it",
            "pairs": entries, "aligned": aligned}


def redundant_tokens(setup: Any, hypothesis: Sequence[str], source: Sequence[str],
                     reference: Sequence[str]) -> dict[str, Any]:
    """One output's tokens and the positions of its redundant ones (the later token of each
    pair), continuous and discontinuous, as :class:`~phenomt.systems.scores.RedundancySetup`
    counts them."""
    from phenomt.core.metrics.redundancy import sentence_redundancy

    # the whole reference's stopwords (the setup's), as the test set's CRR/DRR job has them
    found = sentence_redundancy(hypothesis, source, reference,
                                synonyms=setup.metric.settings.synonyms,
                                stopwords=setup.stopwords)
    return {"tokens": list(hypothesis),
            "continuous": sorted({later for _, later in found.continuous_pairs}),
            "discontinuous": sorted({later for _, later in found.discontinuous_pairs})}


def sentences_record(*, testset: str, sources: Sequence[str], references: Sequence[str],
                     hypotheses: Mapping[str, Sequence[str]],
                     sets: Mapping[str, tuple[list[int], list[str]]] | None = None,
                     analysis: Mapping[str, Any] | None = None,
                     shown: int = SHOWN, redundancy: Any = None,
                     tokens: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]],
                                   Callable[[str], list[str]]] | None = None,
                     ltcr: tuple[Any, str | os.PathLike[str]] | None = None
                     ) -> dict[str, Any]:
    """The groups of a test set's cells and the texts of their lines; with a redundancy
    setup and the word tokens (the source's and reference's, and the tokenizer of an output
    line: only the shown lines are tokenized), the redundant tokens of every shown output;
    with ``ltcr`` (the test set's pair set and its LTCR aligner), the ``ltcr:TESTSET``
    group."""
    if len(sources) != len(references):
        raise ValueError(f"{len(sources)} source lines for {len(references)} references")
    for system, lines in hypotheses.items():
        if len(lines) != len(references):
            raise ValueError(f"{system}: {len(lines)} lines for {len(references)} references")
    groups = _set_groups(sets or {}, shown, len(references))
    notes = []
    if analysis is not None:
        groups.update(_analysis_groups(analysis))
        notes = analysis_notes(analysis)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    if ltcr is not None:
        pair_file, align_model = ltcr
        if sum(pair_file.sentences) != len(references):
            raise ValueError(f"the LTCR pair set has {sum(pair_file.sentences)} sentences, "
                             f"the test set {len(references)}")
        groups[group_key("ltcr", testset)] = ltcr_group(testset, pair_file, hypotheses,
                                                        align_model, shown)
    used = sorted({line for group in groups.values() for line in group["lines"]})
    texts = {str(line): {"source": sources[line - 1], "reference": references[line - 1],
                         "hypotheses": {s: h[line - 1] for s, h in hypotheses.items()}}
             for line in used}
    if redundancy is not None and tokens is not None:
        src_tokens, ref_tokens, tokenize = tokens
        for line in used:
            texts[str(line)]["redundant"] = {
                s: redundant_tokens(redundancy, tokenize(h[line - 1]), src_tokens[line - 1],
                                    ref_tokens[line - 1]) for s, h in hypotheses.items()}
    record = {"schema": SCHEMA, "testset": testset, "systems": list(hypotheses),
              "shown": shown, "groups": groups, "texts": texts}
    if notes:  # only then: a full record's bytes stay as they were
        record["notes"] = notes
    return record
