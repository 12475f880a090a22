"""A COMET checkpoint built here, for wiring tests: comet's own ``RegressionMetric`` (the
architecture of wmt20/wmt22-comet-da) on a tiny randomly initialised XLM-R encoder, with a
SentencePiece tokenizer trained on the given texts, saved in the layout ``comet`` loads
(``MODEL/hparams.yaml``, ``MODEL/checkpoints/model.ckpt``). Its scores mean nothing: it checks
that a COMET model is found, loaded and run, and that its scores reach the tables."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

#: Text the tokenizer is trained on (any text of the test languages will do).
SENTENCES = ["Ein Hund läuft .", "Die Katze schläft .", "Er liest ein Buch .",
             "Es regnet heute .", "Wir gehen nach Hause .", "A dog runs.", "The cat sleeps.",
             "He reads a book.", "It is raining today.", "We are going home.",
             "the cat sat on the mat .", "hello there , friend", "nothing here"]


def build_tiny_comet(root: Path, texts: Sequence[str], seed: int = 1) -> Path:
    """The model folder (what ``--comet-model`` takes)."""
    import pytorch_lightning
    import sentencepiece as spm
    import torch
    import yaml
    from comet.models import RegressionMetric
    from transformers import XLMRobertaConfig, XLMRobertaTokenizer

    encoder = root / "encoder"
    encoder.mkdir(parents=True, exist_ok=True)
    # XLM-R's special ids: <s> 0, <pad> 1, </s> 2, <unk> 3
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts), model_prefix=str(root / "spm"), vocab_size=120,
        model_type="unigram", character_coverage=1.0, bos_id=0, pad_id=1, eos_id=2,
        unk_id=3, hard_vocab_limit=False, minloglevel=2)
    tokenizer = XLMRobertaTokenizer(vocab_file=str(root / "spm.model"))
    tokenizer.save_pretrained(encoder)
    XLMRobertaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64,
                     max_position_embeddings=130).save_pretrained(encoder)
    torch.manual_seed(seed)
    model = RegressionMetric(pretrained_model=str(encoder), load_pretrained_weights=False,
                             hidden_sizes=[16], layer="mix", pool="avg")
    folder = root / "model"
    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    hparams = dict(model.hparams)
    (folder / "hparams.yaml").write_text(yaml.safe_dump(hparams), encoding="utf-8")
    torch.save({"state_dict": model.state_dict(), "hyper_parameters": hparams,
                "pytorch-lightning_version": pytorch_lightning.__version__},
               folder / "checkpoints" / "model.ckpt")
    return folder
