"""Helpers for the NAT plugin tests: a tiny parallel corpus and fairseq runs on it."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from phenomt.core.nmt import fairseq_env, fairseq_options, parse_hypotheses
from phenomt.nat.recipes import finetune_options, generate_options, train_options

# A toy "language pair": target words are source words with a suffix, and the last two
# words swap, so the model has something to reorder.
_WORDS = ["haus", "baum", "katze", "hund", "auto", "buch", "tisch", "stuhl", "fisch", "vogel",
          "blume", "stein"]

# Overrides that make a recipe's demo scale finish in a few seconds: a smaller model,
# a handful of updates.
TINY_TRAIN = {
    "encoder_layers": 1, "decoder_layers": 1,
    "encoder_embed_dim": 32, "decoder_embed_dim": 32,
    "encoder_ffn_embed_dim": 64, "decoder_ffn_embed_dim": 64,
    "encoder_attention_heads": 2, "decoder_attention_heads": 2,
    "max_update": 3, "max_tokens": 100, "warmup_updates": 1, "log_interval": 1,
    "seed": 1, "cpu": True,
}


def tiny_corpus(size: int = 40, seed: int = 3) -> list[tuple[str, str]]:
    """``size`` deterministic sentence pairs of 3 to 7 words."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(size):
        words = rng.sample(_WORDS, rng.randint(3, 7))
        target = [f"{w}s" for w in words]
        target[-2:] = target[-2:][::-1]
        pairs.append((" ".join(words), " ".join(target)))
    return pairs


def write_corpus(directory: Path, pairs: list[tuple[str, str]], prefix: str) -> None:
    (directory / f"{prefix}.src").write_text("".join(f"{s}\n" for s, _ in pairs))
    (directory / f"{prefix}.tgt").write_text("".join(f"{t}\n" for _, t in pairs))


def fairseq_tool(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def run(cmd: list[str], timeout: float = 120) -> tuple[str, float]:
    """Run a fairseq command with the project's fairseq environment; stdout and seconds."""
    start = time.perf_counter()
    result = subprocess.run(cmd, env=fairseq_env(), capture_output=True, text=True,
                            timeout=timeout, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({result.returncode}):\n"
                             f"{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result.stdout, elapsed


def build_data_bin(root: Path) -> Path:
    """Write the tiny corpus (train 40, valid 8, test 8) and binarize it jointly."""
    raw = root / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    pairs = tiny_corpus(56)
    write_corpus(raw, pairs[:40], "train")
    write_corpus(raw, pairs[40:48], "valid")
    write_corpus(raw, pairs[48:], "test")
    data_bin = root / "bin"
    run([fairseq_tool("fairseq-preprocess"), "--source-lang", "src", "--target-lang", "tgt",
         "--trainpref", str(raw / "train"), "--validpref", str(raw / "valid"),
         "--testpref", str(raw / "test"), "--destdir", str(data_bin),
         "--joined-dictionary", "--workers", "1"])
    return data_bin


def train(model: str, data_bin: Path, save_dir: Path, checkpoint: Path | None = None,
          **overrides: Any) -> tuple[Path, str, float]:
    """Train a few updates with the model's demo recipe (fine-tuning ``checkpoint`` for a
    "+OaXE" model); the last checkpoint, fairseq's log and the seconds it took."""
    if checkpoint is None:
        options = train_options(model, "demo")
    else:
        options = finetune_options(model, str(checkpoint), "demo")
    options.update(TINY_TRAIN)
    options.update(overrides)
    options["save_dir"] = str(save_dir)
    log, seconds = run([fairseq_tool("fairseq-train"), str(data_bin),
                        *fairseq_options(options)])
    last = save_dir / "checkpoint_last.pt"
    assert last.is_file(), f"no checkpoint in {save_dir}"
    return last, log, seconds


def generate(model: str, data_bin: Path, checkpoint: Path,
             **overrides: Any) -> tuple[list[str], float]:
    """Decode the test set with the model's recipe; hypotheses in input order and seconds."""
    options = generate_options(model)
    options.update({"path": str(checkpoint), "gen_subset": "test", "batch_size": 8,
                    "cpu": True})
    options.update(overrides)
    out, seconds = run([fairseq_tool("fairseq-generate"), str(data_bin),
                        *fairseq_options(options)])
    return parse_hypotheses(out.splitlines(), 8), seconds


TINY_ARCH_ARGS = ["--encoder-layers", "1", "--decoder-layers", "1",
                  "--encoder-embed-dim", "16", "--decoder-embed-dim", "16",
                  "--encoder-ffn-embed-dim", "32", "--decoder-ffn-embed-dim", "32",
                  "--encoder-attention-heads", "2", "--decoder-attention-heads", "2"]


def build_model(root: Path, arch: str, *extra: str):
    """Build a tiny untrained model in-process; returns ``(model, task)``.

    Only the dictionaries are written (the same for both sides, so embeddings can be
    shared); the plugins are registered by importing ``phenomt.fairseq_ext``.
    """
    from fairseq import options, tasks

    import phenomt.fairseq_ext  # noqa: F401  (registers the plugins)

    words = "".join(f"{w} 1\n" for w in _WORDS) + "".join(f"{w}s 1\n" for w in _WORDS)
    for side in ("src", "tgt"):
        (root / f"dict.{side}.txt").write_text(words)
    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, [
        str(root), "--task", "phenomt_translation_nat", "--noise", "full_mask",
        "--arch", arch, "--criterion", "nat_loss", "-s", "src", "-t", "tgt",
        "--share-all-embeddings", "--cpu", *TINY_ARCH_ARGS, *extra])
    task = tasks.setup_task(args)
    return task.build_model(args), task


def encode(task, sentences: list[str], side: str = "src"):
    """Token ids ``<s> words </s>`` right-padded into one batch (translation_lev's layout)."""
    import torch

    dictionary = task.source_dictionary if side == "src" else task.target_dictionary
    rows = [[dictionary.bos(), *(dictionary.index(w) for w in s.split()), dictionary.eos()]
            for s in sentences]
    width = max(map(len, rows))
    return torch.tensor([row + [dictionary.pad()] * (width - len(row)) for row in rows])
