"""Sentence- vs document-level models of the lexical-consistency paper (Lei et al. 2024,
Tables 4-6): the Sent-Transformer (a model of ``models:``), the Doc-Transformer (Zhang et al.
2018) trained over it in a second step, and the concatenation baseline; every one of them
translates the sentence model's document-level test sets, which are then scored for LTCR.

Document models live under ``<outdir>/docmodels/<name>/``; they reuse the sentence model's
tokenization and subwords (the Doc-Transformer also its dictionary and weights).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from phenomt.core.doccontext import DEFAULT_SEPARATOR
from phenomt.core.nmt import USER_DIR
from phenomt.plan.args import options_json, shell_args
from phenomt.plan.data import DataPlan
from phenomt.plan.models import ModelPlan
from phenomt.plan.section import SectionPlan

DOC_TRANSFORMER = "doc-transformer"
CONCAT = "concat"
SENTENCE = "sent-transformer"
REFERENCE = "reference"
#: Table labels; the keys are also the names in the papers' data file (lei_2024.tsv).
LABELS = {SENTENCE: "Sent-Transformer", DOC_TRANSFORMER: "Doc-Transformer",
          CONCAT: "Concatenation (2+1)", REFERENCE: "Reference (calibration)"}
#: The Doc-Transformer architecture matching a sentence-level one (same sizes).
DOC_ARCH = {"transformer": "doc_transformer", "transformer_tiny": "doc_transformer_tiny"}
DOCMODEL_PATTERN = f"{DOC_TRANSFORMER}|{CONCAT}"


@dataclass(frozen=True)
class DocumentsPlan(SectionPlan):
    """``lexcons.models`` of the config; disabled (``section`` None) without it."""

    out: str
    data: DataPlan
    models: ModelPlan

    # --- which models ------------------------------------------------------------------
    @property
    def sentence(self) -> str:
        return self.section["sentence"]

    def docmodels(self) -> list[str]:
        return [m for m in (DOC_TRANSFORMER, CONCAT) if self.section[m.replace("-", "_")]
                is not None]

    def systems(self) -> list[str]:
        """Every translating model of the tables: the sentence model first."""
        return [SENTENCE, *self.docmodels()]

    def _own(self, docmodel: str) -> dict[str, Any]:
        return self.section[docmodel.replace("-", "_")]

    @property
    def context(self) -> int:
        return int(self.section["context"])

    # --- data ------------------------------------------------------------------------------
    def testsets(self) -> list[str]:
        """The sentence model's test corpora that have document ids."""
        return [c for c in self.models.test_sets(self.sentence) if self.data.has_docids(c)]

    def parts(self) -> list[str]:
        """Everything the document models read: training data, validation and test sets."""
        return ["train", self.models.valid(self.sentence), *self.testsets()]

    def train_corpora(self) -> list[str]:
        """The document-level training corpora: ``lexcons.models.train``, or all of the
        sentence model's (the paper's step 2 uses a document-level subset of step 1's
        data)."""
        return list(self.section["train"] or self.models.train_corpora(self.sentence))

    def selects_train(self) -> bool:
        """Whether the document models train on part of the sentence model's data."""
        return set(self.train_corpora()) != set(self.models.train_corpora(self.sentence))

    def assembled_docids(self) -> str:
        """Document ids of the sentence model's assembled training data (``-``: a line of a
        corpus outside the document-level training corpora)."""
        return f"{self.models.dir(self.sentence)}/data/train.docids"

    def part_docids(self, part: str) -> str:
        if part == "train":
            return (f"{self.out}/docmodels/data/train.docids" if self.selects_train()
                    else self.assembled_docids())
        return self.data.docids(part)

    def sentence_bpe(self, part: str, side: str) -> str:
        """The sentence model's subword text of a part (training data: its document-level
        lines)."""
        if part == "train" and self.selects_train():
            return f"{self.out}/docmodels/data/train.bpe.{side}"
        return self.models.bpe_file(self.sentence, part, side)

    def select_inputs(self) -> list[str]:
        return [self.models.bpe_file(self.sentence, "train", side) for side in ("src", "tgt")]

    def train_docids_args(self) -> str:
        """Document ids of the sentence model's training corpora for the assembly, ``-``
        for those outside the document-level training corpora."""
        documents = set(self.train_corpora())
        corpora = self.models.train_corpora(self.sentence)
        return shell_args([("--train-docids", [self.data.docids(c) if c in documents else "-"
                                               for c in corpora])])

    def train_docids_inputs(self) -> list[str]:
        return [self.data.docids(c) for c in self.train_corpora()]

    # --- paths -------------------------------------------------------------------------
    def dir(self, docmodel: str) -> str:
        return f"{self.out}/docmodels/{docmodel}"

    def data_file(self, docmodel: str, part: str, kind: str) -> str:
        """``ctx`` (context side) or ``bpe.src`` / ``bpe.tgt`` of a document model's part."""
        return f"{self.dir(docmodel)}/data/{part}.{kind}"

    def pair_prefix(self, docmodel: str, part: str) -> str:
        """Prefix of the sentence pairs a document model is binarized from."""
        if docmodel == DOC_TRANSFORMER:
            return self.sentence_bpe(part, "src").removesuffix(".src")
        return self.data_file(docmodel, part, "bpe")

    def pair_inputs(self, docmodel: str, part: str) -> list[str]:
        prefix = self.pair_prefix(docmodel, part)
        inputs = [f"{prefix}.src", f"{prefix}.tgt"]
        if docmodel == DOC_TRANSFORMER:
            inputs.append(self.data_file(docmodel, part, "ctx"))
        return inputs

    def source_bpe(self, docmodel: str, part: str) -> str:
        """The source text a document model decodes (for the line count)."""
        return f"{self.pair_prefix(docmodel, part)}.src"

    def bin_dir(self, docmodel: str) -> str:
        return f"{self.dir(docmodel)}/bin"

    def checkpoint(self, system: str) -> str:
        if system == SENTENCE:
            return self.models.checkpoint(self.sentence)
        return f"{self.dir(system)}/model.pt"

    def hyp(self, system: str, part: str) -> str:
        if system == SENTENCE:
            return self.models.hyp(self.sentence, part)
        return f"{self.dir(system)}/hyp/{part}.txt"

    # --- binarization ------------------------------------------------------------------
    def binarize_args(self, docmodel: str) -> str:
        """The Doc-Transformer reuses the sentence model's dictionary (its weights are
        loaded); the concatenation model learns its own (the separator is a new token)."""
        valid = self.models.valid(self.sentence)
        args = [("--trainpref", self.pair_prefix(docmodel, "train")),
                ("--validpref", self.pair_prefix(docmodel, valid))]
        if docmodel == DOC_TRANSFORMER:
            args += [("--dict-dir", self.models.bin_dir(self.sentence)),
                     ("--context-trainpref", self._ctx_prefix("train")),
                     ("--context-validpref", self._ctx_prefix(valid))]
        else:
            args.append(("--joined-dictionary", True))
        return shell_args(args)

    def binarize_test_args(self, docmodel: str, part: str) -> str:
        """A test set as text with the model's dictionaries (see Models.binarize_test_args)."""
        args = [("--testpref", self.pair_prefix(docmodel, part)),
                ("--dict-dir", self.bin_dir(docmodel)), ("--text", True)]
        if docmodel == DOC_TRANSFORMER:
            args.append(("--context-testpref", self._ctx_prefix(part)))
        return shell_args(args)

    def _ctx_prefix(self, part: str) -> str:
        return self.data_file(DOC_TRANSFORMER, part, "ctx").removesuffix(".ctx")

    def dict_inputs(self, docmodel: str) -> list[str]:
        return [self.models.bin_dir(self.sentence)] if docmodel == DOC_TRANSFORMER else []

    # --- training and decoding -----------------------------------------------------------
    def train_options(self, docmodel: str) -> dict[str, Any]:
        """fairseq-train options: the sentence model's, then the document model's own.

        The Doc-Transformer is step 2 of Zhang et al. (2018): the document-level parameters
        only, from the sentence model's weights; the concatenation model trains from scratch.
        """
        own = self._own(docmodel)
        options = self.models.train_options(self.sentence)
        if docmodel == DOC_TRANSFORMER:
            arch = options["arch"]
            if arch not in DOC_ARCH:
                raise ValueError(f"lexcons.models: no Doc-Transformer counterpart of the "
                                 f"sentence model's architecture {arch!r}")
            options.update(arch=DOC_ARCH[arch], user_dir=USER_DIR, task="translation_doc",
                           source_lang="src", target_lang="tgt",
                           doc_freeze_sentence_params=True,
                           finetune_from_model=self.models.checkpoint(self.sentence))
        options.update(own["architecture"])
        options.update(own["training"])
        return options

    def train_options_json(self, docmodel: str) -> str:
        return options_json(self.train_options(docmodel))

    def decode_options(self, docmodel: str) -> dict[str, Any]:
        options = dict(self.models.decode_options(self.sentence))
        if docmodel == DOC_TRANSFORMER:
            options.update(user_dir=USER_DIR, task="translation_doc", source_lang="src",
                           target_lang="tgt")
        options.update(self._own(docmodel)["decode"])
        return options

    def decode_options_json(self, docmodel: str) -> str:
        return options_json(self.decode_options(docmodel))

    def generate_args(self, docmodel: str) -> str:
        return shell_args([("--concat-separator",
                            DEFAULT_SEPARATOR if docmodel == CONCAT else None)])

    def train_inputs(self, docmodel: str) -> list[str]:
        """The binarized data, and the sentence model's weights for the Doc-Transformer."""
        extra = [self.models.checkpoint(self.sentence)] if docmodel == DOC_TRANSFORMER else []
        return [self.bin_dir(docmodel), *extra]

    def seed(self) -> int:
        return self.models.seed(self.sentence)

    def resource(self, key: str) -> int:
        return self.models.resource(self.sentence, key)

    def scale_note(self) -> str:
        base = self.models.settings(self.sentence)
        arch = base["architecture"]
        parts = [f"sentence model {self.sentence}: {arch['arch']}, "
                 f"{base['training']['max_update']} updates"]
        for docmodel in self.docmodels():
            updates = self.train_options(docmodel)["max_update"]
            parts.append(f"{LABELS[docmodel]}: {updates} updates")
        return "; ".join(parts) + f"; {self.context} previous sentences of context."

    def hyp_files(self) -> list[str]:
        return [self.hyp(s, p) for s in self.systems() for p in self.testsets()]

    def check(self) -> None:
        if not self.section:
            return
        if self.sentence not in self.models.names:
            raise ValueError(f"lexcons.models.sentence: undeclared model {self.sentence!r}")
        outside = set(self.train_corpora()) - set(self.models.train_corpora(self.sentence))
        if outside:
            raise ValueError(f"lexcons.models.train: {sorted(outside)} are not training "
                             f"corpora of {self.sentence!r} (step 2 uses part of its data)")
        corpora = [*self.train_corpora(), self.models.valid(self.sentence)]
        missing = [c for c in corpora if not self.data.has_docids(c)]
        if missing:
            raise ValueError(f"lexcons.models: the document models need document ids for "
                             f"{missing} (a `docids` entry)")
        if not self.testsets():
            raise ValueError(f"lexcons.models: no test set of {self.sentence!r} has "
                             "document ids")
