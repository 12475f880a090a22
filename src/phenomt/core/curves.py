"""Learning curves: validation scores by epoch, read from a fairseq-train log.

fairseq prints one line per validation, e.g.
``... | valid | epoch 003 | valid on 'valid' subset | loss 4.1 | ... | bleu 12.93 | ...``
on its console and ``epoch 003 | valid on 'valid' subset | ...`` (no prefix, and repeated once
per handler fairseq has added by then) in its ``--log-file``; both are read.
(``bleu`` only with ``--eval-bleu``: greedy or beam search as ``--eval-bleu-args`` says, on
the validation set, subwords merged and detokenized). A resumed training logs the epochs of
each launch; a repeated epoch keeps its last value.

``phenomt nmt learning-curve --model-info model.json --csv curve.csv --figure curve.png``
(``phenomt nmt train`` keeps the records of every launch in ``model.json``).
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

from phenomt.core.io import InputError, atomic_write, load_json

_VALID = re.compile(r"(?:^|\| valid \| )epoch (\d+) \| valid on '[^']*' subset \|(.*)$")
_FIELD = re.compile(r"\s*(\w+) ([-\d.e+]+|inf|nan)\s*")
COLUMNS = ("epoch", "num_updates", "loss", "bleu")


def parse_validations(text: str) -> list[dict[str, float]]:
    """One record per validated epoch, in epoch order: epoch, updates, loss and BLEU (NaN
    when the run did not score BLEU)."""
    by_epoch: dict[int, dict[str, float]] = {}
    for line in text.splitlines():
        match = _VALID.search(line)
        if not match:
            continue
        fields = {}
        for part in match.group(2).split("|"):
            field = _FIELD.fullmatch(part)
            if field:
                fields[field.group(1)] = float(field.group(2))
        epoch = int(match.group(1))
        by_epoch[epoch] = {"epoch": epoch, "num_updates": fields.get("num_updates", float("nan")),
                           "loss": fields.get("loss", float("nan")),
                           "bleu": fields.get("bleu", float("nan"))}
    return [by_epoch[e] for e in sorted(by_epoch)]


_TRAIN = re.compile(r"(?:^|\| train \| )epoch (\d+) \| (?!valid on )(.*)$")


def parse_train_epochs(text: str) -> list[dict[str, float]]:
    """fairseq's end-of-epoch training summary (``epoch 001 | loss 9.1 | ... | wps 51234 |
    ... | train_wall 12 | ... | wall 20``), one record of every numeric field per epoch, in
    epoch order; a repeated epoch (a resumed run) keeps its last line."""
    by_epoch: dict[int, dict[str, float]] = {}
    for line in text.splitlines():
        match = _TRAIN.search(line)
        if not match:
            continue
        fields = {"epoch": float(match.group(1))}
        for part in match.group(2).split("|"):
            field = _FIELD.fullmatch(part)
            if field:
                fields[field.group(1)] = float(field.group(2))
        by_epoch[int(match.group(1))] = fields
    return [by_epoch[e] for e in sorted(by_epoch)]


def write_csv(records: list[dict[str, float]], path: str | Path) -> None:
    with atomic_write(path) as out:
        out.write(",".join(COLUMNS) + "\n")
        for record in records:
            out.write(",".join(_number(record[c]) for c in COLUMNS) + "\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return ""  # no BLEU on that epoch's line
    return str(int(value)) if value == int(value) else f"{value:.4g}"


def best_record(records: list[dict[str, float]]) -> dict[str, float]:
    """The epoch of the highest validation BLEU (epochs without BLEU never win)."""
    return max(records, key=lambda r: -1.0 if math.isnan(r["bleu"]) else r["bleu"])


def draw(records: list[dict[str, float]], title: str):
    """Validation BLEU by epoch (and the validation loss on a second axis)."""
    from phenomt.core.figures import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    epochs = [r["epoch"] for r in records]
    ax.plot(epochs, [r["bleu"] for r in records], marker="o", color="tab:blue")
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation BLEU", color="tab:blue")
    ax.grid(alpha=0.3)
    loss = ax.twinx()
    loss.plot(epochs, [r["loss"] for r in records], marker=".", color="tab:gray",
              linestyle="--")
    loss.set_ylabel("validation loss (bits)", color="tab:gray")
    best = best_record(records)
    # below the curve, pointing up at the best epoch, so the label never sits on the line
    ax.annotate(f"best {best['bleu']:.1f} (epoch {int(best['epoch'])})",
                (best["epoch"], best["bleu"]), textcoords="offset points", xytext=(0, -45),
                ha="right" if best["epoch"] > epochs[len(epochs) // 2] else "left",
                arrowprops={"arrowstyle": "->", "color": "tab:blue"})
    ax.set_title(title)
    return fig


def model_info_records(path: str | Path) -> list[dict[str, float]]:
    """The ``validation`` records of the JSON that ``phenomt nmt train`` writes."""
    records = load_json(path).get("validation", [])
    if not isinstance(records, list) or not all(
            isinstance(r, dict) and all(isinstance(r.get(c), int | float) for c in COLUMNS)
            for r in records):
        raise InputError(path, "expected the JSON object of 'phenomt nmt train', whose "
                               f"'validation' is a list of records with {', '.join(COLUMNS)}")
    return records


def _command(args: argparse.Namespace) -> int:
    if args.model_info:
        records, source = model_info_records(args.model_info), args.model_info
    else:
        try:  # a log, not strict text: an odd byte in fairseq's output is no error
            text = Path(args.log).read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            raise InputError(args.log, f"cannot be read ({err.strerror})") from None
        records, source = parse_validations(text), args.log
    if not records:
        raise InputError(source, "no validation records ('| valid | epoch N | valid on ...'):"
                                 " was the training run with validation?")
    if args.csv:
        write_csv(records, args.csv)
    if args.figure:
        from phenomt.core.figures import close_figure, save_figure

        fig = draw(records, args.title)
        save_figure(fig, args.figure)
        close_figure(fig)
    best = best_record(records)
    print(f"{source}: {len(records)} validated epochs, best BLEU {best['bleu']:.2f} "
          f"at epoch {int(best['epoch'])}")
    return 0


def register_cli(tree) -> None:
    p = tree.add("nmt learning-curve", "Validation BLEU and loss by epoch from a fairseq-train "
                 "log, as CSV and a figure", _command)
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--log", help="a fairseq-train log")
    source.add_argument("--model-info", help="the JSON that `phenomt nmt train` writes beside "
                        "the model (its 'validation' records span every launch)")
    p.add_argument("--csv", help="one row per epoch: epoch, num_updates, loss, bleu")
    p.add_argument("--figure", nargs="+", help="PNG and/or SVG paths")
    p.add_argument("--title", default="Learning curve")
