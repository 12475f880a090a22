"""Finished tables: Markdown for reading, CSV for further processing, written atomically."""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from phenomt.core import papers
from phenomt.core.cliargs import json_object
from phenomt.core.io import InputError, atomic_write, load_json, write_json
from phenomt.core.lazy import pandas as pd
from phenomt.core.stats import THESIS, THESIS_CORPORA, thesis_sizes


def format_number(value: float | None, digits: int = 2, scale: float = 1.0) -> str | None:
    """A table cell: ``value * scale`` with ``digits`` decimals, ``None`` (shown as a dash) if
    missing."""
    return None if value is None else f"{value * scale:.{digits}f}"


def interval_cell(value: float | None, low: float | None, high: float | None,
                  digits: int = 2, scale: float = 1.0) -> str | None:
    """``value [low, high]``; the value alone when there is no interval."""
    if value is None:
        return None
    if low is None or high is None:
        return format_number(value, digits, scale)
    return (f"{format_number(value, digits, scale)} [{format_number(low, digits, scale)}, "
            f"{format_number(high, digits, scale)}]")


def require_keys(record: object, path: str | Path, option: str, kind: str,
                 keys: Sequence[str], within: str | None = None) -> dict:
    """``record`` (read from ``path``, given as ``option``) refused unless it is a ``kind``
    record: an object with all of ``keys`` (records carry no type field; a record of another
    command lacks some of its keys). ``within``: the entry of the record it is, for the
    message."""
    missing = list(keys) if not isinstance(record, dict) else [k for k in keys
                                                                if k not in record]
    if missing:
        where = f" in its {within!r}" if within else ""
        raise InputError(path, f"{option} expects a {kind} record; this has no "
                               f"{', '.join(repr(k) for k in missing)}{where}")
    return record


def load_record(path: str | Path, option: str, kind: str, keys: Sequence[str]) -> dict:
    """:func:`load_json` of a record given as ``option``, refused unless it is a ``kind``
    record (:func:`require_keys`)."""
    return require_keys(load_json(path), path, option, kind, keys)


#: Fields of every ``phenomt score <metric>`` record
#: (:func:`phenomt.core.metrics.base.score_record`).
SCORE_FIELDS = ("metric", "score", "signature", "sentences", "ci", "meta")


def load_score(path: str | Path, metric: str | None = None) -> dict:
    """A ``phenomt score <metric>`` record, checked: an error naming the file when it is not
    one, or scores another metric than ``metric``."""
    record = load_record(path, "this input", "'phenomt score <metric>'", SCORE_FIELDS)
    if metric is not None and record["metric"] != metric:
        raise InputError(path, f"scores {record['metric']!r}, expected {metric!r}")
    return record


def write_table(frame: pd.DataFrame, md_path: str | Path, csv_path: str | Path, title: str,
                notes: Sequence[str] = (), text_columns: Iterable[str] = ()) -> None:
    """Write ``frame`` as a Markdown table with a title and notes, as CSV, and as JSON beside
    the CSV (:func:`table_record`; ``text_columns`` are columns of names or text besides
    :data:`TEXT_COLUMNS`)."""
    with atomic_write(csv_path) as out:
        frame.to_csv(out, index=False, lineterminator="\n")
    write_json(json_path(csv_path), table_record(frame, title, notes, text_columns))
    write_markdown(frame.fillna("—").astype(str), md_path, title, notes)


#: The format of a table's JSON export.
TABLE_SCHEMA = "phenomt.table/1"
_INTERVAL = re.compile(r"^(?P<value>[-+]?\d+(?:\.\d+)?)%? \[(?P<low>[-+]?\d+(?:\.\d+)?),"
                       r" (?P<high>[-+]?\d+(?:\.\d+)?)\]")
# a number as format_number writes one: never with leading zeros, so "007" is a name
_NUMBER = re.compile(r"^[-+]?(?:0|[1-9]\d*)(?:\.\d+)?$")

#: Columns of the tables that hold names and text, whatever their cells look like (a system
#: named "2017", an n-gram "11", a hypothesis "1.10"); compared case-insensitively.
TEXT_COLUMNS = frozenset({
    "analysis", "arch", "architecture", "baseline", "baseline output", "bin", "bleu signature",
    "bucket", "checkpoint", "claim", "class", "comparison", "corpus", "data", "direction",
    "example", "file", "hypothesis", "implementation", "kind", "label", "matched", "metric",
    "model", "models", "n-gram", "ngram", "note", "origin", "pair", "path", "phenomenon",
    "reference", "sentence", "set", "setting", "signature", "source", "split", "system",
    "system output", "systems", "task", "teacher", "test set", "testset", "text", "type",
    "unit"})

# The cells of a numeric column as the tables write them: a number (digits grouped or not,
# a % or an x after it), its marks or notes after it ("0.0400 *", "23.10 Δ+0.50 ▼",
# "+0.41 (n 5)"), a missing value with its reason ("— (under 20 sentences)"); an interval
# (_INTERVAL) with anything after it.
_NUMERIC_CELL = re.compile(
    r"^(?:[-+]?(?:0|[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d*)(?:\.\d+)?[%x]?|—|–|-|--|\?|n/a)"
    r"(?: (?:[*▼▲†‡]+|Δ[-+]?\d+(?:\.\d+)?|\([^()]*\)))*$")


def json_path(csv_path: str | Path) -> Path:
    """The JSON export of the table whose CSV is ``csv_path``."""
    return Path(csv_path).with_suffix(".json")


def _scalar(cell: object) -> object:
    """``cell`` with a numpy scalar as its Python value, ``None`` for a missing one."""
    if hasattr(cell, "item"):  # numpy scalars
        cell = cell.item()
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return None
    return cell


def parse_cell(cell: object, numeric: bool = True) -> object:
    """A table cell as data. An empty cell is None. In a text column (``numeric`` false) any
    other cell is its text. In a numeric column a number stays a number, ``"v [low, high]
    ..."`` becomes ``{"value", "ci", "text"}`` (the text keeps its marks), a number written
    as text a number (an integer without a decimal point), any other text itself."""
    cell = _scalar(cell)
    if cell is None:
        return None
    if not numeric:
        return cell if isinstance(cell, str) else str(cell)
    if isinstance(cell, bool | int | float):
        return cell
    text = str(cell)
    found = _INTERVAL.match(text)
    if found:
        return {"value": float(found["value"]),
                "ci": [float(found["low"]), float(found["high"])], "text": text}
    if not _NUMBER.match(text):
        return text
    return float(text) if "." in text else int(text)  # a count written as text stays whole


def numeric_column(name: str, cells: Iterable[object], text_columns: Collection[str] = ()
                   ) -> bool:
    """Whether a column's cells are numbers, decided for the whole column so that all of its
    cells are of one kind: not when it is a column of names or text (:data:`TEXT_COLUMNS`
    or ``text_columns``), else when every cell is a number, or missing (None, NaN, a dash,
    "?", a dash with its reason), or written as the tables write numbers: ``12``, ``-0.61``,
    ``3,004``, ``61.00%`` (no leading zeros), with marks or notes after it (``0.0400 *``,
    ``23.10 Δ+0.50 ▼``, ``+0.41 (n 5)``), an interval (``23.10 [22.00, 24.50] Δ+0.50 †``).
    One cell of other text makes the column text, so a column of names or sentences of which
    some look like numbers stays text. In a numeric column :func:`parse_cell` turns the
    plain numbers and the intervals into data and keeps the other cells as written."""
    if name.casefold() in TEXT_COLUMNS or name in text_columns:
        return False
    for cell in cells:
        cell = _scalar(cell)
        if cell is None or isinstance(cell, bool | int | float):
            continue
        text = str(cell).strip()
        if text and not (_INTERVAL.match(text) or _NUMERIC_CELL.match(text)):
            return False
    return True


def table_record(frame: pd.DataFrame, title: str, notes: Sequence[str] = (),
                 text_columns: Iterable[str] = ()) -> dict:
    """A table as JSON: its title and notes (which state the data, the intervals' resamples
    and seed, the signatures), its columns and one object per row, each cell parsed by
    :func:`parse_cell` as its column is numeric or text (:func:`numeric_column`)."""
    columns = [str(c) for c in frame.columns]
    text_columns = set(text_columns)
    numeric = [numeric_column(c, frame.iloc[:, i], text_columns)
               for i, c in enumerate(columns)]
    rows = [{c: parse_cell(v, n) for c, v, n in zip(columns, values, numeric, strict=True)}
            for values in frame.itertuples(index=False, name=None)]
    # the cells as the Markdown shows them (a label "1" stays "1", a p "1.0000" keeps its
    # digits), for LaTeX and for readers who want the printed form
    shown = frame.fillna("—").astype(str)
    cells = [list(values) for values in shown.itertuples(index=False, name=None)]
    return {"schema": TABLE_SCHEMA, "title": title, "notes": list(notes), "columns": columns,
            "rows": rows, "cells": cells}


#: The first lines of every LaTeX table: what a document needs to set it.
LATEX_HEADER = (
    "% A table by phenomt. Needs \\usepackage{booktabs,amssymb,tabularx} (the rules, the\n"
    "% triangle marks, the wrapped text columns). Its text is UTF-8, which LaTeX reads by\n"
    "% default since 2018; text outside Latin scripts (CJK, emoji) needs xelatex or lualatex\n"
    "% with a font that has it.\n")
#: A text column whose longest cell is longer than this wraps (a tabularx X column).
WRAP_AT = 30
_WRAPPED = r">{\raggedright\arraybackslash}X"


def latex_table(record: dict) -> str:
    """A table's JSON export as a LaTeX ``table`` (booktabs rules; the title as caption, the
    notes below), for a paper. Its text columns (not :func:`numeric_column`) with cells
    longer than :data:`WRAP_AT` characters (sentences, paths, signatures) wrap within the
    line width (tabularx ``X`` columns, ragged right); the other columns are ``l``, as
    printed. :data:`LATEX_HEADER` names the packages it needs."""
    columns = record["columns"]
    cells = [["--" if cell == "—" else cell for cell in row] for row in record["cells"]]
    wraps = [max((len(row[i]) for row in cells), default=0) > WRAP_AT
             and not numeric_column(c, (row[i] for row in cells)) for i, c in enumerate(columns)]
    spec = "".join(_WRAPPED if wrap else "l" for wrap in wraps)
    begin, end = ((f"\\begin{{tabularx}}{{\\linewidth}}{{{spec}}}", "\\end{tabularx}")
                  if any(wraps) else (f"\\begin{{tabular}}{{{spec}}}", "\\end{tabular}"))
    lines = [begin, "\\toprule", _latex_row(columns), "\\midrule",
             *(_latex_row(row) for row in cells), "\\bottomrule", end]
    notes = "".join(f"\\par\\footnotesize {_escape(n)}\n" for n in record["notes"])
    return (LATEX_HEADER + "\\begin{table}\n\\centering\n\\small\n" + "\n".join(lines) + "\n"
            + f"\\caption{{{_escape(record['title'])}}}\n" + notes + "\\end{table}\n")


def _latex_row(cells: Sequence[object]) -> str:
    """One row of a tabular. A cell that starts with ``[`` or ``*`` gets ``{}`` first, or the
    ``\\\\`` or rule before it would take it as its option or star."""
    escaped = [_escape(str(cell)) for cell in cells]
    return " & ".join("{}" + e if e[:1] in "[*" and e else e for e in escaped) + " \\\\"


#: LaTeX's special characters, and | < > (OT1, pdflatex's default font encoding, prints
#: them as an em dash, ¡ and ¿).
_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}", "|": r"\textbar{}\allowbreak{}",
                  "<": r"\textless{}", ">": r"\textgreater{}", "/": r"/\allowbreak{}",
                  "\n": " ", "\r": " "}
#: The symbols of the tool's headers, marks and notes, which pdflatex's UTF-8 input does not
#: know (Greek, mathematics, arrows, the triangles): as commands, math ones in \ensuremath so
#: that they work in text and math alike; ▲ ▼ are amssymb's.
_LATEX_SYMBOLS = {
    "Δ": r"\ensuremath{\Delta}", "α": r"\ensuremath{\alpha}", "β": r"\ensuremath{\beta}",
    "ρ": r"\ensuremath{\rho}", "σ": r"\ensuremath{\sigma}", "≥": r"\ensuremath{\geq}",
    "≤": r"\ensuremath{\leq}", "≠": r"\ensuremath{\neq}", "≈": r"\ensuremath{\approx}",
    "±": r"\ensuremath{\pm}", "×": r"\ensuremath{\times}", "·": r"\ensuremath{\cdot}",
    "−": r"\ensuremath{-}", "→": r"\ensuremath{\rightarrow}", "⊇": r"\ensuremath{\supseteq}",
    "↔": r"\ensuremath{\leftrightarrow}", "⁻": r"\ensuremath{^{-}}", "¹": r"\ensuremath{^{1}}",
    "²": r"\ensuremath{^{2}}", "▼": r"\ensuremath{\blacktriangledown}",
    "▲": r"\ensuremath{\blacktriangle}", "†": r"\dag{}", "‡": r"\ddag{}", "…": r"\dots{}",
    "—": r"\textemdash{}", "–": r"\textendash{}"}
_LATEX = {**_LATEX_SPECIAL, **_LATEX_SYMBOLS}
_LATEX_CHARS = re.compile("|".join(re.escape(c) for c in _LATEX))


def _escape(text: str) -> str:
    """``text`` for LaTeX, in one pass: its special characters escaped, the tool's symbols as
    commands (:data:`_LATEX_SYMBOLS`), a break allowed after ``/`` and ``|`` (paths,
    signatures); other text (umlauts, accents) stays UTF-8."""
    return _LATEX_CHARS.sub(lambda m: _LATEX[m.group()], text)


# Backslash escapes that CommonMark honours: one before any ASCII punctuation, and only there.
_MARKDOWN_CHARS = re.compile(r"\\(?=[!-/:-@\[-`{-~])|[|<&]|\r\n|[\r\n]")


def _markdown_cell(text: object) -> object:
    """A cell's text inert in a Markdown table: ``|`` as ``\\|`` (it would end the cell),
    ``<`` and ``&`` as ``\\<`` and ``\\&`` (no HTML tag, no entity), a backslash doubled
    where it would escape the next character, a line break a space (it would end the row).
    Numbers, intervals and the tool's marks hold none of these and look as before."""
    if not isinstance(text, str):
        return text
    return _MARKDOWN_CHARS.sub(lambda m: " " if m.group() in ("\r\n", "\r", "\n")
                               else "\\" + m.group(), text)


def write_markdown(frame: pd.DataFrame, path: str | Path, title: str,
                   notes: Sequence[str] = ()) -> None:
    """Atomically write ``frame`` as a titled Markdown table followed by notes; its header
    and cells are made inert (:func:`_markdown_cell`), its title and notes are the tool's
    Markdown."""
    shown = frame.copy()
    for i in range(shown.shape[1]):  # by position: column names may repeat
        shown.isetitem(i, shown.iloc[:, i].map(_markdown_cell))
    shown.columns = [_markdown_cell(str(c)) for c in frame.columns]
    with atomic_write(path) as out:
        out.write(f"# {title}\n\n")
        out.write(shown.to_markdown(index=False, disable_numparse=True))
        out.write("\n")
        if notes:
            out.write("\n")
            out.writelines(f"- {note}\n" for note in notes)


def bleu_table(score_files: Sequence[str | Path], model_files: Sequence[str | Path]
               ) -> tuple[pd.DataFrame, list[str]]:
    """One row per model and test set; notes give each model's scale and the signatures."""
    rows = []
    for path in score_files:
        s = load_score(path, "bleu")
        meta = require_keys(s["meta"], path, "--scores", "'phenomt score bleu'",
                            ("model", "direction", "testset"), "meta")
        rows.append({"model": meta["model"], "direction": meta["direction"],
                     "test set": meta["testset"], "sentences": s["sentences"],
                     "BLEU": f"{s['score']:.2f}", "signature": s["signature"]})
    notes = []
    for path in model_files:
        m = load_record(path, "--models", "'phenomt table model-card'", MODEL_CARD_KEYS)
        notes.append(
            f"`{m['model']}` ({m['direction']}): trained on {m['train_pairs']} sentence pairs "
            f"({', '.join(m['train_corpora'])}; {m['duplicates']} duplicates and "
            f"{m['leaks']} pairs overlapping validation/test text removed), validated on "
            f"{m['valid']}; BPE {m['bpe_merges']} joint merges; {m['architecture']}; "
            f"{m['max_update']} updates; seed {m['seed']}; decoding beam {m['beam']}.")
    return pd.DataFrame(rows), notes


def _thesis_rows(corpus: str) -> str:
    """The thesis rows matched to ``corpus``, for the notes."""
    table, rows = THESIS_CORPORA[corpus]
    return f"{table} {' + '.join(row.split('/', 1)[1] for row in rows)}"


def stats_table(stats_files: Sequence[str | Path]) -> tuple[pd.DataFrame, list[str]]:
    """Sentences and tokens per side of every corpus, beside the thesis's (Tables 3.1 and 3.2).

    A stats file is named after its corpus (``stats/<corpus>.json``); the corpus name picks
    the thesis row(s) in :data:`phenomt.core.stats.THESIS_CORPORA`. A corpus's own ``paper``
    numbers (config key ``paper:``), when given, are shown instead.
    """
    rows = []
    sources, sums = [], []
    for path in stats_files:
        s = load_record(path, "--stats", "'phenomt corpus stats'", STATS_KEYS)
        if not (isinstance(s["langs"], list) and len(s["langs"]) == 2
                and all(isinstance(lang, str) for lang in s["langs"])):
            raise InputError(path, f"'langs' is {s['langs']!r}, not a pair of languages")
        src, tgt = s["langs"]
        require_keys(s, path, "--stats", "'phenomt corpus stats'",
                     (f"tokens_{src}", f"tokens_{tgt}"))
        corpus = s.get("corpus") or Path(path).stem
        paper = s.get("paper") or {}
        if paper:
            if paper.get("source"):
                sources.append(f"{s['label']}: reference numbers from {paper['source']}.")
        else:
            paper = thesis_sizes(corpus, (src, tgt))
            if len(THESIS_CORPORA.get(corpus, ((), ()))[1]) > 1:
                sums.append(f"{s['label']}: the thesis cells are the sum of "
                            f"{_thesis_rows(corpus)}, the sets this file concatenates.")
        rows.append({
            "corpus": s["label"], "pair": f"{src}-{tgt}", "split": s["split"],
            "sentences": s["sentences"], "paper sentences": paper.get("sentences"),
            "tokens (src)": s[f"tokens_{src}"], "paper tokens (src)": paper.get(f"tokens_{src}"),
            "tokens (tgt)": s[f"tokens_{tgt}"], "paper tokens (tgt)": paper.get(f"tokens_{tgt}"),
        })
    # Object columns keep counts as integers beside a missing cell (6750, not 6750.0).
    frame = pd.DataFrame(rows, dtype=object)
    for column in frame.columns:
        if frame[column].notna().all():
            frame[column] = frame[column].infer_objects()
    frame = frame.sort_values(["pair", "split", "corpus"], kind="stable")
    notes = ["Tokens are counted after Moses tokenization (jieba segmentation for Chinese), "
             "after validation and cleaning.",
             f"Paper columns: {papers.citation(THESIS, 'Table 3.1')} (IWSLT14) and Table 3.2 "
             "(WMT19 training corpora), matched by "
             "corpus name (phenomt.core.stats.THESIS_CORPORA); '—' where the thesis has no such "
             "corpus. The thesis prints most sizes rounded to thousands or millions; they are "
             "written out here.",
             papers.comparability(THESIS, "Table 3.1", {
                 "data": "ours are counted after our validation and cleaning, on the corpus "
                         "versions of this run's config",
                 "tokens": "ours are Moses tokens (the fairseq recipe's own tokenization for "
                           "its pre-tokenized test file); the thesis does not say how it "
                           "counted"})]
    return frame, notes + sums + sources


#: Fields of a ``phenomt corpus stats`` record besides its ``tokens_<lang>``.
STATS_KEYS = ("label", "split", "langs", "sentences")
#: Fields of a model's merged settings (``--spec``) and its assembly report that a card reads.
SPEC_KEYS = ("architecture", "src", "tgt", "train", "valid", "bpe", "training", "seed",
             "decode")
ASSEMBLE_KEYS = ("output_pairs", "duplicates", "leaks")
#: Fields of a model card (:func:`model_card`).
MODEL_CARD_KEYS = ("model", "direction", "train_corpora", "valid", "train_pairs", "duplicates",
                   "leaks", "bpe_merges", "architecture", "max_update", "seed", "beam")


def model_card(name: str, spec: dict, assemble_report: dict) -> dict:
    """What a reader needs to know about a trained model: its data, size and settings."""
    arch = spec["architecture"]
    size = ", ".join(f"{k}={v}" for k, v in sorted(arch.items()) if k != "arch")
    return {
        "model": name, "direction": f"{spec['src']}-{spec['tgt']}",
        "train_corpora": list(spec["train"]), "valid": spec["valid"],
        "train_pairs": assemble_report["output_pairs"],
        "duplicates": assemble_report["duplicates"], "leaks": assemble_report["leaks"],
        "bpe_merges": spec["bpe"]["merges"],
        "architecture": f"{arch.get('arch', 'transformer')} ({size})" if size
        else arch.get("arch", "transformer"),
        "max_update": spec["training"].get("max_update"), "seed": spec["seed"],
        "beam": spec["decode"].get("beam", 5),
    }


def _model_spec(text: str) -> dict:
    """``--spec``: the model's settings as a JSON object, checked here so that argparse names
    the option."""
    spec = json_object(text)
    missing = [key for key in SPEC_KEYS if key not in spec]
    if missing:
        raise argparse.ArgumentTypeError(
            f"the model's settings have no {', '.join(repr(k) for k in missing)}")
    for section in ("architecture", "bpe", "training", "decode"):
        if not isinstance(spec[section], dict):
            raise argparse.ArgumentTypeError(f"{section!r} is not an object")
    if "merges" not in spec["bpe"]:
        raise argparse.ArgumentTypeError("the model's settings have no 'merges' in 'bpe'")
    return spec


def _card_command(args: argparse.Namespace) -> int:
    assemble = load_record(args.assemble, "--assemble", "'phenomt corpus assemble'",
                           ASSEMBLE_KEYS)
    card = model_card(args.name, args.spec, assemble)
    write_json(args.output, card)
    return 0


def _bleu_command(args: argparse.Namespace) -> int:
    frame, notes = bleu_table(args.scores, args.models)
    write_table(frame, args.md, args.csv, "BLEU on the test sets", [*args.note, *notes])
    return 0


def _stats_command(args: argparse.Namespace) -> int:
    frame, notes = stats_table(args.stats)
    write_table(frame, args.md, args.csv, "Corpus statistics (thesis Tables 3.1 and 3.2)", notes)
    return 0


def _benchmark(path: str | Path) -> dict[str, float]:
    """The last row of a Snakemake benchmark file (s, cpu_time, max_rss ...)."""
    lines = [line.split("\t") for line in Path(path).read_text(encoding="utf-8").splitlines()
             if line.strip()]
    if len(lines) < 2:
        raise InputError(path, "no benchmark row")
    header, row = lines[0], lines[-1]
    found = {}
    for key, value in zip(header, row, strict=False):
        try:
            found[key] = float(value)
        except ValueError:
            continue
    return found


def _duration(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    minutes, sec = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{sec:02d}"


def training_row(name: str, model: str | Path, benchmark: str | Path) -> dict:
    """One trained model: updates, validated epochs and best validation BLEU (from the
    ``.json`` beside the model, written by ``phenomt nmt train``), wall time over all its
    launches, and the last launch's CPU time and peak memory (Snakemake's benchmark)."""
    info_path = Path(model).with_suffix(".json")
    # an earlier layout has no updates or launches; every one has its validations
    info = (load_record(info_path, "--run", "'phenomt nmt train'", ("validation",))
            if info_path.exists() else {})
    bench = _benchmark(benchmark)
    validation = info.get("validation") or []
    launches = info.get("launches") or []
    updates = info.get("updates")
    if updates is None and validation:
        updates = int(max(r["num_updates"] for r in validation))
    bleu = [r for r in validation if r.get("bleu") == r.get("bleu") and "bleu" in r]
    best = max(bleu, key=lambda r: r["bleu"]) if bleu else None
    wall = sum(launch["seconds"] for launch in launches) if launches else bench.get("s")
    # strings, so that a column with a missing value does not turn into floats
    return {"model": name, "updates": None if updates is None else f"{int(updates):,}",
            "epochs validated": str(len(validation)) if validation else None,
            "best validation BLEU": (None if best is None
                                     else f"{best['bleu']:.2f} (epoch {int(best['epoch'])})"),
            "launches": str(len(launches)) if launches else None,
            "wall time": _duration(wall) + ("" if launches else " (last launch)")
            if wall is not None else None,
            "CPU time (last launch)": _duration(bench.get("cpu_time")),
            "peak memory (MB)": format_number(bench.get("max_rss"), 0)}


def _training_command(args: argparse.Namespace) -> int:
    rows = []
    for spec in args.run:
        name, model, benchmark = spec
        rows.append(training_row(name, model, benchmark))
    notes = ["Wall time: the sum of a training's launches (a resumed training's too), as "
             "`phenomt nmt train` records them; CPU time and peak memory: Snakemake's benchmark "
             "of the last launch. Timings vary from run to run and machine to machine.",
             *args.note]
    write_table(pd.DataFrame(rows), args.md, args.csv, "Training: updates and time per model",
                notes)
    return 0


def _run_spec(text: str) -> tuple[str, str, str]:
    parts = text.split("=")
    if len(parts) != 3 or not all(parts):
        raise argparse.ArgumentTypeError(f"expected NAME=MODEL=BENCHMARK, got {text!r}")
    return parts[0], parts[1], parts[2]


def _latex_command(args: argparse.Namespace) -> int:
    record = load_json(args.table)
    if not isinstance(record, dict) or record.get("schema") != TABLE_SCHEMA:
        raise InputError(args.table, f"not a table's JSON export ({TABLE_SCHEMA})")
    with atomic_write(args.output) as out:
        out.write(latex_table(record))
    return 0


def register_cli(tree) -> None:
    p = tree.add("table latex", "A table's JSON export as a LaTeX table (title as caption, "
                                "notes below; needs booktabs, amssymb and tabularx)",
                 _latex_command)
    p.add_argument("--table", required=True, help="the table's .json (beside its .csv)")
    p.add_argument("--output", required=True, help="the .tex file to write")
    p = tree.add("table training", "Updates, validation and time of every trained model",
                 _training_command)
    p.add_argument("--run", nargs="+", required=True, type=_run_spec,
                   metavar="NAME=MODEL=BENCHMARK")
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--md", required=True)
    p.add_argument("--csv", required=True)
    p = tree.add("table bleu", "Collect BLEU scores into a table", _bleu_command)
    p.add_argument("--scores", nargs="+", required=True)
    p.add_argument("--models", nargs="+", required=True, help="per-model info JSON files")
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--md", required=True)
    p.add_argument("--csv", required=True)
    p = tree.add("table model-card", "Describe a trained model for the tables", _card_command)
    p.add_argument("--name", required=True)
    p.add_argument("--spec", required=True, type=_model_spec,
                   help="the model's merged settings as JSON")
    p.add_argument("--assemble", required=True, help="the training-data assembly report")
    p.add_argument("--output", required=True)
    p = tree.add("table stats", "Collect corpus statistics into a table", _stats_command)
    p.add_argument("--stats", nargs="+", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("--csv", required=True)
