"""Figures of given system outputs, the findings a reader looks at first:

- ``phenomt systems figure-redundancy``: CRR + DRR of every system with its 95% interval, one
  panel per test set, non-autoregressive systems marked (from the ``systems_redundancy``
  table);
- ``phenomt systems figure-mqm``: MQM error rates against each metric, one panel per metric and
  error category, with Spearman's ρ and the number of systems (from a ``systems mqm``
  record);
- ``phenomt systems figure-buckets``: each system's difference to the baseline per frequency,
  length and part-of-speech bucket with its paired interval and a zero line (from a ``systems
  analyse`` record);
- ``phenomt systems figure-ldd``: each challenge set of a test set against its full test set,
  one panel per set, systems as rows (from the systems' ``systems ldd-score`` records).

Both draw only what is large enough for a test (:data:`MIN_INTERVAL_SENTENCES` sentences or
more) and name the rest with their sizes under the panels.
"""

from __future__ import annotations

import argparse
import os
import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from phenomt.core.figures import (
    error_lengths,
    parse_score,
    pyplot,
    read_table,
    require_columns,
    write_figure,
)
from phenomt.core.io import InputError, load_json
from phenomt.core.metrics.resample import ALPHA, MIN_INTERVAL_SENTENCES
from phenomt.core.tables import load_record, require_keys

if TYPE_CHECKING:
    from matplotlib.figure import Figure

REDUNDANCY_COLUMN = "CRR+DRR % [95% CI]"
#: Colour by the kind of system the catalogue or config states; grey: none stated.
KIND_COLOURS = {"non-autoregressive": "C3", "autoregressive": "C0", "rule-based": "C2",
                "human translation": "C4"}
OTHER_COLOUR = "0.55"
NO_KIND = "kind not stated"


def _main_rows(rows: Sequence[Mapping[str, str]]) -> list[Mapping[str, str]]:
    """One row per (test set, system): its first, the main subset (the table lists it
    first)."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for row in rows:
        key = (row["test set"], row["system"])
        if key not in seen:
            seen.add(key)
            kept.append(row)
    return kept


def draw_redundancy(rows: Sequence[Mapping[str, str]], path: str | os.PathLike[str] = "table"
                    ) -> Figure:
    """CRR + DRR per system with its interval: one panel per test set, systems sorted by the
    score, coloured by kind (non-autoregressive, autoregressive, not stated)."""
    if not rows:
        raise InputError(path, "the table has no rows")
    require_columns(rows, ["test set", "system", "kind", REDUNDANCY_COLUMN], path)
    panels: dict[str, list[tuple[str, str, object]]] = {}
    for row in _main_rows(rows):
        score = parse_score(row[REDUNDANCY_COLUMN])
        if score is not None:
            panels.setdefault(row["test set"], []).append((row["system"], row["kind"], score))
    if not panels:
        raise InputError(path, f"no {REDUNDANCY_COLUMN} value to draw")
    plt = pyplot()
    heights = [0.9 + 0.32 * len(systems) for systems in panels.values()]
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.0, sum(heights) + 0.4), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    kinds_seen: dict[str, str] = {}
    for ax, (testset, systems) in zip(axes[:, 0], panels.items(), strict=True):
        systems = sorted(systems, key=lambda s: s[2].value)
        colours = [KIND_COLOURS.get(kind, OTHER_COLOUR) for _, kind, _ in systems]
        for _, kind, _ in systems:
            kinds_seen[kind or NO_KIND] = KIND_COLOURS.get(kind, OTHER_COLOUR)
        values = [s.value for _, _, s in systems]
        errors = [[s.errors[0] for _, _, s in systems], [s.errors[1] for _, _, s in systems]]
        ax.barh(range(len(systems)), values, color=colours, xerr=errors, capsize=2,
                height=0.6, error_kw={"elinewidth": 0.8})
        right = max(s.value + s.errors[1] for _, _, s in systems)
        for y, (_, _, score) in enumerate(systems):
            # the value right of its interval, where no error bar crosses it
            end = score.value + score.errors[1]
            ax.text(end + right * 0.02, y, f"{score.value:.2f}", va="center", fontsize=7)
        ax.set_yticks(range(len(systems)), [name for name, _, _ in systems], fontsize=8)
        ax.set_title(testset, fontsize=9)
        ax.set_xlabel("CRR + DRR (%), 95% interval", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
        ax.set_xlim(0, right * 1.2)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in kinds_seen.values()]
    fig.legend(handles, list(kinds_seen), loc="upper right", fontsize=7, frameon=False)
    fig.suptitle("Redundant tokens in given system outputs (lower is better)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig


def draw_mqm(record: Mapping, path: str | os.PathLike[str] = "record") -> Figure:
    """MQM error rate (errors per segment) against each metric of the record: one panel per
    metric and category, one point per system, Spearman's ρ and n in the panel's title."""
    correlations = record.get("correlations") or []
    if not correlations:
        raise InputError(path, "no metric beside the MQM rates: score it with --metric")
    metrics = list(dict.fromkeys(c["metric"] for c in correlations))
    categories = list(dict.fromkeys(c["category"] for c in correlations))
    plt = pyplot()
    fig, axes = plt.subplots(len(metrics), len(categories), squeeze=False,
                             figsize=(3.6 * len(categories), 3.0 * len(metrics)))
    for c in correlations:
        ax = axes[metrics.index(c["metric"])][categories.index(c["category"])]
        values = record["metrics"][c["metric"]]
        systems = [s for s in c["systems"]]
        xs = [values[s] for s in systems]
        ys = [record["systems"][s]["categories"][c["category"]]["rate"] for s in systems]
        ax.scatter(xs, ys, s=18, color="C0")
        for system, x, y in zip(systems, xs, ys, strict=True):
            ax.annotate(system, (x, y), fontsize=6, xytext=(3, 2), textcoords="offset points")
        rho = "—" if c["rho"] is None else f"{c['rho']:+.2f}"
        warn = " (few systems)" if c["weak"] else ""
        warn += " (few errors)" if c.get("few_errors") else ""
        ax.set_title(f"ρ = {rho}, n = {c['n']}{warn}", fontsize=8)
        ax.set_xlabel(c["metric"], fontsize=8)
        ax.set_ylabel(f"{c['category']}\nerrors per segment", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle("MQM error rates against the metrics (Spearman's ρ over systems)",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig


def draw_challenge_sets(records: Sequence[Mapping], kinds: Mapping[str, str | None],
                        path: str | os.PathLike[str] = "records") -> Figure:
    """Each challenge set of a test set against its full test set: one panel per set, one row
    per system, its BLEU difference with the paired 95% interval and a zero line; filled
    where the Holm-adjusted test puts the set below or above, hollow where it does not (from
    ``systems ldd-score`` records; ``kinds``: each system's kind, coloured).

    Only sets with a verdict get a panel: a set too small for one (``below`` None for every
    system, under :data:`MIN_INTERVAL_SENTENCES` sentences) would
    show an interval that understates its spread, down to a point for one sentence. Such sets
    are named with their sizes under the panels."""
    if not records:
        raise InputError(path, "no challenge-set record to draw")
    sets = list(dict.fromkeys(name for r in records for name in r["sets"]))
    if not sets:
        raise InputError(path, "the records have no challenge set")
    drawn = [name for name in sets if any(_judged(r["sets"].get(name)) for r in records)]
    small = [f"{name} ({_sizes(records, name)})" for name in sets if name not in drawn]
    plt = pyplot()
    columns = max(1, min(3, len(drawn)))
    rows = max(1, -(-len(drawn) // columns))
    height = 0.9 + 0.28 * len(records)
    systems = [r["system"] for r in records]
    # the first column's system labels take their own width beside the panels
    width = 3.6 * columns + LABEL_INCHES_PER_CHAR * max(map(len, systems))
    title = _wrap(f"{records[0]['testset']}: each challenge set against the full test set "
                  "(paired 95% intervals; filled: Holm-adjusted p < 0.05)", width, 9)
    note = _wrap("Too few sentences for a verdict, not drawn: " + ", ".join(small), width,
                 7) if small else None
    # the title and the note get their own height: the panels keep theirs
    top, bottom = _text_inches(title, 9) + 0.1, _text_inches(note, 7)
    total = height * rows + 0.6 + top + bottom
    fig, axes = plt.subplots(rows, columns, figsize=(width, total), squeeze=False,
                             sharey=True)
    for ax, name in zip(axes.flat, drawn, strict=False):
        for y, record in enumerate(records):
            entry = record["sets"].get(name)
            if not entry or entry.get("difference") is None or not entry.get("difference_ci"):
                continue
            low, high = entry["difference_ci"]
            colour = KIND_COLOURS.get(kinds.get(record["system"]) or "", OTHER_COLOUR)
            decided = bool(entry.get("below") or entry.get("above"))
            below, above = error_lengths(entry["difference"], low, high)
            ax.errorbar([entry["difference"]], [y], xerr=[[below], [above]],
                        fmt="o", ms=4.5, capsize=2, elinewidth=0.9, color=colour,
                        markerfacecolor=colour if decided else "white")
        ax.axvline(0.0, color="0.3", linewidth=0.8)
        ax.set_title(f"{name} ({_sizes(records, name)} sentences)", fontsize=8)
        ax.set_yticks(range(len(systems)), systems, fontsize=7)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", alpha=0.3)
        ax.set_xlabel("Δ BLEU vs full test set", fontsize=7)
    for ax in list(axes.flat)[len(drawn):]:
        ax.set_visible(False)
    axes[0, 0].invert_yaxis()  # the first system on top
    seen = dict.fromkeys((kinds.get(s) or NO_KIND) for s in systems)
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=KIND_COLOURS.get(k, OTHER_COLOUR))
               for k in seen]
    fig.suptitle(title, fontsize=9, y=1 - 0.05 / total, va="top")
    # the legend under the title, right: in the title's row it could cover its end
    fig.legend(handles, list(seen), loc="upper right", bbox_to_anchor=(1, 1 - top / total),
               fontsize=7, frameon=False)
    if note:
        fig.text(0.01, 0.005, note, fontsize=7, va="bottom", color="0.3")
    legend = 0.14 * len(seen) + 0.05
    fig.tight_layout(rect=(0, bottom / total, 1, 1 - (top + legend) / total))
    return fig


#: Width of a character of a fontsize-7 label, in inches (DejaVu Sans, a generous average).
LABEL_INCHES_PER_CHAR = 0.055


def _wrap(text: str, width: float, fontsize: float) -> str:
    """``text`` wrapped to a figure ``width`` inches wide at ``fontsize`` points (about 0.55
    em a character), so that it stays inside the figure."""
    return "\n".join(textwrap.wrap(text, max(20, int(width * 72 / (0.56 * fontsize)) - 2)))


def _text_inches(text: str | None, fontsize: float) -> float:
    """The height a wrapped ``text`` takes at ``fontsize``, in inches (1.25 line spacing)."""
    return 0.0 if not text else 0.1 + (text.count("\n") + 1) * fontsize * 1.3 / 72


def _note_below(fig: Figure, note: str | None) -> float:
    """Write ``note`` (if any) under the panels, wrapped to the figure's width; the share of
    the figure's height it takes, for :meth:`~matplotlib.figure.Figure.tight_layout` to
    leave free."""
    if not note:
        return 0.0
    text = _wrap(note, fig.get_figwidth(), 7)
    fig.text(0.01, 0.005, text, fontsize=7, va="bottom", color="0.3")
    return min(0.5, _text_inches(text, 7) / fig.get_figheight())


def _judged(entry: Mapping | None) -> bool:
    """Whether a challenge set's entry carries a verdict (large enough for one)."""
    return bool(entry) and entry.get("below") is not None


def _sizes(records: Sequence[Mapping], name: str) -> str:
    """A set's sentence count over the records ("0" where none has it; the counts joined
    by "/" should records of different extractions disagree)."""
    sizes = sorted({r["sets"][name]["sentences"] for r in records if r["sets"].get(name)})
    return "/".join(map(str, sizes)) or "0"


def draw_buckets(record: Mapping, path: str | os.PathLike[str] = "record") -> Figure:
    """Each system's difference to the baseline per bucket, with its paired 95% interval and
    a zero line: one panel per analysis (word F by frequency, BLEU by length, word recall by
    part of speech where the record has it), one colour per system, filled where the
    Holm-adjusted test puts it apart from the baseline (from a ``systems analyse`` record).

    As in :func:`draw_challenge_sets`, a bucket of fewer than :data:`MIN_INTERVAL_SENTENCES`
    sentences is not drawn (its interval would understate its spread, and its scale would
    hide every other bucket's) but named with its size under the panels. A section the
    record lacks (BLEU by length in a ``--words-only`` pair record) gets no panel; the note
    says so."""
    others = [s for s in record.get("systems", []) if s != record.get("baseline")]
    if not others:
        raise InputError(path, "no system besides the baseline to draw")
    panels = []
    if record.get("frequency"):
        source = ("Zipf frequency, wordfreq"
                  if "wordfreq" in record["frequency"]["frequencies"]
                  else "count in the training corpus")
        panels.append(("frequency", f"word F by word frequency ({source})", "Δ word F"))
    if record.get("length"):
        panels.append(("length", "BLEU by reference length (tokens)", "Δ BLEU"))
    if record.get("pos"):
        panels.append(("pos", "word recall by part of speech (UPOS of the reference)",
                       "Δ recall"))
    # POS is optional (no parse given): only a missing frequency or length section is noted
    absent = [f"{name} is not in this record{why}, not drawn."
              for key, name, why in (("frequency", "word F by frequency", ""),
                                     ("length", "BLEU by length", " (a --words-only record: "
                                      "`systems analysis-merge` adds it)"))
              if not record.get(key)]
    if not panels:
        raise InputError(path, "no bucket analysis to draw (frequency, length or pos)")
    plt = pyplot()
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, 3.2 * len(panels)), squeeze=False)
    width = 0.7 / len(others)
    small = []
    for ax, (key, title, label) in zip(axes[:, 0], panels, strict=True):
        buckets = [b for b in record[key]["buckets"] if _bucket_judged(b)]
        small += [f"{'POS' if key == 'pos' else key} {b['bucket']} ({b['sentences']})"
                  for b in record[key]["buckets"]
                  if not _bucket_judged(b) and b["sentences"]]
        for k, system in enumerate(others):
            xs, ys, low, high, decided = [], [], [], [], []
            for x, bucket in enumerate(buckets):
                cell = bucket["systems"][system]
                if cell.get("difference") is None or not cell.get("difference_ci"):
                    continue
                xs.append(x - 0.35 + width * (k + 0.5))
                ys.append(cell["difference"])
                below, above = error_lengths(cell["difference"], *cell["difference_ci"])
                low.append(below)
                high.append(above)
                decided.append(cell.get("p_adjusted") is not None
                               and cell["p_adjusted"] < ALPHA)
            colour = f"C{k % 10}"
            ax.errorbar(xs, ys, yerr=[low, high], fmt="o", ms=3.5, capsize=2,
                        elinewidth=0.8, color=colour, markerfacecolor="white", label=system)
            ax.plot([x for x, d in zip(xs, decided, strict=True) if d],
                    [y for y, d in zip(ys, decided, strict=True) if d], "o", ms=3.5,
                    color=colour, label="_nolegend_", gid=f"significant {system}", zorder=3)
        ax.axhline(0.0, color="0.3", linewidth=0.8)
        ax.set_xticks(range(len(buckets)), [b["bucket"] for b in buckets], fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.set_ylabel(f"{label} vs {record['baseline']}", fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(axis="y", alpha=0.3)
    # under the title, outside the panels: inside, it would cover the points of a bucket
    handles, labels = axes[0, 0].get_legend_handles_labels()
    columns = min(5, len(others))
    height = fig.get_figheight()  # inches: the title and legend rows keep their size
    fig.suptitle(f"{record['testset']}: each system against {record['baseline']} (paired 95% "
                 "intervals; filled: Holm-adjusted p < 0.05)", fontsize=10,
                 y=1 - 0.08 / height, va="top")
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 1 - 0.32 / height),
               fontsize=7, frameon=False, ncol=columns)
    notes = list(absent)
    if small:
        notes.append(f"Buckets of fewer than {MIN_INTERVAL_SENTENCES} sentences, not drawn "
                     "(sentences): " + ", ".join(small))
    note = " ".join(notes) or None
    legend_rows = -(-len(others) // columns)
    fig.tight_layout(rect=(0, _note_below(fig, note), 1,
                           1 - (0.2 + 0.15 * legend_rows) / height))
    return fig


def _bucket_judged(bucket: Mapping) -> bool:
    """Whether a bucket is large enough for a test (a record of an earlier layout, without
    the sentences of its word buckets: every bucket with sentences)."""
    sentences = bucket.get("sentences")
    return sentences is None or sentences >= MIN_INTERVAL_SENTENCES


# --------------------------------------------------------------------------- command line

def _redundancy_command(args: argparse.Namespace) -> int:
    fig = draw_redundancy(read_table(args.table), args.table)
    return write_figure(fig, args.output, f"{len(fig.axes)} test sets")


def _mqm_command(args: argparse.Namespace) -> int:
    fig = draw_mqm(load_json(args.mqm), args.mqm)
    return write_figure(fig, args.output, f"{len(fig.axes)} panels")


def _ldd_record(path: str) -> dict:
    """A ``systems ldd-score`` record, refused (naming the file) if it is another."""
    kind = "'phenomt systems ldd-score'"
    record = load_record(path, "--records", kind, ("testset", "system", "sets"))
    if not isinstance(record["sets"], dict):
        raise InputError(path, "'sets' is not an object")
    for name, entry in record["sets"].items():
        if entry:  # a set with no sentences may have no entry
            require_keys(entry, path, "--records", kind, ("sentences",), f"sets.{name}")
    return record


def _challenge_command(args: argparse.Namespace) -> int:
    from phenomt.systems.tables import load_catalogue, system_info

    records = [_ldd_record(path) for path in args.records]
    catalogue = load_catalogue(args.catalogue)
    kinds = {r["system"]: system_info(catalogue, r["testset"], r["system"], r).get("kind")
             for r in records}
    fig = draw_challenge_sets(records, kinds, args.records[0])
    return write_figure(fig, args.output, f"{len(records)} systems")


def _buckets_command(args: argparse.Namespace) -> int:
    record = load_record(args.record, "--record", "'phenomt systems analyse'",
                         ("testset", "baseline", "systems", "frequency", "length"))
    fig = draw_buckets(record, args.record)
    return write_figure(fig, args.output, f"{len(fig.axes)} panels")


def register_cli(tree) -> None:
    p = tree.add("systems figure-ldd", "Figure: each challenge set against the full test set, "
                 "one panel per set, every system's paired difference with its interval",
                 _challenge_command)
    p.add_argument("--records", nargs="+", required=True,
                   help="`phenomt systems ldd-score` records of one test set")
    p.add_argument("--catalogue", help="systems TSV (default: the package's sysout catalogue)")
    p.add_argument("--output", nargs="+", required=True, help="PNG and/or SVG paths")

    p = tree.add("systems figure-buckets", "Figure: each system's difference to the baseline "
                 "per frequency and length bucket, with paired intervals", _buckets_command)
    p.add_argument("--record", required=True, help="a `phenomt systems analyse` record")
    p.add_argument("--output", nargs="+", required=True, help="PNG and/or SVG paths")

    p = tree.add("systems figure-redundancy", "Figure: CRR + DRR per given system with "
                 "intervals, non-autoregressive systems marked", _redundancy_command)
    p.add_argument("--table", required=True, help="systems_redundancy.csv")
    p.add_argument("--output", nargs="+", required=True, help="PNG and/or SVG paths")

    p = tree.add("systems figure-mqm", "Figure: MQM error rates against each metric, with "
                 "Spearman's rho and n", _mqm_command)
    p.add_argument("--mqm", required=True, help="a `phenomt systems mqm` record")
    p.add_argument("--output", nargs="+", required=True, help="PNG and/or SVG paths")
