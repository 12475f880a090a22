"""The LDD paper's Tables 2-6 built from score and control records, with the paper's numbers.

The tables are built from a list of such files: Table 2/3 (sizes) from their ``sentences``,
Table 4 (BLEU) by pairing each set with the baseline record of the same model, corpus and
direction, Table 5 (BLEU by minimum distance) from the ``all``/``ge1``/``ge2``/``ge3`` records
of a phenomenon, Table 6 (RIBES) from the reordering and baseline records.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from phenomt.core.io import (
    InputError,
)
from phenomt.core.tables import bleu_table as model_bleu_table
from phenomt.core.tables import format_number as _fmt
from phenomt.core.tables import load_json
from phenomt.ldd.extract import (
    PARTICLE,
    PREPOSITION_STRANDING,
    REFLEXIVE,
    REORDER,
)

if TYPE_CHECKING:
    pass
from phenomt.ldd.sets import (
    BASELINE,
    PHENOMENA,
    SetKey,
    bin_order,
    bin_title,
    parse_bin,
    read_ids,
    record_key,
)

DISTANCE_BINS: tuple[str, ...] = ("all", "ge1", "ge2", "ge3")
PAPER = ("Choshen & Abend (CoNLL 2019), 'Automatically Extracting Challenge Sets for Non-local "
         "Phenomena in Neural Machine Translation', arXiv:1909.06814, ACL Anthology K19-1028")
#: Set sizes (sentences) from the paper, keyed by (corpus, direction, phenomenon, bin); a
#: direction of None means the number is not tied to a direction in our source. News is
#: newstest2013. Only the numbers below could be retrieved; every other cell is left empty.
PAPER_SIZES: dict[tuple[str, str | None, str, str], int] = {
    # Table 3, News, German source (De→En), minimum distance ≥1.
    ("news", "de-en", PARTICLE, "ge1"): 232,
    ("news", "de-en", REFLEXIVE, "ge1"): 281,
    # Table 3, News, English source (En→De), minimum distance ≥1.
    ("news", "en-de", PARTICLE, "ge1"): 17,
    ("news", "en-de", REFLEXIVE, "ge1"): 11,
    ("news", "en-de", PREPOSITION_STRANDING, "ge1"): 8,
    # Table 2, News, sentence pairs with an aligned pair at |i - j| >= 5.
    ("news", None, REORDER, "ge5"): 306,
}
#: Precision of the extracted instances in the paper's manual validation, in percent (a range).
PAPER_PRECISION: tuple[int, int] = (85, 87)
_NOT_FOUND = ("The paper's {what} numbers are not shown: they could not be retrieved from the "
              "sources consulted (arXiv 1909.06814, ACL Anthology K19-1028).")


def load_records(paths: Iterable[str | os.PathLike[str]], schema: str) -> list[dict[str, Any]]:
    """Read score or control records, checking their schema and set name."""
    records = []
    for path in paths:
        record = load_json(path)
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


def _paper_size(key: SetKey) -> int | None:
    found = PAPER_SIZES.get((key.corpus, key.direction, key.phenomenon, key.bin))
    if found is None:
        found = PAPER_SIZES.get((key.corpus, None, key.phenomenon, key.bin))
    return found


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
    """Table 2/3: sentences per corpus, direction, phenomenon and bin, beside the paper's."""
    rows = [{"corpus": key.corpus, "direction": key.direction, "phenomenon": key.phenomenon,
             "bin": key.bin, "distance": bin_title(key.bin), "sentences": count,
             "paper sentences": _paper_size(key),
             "corpus sentences": (corpus_sentences or {}).get((key.corpus, key.direction))}
            for key, count in sizes.items()]
    frame = sorted_frame(rows, ["corpus", "direction", "phenomenon", "bin"])
    notes = [
        "Distance = words strictly between head and dependent; ≥k sets hold the sentences "
        "with at least one instance at distance ≥ k, =k sets those with one at exactly k. "
        "Reordering sets (bin ≥d) hold the pairs with an aligned pair |i − j| ≥ d.",
        f"Paper numbers: {PAPER}, Table 3 (lexical sets, News = newstest2013, ≥1) and Table 2 "
        f"(reordering, News); '—' where the paper's number for that cell was not available.",
    ]
    if corpus_sentences:
        notes.append("Our run: " + "; ".join(f"{c} {d}: {n} sentences"
                                              for (c, d), n in sorted(corpus_sentences.items()))
                     + ".")
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
                     "BLEU": _fmt(bleu), "baseline BLEU": _fmt(base_bleu),
                     "Δ BLEU": None if bleu is None or base_bleu is None
                     else _fmt(bleu - base_bleu)})
    frame = sorted_frame(rows, ["model", "corpus", "direction", "scoring", "phenomenon", "bin"])
    notes = ["Baseline = the full corpus the sets were extracted from, translated by the same "
             "model; Δ = set − baseline."]
    notes += _scoring_notes(records)
    notes += [_NOT_FOUND.format(what="Table 4 (BLEU per set)")]
    return frame, notes + _scale_notes(records, model_cards)


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
    """Spearman's ρ between distance and score, with its p-value, or ``None`` and a reason.

    ρ is undefined with fewer than three points or when either side is constant; scipy would
    return NaN there, which is reported as ``None`` with a note instead.
    """
    if len(distances) != len(scores):
        raise ValueError("one score per distance is needed")
    n = len(scores)
    result: dict[str, Any] = {"rho": None, "p": None, "n": n, "note": None}
    if n < 3:
        result["note"] = f"only {n} distance bin{'s' if n != 1 else ''}: ρ not computed"
    elif len(set(scores)) == 1:
        result["note"] = "BLEU is the same at every distance: ρ undefined"
    elif len(set(distances)) == 1:
        result["note"] = "a single distance: ρ undefined"
    else:
        from scipy.stats import spearmanr  # slow to import: only when used

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcome = spearmanr(distances, scores)
        rho, p = float(outcome.statistic), float(outcome.pvalue)
        if math.isnan(rho):
            result["note"] = "ρ undefined"
        else:
            result["rho"] = rho
            result["p"] = None if math.isnan(p) else p
    return result


def distance_table(records: Sequence[Mapping[str, Any]], bins: Sequence[str] = DISTANCE_BINS,
                   model_cards: Sequence[str | os.PathLike[str]] = ()
                   ) -> tuple[pd.DataFrame, list[str]]:
    """Table 5: BLEU by distance bin per model, corpus, direction and lexical phenomenon, with
    Spearman's ρ between BLEU and the bins' distances (All = 0, ≥k = k, =k = k)."""
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
        row: dict[str, Any] = {"model": model, "corpus": corpus, "direction": direction,
                               "scoring": scoring, "phenomenon": phenomenon}
        row.update({f"BLEU {bin_title(b)}": _fmt(by_bin.get(b)) for b in bins})
        row.update({"Spearman ρ": _fmt(correlation["rho"], 3),
                    "p": _fmt(correlation["p"], 3), "n": correlation["n"],
                    "note": correlation["note"]})
        rows.append(row)
    frame = sorted_frame(rows, ["model", "corpus", "direction", "scoring", "phenomenon"])
    notes = ["Spearman's ρ (scipy.stats.spearmanr) between each bin's BLEU and its distance "
             "(All = 0, ≥k = k); p is scipy's two-sided p-value, from so few points it is only "
             "indicative."]
    notes += _scoring_notes(r for r in records if r["phenomenon"] not in (BASELINE, REORDER))
    notes += [_NOT_FOUND.format(what="Table 5 (BLEU by distance)")]
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
                     "RIBES": _fmt(score, 4), "baseline RIBES": _fmt(base_ribes, 4),
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
    notes += [_NOT_FOUND.format(what="Table 6 (RIBES)")]
    return frame, notes + _scale_notes(records, model_cards)


def control_table(records: Sequence[Mapping[str, Any]],
                  model_cards: Sequence[str | os.PathLike[str]] = ()
                  ) -> tuple[pd.DataFrame, list[str]]:
    """The length-matched control: each set's BLEU against its random corpora."""
    rows = []
    for record in records:
        control = record["control"] or {}
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
                     "p (lower)": _fmt(control.get("p_lower"), 4),
                     "reused": control.get("reused"), "widened": control.get("widened")})
    frame = sorted_frame(rows, ["model", "corpus", "direction", "phenomenon", "bin"])
    settings = sorted({(r["control"]["draws"], r["control"]["tolerance"], r["control"]["seed"],
                        r["control"]["exclude_set"]) for r in records if r["control"]})
    notes = [f"{draws} random corpora per set, each set sentence matched by a full-corpus "
             f"sentence whose tokenized source length is within ±{tolerance} token"
             f"{'s' if tolerance != 1 else ''}, without replacement inside a corpus; pool: "
             f"{'the corpus without the set' if exclude else 'the whole corpus'}; seed {seed}."
             for draws, tolerance, seed, exclude in settings]
    notes += ["rank = 1 + number of random corpora with lower BLEU, out of draws + 1 (1 = lowest); "
              "percentile = % of random corpora with lower BLEU (ties count half); p (lower) = "
              "(1 + number with BLEU ≤ the set's) / (draws + 1). std is the sample standard "
              "deviation. reused: sentences drawn a second time inside one random corpus "
              "(summed over the corpora) because their length window was used up; widened: "
              "set sentences with no candidate within the tolerance."]
    notes += [f"Signature: `{s}`" for s in sorted({r["signature"] for r in records
                                                   if r["signature"]})]
    notes += [_NOT_FOUND.format(what="length-matched control")]
    return frame, notes + _scale_notes(records, model_cards)
