"""The LDD paper's Tables 2-6 built from score and control records, with the paper's numbers.

The tables are built from a list of such files: Table 2/3 (sizes) from their ``sentences``,
Table 4 (BLEU) by pairing each set with the baseline record of the same model, corpus and
direction, Table 5 (BLEU by minimum distance) from the ``all``/``ge1``/``ge2``/``ge3`` records
of a phenomenon, Table 6 (RIBES) from the reordering and baseline records.

The paper's numbers come from its data file (:mod:`phenomt.core.papers`), joined on the set
name ``corpus/direction/phenomenon/bin``; a set the paper does not have gets an empty cell.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from phenomt.core import papers
from phenomt.core.bins import bin_order, bin_title, parse_bin
from phenomt.core.io import InputError, load_json
from phenomt.core.lazy import pandas as pd
from phenomt.core.metrics.resample import MIN_INTERVAL_SENTENCES, holm
from phenomt.core.tables import bleu_table as model_bleu_table
from phenomt.core.tables import format_number as _fmt
from phenomt.ldd.extract import REORDER
from phenomt.ldd.sets import (
    BASELINE,
    PHENOMENA,
    SCORE_SCHEMA,
    SCORES_SCHEMA,
    SetKey,
    read_ids,
    record_key,
)

DISTANCE_BINS: tuple[str, ...] = ("all", "ge1", "ge2", "ge3")
#: The paper's data file (``phenomt/core/papers/choshen_abend_2019.tsv``).
PAPER = "choshen_abend_2019"
#: The paper's model columns (Tables 4 and 5) and how our tables name them.
PAPER_MODELS: dict[str, str] = {"transformer": "Transformer", "nematus": "Nematus"}


def paper_printed(table: str, row: str, column: str) -> str | None:
    """The paper's number as printed (its precision kept), ``None`` where it has none."""
    found = papers.entry(PAPER, table, row, column)
    return None if found is None else found.printed


def paper_count(table: str, row: str, column: str = "sentences") -> int | None:
    """A count from the paper (a set size), ``None`` where it has none."""
    value = papers.lookup(PAPER, table, row, column)
    return None if value is None else int(value)


def _baseline_name(corpus: str, direction: str) -> str:
    return str(SetKey(corpus, direction, BASELINE, "all"))


def _set_name(record: Mapping[str, Any]) -> str:
    """The set name of a record (``corpus/direction/phenomenon/bin``), the paper's row key."""
    return "/".join((record["corpus"], record["direction"], record["phenomenon"],
                     record["bin"]))


def _paper_test_sets() -> str:
    """How many sentences per set the paper scored (its Section 4.3)."""
    limits = [f"{n:,} ({label})" for model, label in PAPER_MODELS.items()
              if (n := paper_count("Section 4.3", "max-sentences-per-set", model)) is not None]
    return (f"the paper scores at most {' and '.join(limits)} sentences per set, ours every "
            "sentence of a set")


_MODEL_NOTE = ("Our models are Transformers: the paper's Transformer column is the comparable "
               "one; its Nematus column is a pre-trained BiLSTM and is shown for reference only.")


def _comparability(table: str) -> str:
    """How far our BLEU/RIBES compare with the paper's ``table`` (Table 4, 5 or 6)."""
    return papers.comparability(PAPER, table, {
        "scale": "the paper's Transformer is transformer-base trained on the full WMT2015 "
                 "De-En data, ours are this run's models (see the model notes)",
        "data": "News is newstest2013 in both; our Books is the corpus this run was "
                "configured with (see the corpus notes), the paper's the full OPUS Books",
        "test set": _paper_test_sets()})


def load_records(paths: Iterable[str | os.PathLike[str]], schema: str) -> list[dict[str, Any]]:
    """Read score or control records, checking their schema and set name. A file of several
    score records (``ldd score-sets``) gives all of them."""
    records = []
    for path in paths:
        data = load_json(path)
        found = [data]
        if schema == SCORE_SCHEMA and isinstance(data, dict) \
                and data.get("schema") == SCORES_SCHEMA:
            found = data.get("records")
            if not isinstance(found, list):
                raise InputError(path, f"a {SCORES_SCHEMA} file without a list of records")
        for record in found:
            if not isinstance(record, dict) or record.get("schema") != schema:
                raise InputError(path, f"not a {schema} record")
            try:
                record_key(record)
            except (KeyError, TypeError, ValueError) as err:
                raise InputError(path, f"bad set name in record: {err}") from None
            records.append(record)
    return records


def _phenomenon_order(phenomenon: str) -> int:
    return PHENOMENA.index(phenomenon)


def sorted_frame(rows: Sequence[Mapping[str, Any]], sort_by: Sequence[str] = ()) -> pd.DataFrame:
    """Rows as a table sorted by ``sort_by``; phenomena and bins in their natural order.

    A column with a missing cell keeps its Python values (232, not 232.0, beside a missing
    cell); complete columns get their natural dtype.
    """
    frame = pd.DataFrame(list(rows), dtype=object)
    for column in frame.columns:
        if frame[column].notna().all():
            frame[column] = frame[column].infer_objects()
    if frame.empty or not sort_by:
        return frame

    def key(column: pd.Series) -> pd.Series:
        if column.name == "phenomenon":
            return column.map(_phenomenon_order)
        if column.name == "bin":
            return column.map(bin_order)
        return column

    return frame.sort_values(list(sort_by), key=key, kind="stable").reset_index(drop=True)


def _scale_notes(records: Sequence[Mapping[str, Any]],
                 model_cards: Sequence[str | os.PathLike[str]] = ()) -> list[str]:
    """What our run is: corpus sizes, models, and the models' own scale where cards are given."""
    corpora = sorted({(r["corpus"], r["direction"], r.get("corpus_sentences"))
                      for r in records if r.get("corpus_sentences") is not None})
    notes = []
    if corpora:
        notes.append("Our run: " + "; ".join(f"{c} {d}: {n} sentences in the full corpus"
                                              for c, d, n in corpora) + ".")
    models = sorted({r["model"] for r in records if r.get("model")})
    if models:
        notes.append(f"Models: {', '.join(f'`{m}`' for m in models)}.")
    # The model cards are described exactly as in the main BLEU table.
    notes.extend(model_bleu_table([], list(model_cards))[1])
    return notes


def paper_size(key: SetKey) -> int | None:
    """The paper's size of a set: Table 2 for reordering sets and full corpora, Table 3 for
    lexical sets; ``None`` where it has no such set."""
    table = "Table 2" if key.phenomenon in (REORDER, BASELINE) else "Table 3"
    return paper_count(table, str(key))


def sizes_from_ids(assignments: Mapping[SetKey, str | os.PathLike[str]]) -> dict[SetKey, int]:
    """Sentences per set, read from ``.ids`` files."""
    return {key: len(read_ids(path)) for key, path in assignments.items()}


def sizes_from_records(records: Iterable[Mapping[str, Any]]) -> dict[SetKey, int]:
    """Sentences per set from score records (any model; they must agree). Baselines are left
    out."""
    sizes: dict[SetKey, int] = {}
    for record in records:
        key = record_key(record)
        if key.phenomenon == BASELINE:
            continue
        if sizes.setdefault(key, record["sentences"]) != record["sentences"]:
            raise ValueError(f"set {key} has {sizes[key]} sentences in one record and "
                             f"{record['sentences']} in another")
    return sizes


def sizes_table(sizes: Mapping[SetKey, int], corpus_sentences: Mapping[tuple[str, str], int]
                | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Table 2/3: sentences per corpus, direction, phenomenon and bin, and of the full corpus,
    each beside the paper's."""
    totals = corpus_sentences or {}
    rows = [{"corpus": key.corpus, "direction": key.direction, "phenomenon": key.phenomenon,
             "bin": key.bin, "distance": bin_title(key.bin), "sentences": count,
             "paper sentences": paper_size(key),
             "corpus sentences": totals.get((key.corpus, key.direction)),
             "paper corpus sentences": paper_size(SetKey(key.corpus, key.direction, BASELINE,
                                                         "all"))}
            for key, count in sizes.items()]
    frame = sorted_frame(rows, ["corpus", "direction", "phenomenon", "bin"])
    notes = [
        "Distance = words strictly between head and dependent; ≥k sets hold the sentences "
        "with at least one instance at distance ≥ k, =k sets those with one at exactly k. "
        "Reordering sets (bin ≥d) hold the pairs with an aligned pair |i − j| ≥ d.",
        f"Paper columns: {papers.citation(PAPER, 'Table 3')} for the lexical sets (Books at "
        f"All and ≥1–≥3, News = newstest2013 at ≥1 only) and {papers.citation(PAPER, 'Table 2')} "
        "for the reordering sets (at the paper's minimum distance only) and the full corpora "
        "(one figure per corpus for both directions; Section 4.3 gives the two corpus sizes "
        "in the reverse order); '—' where the paper has no such set.",
        papers.comparability(PAPER, "Table 3", {
            "data": "News is newstest2013 in both; our Books is the corpus this run was "
                    "configured with (see the corpus notes), the paper's the full OPUS Books",
            "extraction": "our UDPipe models and the aligner's training data and settings are "
                          "this run's, so sizes differ even on News"}),
    ]
    if totals:
        notes.append("Our run: " + "; ".join(f"{c} {d}: {n} sentences"
                                              for (c, d), n in sorted(totals.items())) + ".")
    return frame, notes


def record_bleu(record: Mapping[str, Any] | None) -> float | None:
    """A score record's BLEU; ``None`` for an empty set or a missing record."""
    return record["bleu"]["bleu"] if record and record.get("bleu") else None


def _scoring(record: Mapping[str, Any]) -> str:
    return record.get("scoring", "sacrebleu")


def _pairing(record: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """What a set shares with its baseline: model, corpus, direction and BLEU setting."""
    return (record["model"], record["corpus"], record["direction"], _scoring(record))


def _baselines(records: Iterable[Mapping[str, Any]]
               ) -> dict[tuple[str, str, str, str], Mapping[str, Any]]:
    return {_pairing(r): r for r in records if r["phenomenon"] == BASELINE}


def bleu_table(records: Sequence[Mapping[str, Any]],
               model_cards: Sequence[str | os.PathLike[str]] = ()
               ) -> tuple[pd.DataFrame, list[str]]:
    """Table 4: BLEU per set and of its baseline (the full corpus), per model and corpus."""
    baselines = _baselines(records)
    rows = []
    for record in records:
        if record["phenomenon"] == BASELINE:
            continue
        base = baselines.get(_pairing(record))
        bleu, base_bleu = record_bleu(record), record_bleu(base)
        rows.append({"model": record["model"], "corpus": record["corpus"],
                     "direction": record["direction"], "phenomenon": record["phenomenon"],
                     "bin": record["bin"], "distance": bin_title(record["bin"]),
                     "scoring": _scoring(record), "sentences": record["sentences"],
                     "BLEU": _fmt(bleu),
                     **_paper_models("Table 4", _set_name(record), "paper BLEU"),
                     "baseline BLEU": _fmt(base_bleu),
                     **_paper_models("Table 4", _baseline_name(record["corpus"],
                                                               record["direction"]),
                                     "paper baseline BLEU"),
                     "Δ BLEU": None if bleu is None or base_bleu is None
                     else _fmt(bleu - base_bleu)})
    frame = sorted_frame(rows, ["model", "corpus", "direction", "scoring", "phenomenon", "bin"])
    notes = ["Baseline = the full corpus the sets were extracted from, translated by the same "
             "model; Δ = set − baseline.",
             f"Paper columns: {papers.citation(PAPER, 'Table 4')}, Moses BLEU of the same set "
             "(lexical sets at ≥1, reordering sets at the paper's minimum distance) and of the "
             "full corpus; '—' where the paper has no such set (other bins: see Table 5)."]
    notes += [_MODEL_NOTE, _comparability("Table 4")]
    notes += _scoring_notes(records)
    return frame, notes + _scale_notes(records, model_cards)


def _paper_models(table: str, row: str, prefix: str) -> dict[str, str | None]:
    """The paper's Transformer and Nematus cells of one row, as ``prefix (Model)`` columns."""
    return {f"{prefix} ({label})": paper_printed(table, row, model)
            for model, label in PAPER_MODELS.items()}


_SCORING_TITLES = {"sacrebleu": "sacreBLEU",
                   "multi-bleu": "multi-bleu style (sacreBLEU, tokenize=none, on "
                                 "Moses-tokenized text)"}


def _scoring_notes(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """One note per BLEU setting used, with its sacreBLEU signature."""
    used = sorted({(_scoring(r), r["bleu"]["signature"]) for r in records if r.get("bleu")})
    return [f"{_SCORING_TITLES.get(scoring, scoring)} signature: `{signature}`"
            for scoring, signature in used]


def distance_correlation(distances: Sequence[float], scores: Sequence[float]
                         ) -> dict[str, Any]:
    """Spearman's ρ between distance and score, and Pearson's r of the same
    points, or ``None`` and a reason.

    Both are undefined with fewer than three points or when either side is constant; scipy
    would return NaN there, which is reported as ``None`` with a note instead. Pearson's r is
    given because the paper's column labelled Spearman is mostly Pearson's r.
    """
    if len(distances) != len(scores):
        raise ValueError("one score per distance is needed")
    n = len(scores)
    result: dict[str, Any] = {"rho": None, "r": None, "n": n, "note": None}
    if n < 3:
        result["note"] = f"only {n} distance bin{'s' if n != 1 else ''}: ρ not computed"
    elif len(set(scores)) == 1:
        result["note"] = "BLEU is the same at every distance: ρ undefined"
    elif len(set(distances)) == 1:
        result["note"] = "a single distance: ρ undefined"
    else:
        from scipy.stats import pearsonr, spearmanr  # slow to import: only when used

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rho = float(spearmanr(distances, scores).statistic)
            pearson = float(pearsonr(distances, scores).statistic)
        if math.isnan(rho):
            result["note"] = "ρ undefined"
        else:
            result["rho"] = rho
        result["r"] = None if math.isnan(pearson) else pearson
    return result


def distance_table(records: Sequence[Mapping[str, Any]], bins: Sequence[str] = DISTANCE_BINS,
                   model_cards: Sequence[str | os.PathLike[str]] = ()
                   ) -> tuple[pd.DataFrame, list[str]]:
    """Table 5: BLEU by distance bin per model, corpus, direction and lexical phenomenon, with
    Spearman's ρ and Pearson's r between BLEU and the bins' distances (All = 0, ≥k = k,
    =k = k); the paper's Transformer and Nematus BLEU beside each bin, its correlation beside
    ours."""
    for label in bins:
        parse_bin(label)
    groups: dict[tuple[str, str, str, str, str], dict[str, float]] = {}
    for record in records:
        if record["phenomenon"] in (BASELINE, REORDER) or record["bin"] not in bins:
            continue
        group = (*_pairing(record), record["phenomenon"])
        if record_bleu(record) is not None:
            groups.setdefault(group, {})[record["bin"]] = record_bleu(record)
    rows = []
    for (model, corpus, direction, scoring, phenomenon), by_bin in groups.items():
        present = [label for label in bins if label in by_bin]
        correlation = distance_correlation([parse_bin(b).distance for b in present],
                                           [by_bin[b] for b in present])
        name = {"corpus": corpus, "direction": direction, "phenomenon": phenomenon}
        row: dict[str, Any] = {"model": model, "corpus": corpus, "direction": direction,
                               "scoring": scoring, "phenomenon": phenomenon}
        for label in bins:
            title = f"BLEU {bin_title(label)}"
            row[title] = _fmt(by_bin.get(label))
            row.update(_paper_models("Table 5", _set_name({**name, "bin": label}),
                                     f"paper {title}"))
        row.update({"Spearman ρ": _fmt(correlation["rho"], 3),
                    "Pearson r": _fmt(correlation["r"], 2),
                    **{f"paper corr. ({label})": paper_printed(
                        "Table 5", f"{corpus}/{direction}/{phenomenon}", f"{column}/spearman")
                       for column, label in PAPER_MODELS.items()},
                    "n": correlation["n"], "note": correlation["note"]})
        rows.append(row)
    frame = sorted_frame(rows, ["model", "corpus", "direction", "scoring", "phenomenon"])
    notes = ["Spearman's ρ (scipy.stats.spearmanr) and Pearson's r (scipy.stats.pearsonr) "
             "between each bin's BLEU and its distance (All = 0, ≥k = k). They describe the "
             "trend and test nothing, so no p-value is given: the bins are nested (All ⊇ ≥1 "
             "⊇ ≥2 ⊇ ≥3), so their scores are not independent points, and with four bins "
             "even ρ = ±1 has an exact two-sided permutation p of 2/24 = 0.083.",
             f"Paper columns: {papers.citation(PAPER, 'Table 5')}, Moses BLEU of the Books "
             "sets by minimum distance; '—' where the paper has no such set (it has no News "
             "rows here).",
             "paper corr. = the paper's column labelled Spearman: in all its rows but one it "
             "equals Pearson's r of the row's BLEU against the minimum distance, and in most "
             "of them not Spearman's ρ (in two, De→En Reflexive, both are the same value), so "
             "compare it with our Pearson r; its Transformer En→De Reflexive value matches "
             "neither (the data file's notes give the details)."]
    notes += [_MODEL_NOTE, _comparability("Table 5")]
    notes += _scoring_notes(r for r in records if r["phenomenon"] not in (BASELINE, REORDER))
    return frame, notes + _scale_notes(records, model_cards)


def ribes_table(records: Sequence[Mapping[str, Any]],
                model_cards: Sequence[str | os.PathLike[str]] = ()
                ) -> tuple[pd.DataFrame, list[str]]:
    """Table 6: RIBES of the reordering sets against their baseline."""
    baselines = _baselines(records)
    rows, described = [], set()
    for record in records:
        if record["phenomenon"] != REORDER:
            continue
        base = baselines.get(_pairing(record))
        score = record["ribes"]["score"] if record.get("ribes") else None
        base_ribes = base["ribes"]["score"] if base and base.get("ribes") else None
        rows.append({"model": record["model"], "corpus": record["corpus"],
                     "direction": record["direction"], "bin": record["bin"],
                     "distance": bin_title(record["bin"]), "scoring": _scoring(record),
                     "sentences": record["sentences"],
                     "RIBES": _fmt(score, 4),
                     "paper RIBES": paper_printed("Table 6", _set_name(record), "transformer"),
                     "baseline RIBES": _fmt(base_ribes, 4),
                     "paper baseline RIBES": paper_printed(
                         "Table 6", _baseline_name(record["corpus"], record["direction"]),
                         "transformer"),
                     "Δ RIBES": None if score is None or base_ribes is None
                     else _fmt(score - base_ribes, 4)})
        for item in (record, base):
            if item and item.get("ribes"):
                r = item["ribes"]
                described.add(f"{r['implementation']}, α = {r['alpha']}, β = {r['beta']}, "
                              f"tokens: {r['tokens']}")
    frame = sorted_frame(rows, ["model", "corpus", "direction", "scoring", "bin"])
    notes = ["RIBES = mean over sentences of NKT · P1^α · BP^β (0–1); baseline = the full "
             "corpus; Δ = set − baseline."]
    notes += [f"RIBES: {d}." for d in sorted(described)]
    notes += [f"Paper columns: {papers.citation(PAPER, 'Table 6')}, the Transformer's RIBES "
              "of the same reordering set (at the paper's minimum distance) and full corpus, "
              "printed with two decimals; '—' where the paper has no such set.",
              _comparability("Table 6")]
    return frame, notes + _scale_notes(records, model_cards)


def control_table(records: Sequence[Mapping[str, Any]],
                  model_cards: Sequence[str | os.PathLike[str]] = ()
                  ) -> tuple[pd.DataFrame, list[str]]:
    """The length-matched control: each set's BLEU against its random corpora."""
    rows = []
    for record in records:
        control = record["control"] or {}
        # a handful of sentences matched by length says nothing: no test (as for intervals)
        tested = bool(control) and record["sentences"] >= MIN_INTERVAL_SENTENCES
        rows.append({"model": record["model"], "corpus": record["corpus"],
                     "direction": record["direction"], "phenomenon": record["phenomenon"],
                     "bin": record["bin"], "distance": bin_title(record["bin"]),
                     "scoring": _scoring(record), "sentences": record["sentences"],
                     "BLEU": _fmt(record["bleu"]),
                     "control mean": _fmt(control.get("mean")),
                     "control std": _fmt(control.get("std")),
                     "control min": _fmt(control.get("min")),
                     "control max": _fmt(control.get("max")),
                     "rank": f"{control['rank']}/{control['of']}" if control else None,
                     "percentile": _fmt(control.get("percentile"), 1),
                     "p (lower)": _fmt(control.get("p_lower"), 4) if tested else None,
                     "p (Holm)": control.get("p_lower") if tested else None,
                     "reused": control.get("reused"), "widened": control.get("widened")})
    # every set of the table is one test of the same question: one family
    family = [row["p (Holm)"] for row in rows]
    for row, adjusted in zip(rows, holm(family), strict=True):
        row["p (Holm)"] = _fmt(adjusted, 4)
    frame = sorted_frame(rows, ["model", "corpus", "direction", "phenomenon", "bin"])
    tests = sum(p is not None for p in family)
    floors = sorted({1 / (r["control"]["draws"] + 1) for r in records if r["control"]})
    settings = sorted({(r["control"]["draws"], r["control"]["tolerance"], r["control"]["seed"],
                        r["control"]["exclude_set"]) for r in records if r["control"]})
    notes = [f"{draws} random corpora per set, each set sentence matched by a full-corpus "
             f"sentence whose tokenized source length is within ±{tolerance} token"
             f"{'s' if tolerance != 1 else ''}, without replacement inside a corpus; pool: "
             f"{'the corpus without the set' if exclude else 'the whole corpus'}; seed {seed}."
             for draws, tolerance, seed, exclude in settings]
    notes += ["rank = 1 + number of random corpora with lower BLEU, out of draws + 1 (1 = lowest); "
              "percentile = % of random corpora with lower BLEU (ties count half); p (lower) = "
              "(1 + number with BLEU ≤ the set's) / (draws + 1), the one-sided randomization p "
              "that the set scores lower than corpora of its lengths; p (Holm): the same "
              f"Holm-adjusted over the table's {tests} tested sets (one family). Sets of "
              f"fewer than {MIN_INTERVAL_SENTENCES} sentences get no p. The smallest "
              "attainable p is 1/(draws + 1) = "
              + ", ".join(f"{floor:.4f}" for floor in floors)
              + f", so with {tests} tests an adjusted p can reach 0.05 only with at least "
              f"{max(0, math.ceil(20 * tests) - 1)} draws; the rank and percentile, the "
              "paper's own reading, stand without it. std is the sample standard "
              "deviation. reused: sentences drawn a second time inside one random corpus "
              "(summed over the corpora) because their length window was used up; widened: "
              "set sentences with no candidate within the tolerance."]
    notes += [f"Signature: `{s}`" for s in sorted({r["signature"] for r in records
                                                   if r["signature"]})]
    notes += [f"The paper ({papers.citation(PAPER, 'Section 4.3')}) gives no numbers for "
              "this control (run on Books): every De→En set scored below all of its random "
              "corpora; the En→De sets showed the same trend, less pronounced."]
    return frame, notes + _scale_notes(records, model_cards)
