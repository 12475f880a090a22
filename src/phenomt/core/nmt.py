"""Running fairseq: training with resumption, and generation turned into plain text.

fairseq is called as a subprocess (its own console scripts), so a crash or an out-of-memory
kill in fairseq never corrupts the caller, and the exact command is logged. Without torch and
fairseq (a light install) every command here but ``binarize --text`` stops with one line
saying so (:mod:`phenomt.core.requires`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from phenomt.core.bpe import remove_bpe
from phenomt.core.cliargs import json_object, positive_int
from phenomt.core.curves import parse_validations
from phenomt.core.doccontext import current_sentence
from phenomt.core.io import (
    InputError,
    atomic_directory,
    atomic_write,
    count_lines,
    load_json,
    write_lines,
)
from phenomt.core.requires import MissingTraining, import_torch, missing, require_training
from phenomt.core.text import postprocess

log = logging.getLogger(__name__)

_HYP = re.compile(r"^H-(\d+)\t[^\t]*\t?(.*)$")


#: The fairseq plugin package, for ``--user-dir`` (found without importing it: importing
#: would register the plugins with fairseq in this process).
USER_DIR = str(Path(__file__).resolve().parents[1] / "fairseq_ext")

#: fairseq's own values of options that a config may leave out, for describing a run.
FAIRSEQ_DEFAULTS: dict[str, Any] = {"beam": 5, "max_len_a": 0, "max_len_b": 200,
                                    "update_freq": 1, "max_tokens": 0}


def fairseq_value(options: dict[str, Any], key: str) -> Any:
    """An option's value, or fairseq's default when the options leave it out."""
    return options[key] if key in options else FAIRSEQ_DEFAULTS[key]


def fairseq_options(options: dict[str, Any]) -> list[str]:
    """``{"max_update": 50, "share_all_embeddings": True}`` → ``--max-update 50 --share-all-...``.

    ``False``/``None`` values are omitted; lists become repeated values of one option.
    """
    args: list[str] = []
    for key in sorted(options):
        value = options[key]
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, list | tuple):
            args.extend([flag, *map(str, value)])
        else:
            args.extend([flag, str(value)])
    return args


def fairseq_env() -> dict[str, str]:
    """Environment for fairseq/torch processes.

    One OpenMP thread per process: two threads made CPU training ~20x slower on the
    reference machine. Weights-only loading (torch >= 2.6 default) rejects fairseq
    checkpoints, which pickle argparse namespaces.
    """
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "1"
    env["MKL_NUM_THREADS"] = "1"
    env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    return env


#: Device files without which no GPU is visible to torch: NVIDIA, AMD ROCm, WSL2.
_GPU_DEVICES = ("nvidia[0-9]*", "kfd", "dxg")


def gpu_available(dev: Path = Path("/dev")) -> bool:
    """Whether torch sees a GPU. Without a GPU device file the answer is no, and torch is not
    imported to ask: that import costs seconds in every training or decoding job, which on
    a CPU-only machine is a large share of a small run."""
    if not any(any(dev.glob(pattern)) for pattern in _GPU_DEVICES) or "torch" in missing():
        return False
    import torch

    return bool(torch.cuda.is_available())


#: fairseq's half-precision switches: CUDA only (fairseq refuses them on the CPU).
HALF_PRECISION = ("fp16", "bf16", "memory_efficient_fp16", "memory_efficient_bf16")


def device_options(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the device made explicit: ``cpu`` as given (a test or a benchmark can
    pin one), else the CPU exactly when no GPU is visible. Half precision is dropped on the
    CPU with a log line, so a GPU config (``fp16: true``) still runs on a CPU-only machine."""
    opts = dict(options)
    if "cpu" not in opts:
        opts["cpu"] = not gpu_available()
    if opts["cpu"]:
        dropped = [key for key in HALF_PRECISION if opts.pop(key, False)]
        if dropped:
            log.info("no GPU: training and decoding in fp32 (%s ignored)", ", ".join(dropped))
    return opts


def _console_script(name: str) -> str:
    """Path of a console script installed beside the running interpreter, else by PATH."""
    local = Path(sys.executable).with_name(name)
    return str(local) if local.exists() else name


def run_logged(cmd: Sequence[str], log_path: str | Path | None) -> None:
    """Run a command with the fairseq environment, appending its output to ``log_path``."""
    log.info("running: %s", " ".join(cmd))
    with contextlib.ExitStack() as stack:
        handle = stack.enter_context(open(log_path, "a", encoding="utf-8")) if log_path else None
        if handle:
            handle.write("$ " + " ".join(cmd) + "\n")
            handle.flush()
        result = subprocess.run(cmd, env=fairseq_env(), stdout=handle,
                                stderr=subprocess.STDOUT if handle else None, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"command failed with exit code {result.returncode}: "
                           f"{' '.join(cmd)}" + (f" (see {log_path})" if log_path else ""))


# fairseq-fixed drops the last batch when its size is not a multiple of
# --required-batch-size-multiple (default 8). Batches are sorted by length, so that silently
# loses the longest sentences of every epoch and of every test set: use 1 unless configured.


def train_command(data_bin: str, save_dir: str, options: dict, seed: int) -> list[str]:
    """fairseq-train's command line; ``options`` name the device (:func:`device_options`)."""
    opts = {"required_batch_size_multiple": 1, **options}
    opts.update({"save_dir": save_dir, "seed": seed})
    # fairseq resumes from <save_dir>/checkpoint_last.pt by default; keep that explicit.
    opts.setdefault("restore_file", "checkpoint_last.pt")
    return [_console_script("fairseq-train"), data_bin, *fairseq_options(opts)]


def checkpoint_updates(path: str | Path) -> int | None:
    """The number of updates a fairseq checkpoint records, or None when it cannot be read
    (a copy cut short lacks the zip directory at its end)."""
    torch = import_torch("reading a fairseq checkpoint")

    try:
        # mmap: the weights stay on disk, only the bookkeeping is read
        state = torch.load(path, map_location="cpu", weights_only=False, mmap=True)
        return int(state["optimizer_history"][-1]["num_updates"])
    except Exception:  # a truncated zip, a pickle or a layout error alike
        return None


def _log_line(log_path: str | Path | None, line: str) -> None:
    """Append a line to a job's log (or to this module's logger without one)."""
    if log_path is None:
        log.info(line)
        return
    with open(log_path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")


def record_launch(path: Path, seconds: float, updates_from: int, updates_to: int | None
                  ) -> list[dict]:
    """Append one launch of a training (its wall time and the updates it made) to ``path``
    and return every launch so far: a resumed training's time is the sum of its launches."""
    launch = {"seconds": round(seconds, 1), "updates_from": updates_from,
              "updates_to": updates_to}
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(launch) + "\n")
    launches = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            launches.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut by a kill: that launch's time is lost
            log.warning("%s:%d: unreadable launch record skipped", path, number)
    return launches


# Options a resumed training may change: how long it runs and what it logs and keeps.
# Any other change (architecture, learning rate, data, seed...) makes the checkpoints stale.
RESUMABLE_OPTIONS = frozenset({
    "max_update", "max_epoch", "patience", "log_interval", "log_format", "log_file",
    "save_interval_updates", "keep_interval_updates", "keep_last_epochs", "num_workers"})
TRAINING_RECORD = "training.json"
"""What a save folder's checkpoints were trained with (see :func:`discard_stale`)."""


def training_signature(data_bin: str, options: dict, seed: int,
                       extra_args: Sequence[str] = ()) -> dict[str, Any]:
    """The settings a checkpoint depends on: data, seed and every option a resumed
    training may not change."""
    kept = {k: options[k] for k in sorted(options) if k not in RESUMABLE_OPTIONS}
    return {"data_bin": str(data_bin), "seed": seed, "options": kept,
            "extra_args": list(extra_args)}


def discard_stale(save_dir: str | Path, signature: dict[str, Any],
                  log_path: str | Path | None = None) -> bool:
    """Delete the checkpoints of ``save_dir`` if they were trained with other settings.

    Resuming them would silently continue another model (say, one of another learning rate
    or dropout) under the new settings, or fail on another architecture. Checkpoints
    without a record (written before records were kept) are trusted. Returns whether
    anything was deleted; the new signature is recorded either way.
    """
    folder = Path(save_dir)
    record = folder / TRAINING_RECORD
    stale = False
    if record.exists():
        try:
            stale = json.loads(record.read_text(encoding="utf-8")) != signature
        except json.JSONDecodeError:
            stale = True
    checkpoints = sorted(folder.glob("checkpoint*.pt"))
    if stale and checkpoints:
        _log_line(log_path, f"{folder}: the checkpoints were trained with other settings "
                            f"than {record.name} now asks for; training from the start")
        for path in [*checkpoints, folder / "launches.jsonl", folder / "fairseq.log"]:
            path.unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_write(record) as out:
        json.dump(signature, out, indent=2, sort_keys=True)
        out.write("\n")
    return stale and bool(checkpoints)


def train(data_bin: str, save_dir: str, output: str, options: dict, seed: int,
          log_path: str | None = None, extra_args: Sequence[str] = ()) -> dict:
    """Train (or resume) a fairseq model and publish its best checkpoint as ``output``.

    ``extra_args`` are raw fairseq arguments known only at run time (e.g. a permutation
    chosen from the data).
    """
    require_training("nmt train")
    # fairseq appends its metrics to this file on every launch, so the validation history of
    # a resumed training survives (the rule's own log is new for each launch)
    discard_stale(save_dir, training_signature(data_bin, options, seed, extra_args), log_path)
    history = Path(save_dir) / "fairseq.log"
    history.parent.mkdir(parents=True, exist_ok=True)  # fairseq opens it before making the folder
    options = device_options({**options, "log_file": str(history)})
    cmd = train_command(data_bin, save_dir, options, seed) + list(extra_args)
    last, best = Path(save_dir) / "checkpoint_last.pt", Path(save_dir) / "checkpoint_best.pt"
    updates = checkpoint_updates(last) if last.exists() else None
    if (last.exists() and updates is None) or (best.exists()
                                               and checkpoint_updates(best) is None):
        # fairseq copies one of these two files from the other in place, so a kill can cut
        # the copy short: train from the start rather than fail on every retry (or publish
        # a cut best model).
        log.warning("a checkpoint in %s is unreadable; training from the start", save_dir)
        last.unlink(missing_ok=True)
        best.unlink(missing_ok=True)
    resumed = last.exists()
    started = time.monotonic()
    if updates is not None and options.get("max_update") and updates >= options["max_update"]:
        # Resumed at max_update, fairseq would make one more update (it checks the limit
        # after each update), changing the model of a run that was killed after it ended.
        _log_line(log_path, f"{last} is at {updates} updates (max_update "
                            f"{options['max_update']}): training is complete")
    else:
        run_logged(cmd, log_path)
    if not best.exists():
        best = last
    if not best.exists():
        raise RuntimeError(f"fairseq-train wrote no checkpoint in {save_dir}")
    final = checkpoint_updates(last) if last.exists() else None
    launches = record_launch(Path(save_dir) / "launches.jsonl", time.monotonic() - started,
                             updates or 0, final)
    info = {"command": cmd, "seed": seed, "gpu": not options["cpu"], "resumed": resumed,
            "checkpoint": best.name, "updates": final, "launches": launches,
            "validation": parse_validations(history.read_text(encoding="utf-8",
                                                              errors="replace"))
            if history.exists() else []}
    # the description first: a published model always has one
    with atomic_write(Path(output).with_suffix(".json")) as out:
        json.dump(info, out, indent=2)
        out.write("\n")
    with atomic_write(output, "wb") as out, open(best, "rb") as src:
        shutil.copyfileobj(src, out)
    return info


def preprocess_command(destdir: str, trainpref: str | None = None,
                       validpref: str | None = None, testpref: str | None = None,
                       dict_dir: str | None = None, joined_dictionary: bool = False,
                       workers: int = 1) -> list[str]:
    """The fairseq-preprocess command for ``src``/``tgt`` files with the given prefixes.

    ``dict_dir`` reuses the dictionaries of an earlier binarization (``dict.src.txt`` and
    ``dict.tgt.txt``), so that test sets and distilled data share the model's vocabulary.
    """
    if not (trainpref or validpref or testpref):
        raise ValueError("nothing to binarize: give a train, valid or test prefix")
    if dict_dir and joined_dictionary:
        raise ValueError("a joined dictionary is built, not reused: drop --dict-dir")
    cmd = [_console_script("fairseq-preprocess"), "--source-lang", "src", "--target-lang", "tgt"]
    if joined_dictionary:
        cmd.append("--joined-dictionary")
    if dict_dir:
        cmd += ["--srcdict", f"{dict_dir}/dict.src.txt", "--tgtdict", f"{dict_dir}/dict.tgt.txt"]
    for flag, prefix in (("--trainpref", trainpref), ("--validpref", validpref),
                         ("--testpref", testpref)):
        if prefix:
            cmd += [flag, prefix]
    return cmd + ["--destdir", destdir, "--workers", str(workers)]


def context_command(destdir: str, prefixes: dict[str, str], suffix: str = "ctx",
                    workers: int = 1) -> list[str]:
    """fairseq-preprocess of the Doc-Transformer's context side (``<prefix>.<suffix>`` per
    split) with the source dictionary already in ``destdir``, as
    :mod:`phenomt.fairseq_ext.doc_transformer` reads it."""
    cmd = [_console_script("fairseq-preprocess"), "--only-source", "--source-lang", suffix,
           "--srcdict", f"{destdir}/dict.src.txt"]
    for split, prefix in prefixes.items():
        cmd += [f"--{split}pref", prefix]
    return cmd + ["--destdir", destdir, "--workers", str(workers)]


def preprocess(destdir: str, log_path: str | None = None,
               context: dict[str, str] | None = None, **kwargs: Any) -> None:
    """Binarize into a temporary folder beside ``destdir`` and rename it when complete, so
    that an interrupted run never leaves a folder that looks finished. ``context`` (split →
    prefix of a ``.ctx`` file) also binarizes a context side with the source dictionary."""
    require_training("nmt binarize")
    with atomic_directory(destdir) as partial:
        run_logged(preprocess_command(str(partial), **kwargs), log_path)
        if context:
            run_logged(context_command(str(partial), context,
                                       workers=kwargs.get("workers", 1)), log_path)


# fairseq's names for a test split read as text (--dataset-impl raw): the language pair's two
# sides and the Doc-Transformer's context side.
TEXT_TEST_FILES = {"src": "test.src-tgt.src", "tgt": "test.src-tgt.tgt", "ctx": "test.ctx-None.ctx"}


def is_text_layout(data_dir: str | Path) -> bool:
    """Whether ``data_dir`` holds its test split as text (:func:`write_text_layout`)."""
    return (Path(data_dir) / TEXT_TEST_FILES["src"]).is_file()


def write_text_layout(destdir: str, testpref: str, dict_dir: str,
                      context_testpref: str | None = None) -> int:
    """A test split for fairseq's raw-text dataset instead of a binarization: the model's
    dictionaries and the subword text under fairseq's file names (the Doc-Transformer's
    context too, with the source dictionary). fairseq encodes each line with the dictionary
    as fairseq-preprocess would (the same token ids), but no fairseq process is started here:
    that import costs seconds per test set. Meant for test sets, which are small; large data
    (distillation of a training corpus) is binarized. Returns the number of sentences."""
    files = {"src": f"{testpref}.src", "tgt": f"{testpref}.tgt"}
    if context_testpref:
        files["ctx"] = f"{context_testpref}.ctx"
    counts = {side: count_lines(path) for side, path in files.items()}
    if len(set(counts.values())) > 1:
        raise InputError(files["tgt"], "line counts differ: " + ", ".join(
            f"{files[side]} has {n}" for side, n in counts.items()))
    dicts = {"dict.src.txt": "dict.src.txt", "dict.tgt.txt": "dict.tgt.txt"}
    if context_testpref:
        dicts["dict.ctx.txt"] = "dict.src.txt"
    for name in set(dicts.values()):
        if not (Path(dict_dir) / name).is_file():
            raise InputError(Path(dict_dir) / name, "dictionary not found")
    with atomic_directory(destdir) as partial:
        for target, source in dicts.items():
            shutil.copyfile(Path(dict_dir) / source, partial / target)
        for side, path in files.items():
            shutil.copyfile(path, partial / TEXT_TEST_FILES[side])
    return counts["src"]


def parse_hypotheses(lines: Iterable[str], expected: int) -> list[str]:
    """Hypotheses from fairseq-generate output, in input order; all ids must be present."""
    found: dict[int, str] = {}
    for line in lines:
        match = _HYP.match(line.rstrip("\n"))
        if match:
            found.setdefault(int(match.group(1)), match.group(2))
    missing = [i for i in range(expected) if i not in found]
    if missing:
        raise RuntimeError(f"fairseq-generate produced {len(found)} of {expected} hypotheses; "
                           f"first missing id {missing[0]}")
    return [found[i] for i in range(expected)]


def generate(data_bin: str, model: str, source_bpe: str, output: str, tgt_lang: str,
             casing: str, options: dict, seed: int, log_path: str | None = None,
             raw_output: str | None = None, bpe_output: str | None = None,
             concat_separator: str | None = None) -> int:
    """Translate a binarized test set; write BPE-merged, detokenized hypotheses to ``output``.

    ``bpe_output`` also keeps the hypotheses as the model produced them (subword tokens), for
    distillation and for subword-level metrics. ``concat_separator``: the model translates
    concatenated sentences (the concatenation baseline); ``output`` keeps only the current
    sentence's translation, the part after the last separator.
    """
    require_training("nmt generate")
    if not Path(model).is_file():
        raise InputError(model, "model checkpoint not found")
    expected = count_lines(source_bpe)
    opts = {"beam": 5, "batch_size": 64, "required_batch_size_multiple": 1, **options}
    opts = device_options({**opts, "path": model, "gen_subset": "test", "seed": seed})
    if is_text_layout(data_bin):
        opts["dataset_impl"] = "raw"
    raw = Path(raw_output or f"{output}.generate")
    cmd = [_console_script("fairseq-generate"), data_bin, *fairseq_options(opts)]
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(atomic_write(raw))
        err = stack.enter_context(open(log_path, "a", encoding="utf-8")) if log_path else None
        result = subprocess.run(cmd, env=fairseq_env(), stdout=out, stderr=err, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"fairseq-generate failed ({result.returncode}): {' '.join(cmd)}"
                               + (f" (see {log_path})" if log_path else ""))
    with open(raw, encoding="utf-8") as handle:
        hyps = parse_hypotheses(handle, expected)
    if bpe_output:
        write_lines(bpe_output, hyps)
    if concat_separator is not None:
        hyps = [current_sentence(h, concat_separator) for h in hyps]
    merged = (remove_bpe(h) for h in hyps)
    return write_lines(output, postprocess(merged, tgt_lang, casing))


def average_checkpoints(paths: Sequence[str | Path], output: str | Path) -> int:
    """Average the parameters of fairseq checkpoints into ``output`` (the first one's layout).

    Returns the number of averaged checkpoints. Integer buffers (e.g. step counters) are
    taken from the first checkpoint.
    """
    if not paths:
        raise ValueError("no checkpoints to average")
    if "torch" in missing():  # a light install says so first, whatever the files
        raise MissingTraining("nmt average", ["torch"])
    for path in paths:  # before the import of torch (seconds), which a typo need not wait for
        if not Path(path).is_file():
            raise InputError(path, "checkpoint not found")
        with open(path, "rb") as handle:
            magic = handle.read(2)
        if magic != b"PK" and magic[:1] != b"\x80":  # torch.save's zip, or a legacy pickle
            raise InputError(path, "not a fairseq checkpoint (a torch.save file)")
    torch = import_torch("nmt average")

    states = []
    for path in paths:
        try:
            state = torch.load(path, map_location="cpu", weights_only=False)
        except Exception as err:  # a cut zip, a bad pickle: torch raises many kinds
            raise InputError(path, f"cannot be read as a checkpoint ({err})") from None
        if not (isinstance(state, dict) and isinstance(state.get("model"), dict)):
            raise InputError(path, "not a fairseq checkpoint: it has no 'model' parameters")
        first = states[0]["model"] if states else state["model"]
        if set(state["model"]) != set(first) or any(
                getattr(value, "shape", None) != getattr(first[key], "shape", None)
                for key, value in state["model"].items()):
            raise InputError(path, f"its parameters differ in name or shape from those of "
                                   f"{paths[0]}: not the same model")
        states.append(state)
    averaged = states[0]
    params = averaged["model"]
    for key, value in params.items():
        if torch.is_floating_point(value):
            stacked = torch.stack([s["model"][key].float() for s in states])
            params[key] = stacked.mean(dim=0).to(value.dtype)
    with atomic_write(output, "wb") as out:
        torch.save(averaged, out)
    return len(states)


_SPEED = re.compile(r"Translated ([\d,]+) sentences \(([\d,]+) tokens\) in ([\d.]+)s")


def parse_speed(log_text: str) -> dict[str, float]:
    """Sentences, tokens and seconds from fairseq-generate's closing log line."""
    matches = _SPEED.findall(log_text)
    if not matches:
        raise RuntimeError("fairseq-generate printed no 'Translated N sentences' line")
    sentences, tokens, seconds = matches[-1]
    sentences_n = int(sentences.replace(",", ""))
    seconds_f = float(seconds)
    return {"sentences": sentences_n, "tokens": int(tokens.replace(",", "")),
            "seconds": seconds_f,
            "sentences_per_second": sentences_n / seconds_f if seconds_f else float("inf"),
            "latency_ms": 1000 * seconds_f / sentences_n if sentences_n else float("nan")}


def _average_command(args: argparse.Namespace) -> int:
    n = average_checkpoints(args.inputs, args.output)
    print(f"{args.output}: average of {n} checkpoints")
    return 0


def _extra_args(path: str) -> list[str]:
    extra = load_json(path).get("fairseq_model_args", [])
    if not isinstance(extra, list):
        raise InputError(path, "expected a JSON object whose 'fairseq_model_args' is a list")
    return [str(a) for a in extra]


def _train_command(args: argparse.Namespace) -> int:
    extra = _extra_args(args.extra_args_file) if args.extra_args_file else []
    train(args.data_bin, args.save_dir, args.output, args.options, args.seed, args.log, extra)
    return 0


def _generate_command(args: argparse.Namespace) -> int:
    n = generate(args.data_bin, args.model, args.source, args.output, args.tgt_lang,
                 args.casing, args.options, args.seed, args.log, bpe_output=args.bpe_output,
                 concat_separator=args.concat_separator)
    print(f"{args.output}: {n} hypotheses")
    return 0


def _preprocess_command(args: argparse.Namespace) -> int:
    if args.text:
        if args.trainpref or args.validpref or args.context_trainpref or args.context_validpref:
            raise InputError("--text", "only a test split is kept as text: drop --trainpref "
                                       "and --validpref")
        if not (args.testpref and args.dict_dir):
            raise InputError("--text", "needs --testpref and --dict-dir")
        n = write_text_layout(args.destdir, args.testpref, args.dict_dir, args.context_testpref)
        print(f"{args.destdir}: {n} test sentences as text")
        return 0
    context = {split: prefix for split, prefix in (("train", args.context_trainpref),
                                                   ("valid", args.context_validpref),
                                                   ("test", args.context_testpref)) if prefix}
    require_training("nmt binarize")  # a light install says so first, whatever the files
    _check_binarize_inputs(args, context)
    preprocess(args.destdir, args.log, context=context, trainpref=args.trainpref,
               validpref=args.validpref, testpref=args.testpref, dict_dir=args.dict_dir,
               joined_dictionary=args.joined_dictionary, workers=args.workers)
    print(f"{args.destdir}: binarized")
    return 0


def _check_binarize_inputs(args: argparse.Namespace, context: dict[str, str]) -> None:
    """What fairseq-preprocess would fail on with a traceback in its log, named here."""
    prefixes = {"--trainpref": args.trainpref, "--validpref": args.validpref,
                "--testpref": args.testpref}
    if not any(prefixes.values()):
        raise InputError("--trainpref", "nothing to binarize: give --trainpref, --validpref "
                                        "or --testpref")
    if args.dict_dir and args.joined_dictionary:
        raise InputError("--dict-dir", "a joined dictionary is built, not reused: drop "
                                       "--dict-dir or --joined-dictionary")
    files = [(option, f"{prefix}.{side}") for option, prefix in prefixes.items() if prefix
             for side in ("src", "tgt")]
    files += [(f"--context-{split}pref", f"{prefix}.ctx") for split, prefix in context.items()]
    if args.dict_dir:
        files += [("--dict-dir", f"{args.dict_dir}/dict.{side}.txt") for side in ("src", "tgt")]
    for option, path in files:
        if not Path(path).is_file():
            raise InputError(path, f"file not found (from {option})")


def register_cli(tree) -> None:
    p = tree.add("nmt binarize", "Binarize src/tgt text files for fairseq (fairseq-preprocess)",
                 _preprocess_command)
    p.add_argument("--destdir", required=True)
    p.add_argument("--trainpref")
    p.add_argument("--validpref")
    p.add_argument("--testpref")
    p.add_argument("--dict-dir", help="reuse dict.src.txt and dict.tgt.txt from this folder")
    p.add_argument("--joined-dictionary", action="store_true",
                   help="one dictionary for both sides")
    p.add_argument("--workers", type=positive_int, default=1)
    p.add_argument("--text", action="store_true",
                   help="keep the test split as text for fairseq's raw dataset (the same token "
                        "ids, no fairseq-preprocess); decoding then reads it as text")
    for split in ("train", "valid", "test"):
        p.add_argument(f"--context-{split}pref", metavar="PREFIX",
                       help=f"also binarize PREFIX.ctx as the {split} context side (source "
                            "dictionary)")
    p.add_argument("--log")
    p = tree.add("nmt train", "Train or resume a fairseq model", _train_command)
    p.add_argument("--data-bin", required=True)
    p.add_argument("--save-dir", required=True)
    p.add_argument("--output", required=True, help="where the best checkpoint is published")
    p.add_argument("--options", type=json_object, default="{}",
                   help="fairseq-train options as JSON")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--log")
    p.add_argument("--extra-args-file", help="JSON file whose 'fairseq_model_args' list is "
                   "appended to the fairseq-train command")
    p = tree.add("nmt average", "Average fairseq checkpoints", _average_command)
    p.add_argument("--inputs", nargs="+", required=True)
    p.add_argument("--output", required=True)
    p = tree.add("nmt generate", "Translate a binarized test set to detokenized text",
                 _generate_command)
    p.add_argument("--data-bin", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--source", required=True, help="the BPE'd source (for the line count)")
    p.add_argument("--output", required=True)
    p.add_argument("--tgt-lang", required=True)
    p.add_argument("--casing", default="none")
    p.add_argument("--options", type=json_object, default="{}",
                   help="fairseq-generate options as JSON")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--log")
    p.add_argument("--bpe-output", help="also write the hypotheses as subword tokens")
    p.add_argument("--concat-separator", help="keep only what follows the last separator "
                   "(a concatenation model's current sentence)")
