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
- ``line:N``: one line, as an example of the examples table.

With the test set's word tokens, each output of a shown line also carries its redundant tokens
as the systems' CRR/DRR jobs count them (:func:`phenomt.systems.scores.redundancy_setup`, the
same stopwords and exemptions): the later token of each continuous pair and of each
discontinuous pair.

``texts`` holds, for every line of a group, the source, the reference and every system's
output, so the report shows each line once however many groups list it.
"""

from __future__ import annotations

import os
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


def _analysis_groups(record: Mapping[str, Any]) -> dict[str, dict]:
    groups = {}
    for bucket in record["length"]["buckets"]:
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
    for found in record["examples"]["systems"].values():
        for entries in found.values():
            for entry in entries:
                groups[group_key("line", entry["line"])] = {
                    "label": f"line {entry['line']}", "size": 1, "lines": [entry["line"]]}
    return groups


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
                                   Callable[[str], list[str]]] | None = None
                     ) -> dict[str, Any]:
    """The groups of a test set's cells and the texts of their lines; with a redundancy
    setup and the word tokens (the source's and reference's, and the tokenizer of an output
    line: only the shown lines are tokenized), the redundant tokens of every shown output."""
    if len(sources) != len(references):
        raise ValueError(f"{len(sources)} source lines for {len(references)} references")
    for system, lines in hypotheses.items():
        if len(lines) != len(references):
            raise ValueError(f"{system}: {len(lines)} lines for {len(references)} references")
    groups = _set_groups(sets or {}, shown, len(references))
    if analysis is not None:
        groups.update(_analysis_groups(analysis))
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
    return {"schema": SCHEMA, "testset": testset, "systems": list(hypotheses), "shown": shown,
            "groups": groups, "texts": texts}
