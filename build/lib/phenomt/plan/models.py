"""Autoregressive models: their data, subwords, binarized data, checkpoints and scores."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from phenomt.core.metrics.bleu import default_tokenizer
from phenomt.plan.args import note_args, options_json, shell_args
from phenomt.plan.data import DataPlan

#: Model sections that ``defaults`` fills in, section by section.
MODEL_SECTIONS = ("architecture", "training", "decode", "resources", "bpe")


@dataclass(frozen=True)
class ModelPlan:
    """Paths and settings of the model stages (assemble, BPE, binarize, train, decode)."""

    config: dict[str, Any]
    out: str
    data: DataPlan

    @property
    def names(self) -> list[str]:
        return list(self.config["models"])

    def _spec(self, name: str) -> dict[str, Any]:
        try:
            return self.config["models"][name]
        except KeyError:
            raise KeyError(f"model {name!r} is not declared under 'models'") from None

    def settings(self, name: str) -> dict[str, Any]:
        """A model's settings with ``defaults`` merged in, section by section; the one place
        where config values are combined rather than read."""
        spec = copy.deepcopy(self._spec(name))
        defaults = self.config["defaults"]
        for section in MODEL_SECTIONS:
            own = spec.setdefault(section, {})
            spec[section] = {**copy.deepcopy(defaults[section]), **own}
        spec.setdefault("casing", defaults["casing"])
        # a model without its own seed takes the seed of `defaults`, else the global one
        spec.setdefault("seed", defaults["seed"] if "seed" in defaults else self.config["seed"])
        return spec

    # --- languages and corpora -----------------------------------------------------------
    def src(self, name: str) -> str:
        return self._spec(name)["src"]

    def tgt(self, name: str) -> str:
        return self._spec(name)["tgt"]

    def lang(self, name: str, side: str) -> str:
        """Language of a model's ``src`` or ``tgt`` side."""
        if side not in ("src", "tgt"):
            raise ValueError(f"side must be src or tgt, not {side!r}")
        return self._spec(name)[side]

    def direction(self, name: str) -> str:
        return f"{self.src(name)}-{self.tgt(name)}"

    def train_corpora(self, name: str) -> list[str]:
        return list(self._spec(name)["train"])

    def valid(self, name: str) -> str:
        return self._spec(name)["valid"]

    def test_sets(self, name: str) -> list[str]:
        return list(self._spec(name)["test"])

    def heldout(self, name: str) -> list[str]:
        return [self.valid(name), *self.test_sets(name)]

    def _ordered(self, name: str, corpora: list[str]) -> list[str]:
        """Tokenized files of the corpora, (src, tgt) per corpus."""
        return [self.data.tok(c, self.lang(name, side)) for c in corpora
                for side in ("src", "tgt")]

    def train_files(self, name: str) -> list[str]:
        return self._ordered(name, self.train_corpora(name))

    def heldout_files(self, name: str) -> list[str]:
        return self._ordered(name, self.heldout(name))

    # --- settings ------------------------------------------------------------------------
    def casing(self, name: str) -> str:
        return self.settings(name)["casing"]

    def seed(self, name: str) -> int:
        return int(self.settings(name)["seed"])

    def resource(self, name: str, key: str) -> int:
        """``gpu``, ``mem_mb``, ``runtime`` (minutes) or ``threads`` of a model's jobs."""
        return int(self.settings(name)["resources"][key])

    def bpe_merges(self, name: str) -> int:
        return int(self.settings(name)["bpe"]["merges"])

    def bpe_min_frequency(self, name: str) -> int:
        return int(self.settings(name)["bpe"]["min_frequency"])

    def decode_options(self, name: str) -> dict[str, Any]:
        return dict(self.settings(name)["decode"])

    def train_options(self, name: str) -> dict[str, Any]:
        """fairseq-train options: the model's architecture and training settings."""
        settings = self.settings(name)
        return {**settings["architecture"], **settings["training"]}

    def train_options_json(self, name: str) -> str:
        return options_json(self.train_options(name))

    def decode_options_json(self, name: str) -> str:
        return options_json(self.decode_options(name))

    def settings_json(self, name: str) -> str:
        return options_json(self.settings(name))

    def bleu_tokenizer(self, name: str) -> str:
        configured = self.config["scoring"]["tokenize"]
        return default_tokenizer(self.tgt(name)) if configured == "auto" else configured

    def bleu_lowercase(self, name: str) -> bool:
        """Case-insensitive BLEU when asked, or when the model only produces lowercase."""
        return bool(self.config["scoring"]["lowercase"]) or self.casing(name) == "lower"

    def note_args(self) -> str:
        """Notes of the BLEU table: the config's note on trained models."""
        return note_args(self.data.trained_notes())

    def samples_args(self) -> str:
        """``--samples N --seed S`` of the score commands whose records feed intervals and
        paired tests; S is the config's seed (sacreBLEU-style seeds start at 1)."""
        if not self.samples:
            return ""
        return f"--samples {self.samples} --seed {max(int(self.config['seed']), 1)}"

    @property
    def samples(self) -> int:
        return int(self.config["scoring"]["samples"])

    def claims_args(self) -> str:
        """``--samples N --seed S`` of the claims tables (the same resampling as the scores)."""
        return f"--samples {self.samples} --seed {max(int(self.config['seed']), 1)}"

    def bleu_args(self, name: str) -> str:
        """sacreBLEU settings of a model's target side, as ``phenomt score bleu`` arguments."""
        return shell_args([("--tokenize", self.bleu_tokenizer(name)),
                           ("--lowercase", self.bleu_lowercase(name))])

    # --- paths ---------------------------------------------------------------------------
    def dir(self, name: str) -> str:
        return f"{self.out}/models/{name}"

    def tok_input(self, name: str, part: str, side: str) -> str:
        """Tokenized text of a model's data part: its assembled ``train`` or a corpus."""
        if part == "train":
            return f"{self.dir(name)}/data/train.tok.{side}"
        return self.data.tok(part, self.lang(name, side))

    def case_file(self, name: str, part: str, side: str) -> str:
        return f"{self.dir(name)}/data/{part}.case.{side}"

    def truecase_models(self, name: str, side: str) -> list[str]:
        """The truecasing model a side needs (none unless casing is ``truecase``)."""
        if self.casing(name) != "truecase":
            return []
        return [f"{self.dir(name)}/data/truecase.{side}.model"]

    def truecase_args(self, name: str, side: str) -> str:
        """``--model`` of ``phenomt text case``: the side's truecasing model, if any."""
        models = self.truecase_models(name, side)
        return shell_args([("--model", models[0] if models else None)])

    def bpe_input(self, name: str, part: str, side: str) -> str:
        """What BPE is applied to: the cased text, or the tokenized text when casing is none."""
        if self.casing(name) == "none":
            return self.tok_input(name, part, side)
        return self.case_file(name, part, side)

    def bpe_file(self, name: str, part: str, side: str) -> str:
        return f"{self.dir(name)}/data/{part}.bpe.{side}"

    def bin_dir(self, name: str) -> str:
        """The binarized training and validation data, whose dictionaries every other
        binarization of this model reuses."""
        return f"{self.dir(name)}/bin"

    def bin_test_dir(self, name: str, part: str) -> str:
        """A data part binarized with the model's dictionaries, for decoding."""
        return f"{self.dir(name)}/bin-test/{part}"

    def checkpoint(self, name: str) -> str:
        return f"{self.dir(name)}/model.pt"

    def hyp(self, name: str, part: str, kind: str = "txt") -> str:
        """Hypotheses: ``txt`` detokenized, ``bpe`` subwords, ``tok`` Moses-tokenized."""
        if kind == "tok":
            return f"{self.dir(name)}/hyp-tok/{part}.txt"
        return f"{self.dir(name)}/hyp/{part}.{kind}"

    def bleu_json(self, name: str, part: str) -> str:
        return f"{self.dir(name)}/scores/{part}.bleu.json"

    def learning_curves(self) -> list[str]:
        """Figures of validation BLEU by epoch, for the models trained with ``eval_bleu``."""
        return [f"{self.out}/figures/learning_curve.{name}.{ext}" for name in self.names
                if self.settings(name)["training"].get("eval_bleu") for ext in ("png", "svg")]

    def card(self, name: str) -> str:
        return f"{self.dir(name)}/card.json"

    def cards(self, names: list[str] | None = None) -> list[str]:
        return [self.card(m) for m in (self.names if names is None else names)]

    def all_bleu(self) -> list[str]:
        return [self.bleu_json(m, c) for m in self.names for c in self.test_sets(m)]

    # --- binarization ----------------------------------------------------------------------
    def binarize_args(self, name: str) -> str:
        """Training and validation data, one dictionary shared by both sides."""
        return shell_args([
            ("--trainpref", self.bpe_file(name, "train", "src").removesuffix(".src")),
            ("--validpref", self.bpe_file(name, self.valid(name), "src").removesuffix(".src")),
            ("--joined-dictionary", True)])

    def binarize_test_args(self, name: str, part: str) -> str:
        """A data part with the model's dictionaries: test sets as text (no fairseq process
        per test set), the training data binarized (it is decoded for distillation, and
        fairseq's raw dataset would hold a large corpus in memory)."""
        return shell_args([
            ("--testpref", self.bpe_file(name, part, "src").removesuffix(".src")),
            ("--dict-dir", self.bin_dir(name)),
            ("--text", part != "train")])

    def check(self) -> None:
        """Every corpus of a model is declared and has the model's two languages."""
        for name in self.names:
            pair = sorted([self.src(name), self.tgt(name)])
            for corpus in [*self.train_corpora(name), *self.heldout(name)]:
                langs = self.data.langs(corpus)
                if sorted(langs) != pair:
                    raise ValueError(f"model {name!r}: corpus {corpus!r} is {langs}, not "
                                     f"{[self.src(name), self.tgt(name)]}")
