"""The non-autoregressive translation (NAT) experiment of Wang et al., "On the Information
Redundancy in Non-Autoregressive Translation": checkpoint selection, decoding speed and the
tables, as ``phenomt nat ...`` commands.

- ``phenomt nat average``: fairseq's built-in ``--eval-bleu`` does not work with the
  ``translation_lev`` family of tasks, so the best checkpoints are chosen here: every kept
  checkpoint (interval and epoch checkpoints, the last and the best by validation loss, one
  per update count) decodes the validation set, is scored with BLEU, and the best N are
  averaged (when no more than N are kept, all are averaged without decoding any). The ranking
  goes to a JSON file. The paper decodes with an *ensemble* of its 5 best checkpoints
  (Section 2); the weight average here is one model, decoded at the cost of one, so our BLEU
  and redundancy are those of a different system from the paper's ensemble. The average is
  validated too and published only if it scores at least as well as the best checkpoint:
  weights averaged across a steep stretch of a learning curve can be far worse than any of
  them (a CMLM at 14.6 validation BLEU averaged with four earlier checkpoints decoded at 5.5).
- ``phenomt nat speed``: sentences per second and latency at several batch sizes, from
  fairseq-generate's own inference timer (model loading and data reading excluded).
- ``phenomt table nat-results|nat-speed|nat-agreement``: Tables 5 and 10, the
  speed-up table, and the agreement of the redundancy metric with human annotations
  (paper Tables 4 and 9).

Both measuring commands run fairseq-generate inside this process
(:func:`generate_in_process`): fairseq's own ``main`` with its output in a temporary folder, so
decoding behaves exactly as on the command line while torch and fairseq are imported once for
all checkpoints and batch sizes.
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phenomt.core import papers
from phenomt.core.bpe import remove_bpe
from phenomt.core.cliargs import json_object
from phenomt.core.io import InputError, atomic_write, count_lines, read_lines, write_json
from phenomt.core.lazy import pandas as pd
from phenomt.core.metrics.base import get
from phenomt.core.nmt import (
    average_checkpoints,
    device_options,
    fairseq_env,
    fairseq_options,
    parse_hypotheses,
    parse_speed,
)
from phenomt.core.nmt import checkpoint_updates as nmt_checkpoint_updates
from phenomt.core.requires import import_torch, require_training
from phenomt.core.tables import (
    format_number,
    interval_cell,
    load_json,
    load_record,
    load_score,
    require_keys,
    write_table,
)
from phenomt.nat.recipes import (
    AR_GREEDY,
    AR_SYSTEM,
    AR_SYSTEMS,
    NAT_MODELS,
    SYSTEM_LABELS,
    parse_nat_system,
)

_SYSTEM_ORDER = {name: rank for rank, name in enumerate([*AR_SYSTEMS, *NAT_MODELS])}
_DATA_ORDER = {"raw": 0, "distilled": 1}
PAPER = "wang_nat"
# The paper's layout: Table 5 gives BLEU and Redu. (= CRR + DRR), Table 10 CRR and DRR
# separately, each for raw and distilled training data.
RESULTS_TITLES = {
    "5": "Table 5: BLEU and redundancy (Redu. = CRR + DRR) of NAT models, raw and distilled data",
    "10": "Table 10: CRR and DRR of NAT models, raw and distilled data"}
RESULTS_COLUMNS = {"5": {"BLEU": "bleu", "Redu. (%)": "redu"},
                   "10": {"CRR (%)": "crr", "DRR (%)": "drr"}}
AVERAGE = "average"
"""``published`` of a selection record when the averaged weights are what decodes."""
SELECTION_METRIC = ("sacreBLEU (tokenize none) of the BPE-merged, tokenized hypotheses "
                    "against the BPE-merged validation target")

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- fairseq in-process

@dataclass(frozen=True)
class GenerateRun:
    """What one fairseq-generate run printed: its S-/T-/H-/D-/P- lines and its log."""

    output: str
    log: str


def _prepare_torch() -> None:
    """One OpenMP thread and full checkpoint unpickling, as for fairseq subprocesses
    (:func:`phenomt.core.nmt.fairseq_env`); set before torch is first imported."""
    require_training("decoding with fairseq")
    env = fairseq_env()
    for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        os.environ[key] = env[key]
    import_torch("decoding with fairseq").set_num_threads(1)


def generate_in_process(data_bin: str | Path, options: Mapping[str, Any]) -> GenerateRun:
    """Run fairseq-generate's ``main`` here with ``options`` (fairseq names, underscores).

    The batch-size multiple is 1 unless given, so no sentence is dropped; the GPU is used when
    one is visible.
    """
    _prepare_torch()
    from fairseq import options as fairseq_cli_options
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from fairseq_cli import generate as fairseq_generate

    # No data-loading worker: a forked process per run costs more than it saves here.
    opts = device_options({"required_batch_size_multiple": 1, "num_workers": 0, **options})
    if opts.get("batch_size") is None and opts.get("max_tokens") is None:
        opts["batch_size"] = 64
    subset = opts.setdefault("gen_subset", "test")
    capture = io.StringIO()
    handler = logging.StreamHandler(capture)
    root = logging.getLogger()
    level = root.level
    with tempfile.TemporaryDirectory() as results:
        opts["results_path"] = results
        parser = fairseq_cli_options.get_generation_parser()
        args = fairseq_cli_options.parse_args_and_arch(
            parser, [str(data_bin), *fairseq_options(opts)])
        # A root handler makes fairseq's own logging.basicConfig a no-op; otherwise it would
        # bind the log to this run's output file, which is closed after the run.
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        try:
            fairseq_generate.main(convert_namespace_to_omegaconf(args))
        finally:
            root.removeHandler(handler)
            root.setLevel(level)
        output = (Path(results) / f"generate-{subset}.txt").read_text(encoding="utf-8")
    return GenerateRun(output, capture.getvalue())


# --------------------------------------------------------------------------- checkpoint choice

_INTERVAL = re.compile(r"^checkpoint_\d+_(\d+)\.pt$")
_EPOCH = re.compile(r"^checkpoint\d+\.pt$")


def checkpoint_updates(path: str | Path) -> int:
    """The number of updates a fairseq checkpoint was saved at; an error naming the file
    when it has none (:func:`phenomt.core.nmt.checkpoint_updates` says None instead, for
    resumption, where a cut copy is expected)."""
    updates = nmt_checkpoint_updates(path)
    if updates is None:
        raise InputError(path, "not a readable fairseq training checkpoint (no update count)")
    return updates


def checkpoint_candidates(directory: str | Path) -> list[tuple[Path, int]]:
    """Kept checkpoints of a training run, one per update count, by update count.

    Interval checkpoints (``checkpoint_<epoch>_<updates>.pt``) carry the count in their name;
    epoch checkpoints (``checkpoint<epoch>.pt``, kept when ``--no-epoch-checkpoints`` is off,
    as for the paper-scale "+OaXE" fine-tuning of 10 epochs), ``checkpoint_last.pt`` and
    ``checkpoint_best.pt`` are read. Without epoch checkpoints, the state at the end of an
    epoch only survives as last or best. Files saved at the same update count hold the same
    weights.
    """
    folder = Path(directory)
    found: dict[int, Path] = {}
    for path in sorted(folder.glob("checkpoint_*_*.pt")):
        match = _INTERVAL.match(path.name)
        if match:
            found.setdefault(int(match.group(1)), path)
    epochs = sorted((p for p in folder.glob("checkpoint*.pt") if _EPOCH.match(p.name)),
                    key=lambda p: int(p.name[len("checkpoint"):-len(".pt")]))
    for path in [*epochs, folder / "checkpoint_last.pt", folder / "checkpoint_best.pt"]:
        if path.is_file():
            found.setdefault(checkpoint_updates(path), path)
    return [(path, updates) for updates, path in sorted(found.items())]


def validation_bleu(output: str, references: Sequence[str]) -> float:
    """BLEU of fairseq-generate output (subword hypotheses) against subword references."""
    hypotheses = parse_hypotheses(output.splitlines(), len(references))
    score = get("bleu", tokenize="none").summary([remove_bpe(h) for h in hypotheses],
                                                 [remove_bpe(r) for r in references])
    return float(score["bleu"])


def rank_checkpoints(candidates: Sequence[tuple[Path, int]], data_bin: str | Path,
                     options: Mapping[str, Any], references: Sequence[str],
                     subset: str = "valid") -> list[dict[str, Any]]:
    """Every candidate checkpoint (:func:`checkpoint_candidates`) with its validation BLEU,
    best first (ties: later first)."""
    ranking = []
    for path, updates in candidates:
        run = generate_in_process(data_bin, {**options, "path": str(path), "gen_subset": subset})
        bleu = validation_bleu(run.output, references)
        log.info("%s (%d updates): validation BLEU %.2f", path.name, updates, bleu)
        ranking.append({"checkpoint": path.name, "updates": updates, "bleu": bleu})
    return sorted(ranking, key=lambda r: (-r["bleu"], -r["updates"]))


def select_and_average(directory: str | Path, data_bin: str | Path,
                       options: Mapping[str, Any], reference: str | Path, top: int,
                       output: str | Path) -> dict[str, Any]:
    """Rank the checkpoints of ``directory`` on the validation set and average the best
    ``top`` of them (all when fewer are kept) into ``output``; returns the record.

    When no more than ``top`` checkpoints are kept, all of them are averaged whatever their
    rank, so none is decoded: their ``bleu`` is null and ``ranked`` false (the same model,
    without a validation decode per checkpoint). When they were ranked, the average decodes
    the validation set as well; if it scores below the best checkpoint, that checkpoint is
    published instead (``published`` names it; ``"average"`` otherwise).
    """
    if top < 1:
        raise ValueError("top must be at least 1")
    references = read_lines(reference)
    candidates = checkpoint_candidates(directory)
    if not candidates:
        raise InputError(directory, "no fairseq checkpoints to choose from")
    ranked = len(candidates) > top
    if ranked:
        ranking = rank_checkpoints(candidates, data_bin, options, references)
    else:
        log.info("%d checkpoints kept, %d averaged: no ranking needed", len(candidates), top)
        ranking = [{"checkpoint": path.name, "updates": updates, "bleu": None}
                   for path, updates in reversed(candidates)]
    chosen = ranking[:top]
    average_checkpoints([Path(directory) / r["checkpoint"] for r in chosen], output)
    record = {"metric": SELECTION_METRIC, "top": top, "ranked": ranked, "candidates": ranking,
              "averaged": [r["checkpoint"] for r in chosen], "average_bleu": None,
              "published": AVERAGE, "validation_sentences": len(references)}
    if ranked and len(chosen) > 1:
        run = generate_in_process(data_bin, {**options, "path": str(output),
                                             "gen_subset": "valid"})
        record["average_bleu"] = validation_bleu(run.output, references)
        best = ranking[0]
        log.info("average of %d: validation BLEU %.2f (best checkpoint %.2f)", len(chosen),
                 record["average_bleu"], best["bleu"])
        if record["average_bleu"] < best["bleu"]:
            with atomic_write(output, "wb") as out, \
                    open(Path(directory) / best["checkpoint"], "rb") as src:
                shutil.copyfileobj(src, out)
            record["published"] = best["checkpoint"]
    return record


def selection_label(record: Mapping[str, Any]) -> str:
    """What a system decodes with, for the tables: ``"5 of 6"`` averaged checkpoints, or the
    best single one when the average validated lower."""
    averaged, kept = len(record["averaged"]), len(record["candidates"])
    if record.get("published", AVERAGE) == AVERAGE:
        return f"{averaged} of {kept}"
    return (f"best 1 of {kept} (the average of {averaged} validated lower: "
            f"{record['average_bleu']:.2f} BLEU)")


# --------------------------------------------------------------------------- decoding speed

_RATE = re.compile(r"Translated [\d,]+ sentences \([\d,]+ tokens\) in [\d.]+s "
                   r"\(([\d.]+) sentences/s")


def decode_speed(log_text: str) -> dict[str, float]:
    """:func:`phenomt.core.nmt.parse_speed`, with the time taken from the printed rate.

    fairseq prints the seconds with one decimal but the rate with two, which keeps short
    runs (a fast model on a few sentences) measurable.
    """
    speed = parse_speed(log_text)
    rates = _RATE.findall(log_text)
    if rates and float(rates[-1]) > 0:
        rate = float(rates[-1])
        speed.update(sentences_per_second=rate, seconds=speed["sentences"] / rate,
                     latency_ms=1000 / rate)
    return speed


def measure_speed(data_bin: str | Path, checkpoint: str | Path, options: Mapping[str, Any],
                  batch_sizes: Sequence[int], expected: int) -> list[dict[str, Any]]:
    """Decode the test subset of ``data_bin`` at each batch size; one record per size.

    A batch size replaces any token budget (``max_tokens``) of ``options``; every sentence
    must be translated.
    """
    measurements = []
    for batch in batch_sizes:
        opts = {k: v for k, v in options.items() if k != "max_tokens"}
        opts.update(path=str(checkpoint), gen_subset="test", batch_size=int(batch))
        run = generate_in_process(data_bin, opts)
        parse_hypotheses(run.output.splitlines(), expected)
        measurements.append({"batch_size": int(batch), **decode_speed(run.log)})
    return measurements


# --------------------------------------------------------------------------- tables

def _percent(value: float | None, digits: int = 2) -> str | None:
    return None if value is None else f"{100 * value:.{digits}f}"


def _label(model: str) -> str:
    return SYSTEM_LABELS.get(model, model)


def parse_score_pair(text: str) -> tuple[str, str]:
    """``BLEU_JSON=REDUNDANCY_JSON`` → the two paths."""
    bleu, sep, redundancy = text.partition("=")
    if not sep or not bleu or not redundancy:
        raise argparse.ArgumentTypeError(f"expected BLEU_JSON=REDUNDANCY_JSON, got {text!r}")
    return bleu, redundancy


def _paper_row(record: Mapping[str, Any]) -> str:
    """The key of our row in the paper's tables: ``direction/data/model``."""
    return f"{record['pair']}/{record['data']}/{record['_model']}"


#: Fields of a BLEU record's meta that name the NAT system scored (`score bleu --meta`).
NAT_META = ("teacher", "system", "model", "data", "testset", "direction")
#: Fields of every ``phenomt score redundancy`` record.
REDUNDANCY_KEYS = ("crr", "drr", "sentences")
#: Fields of a checkpoint-averaging record (``phenomt nat average``) that a table reads.
SELECTION_KEYS = ("teacher", "system", "averaged", "candidates")
#: Fields of ``phenomt nat speed`` records and of each of their measurements.
SPEED_KEYS = ("teacher", "model", "data", "direction", "measurements")
MEASUREMENT_KEYS = ("batch_size", "sentences", "seconds", "sentences_per_second", "latency_ms")
#: The fields of a model card (``phenomt table model-card``) that the teacher notes read.
TEACHER_CARD_KEYS = ("model", "direction", "train_pairs", "train_corpora", "architecture",
                     "max_update", "beam")
#: Fields of a ``phenomt score redundancy-agreement`` report.
AGREEMENT_KEYS = ("pairs", "tokens", "systems")


def load_scores(bleu_path: str | Path, redundancy_path: str | Path,
                meta: Sequence[str] = NAT_META) -> tuple[dict, dict]:
    """One ``--scores BLEU_JSON=REDUNDANCY_JSON`` pair, each refused (naming its file) unless
    it is a BLEU record whose meta has ``meta`` and a redundancy record."""
    bleu = load_score(bleu_path, "bleu")
    require_keys(bleu["meta"], bleu_path, "--scores", "'phenomt score bleu --meta'", meta,
                 "meta")
    redundancy = load_record(redundancy_path, "--scores", "'phenomt score redundancy'",
                             REDUNDANCY_KEYS)
    return bleu, redundancy


def results_table(score_pairs: Sequence[tuple[str | Path, str | Path]],
                  selections: Sequence[str | Path] = (), table: str = "5") -> pd.DataFrame:
    """Table 5 (BLEU and Redu.) or 10 (CRR and DRR) per language pair, test set, system and
    training data, with the paper's number beside each of ours.

    Each pair joins the BLEU file of a system's hypotheses (whose metadata names the teacher,
    system, model, data, test set and direction) with the redundancy file of the same
    hypotheses. ``selections`` are the checkpoint-averaging records (how many of how many
    checkpoints). Redu. is CRR + DRR, as in the paper (its CMLM raw En→Zh: 51.6 + 1.9 = 53.5).
    """
    averaged = {}
    for path in selections:
        record = load_record(path, "--selections", "'phenomt nat average'", SELECTION_KEYS)
        averaged[(record["teacher"], record["system"])] = selection_label(record)
    rows = []
    for bleu_path, redundancy_path in score_pairs:
        bleu, redundancy = load_scores(bleu_path, redundancy_path)
        if bleu["sentences"] != redundancy["sentences"]:
            raise InputError(redundancy_path, f"{redundancy['sentences']} sentences, but the "
                                              f"BLEU file {bleu_path} has {bleu['sentences']}")
        crr, drr = redundancy["crr"], redundancy["drr"]
        meta = bleu["meta"]

        def ci(record: Mapping[str, Any], key: str, scale: float = 100.0) -> str | None:
            low, high = record.get(f"{key}_ci") or (None, None)
            return interval_cell(record.get(key), low, high, 2, scale)
        rows.append({
            "_order": (meta["direction"], meta["testset"], _SYSTEM_ORDER.get(meta["model"], 99),
                       _DATA_ORDER.get(meta["data"], 9)),
            "_model": meta["model"],
            "pair": meta["direction"], "test set": meta["testset"],
            "system": _label(meta["model"]), "data": meta["data"],
            "sentences": bleu["sentences"],
            "BLEU": interval_cell(bleu["score"], *(bleu["ci"] or (None, None)), 2, 1.0),
            "Redu. (%)": (None if crr is None or drr is None
                          else ci({**redundancy, "redundancy": crr + drr}, "redundancy")),
            "CRR (%)": ci(redundancy, "crr"), "DRR (%)": ci(redundancy, "drr"),
            "checkpoints averaged": averaged.get((meta["teacher"], meta["system"])),
            "BLEU signature": bleu["signature"],
        })
    columns = RESULTS_COLUMNS[table]
    keep = ["pair", "test set", "system", "data", "sentences", *columns,
            "checkpoints averaged", "BLEU signature"]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=keep)
    frame = frame.sort_values("_order", kind="stable").reset_index(drop=True)
    frame = papers.beside(frame, PAPER, f"Table {table}", _paper_row, columns, printed=True)
    ours = [c for c in frame.columns if c in keep or c.startswith("paper ")]
    return frame[ours]


def paper_notes(table: str, scale_differs: bool = True) -> list[str]:
    """Where the paper's numbers come from and how far ours are comparable."""
    notes = ["Paper columns: the paper's row of the same pair, training data and model (it has "
             "no AR row in this table); '—' where it has none."]
    if scale_differs:
        notes.append(papers.comparability(PAPER, f"Table {table}", {
            "scale": "our models are trained for the updates stated above, the paper's for "
                     "300k updates with a batch size of 480K (its unit unstated; presumably "
                     "tokens)",
            "data": "our training data and test sets are those of this run's config"}))
    return notes


def teacher_notes(cards: Sequence[str | Path]) -> list[str]:
    """One sentence per AR teacher: its data, size, updates and beam."""
    notes = []
    for path in cards:
        card = load_record(path, "--cards", "'phenomt table model-card'", TEACHER_CARD_KEYS)
        notes.append(
            f"Teacher `{card['model']}` ({card['direction']}): {card['train_pairs']} training "
            f"pairs ({', '.join(card['train_corpora'])}), {card['architecture']}, "
            f"{card['max_update']} updates, beam {card['beam']}; it is also the AR row.")
    return notes


def interval_notes(score_files: Sequence[str | Path]) -> list[str]:
    """How the ``[low, high]`` intervals were drawn, once per distinct bootstrap: what they
    resample (the test sentences), how often, with which resampling seed, and what they leave
    out (each system is one training run)."""
    seen: dict[str, None] = {}
    for path in score_files:
        b = load_json(path).get("bootstrap")
        if b:
            seen[f"[low, high]: {100 * b['confidence']:.0f}% percentile interval of a "
                 f"bootstrap over the test sentences ({b['samples']:,} sentence resamples, "
                 f"resampling seed {b['seed']}). Each system is one training run: the "
                 "intervals cover the test sentences only, not training variation (another "
                 "training seed would give another model)."] = None
    return list(seen)


def redundancy_notes(redundancy_files: Sequence[str | Path]) -> list[str]:
    """The metric settings behind the CRR/DRR columns, once per distinct setting."""
    seen: dict[str, None] = {}
    for path in redundancy_files:
        s = load_json(path).get("settings", {})
        synonyms = (f"synonyms: cosine similarity above {s['threshold']} between the "
                    f"embeddings of `{s['embeddings']}`" if s.get("embeddings")
                    else "identical tokens only")
        seen[f"CRR/DRR at {s.get('level', 'bpe')} level, {synonyms}, {s.get('stopwords', 0)} "
             "stopwords exempt from DRR; ratios pool counts over sentences (README)."] = None
    return list(seen)


def _speed_label(record: Mapping[str, Any]) -> str:
    """The system's label; the teacher's beam search says its beam."""
    label = _label(record["model"])
    beam = record.get("beam")
    return f"{label}, beam {beam}" if record["model"] == AR_SYSTEM and beam and beam > 1 else label


def speed_table(records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per system and batch size; the speed-up divides the system's sentences per
    second by the AR teacher's at the same pair and batch size: its own search (``speed-up
    vs AR``) and, when it was timed too, greedy search (``speed-up vs AR greedy``)."""
    rates = {model: {(r["teacher"], m["batch_size"]): m["sentences_per_second"]
                     for r in records if r["model"] == model for m in r["measurements"]}
             for model in AR_SYSTEMS}
    rows = []
    for record in records:
        for m in record["measurements"]:
            key = (record["teacher"], m["batch_size"])
            row = {
                "_order": (record["direction"], m["batch_size"],
                           _SYSTEM_ORDER.get(record["model"], 99)),
                "pair": record["direction"], "system": _speed_label(record),
                "data": record["data"], "batch size": m["batch_size"],
                "sentences": m["sentences"], "seconds": format_number(m["seconds"], 3),
                "sentences/s": format_number(m["sentences_per_second"]),
                "latency (ms/sentence)": format_number(m["latency_ms"])}
            for model, column in ((AR_SYSTEM, "speed-up vs AR"),
                                  (AR_GREEDY, "speed-up vs AR greedy")):
                base = rates[model].get(key)
                if rates[model] or model == AR_SYSTEM:
                    row[column] = (None if not base
                                   else f"{m['sentences_per_second'] / base:.2f}x")
            row["device"] = record.get("device")
            rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return frame.sort_values("_order", kind="stable").drop(columns="_order").reset_index(
        drop=True)


# The paper annotated 100 WMT20 En->Zh sentences per system (its Tables 2, 4 and 9).
AGREEMENT_PAIR = "en-zh"
_AGREEMENT_COLUMNS = {"precision (%)": "p", "recall (%)": "r", "F1 (%)": "f1"}


def _annotated_system(name: str) -> tuple[str | None, str | None]:
    """``(model, data)`` of an annotated system named ``<model>.<data>``; ``(None, None)``
    for any other name (the paper's numbers are looked up by model and training data)."""
    try:
        model, data = parse_nat_system(name)
    except ValueError:
        return None, None
    return (None, None) if model in AR_SYSTEMS else (model, data)


def _agreement_groups(report: Mapping[str, Any]) -> list[tuple[str | None, dict]]:
    """Table 4's groups: the annotated systems pooled by training data, as in the paper
    (``None``: systems whose data the name does not give). A report without per-system
    counts (written before they were added) gives one pooled group."""
    systems = report.get("systems", {})
    if not systems or any("pairs" not in v for v in systems.values()):
        return [(None, {unit: report[unit] for unit in ("pairs", "tokens")})]
    sums: dict[str | None, dict] = {}
    for name, counts in systems.items():
        group = sums.setdefault(_annotated_system(name)[1], {})
        for unit in ("pairs", "tokens"):
            for kind, agree in counts[unit].items():
                total = group.setdefault(unit, {}).setdefault(kind, Counter())
                total.update({k: agree[k] for k in ("matched", "automatic", "human")})
    groups = []
    for data in sorted(sums, key=lambda d: _DATA_ORDER.get(d, 9)):
        groups.append((data, {unit: {kind: _agreement(**total) for kind, total in kinds.items()}
                              for unit, kinds in sums[data].items()}))
    return groups


def _agreement(matched: int, automatic: int, human: int) -> dict[str, Any]:
    """Precision, recall and F1 of summed counts, as
    :class:`phenomt.core.metrics.redundancy.Agreement` gives them (not imported: it brings
    numpy into every table command)."""
    return {"precision": matched / automatic if automatic else None,
            "recall": matched / human if human else None,
            "f1": 2 * matched / (automatic + human) if automatic + human else None,
            "matched": matched, "automatic": automatic, "human": human}


def agreement_table(report: Mapping[str, Any], pair: str = AGREEMENT_PAIR) -> pd.DataFrame:
    """Paper Table 4 (precision, recall, F1 of the metric against human marks, on exact pairs
    and on redundant tokens, per training data) and Table 9 (human and automatic ratios per
    system), stacked, with the paper's number of ``pair`` beside each of ours.

    The data and model come from system names ``<model>.<raw|distilled>``; other names get
    no paper number. The paper does not say whether Table 4 counts pairs or tokens, so its
    number stands beside both.
    """
    rows = []
    for unit in ("pairs", "tokens"):
        for data, agreements in _agreement_groups(report):
            for kind, agree in agreements[unit].items():
                rows.append({"table": "4", "system": "all", "data": data, "type": kind,
                             "unit": unit,
                             "precision (%)": _percent(agree["precision"], 1),
                             "recall (%)": _percent(agree["recall"], 1),
                             "F1 (%)": _percent(agree["f1"], 1),
                             # as text: the Table 9 rows leave these empty, which would turn
                             # a numeric column into floats
                             **{k: str(agree[k]) for k in ("matched", "automatic", "human")}})
    table4 = pd.DataFrame(rows)
    if rows:
        table4 = papers.beside(table4, PAPER, "Table 4", lambda r: f"{pair}/{r['data']}",
                               {ours: (lambda r, m=m: f"{r['type']}/{m}")
                                for ours, m in _AGREEMENT_COLUMNS.items()}, printed=True)
    rows = []
    for name, ratios in report["systems"].items():
        model, data = _annotated_system(name)
        for kind, key in (("continuous", "crr"), ("discontinuous", "drr")):
            rows.append({"_order": (_DATA_ORDER.get(data, 9), _SYSTEM_ORDER.get(model, 99)),
                         "_key": f"{pair}/{data}/{model}", "_column": key,
                         "table": "9", "system": _label(model) if model else name,
                         "data": data, "type": kind, "unit": "ratio",
                         "human (%)": _percent(ratios["human"][key]),
                         "automatic (%)": _percent(ratios["automatic"][key])})
    if not rows:
        return table4
    table9 = pd.DataFrame(rows).sort_values("_order", kind="stable").reset_index(drop=True)
    table9 = papers.beside(table9, PAPER, "Table 9", "{_key}",
                           {"human (%)": "{_column}/human",
                            "automatic (%)": "{_column}/automatic"}, printed=True)
    table9 = table9.drop(columns=["_order", "_key", "_column"])
    return pd.concat([table4, table9], ignore_index=True)


def agreement_notes(pair: str = AGREEMENT_PAIR) -> list[str]:
    """Where the agreement table's paper columns come from and how far ours compare."""
    return [
        "Paper columns: Table 4 by the training data of the annotated NAT systems (pooled over "
        "the systems of that data, as the paper's rows are), Table 9 per model and data; "
        "systems not named <model>.<raw|distilled> get none. The paper does not say whether "
        "Table 4 counts redundant pairs or tokens: its number stands beside both. Table 9: "
        f"{papers.citation(PAPER, 'Table 9')}, on the same annotations as Table 4.",
        papers.comparability(PAPER, "Table 4", {
            "test set": f"the paper annotated 100 sentences of WMT20 {_arrow(pair)} per system "
                        "(two translators); ours are the annotations this run was given",
            "synonyms": "the paper's come from mBART embeddings, ours from the configured "
                        "vectors or the teacher's embeddings",
            "models": "the paper's systems are trained at paper scale; ours at this run's"}),
    ]


def _arrow(pair: str) -> str:
    src, _, tgt = pair.partition("-")
    return f"{src.capitalize()}→{tgt.capitalize()}"


# --------------------------------------------------------------------------- command line

def _log_progress() -> None:
    """Per-checkpoint and per-batch-size progress to stderr (the rule's log)."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")


def _average_command(args: argparse.Namespace) -> int:
    require_training("nat average")
    _log_progress()
    record = select_and_average(args.checkpoint_dir, args.data_bin, args.options,
                                args.reference, args.top, args.output)
    record.update(teacher=args.teacher, system=args.system)
    write_json(args.ranking, record)
    if record["published"] == AVERAGE:
        print(f"{args.output}: average of {', '.join(record['averaged'])}")
    else:
        print(f"{args.output}: {record['published']} (validation BLEU "
              f"{record['candidates'][0]['bleu']:.2f}; the average of "
              f"{len(record['averaged'])} scored {record['average_bleu']:.2f})")
    return 0


def _speed_command(args: argparse.Namespace) -> int:
    require_training("nat speed")
    _log_progress()
    expected = count_lines(args.source)
    options = args.options
    measurements = measure_speed(args.data_bin, args.model, options, args.batch_sizes, expected)
    record = {"teacher": args.teacher, "system": args.system, "model": args.model_name,
              "data": args.data, "direction": args.direction,
              "beam": options.get("beam") if args.model_name in AR_SYSTEMS else None,
              "device": "cpu" if device_options(options)["cpu"] else "cuda", "threads": 1,
              "measurements": measurements}
    write_json(args.output, record)
    return 0


def _results_command(args: argparse.Namespace) -> int:
    frame = results_table(args.scores, args.selections, args.table)
    notes = [*teacher_notes(args.cards), *args.note,
             *redundancy_notes([r for _, r in args.scores]),
             *interval_notes([f for pair in args.scores for f in pair]),
             *paper_notes(args.table)]
    write_table(frame, args.md, args.csv, RESULTS_TITLES[args.table], notes)
    return 0


def _speed_record(path: str) -> dict:
    """A ``phenomt nat speed`` record, refused (naming the file) if it is another."""
    kind = "'phenomt nat speed'"
    record = load_record(path, "--speeds", kind, SPEED_KEYS)
    if not isinstance(record["measurements"], list):
        raise InputError(path, "'measurements' is not a list")
    for entry in record["measurements"]:
        require_keys(entry, path, "--speeds", kind, MEASUREMENT_KEYS, "measurements")
    return record


def _speed_table_command(args: argparse.Namespace) -> int:
    frame = speed_table([_speed_record(p) for p in args.speeds])
    notes = [
        "Time of fairseq-generate's inference steps (model loading and data reading "
        "excluded), one thread per process; the speed-up divides sentences per second by "
        "the AR teacher's at the same batch size.", *args.note]
    write_table(frame, args.md, args.csv, "Decoding speed: NAT against AR beam search", notes)
    return 0


def _agreement_command(args: argparse.Namespace) -> int:
    frame = agreement_table(load_record(args.report, "--report",
                                        "'phenomt score redundancy-agreement'", AGREEMENT_KEYS))
    notes = ["Table 4 rows: the metric's redundant pairs (and redundant tokens) against the "
             "human ones; Table 9 rows: human and automatic ratios per system.", *args.note,
             *agreement_notes()]
    write_table(frame, args.md, args.csv,
                "Agreement of CRR/DRR with human annotation (paper Tables 4 and 9)", notes)
    return 0


def register_cli(tree) -> None:
    p = tree.add("nat average", "Rank a run's checkpoints by validation BLEU and average the "
                 "best ones (or keep the best one if the average validates lower)",
                 _average_command)
    p.add_argument("--checkpoint-dir", required=True)
    p.add_argument("--data-bin", required=True, help="binarized data with a 'valid' subset")
    p.add_argument("--reference", required=True, help="the validation target (BPE)")
    p.add_argument("--options", type=json_object, default="{}",
                   help="fairseq-generate options as JSON")
    p.add_argument("--top", type=int, required=True, help="how many checkpoints to average")
    p.add_argument("--output", required=True, help="the averaged checkpoint")
    p.add_argument("--ranking", required=True, help="JSON record of the ranking")
    p.add_argument("--teacher", required=True)
    p.add_argument("--system", required=True)

    p = tree.add("nat speed", "Decoding speed at several batch sizes", _speed_command)
    p.add_argument("--data-bin", required=True, help="binarized data with a 'test' subset")
    p.add_argument("--source", required=True, help="its source text (for the line count)")
    p.add_argument("--model", required=True, help="the checkpoint")
    p.add_argument("--options", type=json_object, default="{}",
                   help="fairseq-generate options as JSON")
    p.add_argument("--batch-sizes", type=int, nargs="+", required=True)
    p.add_argument("--teacher", required=True)
    p.add_argument("--system", required=True)
    p.add_argument("--model-name", required=True, help="ar or a NAT model name")
    p.add_argument("--data", required=True, help="the data the system was trained on")
    p.add_argument("--direction", required=True)
    p.add_argument("--output", required=True)

    p = tree.add("table nat-results", "BLEU, CRR and DRR per system (paper Tables 5/10)",
                 _results_command)
    p.add_argument("--scores", nargs="+", required=True, type=parse_score_pair,
                   metavar="BLEU_JSON=REDUNDANCY_JSON")
    p.add_argument("--selections", nargs="*", default=[], help="checkpoint-averaging records")
    p.add_argument("--cards", nargs="*", default=[], help="the teachers' model cards")
    p.add_argument("--table", required=True, choices=sorted(RESULTS_TITLES),
                   help="the paper table: 5 (BLEU, Redu.) or 10 (CRR, DRR)")
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--md", required=True)
    p.add_argument("--csv", required=True)

    p = tree.add("table nat-speed", "Decoding speed and speed-up against AR", _speed_table_command)
    p.add_argument("--speeds", nargs="+", required=True)
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--md", required=True)
    p.add_argument("--csv", required=True)

    p = tree.add("table nat-agreement", "Metric against human redundancy annotations",
                 _agreement_command)
    p.add_argument("--report", required=True, help="phenomt score redundancy-agreement JSON")
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--md", required=True)
    p.add_argument("--csv", required=True)
