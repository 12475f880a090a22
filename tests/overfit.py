"""Overfitting runs: can a model kind memorise a small corpus?

A model that cannot reproduce the 100 sentence pairs (``N_PAIRS``) it has seen many times has
a bug in its loss, its masking, its schedule or its decoding. Each run goes through the
pipeline's own code: the options come from the plan of the default config (``phenomt.plan``,
as the rules get them); the data is written by the functions the rules call (locality
preparation, document context, concatenation); training and decoding run through
``phenomt.core.nmt`` (fairseq-preprocess, fairseq-train with resumption, fairseq-generate
with the pipeline's post-processing); BLEU is sacreBLEU's. Only the schedule is overridden
(more updates, no dropout, small batches, no validation), so that memorising takes a minute
on one core instead of the recipe's hours.

Data: Multi30k training pairs from the offline mirror, Moses-tokenized, word level (subwords
are not what is tested here).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phenomt.core import nmt
from phenomt.core.doccontext import concat_lines, context_lines
from phenomt.core.io import write_lines
from phenomt.core.text import detokenize, tokenize
from phenomt.ldd.locality import prepare
from phenomt.plan import Plan, load_config

ROOT = Path(__file__).resolve().parents[1]
N_PAIRS = 100
#: Short sentences (the corpus averages 12 tokens) keep each run within its time budget.
MAX_LENGTH = 12
#: Sentences per pseudo-document for the document-level models (Multi30k has no documents).
DOC_SIZE = 5
#: The source length of the locality runs (all sentences of one length, as in the paper).
LOCALITY_LENGTH = 10
AR_MODEL = "transformer.de-en"
SENT_MODEL = "transformer.zh-en"  # the default config's Sent-Transformer (step 1)

#: What every overfitting run changes in the pipeline's options: the schedule only.
SCHEDULE = {"dropout": 0.0, "max_tokens": 1024, "disable_validation": True,
            "save_interval": 100_000, "save_interval_updates": 0, "log_interval": 50,
            "no_epoch_checkpoints": True}


@dataclass(frozen=True)
class Device:
    """Where a run trains and decodes: its name in test ids and reports, and the fairseq
    options that pin it (``cpu``; ``fp16`` as fairseq's GPU recipes train)."""

    name: str
    options: dict[str, Any]


#: The CPU, and one CUDA GPU in fp32 and in fp16. ``make gpu-check`` runs the CUDA ones.
DEVICES = {"cpu": Device("cpu", {"cpu": True}),
           "cuda-fp32": Device("cuda-fp32", {"cpu": False}),
           "cuda-fp16": Device("cuda-fp16", {"cpu": False, "fp16": True})}


def cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def default_plan() -> Plan:
    return Plan(load_config(ROOT / "config" / "config.yaml"))


def multi30k_pairs(mirror: Path, n: int = N_PAIRS, length: int | None = None,
                   max_length: int = MAX_LENGTH) -> list[tuple[str, str]]:
    """The first ``n`` Multi30k training pairs of at most ``max_length`` tokens a side,
    Moses-tokenized; with ``length``, only pairs whose German side has that many tokens."""
    pairs = []
    with gzip.open(mirror / "multi30k" / "train.de.gz", "rt", encoding="utf-8") as src, \
            gzip.open(mirror / "multi30k" / "train.en.gz", "rt", encoding="utf-8") as tgt:
        for de, en in zip(src, tgt, strict=True):
            de_tok, en_tok = tokenize(de.strip(), "de"), tokenize(en.strip(), "en")
            de_len, en_len = len(de_tok.split()), len(en_tok.split())
            if (length is not None and de_len != length) or max(de_len, en_len) > max_length:
                continue
            pairs.append((de_tok, en_tok))
            if len(pairs) == n:
                return pairs
    raise AssertionError(f"fewer than {n} Multi30k pairs of length {length}")


@dataclass
class Run:
    """One overfitting run's folder, data and results."""

    root: Path
    train_src: list[str]
    train_tgt: list[str]
    references: list[str] = field(default_factory=list)
    seconds: float = 0.0
    log: str = ""

    def prefix(self) -> str:
        return str(self.root / "train")


def write_pairs(root: Path, sources: list[str], targets: list[str],
                context: list[str] | None = None) -> Run:
    """``train.src``/``train.tgt`` (and ``train.ctx``) in a new folder."""
    root.mkdir(parents=True, exist_ok=True)
    write_lines(root / "train.src", sources)
    write_lines(root / "train.tgt", targets)
    if context is not None:
        write_lines(root / "train.ctx", context)
    return Run(root, sources, targets)


def binarize(run: Run, joined: bool = True, dict_dir: str | None = None,
             context: bool = False) -> str:
    """fairseq-preprocess as the pipeline's binarize rule calls it (validation = training)."""
    destdir = str(run.root / "bin")
    ctx = {"train": run.prefix(), "valid": run.prefix()} if context else None
    nmt.preprocess(destdir, str(run.root / "preprocess.log"), context=ctx,
                   trainpref=run.prefix(), validpref=run.prefix(), dict_dir=dict_dir,
                   joined_dictionary=joined and dict_dir is None)
    return destdir


def train(run: Run, data_bin: str, options: dict[str, Any], device: Device,
          extra_args: list[str] | None = None, seed: int = 1) -> str:
    """Train (or resume) through :func:`phenomt.core.nmt.train` on ``device``; returns the
    published checkpoint."""
    output = str(run.root / "model.pt")
    log = run.root / "model.train.log"
    start = time.perf_counter()
    nmt.train(data_bin, str(run.root / "model-checkpoints"), output,
              {**options, **device.options}, seed, str(log), extra_args or [])
    run.seconds += time.perf_counter() - start
    run.log = log.read_text(encoding="utf-8")
    return output


def train_in_two(run: Run, data_bin: str, options: dict[str, Any], device: Device,
                 halfway: int, save_every: int = 0, keep: int = -1) -> tuple[str, str]:
    """Train up to update ``halfway``, keep that model, then resume to the end (the
    pipeline's resumption path); returns the half-way and the final model.

    With ``save_every``, fairseq also saves a checkpoint every so many updates before
    ``halfway`` (none at an update that ends an epoch), of which the last ``keep`` (-1: all)
    are kept as ``model-<update>.pt`` (see :func:`kept_models`). Saving changes nothing in
    the training."""
    saving = {"save_interval_updates": save_every, "keep_interval_updates": keep} \
        if save_every else {}
    first = train(run, data_bin, {**options, "max_update": halfway, **saving}, device)
    if save_every:
        # copied out: the resumed training deletes interval checkpoints beyond its own limit
        for path in (run.root / "model-checkpoints").glob("checkpoint_*_*.pt"):
            shutil.copyfile(path, run.root / f"model-{path.stem.rsplit('_', 1)[1]}.pt")
    kept = str(run.root / f"model-{halfway}.pt")
    shutil.copyfile(first, kept)
    return kept, train(run, data_bin, options, device)


def kept_models(run: Run) -> dict[int, str]:
    """The models :func:`train_in_two` kept before the end, by update."""
    models = {}
    for path in run.root.glob("model-*.pt"):
        update = path.stem.removeprefix("model-")
        if update.isdigit():
            models[int(update)] = str(path)
    return models


def decode(run: Run, data_bin: str, model: str, options: dict[str, Any], device: Device,
           context: bool = False, concat_separator: str | None = None) -> list[str]:
    """Translate the training source on ``device`` as the pipeline decodes a test set (text
    layout with the model's dictionaries, fairseq-generate, subwords merged, detokenized)."""
    name = Path(model).stem  # one folder per decoded model
    test_dir = str(run.root / f"test-{name}")
    nmt.write_text_layout(test_dir, run.prefix(), data_bin,
                          context_testpref=run.prefix() if context else None)
    output = run.root / f"hyp-{name}.txt"
    start = time.perf_counter()
    nmt.generate(test_dir, model, str(run.root / "train.src"), str(output), "en", "none",
                 {**options, **device.options}, 1, str(run.root / f"generate-{name}.log"),
                 concat_separator=concat_separator)
    run.seconds += time.perf_counter() - start
    return output.read_text(encoding="utf-8").splitlines()


def bleu(hypotheses: list[str], tokenized_references: list[str]) -> float:
    import sacrebleu

    references = [detokenize(r, "en") for r in tokenized_references]
    return sacrebleu.corpus_bleu(hypotheses, [references]).score


def report(name: str, run: Run, score: float, device: Device) -> None:
    """A line for pytest's output (-s) and a JSON file beside the run, for the benchmarks;
    also a line of ``$PHENOMT_OVERFIT_RESULTS`` where that names a file (``make gpu-check``
    collects every run's score there, also from parallel pytest workers)."""
    line = f"overfit {name} ({device.name}): BLEU {score:.1f} on its {len(run.train_src)} " \
           f"training pairs, {run.seconds:.0f} s"
    print(line)
    record = json.dumps({"kind": name, "device": device.name, "bleu": score,
                         "seconds": run.seconds}) + "\n"
    (run.root / "overfit.json").write_text(record)
    if results := os.environ.get("PHENOMT_OVERFIT_RESULTS"):
        with open(results, "a", encoding="utf-8") as handle:  # one short line: one write
            handle.write(record)


# --- the data of each family -----------------------------------------------------------------

def sentence_run(root: Path, pairs: list[tuple[str, str]]) -> Run:
    return write_pairs(root, [s for s, _ in pairs], [t for _, t in pairs])


def locality_run(root: Path, pairs: list[tuple[str, str]], setting: str) -> tuple[Run, dict]:
    """The locality experiment's data preparation on pairs of one source length: all but two
    pairs (held out, as ``prepare`` requires) are the training set."""
    pool = root / "pool"
    pool.mkdir(parents=True, exist_ok=True)
    write_lines(pool / "corpus.src", [s for s, _ in pairs])
    write_lines(pool / "corpus.tgt", [t for _, t in pairs])
    info = prepare(pool / "corpus.src", pool / "corpus.tgt", root, setting,
                   length=LOCALITY_LENGTH, n_test=1, n_valid=1, seed=1,
                   src_lang="src", tgt_lang="tgt")
    sources = (root / "train.src").read_text(encoding="utf-8").splitlines()
    targets = (root / "train.tgt").read_text(encoding="utf-8").splitlines()
    return Run(root, sources, targets), info


def shuffled(sentence: str, rng: random.Random) -> str:
    """The sentence's words in a random order other than their own (a sentence whose words
    are all the same word stays as it is)."""
    words = sentence.split()
    if len(set(words)) < 2:
        return sentence
    while True:
        order = rng.sample(words, len(words))
        if order != words:
            return " ".join(order)


def shuffled_target_run(root: Path, pairs: list[tuple[str, str]], seed: int = 1) -> Run:
    """The pairs with each target's words shuffled; the references stay in their order.

    Training on these tests an order-agnostic loss: OaXE assigns the target words to the
    positions that predict them best, so their order in the training data makes no
    difference, while a loss in the reference's order would teach the shuffled order.
    """
    rng = random.Random(seed)
    run = write_pairs(root, [s for s, _ in pairs], [shuffled(t, rng) for _, t in pairs])
    run.references = [t for _, t in pairs]
    return run


def document_ids(n: int) -> list[str]:
    return [f"doc{i // DOC_SIZE}" for i in range(n)]


def doc_context_run(root: Path, pairs: list[tuple[str, str]], size: int) -> Run:
    sources = [s for s, _ in pairs]
    context = context_lines(sources, document_ids(len(sources)), size)
    return write_pairs(root, sources, [t for _, t in pairs], context)


def concat_run(root: Path, pairs: list[tuple[str, str]], size: int) -> Run:
    ids = document_ids(len(pairs))
    run = write_pairs(root, concat_lines([s for s, _ in pairs], ids, size),
                      concat_lines([t for _, t in pairs], ids, size))
    run.references = [t for _, t in pairs]  # the current sentences
    return run

