"""Tables 4-6 of Lei et al. (2024) for the models this run trained, and LTCR on further
document-level sets.

- Table 4: L-All and L-Anno by word class of the source word;
- Table 5: by sentence distance of the pair (0, 1, 2, 3, 4, ≥5);
- Table 6: case-insensitive sacreBLEU with L-All and L-Anno (document-bootstrap intervals).

Each row is one system's ``phenomt score ltcr`` record; the paper's rows (including the two
models we do not train, G-Transformer and CVAE-Transformer) are shown beside ours.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from phenomt.core import papers
from phenomt.core.cliargs import named_file
from phenomt.core.io import InputError
from phenomt.core.lazy import pandas as pd
from phenomt.core.metrics.base import get, score_files
from phenomt.core.metrics.ltcr import DISTANCE_BINS, bootstrap_text
from phenomt.core.tables import format_number, load_record, require_keys, write_table
from phenomt.lexcons.pos import CLASSES

PAPER = "lei_2024"
#: Systems of the paper's Tables 4-6 that this project does not train.
PAPER_ONLY = ("g-transformer", "cvae-transformer")
LABELS = {"sent-transformer": "Sent-Transformer", "doc-transformer": "Doc-Transformer",
          "g-transformer": "G-Transformer", "cvae-transformer": "CVAE-Transformer",
          "concat": "Concatenation (2+1)", "reference": "Reference (calibration)"}
BIN_LABELS = {"0": "0", "1": "1", "2": "2", "3": "3", "4": "4", "ge5": "≥5"}


def _percent(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 2)


def _interval(record: dict[str, Any], key: str) -> str | None:
    bounds = record["intervals"][key]
    if bounds is None or None in bounds:
        return None
    return f"[{format_number(100 * bounds[0])}, {format_number(100 * bounds[1])}]"


def _breakdown(records: dict[str, dict[str, Any]], field: str, keys: Sequence[str],
               label: str, names: dict[str, str]) -> pd.DataFrame:
    rows = []
    for system in [*records, *PAPER_ONLY]:
        for key in keys:
            row: dict[str, Any] = {"key": system, "system": LABELS.get(system, system),
                                   label: names[key]}
            cell = records[system][field][key] if system in records else None
            for subset in ("all", "anno"):
                counts = cell[subset] if cell else None
                row[f"L-{subset.capitalize()} (%)"] = (_percent(counts["ltcr"]) if counts
                                                       else None)
                row[f"pairs {subset}"] = counts["pairs"] if counts else None
            row["paper_key"] = key
            rows.append(row)
    return pd.DataFrame(rows)


def _with_paper(frame: pd.DataFrame, table: str, row: str) -> pd.DataFrame:
    result = papers.beside(frame, PAPER, table, row,
                           {"L-All (%)": "l_all", "L-Anno (%)": "l_anno"})
    return result.drop(columns=["key", "paper_key"])


def table4(records: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """LTCR by the word class of the repeated source word."""
    frame = _breakdown(records, "by_pos", CLASSES, "class", {c: c for c in CLASSES})
    return _with_paper(frame, "Table 4", "{key}/{paper_key}")


def table5(records: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """LTCR by the sentence distance of the pair."""
    frame = _breakdown(records, "by_distance", DISTANCE_BINS, "distance", BIN_LABELS)
    return _with_paper(frame, "Table 5", "{key}/{paper_key}")


def table6(records: dict[str, dict[str, Any]], bleu: dict[str, dict[str, Any]]
           ) -> pd.DataFrame:
    """Case-insensitive BLEU beside L-All and L-Anno with their document-bootstrap
    intervals."""
    rows = []
    for system in [*records, *PAPER_ONLY]:
        record = records.get(system)
        score = bleu.get(system)
        rows.append({
            "key": system, "system": LABELS.get(system, system),
            "BLEU": round(score["score"], 2) if score else None,
            "L-All (%)": _percent(record["l_all"]) if record else None,
            "L-All 95% CI": _interval(record, "l_all") if record else None,
            "L-Anno (%)": _percent(record["l_anno"]) if record else None,
            "L-Anno 95% CI": _interval(record, "l_anno") if record else None,
            "unjudged pairs (all / anno)": (f"{record['unjudged_all']} / "
                                            f"{record['unjudged_anno']}" if record else None)})
    frame = pd.DataFrame(rows)
    frame = papers.beside(frame, PAPER, "Table 6", "{key}",
                          {"BLEU": "bleu", "L-All (%)": "l_all", "L-Anno (%)": "l_anno"})
    return frame.drop(columns=["key"])


def sets_table(records: dict[tuple[str, str], dict[str, Any]],
               tcp: dict[str, dict[str, Any]], tcp_set: str | None = None) -> pd.DataFrame:
    """L-All of every (test set, system), and TCP on ``tcp_set`` where it was scored."""
    rows = []
    for (testset, system), record in records.items():
        result = tcp.get(system) if testset == tcp_set else None
        rows.append({"test set": testset, "system": LABELS.get(system, system),
                     "documents": record["documents"], "sentences": record["sentences"],
                     "L-All (%)": _percent(record["l_all"]),
                     "L-All 95% CI": _interval(record, "l_all"),
                     "pairs": record["pairs_all"], "unjudged": record["unjudged_all"],
                     "TCP (%)": _percent(result["tcp"]) if result else None})
    return pd.DataFrame(rows)


def _documents(record: Mapping[str, Any]) -> int | None:
    """The test documents a record's intervals resample: its ``documents``, else the rows of
    its per-document statistics."""
    if record.get("documents") is not None:
        return int(record["documents"])
    rows = (record.get("statistics") or {}).get("rows")
    return None if rows is None else len(rows)


def interval_note(records: Mapping[Any, Mapping[str, Any]], trained: bool = True) -> str:
    """How the records' LTCR intervals were made, read from the records: the bootstrap (unit,
    resamples, seed) and how many documents, per test set where ``records`` are keyed by
    (test set, system); ``trained``: the systems are models trained here (one run each)."""
    settings = list(dict.fromkeys(bootstrap_text(r.get("intervals") or {})
                                  for r in records.values()))
    sizes: dict[str, int | None] = {}
    for key, record in records.items():
        name = key[0] if isinstance(key, tuple) else ""
        sizes.setdefault(name, _documents(record))
    counts = "; ".join(f"{name + ': ' if name else ''}"
                       + (f"{n:,} documents" if n is not None else "documents not recorded")
                       for name, n in sizes.items())
    return (f"Intervals: {'; '.join(settings)}, on {counts}; each test set's "
            "documents are resampled whole (the pairs of a repeated word span a document's "
            "sentences)."
            + (" Each trained system is one training run: the intervals cover the test "
               "documents only, not training variation." if trained else ""))


#: Fields every `score ltcr` record has (a record of another command lacks some).
LTCR_KEYS = ("l_all", "l_anno", "unjudged_all", "unjudged_anno", "by_pos", "by_distance",
             "intervals", "stemmer")
#: The fields of a `score ltcr` record that the sets table reads.
SETS_LTCR_KEYS = ("documents", "sentences", "l_all", "intervals", "pairs_all", "unjudged_all")
#: The fields of a `score tcp` record that the sets table reads, and of each category.
TCP_KEYS = ("tcp", "tense", "conjunction", "pronoun")


def _sets_ltcr(path: str) -> dict[str, Any]:
    kind = "'phenomt score ltcr'"
    record = load_record(path, "--ltcr", kind, SETS_LTCR_KEYS)
    require_keys(record["intervals"], path, "--ltcr", kind, ("l_all",), "intervals")
    return record


def _tcp_records(pairs: Sequence[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    found = {}
    for name, path in pairs:
        record = found[name] = load_record(path, "--tcp", "'phenomt score tcp'", TCP_KEYS)
        for category in TCP_KEYS[1:]:
            require_keys(record[category], path, "--tcp", "'phenomt score tcp'",
                         ("documents",), category)
    return found


def _models_command(args: argparse.Namespace) -> int:
    records = {name: load_record(path, "--ltcr", "'phenomt score ltcr'", LTCR_KEYS)
               for name, path in args.ltcr}
    unknown = [name for name, _ in args.hyp if name not in records]
    if unknown:  # Table 6 would leave its BLEU out without a word
        raise InputError("--hyp", f"no --ltcr record for {', '.join(map(repr, unknown))} "
                                  f"(records: {', '.join(records)})")
    cased = get("bleu", tokenize="13a", lowercase=True)
    bleu = {name: score_files(cased, path, args.ref) for name, path in args.hyp}
    prefix = args.table_prefix
    signature = next(iter(bleu.values()))["signature"] if bleu else "no BLEU scored"
    reference = records.get("reference")
    notes = [*args.note,
             f"LTCR settings: {next(iter(records.values()))['stemmer']}.",
             interval_note(records),
             "Reference (calibration): the reference scored as a hypothesis; its distance "
             "below 100% measures the aligner's noise"
             + (f" (L-Anno {format_number(_percent(reference['l_anno']))}%)." if reference
                and reference["l_anno"] is not None else "."),
             "G-Transformer and CVAE-Transformer: the paper's numbers only (not trained here)."]
    comparability = {"scale": args.scale, "test set": args.testset_note}
    write_table(table4(records), f"{prefix}4.md", f"{prefix}4.csv",
                "Table 4: LTCR by word class", [
                    *notes, papers.comparability(PAPER, "Table 4", comparability)])
    write_table(table5(records), f"{prefix}5.md", f"{prefix}5.csv",
                "Table 5: LTCR by sentence distance", [
                    *notes, papers.comparability(PAPER, "Table 5", comparability)])
    write_table(table6(records, bleu), f"{prefix}6.md", f"{prefix}6.csv",
                "Table 6: BLEU and LTCR", [
                    *notes, f"BLEU: case-insensitive sacreBLEU ({signature}).",
                    papers.comparability(PAPER, "Table 6", comparability)])
    return 0


def _tcp_sample(tcp: dict[str, dict[str, Any]]) -> str:
    """How many documents per category TCP was scored on (the same for every system)."""
    first = next(iter(tcp.values()))
    counts = [f"{first[c]['documents']} {c}" for c in ("tense", "conjunction", "pronoun")]
    return f" ({', '.join(counts)} documents)"


def _sets_command(args: argparse.Namespace) -> int:
    records: dict[tuple[str, str], dict[str, Any]] = {}
    for key, path in args.ltcr:
        testset, sep, system = key.partition("/")
        if not sep:
            raise InputError("--ltcr", f"expected SET/SYSTEM=FILE, got {key!r}")
        records[(testset, system)] = _sets_ltcr(path)
    tcp = _tcp_records(args.tcp)
    frame = sets_table(records, tcp, args.tcp_set)
    notes = [*args.note, "L-All only: these sets have no annotated chains.",
             interval_note(records),
             "TCP (Sun et al.): geometric mean of the tense, conjunction and pronoun hit "
             f"rates on {args.tcp_set}{_tcp_sample(tcp)}." if tcp else "No TCP test configured."]
    write_table(frame, args.output_md, args.output_csv,
                "LTCR on further document-level test sets", notes)
    return 0


def register_cli(tree) -> None:
    """Add ``phenomt lexcons model-tables`` and ``phenomt lexcons sets-table``."""
    p = tree.add("lexcons model-tables", "Tables 4-6 (LTCR by class and distance, BLEU) of "
                 "the trained models with the paper's numbers", _models_command)
    p.add_argument("--ltcr", type=named_file, nargs="+", action="extend", required=True,
                   metavar="SYSTEM=JSON", help="`score ltcr` record of a system")
    p.add_argument("--hyp", type=named_file, nargs="+", action="extend", default=[],
                   metavar="SYSTEM=FILE", help="its hypothesis, for case-insensitive BLEU")
    p.add_argument("--ref", required=True, help="the reference, one sentence a line")
    p.add_argument("--scale", required=True, help="how our run differs in scale")
    p.add_argument("--testset-note", required=True, help="how our test set differs")
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--table-prefix", required=True)
    p = tree.add("lexcons sets-table", "L-All (and TCP) of every system on further "
                 "document-level test sets", _sets_command)
    p.add_argument("--ltcr", type=named_file, nargs="+", action="extend", required=True,
                   metavar="SET/SYSTEM=JSON")
    p.add_argument("--tcp", type=named_file, nargs="+", action="extend", default=[],
                   metavar="SYSTEM=JSON", help="`score tcp` record of a system")
    p.add_argument("--tcp-set", default="", help="the test set TCP was scored on")
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--output-md", required=True)
    p.add_argument("--output-csv", required=True)
