"""The locality-bias experiment (Choshen & Abend, CoNLL 2019, Table 1).

The source sentences of one length L (the most common tokenized length of the training corpus,
18 in the paper) are translated under four settings:

* ``regular``   the source as it is;
* ``permuted``  one fixed permutation σ of 0..L-1 applied to the source tokens of every sentence,
  in training and in testing;
* ``reversed``  the source tokens in reverse order;
* ``perposemb`` the source tokens in order, the encoder's positional embeddings permuted by σ
  (the ``transformer_permuted_positions`` fairseq plugin in ``phenomt.fairseq_ext``).

How σ is applied. σ is written in one-line notation, ``σ = (σ(0) σ(1) … σ(L-1))``. The token at
input position i moves to output position σ(i): ``out[σ(i)] = in[i]``, so output position p
holds input token σ⁻¹(p). The plugin gives the token at position i the positional embedding of
position σ(i). Both settings therefore hand the encoder the same (token, positional embedding)
pairs: token ``in[i]`` with the embedding of position σ(i). Example: tokens ``a b c d`` and
σ = (2 0 3 1) give ``b d a c``.

Tokens are the whitespace-separated words of the tokenized text. Targets are never changed.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from phenomt.core import papers
from phenomt.core.cliargs import LANG_CODE, language_code
from phenomt.core.corpus import read_parallel
from phenomt.core.io import InputError, atomic_write, write_json, write_lines
from phenomt.core.lazy import pandas as pd
from phenomt.core.permutation import (
    format_permutation,
    parse_permutation,
    permute_tokens,
    validate_permutation,
)
from phenomt.core.tables import json_path, table_record, write_markdown

PAPER_LENGTH = 18
PAPER_PERMUTATION: tuple[int, ...] = (11, 5, 9, 15, 8, 14, 10, 1, 3, 16, 12, 2, 0, 6, 17, 4,
                                      13, 7)
PAPER_N_TEST = 1000
DEFAULT_N_VALID = 500
DEFAULT_FALLBACK_FRACTION = 0.1
INFO_NAME = "locality.json"
SPLITS = ("train", "valid", "test")
#: The paper's data file (``phenomt/core/papers/choshen_abend_2019.tsv``).
PAPER = "choshen_abend_2019"
CONVENTION = ("out[sigma(i)] = in[i]: the source token at position i moves to position sigma(i); "
              "perposemb gives the token at position i the positional embedding of sigma(i)")


class Setting(str, Enum):
    """The four training settings of the experiment."""

    REGULAR = "regular"
    PERMUTED = "permuted"
    REVERSED = "reversed"
    PERPOSEMB = "perposemb"


POS_EMB_TYPES = ("learned", "sinusoidal", "none")  # "none": architectures without them (LSTM)
ARCHITECTURES = ("transformer", "lstm")


# --- length selection ---------------------------------------------------------------------

def token_count(line: str) -> int:
    """Number of tokens of a tokenized line (whitespace split)."""
    return len(line.split())


def length_histogram(sources: Iterable[str]) -> Counter[int]:
    """How many non-empty source lines have each token count."""
    return Counter(n for n in map(token_count, sources) if n > 0)


def most_common_length(sources: Iterable[str]) -> int:
    """The most frequent non-zero token count; ties go to the shorter length."""
    histogram = length_histogram(sources)
    if not histogram:
        raise ValueError("no non-empty source sentences to choose a length from")
    return min(histogram.items(), key=lambda item: (-item[1], item[0]))[0]


def indices_of_length(sources: Sequence[str], length: int) -> list[int]:
    """0-based indices of the source lines with exactly ``length`` tokens, ascending."""
    return [i for i, line in enumerate(sources) if token_count(line) == length]


# --- held-out split -----------------------------------------------------------------------

@dataclass(frozen=True)
class HeldOutSplit:
    """Positions (into the pool of selected pairs) of each split, each ascending."""

    train: list[int]
    valid: list[int]
    test: list[int]
    notes: list[str] = field(default_factory=list)


def heldout_sizes(pool: int, n_test: int, n_valid: int,
                  fallback_fraction: float = DEFAULT_FALLBACK_FRACTION
                  ) -> tuple[int, int, list[str]]:
    """Sizes of the test and validation sets drawn from a pool of ``pool`` pairs.

    The requested sizes are used while they leave at least half of the pool for training.
    Otherwise each held-out set gets ``fallback_fraction`` of the pool (at least one pair, or
    none when zero was requested), and a note says so.
    """
    if n_test < 1 or n_valid < 0:
        raise ValueError("n_test must be at least 1 and n_valid at least 0")
    if not 0 < fallback_fraction < 0.5:
        raise ValueError("fallback_fraction must be between 0 and 0.5")
    if pool < 3:
        raise ValueError(f"only {pool} sentence pairs of the chosen length: too few to split")
    if n_test + n_valid <= pool // 2:
        return n_test, n_valid, []
    share = max(1, math.floor(pool * fallback_fraction))
    test, valid = share, (share if n_valid > 0 else 0)
    note = (f"only {pool} sentence pairs of the chosen length, too few to hold out "
            f"{n_test} for testing and {n_valid} for validation: held out "
            f"{fallback_fraction:.0%} for each instead ({test} test, {valid} validation)")
    return test, valid, [note]


def split_heldout(pool: int, n_test: int, n_valid: int, seed: int,
                  fallback_fraction: float = DEFAULT_FALLBACK_FRACTION) -> HeldOutSplit:
    """Deterministically split ``range(pool)`` into train, valid and test.

    A seeded shuffle of the pool puts its first items in test, the next in valid and the rest
    in train, so the same seed always gives the same split, whatever the setting.
    """
    test_size, valid_size, notes = heldout_sizes(pool, n_test, n_valid, fallback_fraction)
    order = list(range(pool))
    random.Random(seed).shuffle(order)
    test = sorted(order[:test_size])
    valid = sorted(order[test_size:test_size + valid_size])
    train = sorted(order[test_size + valid_size:])
    return HeldOutSplit(train=train, valid=valid, test=test, notes=notes)


# --- the permutation ----------------------------------------------------------------------


def random_permutation(length: int, seed: int) -> tuple[int, ...]:
    """A seeded random permutation of 0..length-1 that moves at least one token.

    The identity is redrawn (from the same generator): it would turn PERMUTED into REGULAR.
    """
    if length < 2:
        raise ValueError("a non-identity permutation needs at least 2 positions")
    rng = random.Random(seed)
    values = list(range(length))
    while values == sorted(values):
        rng.shuffle(values)
    return tuple(values)


def choose_permutation(length: int, seed: int) -> tuple[tuple[int, ...], str]:
    """The paper's σ for its length, otherwise a seeded random one; returns (σ, its source)."""
    if length == PAPER_LENGTH:
        return PAPER_PERMUTATION, "paper"
    return random_permutation(length, seed), "random"


# --- applying a setting -------------------------------------------------------------------


def transform_source(line: str, setting: Setting | str, perm: Sequence[int]) -> str:
    """The source line as the encoder reads it under ``setting``.

    ``regular`` and ``perposemb`` keep the line unchanged (perposemb permutes inside the
    model); the other two rejoin the reordered tokens with single spaces.
    """
    setting = Setting(setting)
    if setting in (Setting.REGULAR, Setting.PERPOSEMB):
        return line
    tokens = line.split()
    if setting is Setting.REVERSED:
        return " ".join(reversed(tokens))
    return " ".join(permute_tokens(tokens, perm))


# --- preparing the data -------------------------------------------------------------------

def lang_suffix(path: str | Path) -> str:
    """The language code a file name ends with (``train.tok.de`` → ``de``)."""
    suffix = Path(path).suffix.lstrip(".")
    if suffix == "gz":
        suffix = Path(Path(path).stem).suffix.lstrip(".")
    # the code names the prepared files: a suffix that is no code must not become one
    if not LANG_CODE.fullmatch(suffix):
        found = f"its suffix {suffix!r} is no language code" if suffix else "no suffix"
        raise InputError(path, f"cannot tell the language from the file name ({found}); "
                               "give it explicitly (--src-lang, --tgt-lang)")
    return suffix


def prepare(src: str | Path, tgt: str | Path, out_dir: str | Path, setting: Setting | str,
            length: int | None = None, n_test: int = PAPER_N_TEST,
            n_valid: int = DEFAULT_N_VALID, seed: int = 1,
            permutation: Sequence[int] | None = None, permutation_seed: int | None = None,
            src_lang: str | None = None, tgt_lang: str | None = None,
            fallback_fraction: float = DEFAULT_FALLBACK_FRACTION) -> dict:
    """Write one setting's data and its description; returns the description.

    Writes ``{train,valid,test}.{src_lang,tgt_lang}`` (ready for ``fairseq-preprocess
    --trainpref D/train ...``), ``{train,valid,test}.ids`` (1-based line numbers in the input
    corpus) and ``locality.json`` (the length, σ, seeds and counts), each atomically;
    ``locality.json`` is written last. ``length=None`` picks the most common length. The split
    depends on the seed only, so every setting gets the same sentences in each split.
    """
    setting = Setting(setting)
    src_lang = src_lang or lang_suffix(src)
    tgt_lang = tgt_lang or lang_suffix(tgt)
    for code in (src_lang, tgt_lang):
        if not LANG_CODE.fullmatch(code):  # a file name: never a path or a space
            raise ValueError(f"{code!r} is not a language code (two or three letters a-z)")
    if src_lang == tgt_lang:
        raise ValueError(f"source and target language are both {src_lang!r}")
    sources, targets = read_parallel([src, tgt])
    histogram = length_histogram(sources)
    chosen = most_common_length(sources) if length is None else length
    if chosen < 2:
        raise ValueError(f"sentence length must be at least 2, got {chosen}")
    pool = indices_of_length(sources, chosen)
    if len(pool) < 3:
        raise InputError(src, f"only {len(pool)} source sentences have {chosen} tokens")

    perm_seed = seed if permutation_seed is None else permutation_seed
    if permutation is not None:
        perm, perm_source = validate_permutation(permutation, chosen), "given"
    else:
        perm, perm_source = choose_permutation(chosen, perm_seed)

    split = split_heldout(len(pool), n_test, n_valid, seed, fallback_fraction)
    out = Path(out_dir)
    counts = {"corpus": len(sources), "pool": len(pool)}
    for name in SPLITS:
        rows = [pool[k] for k in getattr(split, name)]
        write_lines(out / f"{name}.{src_lang}",
                    (transform_source(sources[i], setting, perm) for i in rows))
        write_lines(out / f"{name}.{tgt_lang}", (targets[i] for i in rows))
        write_lines(out / f"{name}.ids", (str(i + 1) for i in rows))
        counts[name] = len(rows)

    info = {
        "setting": setting.value,
        "source": str(src), "target": str(tgt),
        "src_lang": src_lang, "tgt_lang": tgt_lang,
        "length": chosen,
        "length_chosen": "most common" if length is None else "given",
        "most_common_lengths": [[n, c] for n, c in
                                sorted(histogram.items(), key=lambda x: (-x[1], x[0]))[:5]],
        "permutation": list(perm),
        "permutation_source": perm_source,
        "permutation_seed": perm_seed if perm_source == "random" else None,
        "convention": CONVENTION,
        "split_seed": seed,
        "requested": {"test": n_test, "valid": n_valid, "fallback_fraction": fallback_fraction},
        "counts": counts,
        "notes": split.notes,
        "fairseq_model_args": (["--position-permutation", format_permutation(perm)]
                               if setting is Setting.PERPOSEMB else []),
    }
    with atomic_write(out / INFO_NAME) as handle:
        json.dump(info, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
    return info


# --- Table 1 ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Score:
    """One trained model's BLEU on the held-out test set."""

    setting: str
    pos_emb: str
    arch: str
    seed: int
    bleu: float


def _normalise(frame: pd.DataFrame, source: str, with_seed: bool = True) -> pd.DataFrame:
    """Check the columns and values of a scores table; lower-case the labels."""
    needed = ["setting", "pos_emb", "arch", *(["seed"] if with_seed else []), "bleu"]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise InputError(source, f"missing column(s) {', '.join(missing)}")
    frame = frame[needed].copy()
    for column in ("setting", "pos_emb", "arch"):
        frame[column] = frame[column].astype(str).str.strip().str.lower()
    allowed = {"setting": [s.value for s in Setting], "pos_emb": list(POS_EMB_TYPES),
               "arch": list(ARCHITECTURES)}
    for column, values in allowed.items():
        bad = sorted(set(frame[column]) - set(values))
        if bad:
            raise InputError(source, f"unknown {column} {', '.join(bad)} "
                                     f"(expected one of {', '.join(values)})")
    try:
        frame["bleu"] = frame["bleu"].astype(float)
        if with_seed:
            frame["seed"] = frame["seed"].astype(int)
    except (TypeError, ValueError) as err:
        raise InputError(source, f"non-numeric bleu or seed: {err}") from None
    keys = ["setting", "pos_emb", "arch", *(["seed"] if with_seed else [])]
    dup = frame[frame.duplicated(keys, keep=False)]
    if not dup.empty:
        first = dup.iloc[0]
        raise InputError(source, "more than one score for " +
                         ", ".join(f"{k}={first[k]}" for k in keys))
    return frame.reset_index(drop=True)


def scores_frame(scores: Iterable[Score], source: str = "scores") -> pd.DataFrame:
    """A validated scores table from :class:`Score` records."""
    rows = [asdict(s) for s in scores]
    frame = pd.DataFrame(rows, columns=["setting", "pos_emb", "arch", "seed", "bleu"])
    return _normalise(frame, source)


def _flat(record: object) -> object:
    """A ``phenomt score bleu`` record as a row: its meta fields and ``bleu``; any other
    JSON object as it is."""
    if isinstance(record, dict) and record.get("metric") == "bleu" and "meta" in record:
        return {**record["meta"], "bleu": record["score"]}
    return record


def read_scores(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Scores from ``phenomt score bleu`` JSON files (with ``--meta setting=… pos_emb=… arch=…
    seed=…``) and/or CSV/TSV tables (or JSON lists of objects) with those columns and
    ``bleu``."""
    frames = []
    for path in paths:
        p = Path(path)
        if not p.is_file():
            raise InputError(p, "file not found")
        if p.suffix == ".json":
            try:
                data = json.loads(p.read_text(encoding="utf-8"))
            except json.JSONDecodeError as err:
                raise InputError(p, f"invalid JSON: {err.msg}", err.lineno) from None
            records = data if isinstance(data, list) else [data]
            frame = pd.DataFrame([_flat(record) for record in records])
        else:
            frame = pd.read_csv(p, sep="\t" if p.suffix in (".tsv", ".tab") else ",")
        frames.append(_normalise(frame, str(p)))
    if not frames:
        raise ValueError("no score files given")
    return _normalise(pd.concat(frames, ignore_index=True), ", ".join(map(str, paths)))


def read_paper_scores(path: str | Path) -> pd.DataFrame:
    """Reference BLEU per (setting, pos_emb, arch) from a CSV/TSV with a ``bleu`` column, to
    use instead of the paper's data file."""
    p = Path(path)
    if not p.is_file():
        raise InputError(p, "file not found")
    frame = pd.read_csv(p, sep="\t" if p.suffix in (".tsv", ".tab") else ",")
    return _normalise(frame, str(p), with_seed=False)


def paper_scores() -> pd.DataFrame:
    """The paper's Table 1 from its data file: ``bleu`` and the printed difference from
    REGULAR (``delta``, NaN in REGULAR rows) per (setting, pos_emb, arch), with the number of
    runs behind each (``runs``, Section 3.1)."""
    rows = []
    for item in papers.entries(PAPER):
        if item.table != "Table 1" or item.column != "bleu":
            continue
        arch, pos_emb, setting = item.row.split("/")
        runs = papers.lookup(PAPER, "Section 3.1", item.row, "runs")
        delta = papers.lookup(PAPER, "Table 1", item.row, "delta")
        rows.append({"setting": setting, "pos_emb": pos_emb, "arch": arch, "bleu": item.value,
                     "delta": float("nan") if delta is None else delta,
                     "runs": float("nan") if runs is None else runs})
    frame = pd.DataFrame(rows)
    checked = _normalise(frame, str(papers.data_file(PAPER)), with_seed=False)
    return checked.assign(delta=frame["delta"], runs=frame["runs"])


_GROUP = ["arch", "pos_emb"]


def _order(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in the paper's order: architecture, embedding type, then setting."""
    rank = {
        "arch": {a: i for i, a in enumerate(ARCHITECTURES)},
        "pos_emb": {p: i for i, p in enumerate(POS_EMB_TYPES)},
        "setting": {s.value: i for i, s in enumerate(Setting)},
    }
    return frame.sort_values(["arch", "pos_emb", "setting"],
                             key=lambda col: col.map(rank[col.name])).reset_index(drop=True)


def _difference_from_regular(frame: pd.DataFrame, column: str) -> pd.Series:
    """``column`` minus its value in the REGULAR row of the same arch and pos_emb (NaN when
    that row is missing)."""
    regular = frame[frame["setting"] == Setting.REGULAR.value].set_index(_GROUP)[column]
    base = [regular.get((a, p), float("nan")) for a, p in zip(frame["arch"], frame["pos_emb"],
                                                              strict=True)]
    return frame[column] - pd.Series(base, index=frame.index, dtype=float)


def aggregate_scores(scores: pd.DataFrame, paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 1: per (arch, pos_emb, setting), the BLEU over seeds and its change from REGULAR,
    beside the paper's.

    Columns: ``seeds`` (count), ``mean``, ``std`` (sample standard deviation, NaN for one
    seed), ``min``, ``max``, ``diff`` (mean minus REGULAR's mean, same arch and pos_emb),
    ``paper_bleu`` and ``paper_diff`` (the printed difference where ``paper`` has a ``delta``,
    else computed like ``diff``), and ``paper_runs`` where ``paper`` has ``runs``. ``paper``
    defaults to the paper's data file (:func:`paper_scores`); its rows we did not run are kept
    with zero seeds.
    """
    scores = _normalise(scores, "scores")
    grouped = scores.groupby(["arch", "pos_emb", "setting"])["bleu"]
    table = grouped.agg(seeds="count", mean="mean", std="std", min="min", max="max")
    table = _order(table.reset_index())
    table["diff"] = _difference_from_regular(table, "mean")
    reference = paper_scores() if paper is None else paper
    extra = {c: reference[c].to_numpy() for c in ("delta", "runs") if c in reference.columns}
    reference = _normalise(reference, "paper scores", with_seed=False).assign(**extra)
    reference = _order(reference.rename(columns={"bleu": "paper_bleu", "runs": "paper_runs"}))
    computed = _difference_from_regular(reference, "paper_bleu")
    reference["paper_diff"] = (reference.pop("delta").fillna(computed) if "delta" in extra
                               else computed)
    table = _order(table.merge(reference, on=["arch", "pos_emb", "setting"], how="outer"))
    table["seeds"] = table["seeds"].fillna(0).astype(int)
    return table


def _fmt(value: float, signed: bool = False) -> str:
    if pd.isna(value):
        return "—"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """The aggregated table as strings for reading: ``mean ± std``, ``min–max``, signed
    differences."""
    rows = []
    for row in table.itertuples(index=False):
        shown = {
            "architecture": row.arch,
            "positions": "—" if row.pos_emb == "none" else row.pos_emb,
            "setting": row.setting.upper(),
            "seeds": str(row.seeds),
            "BLEU (mean ± std)": ("—" if pd.isna(row.mean) else
                                  _fmt(row.mean) + ("" if pd.isna(row.std) else
                                                    f" ± {row.std:.2f}")),
            "min–max": ("—" if pd.isna(row.min) else f"{row.min:.2f}–{row.max:.2f}"),
            "Δ REGULAR": _fmt(row.diff, signed=True),
        }
        if "paper_runs" in table.columns:
            shown["paper runs"] = "—" if pd.isna(row.paper_runs) else str(int(row.paper_runs))
        shown["paper BLEU"] = _fmt(row.paper_bleu)
        shown["paper Δ"] = _fmt(row.paper_diff, signed=True)
        rows.append(shown)
    return pd.DataFrame(rows)


def paper_notes(paper_file: str | None = None) -> list[str]:
    """Where the paper columns of Table 1 come from and how far ours compare with them."""
    if paper_file:
        return [f"Paper columns: the reference numbers in {paper_file} (given with --paper), "
                "not the paper's data file; paper Δ is computed from them."]

    def count(column: str) -> str:
        value = papers.lookup(PAPER, "Section 3.1", "locality-data", column)
        return "?" if value is None else f"{value:,.0f}"

    return [
        f"Paper columns: {papers.citation(PAPER, 'Table 1')} (BLEU, Δ as printed), runs per "
        f"row from Section 3.1; our LSTM rows sit beside the paper's Nematus BiLSTM rows; '—' "
        "where the paper or our run has no such row.",
        papers.comparability(PAPER, "Table 1", {
            "scale": "the paper's models are a full-size Transformer and the Nematus BiLSTM, "
                     "each reported at its best test BLEU over epochs; ours are this run's "
                     "models (see the notes on the models)",
            "data": f"the paper uses the {count('sentences')} WMT2015 De-En training sentences "
                    f"of length {count('sentence_length')} and holds out "
                    f"{count('test_sentences')} for testing; ours are described under Data"}),
    ]


def table_notes(info: dict | None, paper_file: str | None = None,
                extra: Sequence[str] = ()) -> list[str]:
    """Notes under Table 1: the data's scale, ``extra`` notes (such as the models' size and
    updates) and where the paper's numbers come from (``paper_file`` when given with --paper,
    else the paper's data file)."""
    notes = ["BLEU on the held-out sentences of the chosen length; mean over seeds, sample "
             "standard deviation, and the difference from REGULAR with the same architecture "
             "and positional embeddings. LSTM rows replace the paper's Nematus rows."]
    if info:
        counts = info["counts"]
        origin = {"paper": "the paper's", "given": "given in the configuration",
                  "random": f"drawn at random with seed {info.get('permutation_seed')}"}
        notes.append(
            f"Data: the source sentences of {info['length']} tokens ({info['length_chosen']} "
            f"length) among {counts['corpus']} training pairs: {counts['train']} train, "
            f"{counts['valid']} validation, {counts['test']} test (split seed "
            f"{info['split_seed']}). σ = ({' '.join(map(str, info['permutation']))}), "
            f"{origin.get(info['permutation_source'], info['permutation_source'])}; "
            f"{info['convention']}.")
        notes.extend(info.get("notes", []))
    notes.extend(extra)
    return notes + paper_notes(paper_file)


# --- command line -------------------------------------------------------------------------

def _length_arg(text: str) -> int | None:
    if text == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected 'auto' or a number of tokens") from None
    if value < 2:
        raise argparse.ArgumentTypeError("the length must be at least 2")
    return value


def _min_two(text: str) -> int:
    value = _length_arg(text)
    if value is None:
        raise argparse.ArgumentTypeError("expected a number of tokens")
    return value


def _permutation_arg(text: str) -> tuple[int, ...]:
    try:
        return parse_permutation(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _cmd_prepare(args: argparse.Namespace) -> int:
    src_lang = args.src_lang or lang_suffix(args.src)
    if src_lang == (args.tgt_lang or lang_suffix(args.tgt)):
        args.locality_parser.error(f"source and target language are both {src_lang!r}: give "
                                   "--src-lang and --tgt-lang")
    info = prepare(args.src, args.tgt, args.out_dir, args.setting, length=args.length,
                   n_test=args.n_test, n_valid=args.n_valid, seed=args.seed,
                   permutation=args.permutation, permutation_seed=args.permutation_seed,
                   src_lang=args.src_lang, tgt_lang=args.tgt_lang,
                   fallback_fraction=args.fallback_fraction)
    c = info["counts"]
    print(f"{args.out_dir}: {info['setting']}, length {info['length']}, "
          f"{c['train']}/{c['valid']}/{c['test']} train/valid/test pairs of {c['pool']}, "
          f"σ={format_permutation(info['permutation'])}")
    for note in info["notes"]:
        print(f"note: {note}")
    return 0


def _cmd_table(args: argparse.Namespace) -> int:
    from phenomt.core.io import load_json

    scores = read_scores(args.scores)
    paper = read_paper_scores(args.paper) if args.paper else None  # None: the data file
    table = aggregate_scores(scores, paper)
    info = load_json(args.info) if args.info else None
    title = "Locality bias (Choshen & Abend 2019, Table 1)"
    notes = table_notes(info, args.paper, args.note)
    with atomic_write(args.csv) as out:
        table.to_csv(out, index=False, lineterminator="\n")
    write_json(json_path(args.csv), table_record(table, title, notes))
    write_markdown(display_table(table), args.md, title, notes)
    print(f"{args.md}: {len(table)} rows")
    return 0


def _cmd_permutation(args: argparse.Namespace) -> int:
    perm, source = choose_permutation(args.length, args.seed)
    print(format_permutation(perm))
    print(f"σ from {source}" + (f" (seed {args.seed})" if source == "random" else ""),
          file=sys.stderr)
    return 0


def register_cli(tree) -> None:
    """Add ``locality prepare``, ``locality table`` and ``locality permutation``."""
    p = tree.add("locality prepare", "Write one setting's train/valid/test data for the "
                                     "locality-bias experiment", _cmd_prepare)
    p.add_argument("--src", required=True, help="tokenized training source")
    p.add_argument("--tgt", required=True, help="tokenized training target")
    p.add_argument("--src-lang", type=language_code,
                   help="source language code (default: the --src suffix)")
    p.add_argument("--tgt-lang", type=language_code,
                   help="target language code (default: the --tgt suffix)")
    p.add_argument("--setting", required=True, choices=[s.value for s in Setting])
    p.add_argument("--length", type=_length_arg, default=None,
                   help="source length in tokens, or 'auto' for the most common (default)")
    p.add_argument("--n-test", type=int, default=PAPER_N_TEST,
                   help=f"held-out test pairs (default {PAPER_N_TEST}, as in the paper)")
    p.add_argument("--n-valid", type=int, default=DEFAULT_N_VALID,
                   help=f"validation pairs (default {DEFAULT_N_VALID})")
    p.add_argument("--fallback-fraction", type=float, default=DEFAULT_FALLBACK_FRACTION,
                   help="share held out for test and for validation each when the requested "
                        "sizes would leave less than half of the pairs for training")
    p.add_argument("--seed", type=int, default=1, help="seed of the held-out split")
    p.add_argument("--permutation", type=_permutation_arg, default=None,
                   help="σ as '11,5,9,...' (default: the paper's for length 18, else random)")
    p.add_argument("--permutation-seed", type=int, default=None,
                   help="seed of a random σ (default: --seed)")
    p.add_argument("--out-dir", required=True)
    p.set_defaults(locality_parser=p)

    p = tree.add("table locality", "Table 1: BLEU per setting over seeds, with the difference "
                                   "from REGULAR", _cmd_table)
    p.add_argument("--scores", nargs="+", required=True,
                   help="score JSON files (phenomt score bleu --meta setting=... pos_emb=... "
                        "arch=... seed=...) or CSV/TSV tables")
    p.add_argument("--paper", help="reference numbers to show instead of the paper's data file: "
                                   "CSV/TSV with setting,pos_emb,arch,bleu")
    p.add_argument("--info", help="locality.json written by 'locality prepare'")
    p.add_argument("--note", action="append", default=[],
                   help="a note under the table, e.g. the models' size and updates (repeatable)")
    p.add_argument("--md", required=True, help="Markdown table, the paper's numbers beside ours")
    p.add_argument("--csv", required=True,
                   help="numeric table (seeds, mean, std, min, max, diff ...) as CSV")

    p = tree.add("locality permutation", "Print σ for a sentence length as fairseq's "
                                         "--position-permutation takes it", _cmd_permutation)
    p.add_argument("--length", type=_min_two, required=True, help="sentence length in tokens")
    p.add_argument("--seed", type=int, default=1, help="seed of a random σ (not length 18)")
