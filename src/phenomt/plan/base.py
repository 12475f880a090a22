"""Turns the validated config into file paths and settings for the Snakemake rules.

Keeping this in the package (not in ``.smk`` files) makes the path logic testable and lets
later stages reuse it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phenomt.plan.ldd import LddPlan
from phenomt.plan.nat import NatPlan

MODEL_SECTIONS = ("architecture", "training", "decode", "resources", "bpe")


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a YAML config file."""
    import yaml

    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle) or {}


@dataclass(frozen=True)
class Plan(LddPlan, NatPlan):
    config: dict[str, Any]

    # --- locations -------------------------------------------------------------------
    @property
    def out(self) -> str:
        return self.config.get("outdir", "results")

    @property
    def res(self) -> str:
        return self.config.get("resources_dir", "resources")

    def download_path(self, download: str) -> str:
        return f"{self.res}/downloads/{download}"

    def extracted_dir(self, download: str) -> str:
        return f"{self.res}/extracted/{download}"

    # --- corpora ---------------------------------------------------------------------
    @property
    def corpora(self) -> dict[str, dict[str, Any]]:
        return self.config.get("corpora", {})

    def corpus(self, name: str) -> dict[str, Any]:
        try:
            return self.corpora[name]
        except KeyError:
            raise KeyError(f"corpus {name!r} is not declared under 'corpora'") from None

    def _file_spec_path(self, spec: dict[str, Any]) -> str:
        if spec.get("member"):
            return f"{self.extracted_dir(spec['download'])}/{spec['member']}"
        return self.download_path(spec["download"])

    def _file_spec_input(self, spec: dict[str, Any]) -> str:
        """The Snakemake input that provides a file: the download or its extracted folder."""
        if spec.get("member"):
            return self.extracted_dir(spec["download"])
        return self.download_path(spec["download"])

    def corpus_inputs(self, name: str) -> list[str]:
        """Files or extracted folders a corpus needs (deduplicated, ordered)."""
        corpus = self.corpus(name)
        specs = [corpus["files"][lang] for lang in corpus["langs"]]
        if corpus.get("docids"):
            specs.append(corpus["docids"])
        return list(dict.fromkeys(self._file_spec_input(s) for s in specs))

    def corpus_source_files(self, name: str) -> list[str]:
        corpus = self.corpus(name)
        return [self._file_spec_path(corpus["files"][lang]) for lang in corpus["langs"]]

    def docids_source(self, name: str) -> str | None:
        spec = self.corpus(name).get("docids")
        return self._file_spec_path(spec) if spec else None

    def clean_policy(self, name: str) -> dict[str, Any]:
        corpus = self.corpus(name)
        policy = dict(self.config.get("clean", {}).get(corpus["split"], {}))
        policy.update(corpus.get("clean", {}))
        return {"empty": "keep", "long": "keep", "max_tokens": 250, **policy}

    def raw(self, corpus: str, lang: str) -> str:
        return f"{self.out}/data/raw/{corpus}.{lang}"

    def tok(self, corpus: str, lang: str) -> str:
        return f"{self.out}/data/tok/{corpus}.{lang}"

    def stats_json(self, corpus: str) -> str:
        return f"{self.out}/stats/{corpus}.json"

    # --- models ----------------------------------------------------------------------
    @property
    def models(self) -> dict[str, dict[str, Any]]:
        return self.config.get("models", {})

    def model(self, name: str) -> dict[str, Any]:
        """A model's settings with the config's ``defaults`` filled in, section by section."""
        try:
            spec = copy.deepcopy(self.models[name])
        except KeyError:
            raise KeyError(f"model {name!r} is not declared under 'models'") from None
        defaults = self.config.get("defaults", {})
        for section in MODEL_SECTIONS:
            merged = copy.deepcopy(defaults.get(section, {}))
            merged.update(spec.get(section, {}))
            spec[section] = merged
        spec.setdefault("casing", defaults.get("casing", "none"))
        spec.setdefault("seed", self.config.get("seed", 1))
        return spec

    def model_dir(self, name: str) -> str:
        return f"{self.out}/models/{name}"

    def heldout(self, name: str) -> list[str]:
        spec = self.models[name]
        return [spec["valid"], *spec["test"]]

    def test_sets(self, name: str) -> list[str]:
        return list(self.models[name]["test"])

    def side_lang(self, model: str, side: str) -> str:
        """Language of a model's ``src`` or ``tgt`` side."""
        if side not in ("src", "tgt"):
            raise ValueError(f"side must be src or tgt, not {side!r}")
        return self.models[model][side]

    def tok_input(self, model: str, part: str, side: str) -> str:
        """Tokenized text of a model's data part: its assembled ``train`` or a corpus."""
        if part == "train":
            return f"{self.model_dir(model)}/data/train.tok.{side}"
        return self.tok(part, self.side_lang(model, side))

    def bpe_input(self, model: str, part: str, side: str) -> str:
        """What BPE is applied to: the cased text, or the tokenized text when casing is none."""
        if self.model(model)["casing"] == "none":
            return self.tok_input(model, part, side)
        return f"{self.model_dir(model)}/data/{part}.case.{side}"

    def bpe_file(self, model: str, part: str, side: str) -> str:
        return f"{self.model_dir(model)}/data/{part}.bpe.{side}"

    def bleu_json(self, model: str, corpus: str) -> str:
        return f"{self.model_dir(model)}/scores/{corpus}.bleu.json"

    # --- command-line arguments for the rules ------------------------------------------
    def fetch_args(self, download: str, mirror: str | None) -> str:
        spec = self.config["downloads"][download]
        return shell_args([("--url", spec.get("url")), ("--sha256", spec.get("sha256")),
                           ("--mirror", mirror), ("--mirror-path", spec.get("mirror"))])

    def corpus_args(self, name: str) -> str:
        corpus = self.corpus(name)
        langs = corpus["langs"]
        policy = self.clean_policy(name)
        columns = corpus.get("columns")
        return shell_args([
            ("--format", corpus["format"]), ("--langs", langs),
            ("--inputs", self.corpus_source_files(name)),
            ("--columns", [columns[lang] for lang in langs] if columns else None),
            ("--moses-escaped", corpus.get("moses_escaped", False)),
            ("--empty", policy["empty"]), ("--long", policy["long"]),
            ("--max-tokens", policy["max_tokens"]),
            ("--limit", corpus.get("limit")),
        ])

    def check(self) -> None:
        """Cross-reference checks the JSON schema cannot express; raises ValueError."""
        downloads = self.config.get("downloads", {})
        for name, corpus in self.corpora.items():
            if name == "train":
                raise ValueError("'train' is reserved and cannot name a corpus")
            specs = [corpus["files"].get(lang) for lang in corpus["langs"]]
            if any(spec is None for spec in specs):
                raise ValueError(f"corpus {name!r}: 'files' needs an entry per language "
                                 f"{corpus['langs']}")
            if corpus.get("docids"):
                specs.append(corpus["docids"])
            for spec in specs:
                if spec["download"] not in downloads:
                    raise ValueError(f"corpus {name!r} uses undeclared download "
                                     f"{spec['download']!r}")
            if corpus["format"] == "tsv" and set(corpus.get("columns", {})) != set(
                    corpus["langs"]):
                raise ValueError(f"corpus {name!r}: tsv format needs 'columns' per language")
        for name, spec in self.models.items():
            pair = [spec["src"], spec["tgt"]]
            for corpus in [*spec["train"], *self.heldout(name)]:
                if sorted(self.corpus(corpus)["langs"]) != sorted(pair):
                    raise ValueError(f"model {name!r}: corpus {corpus!r} is "
                                     f"{self.corpus(corpus)['langs']}, not {pair}")
        self.check_ldd()

    def ordered(self, corpus: str, src: str, tgt: str) -> list[str]:
        """Tokenized files of a corpus in (src, tgt) order."""
        return [self.tok(corpus, src), self.tok(corpus, tgt)]

    # --- targets ---------------------------------------------------------------------
    def tables(self) -> list[str]:
        names = ["corpus_stats"] + (["bleu"] if self.models else [])
        base = [f"{self.out}/tables/{n}.{ext}" for n in names for ext in ("md", "csv")]
        return [*base, *self.ldd_tables(), *self.locality_tables(), *self.nat_tables()]

    def targets(self) -> list[str]:
        """Everything `snakemake` builds by default: the tables and document-id files."""
        docids = [f"{self.out}/data/raw/{c}.docids" for c, spec in self.corpora.items()
                  if spec.get("docids")]
        return [*self.tables(), *docids]

    def all_stats(self) -> list[str]:
        return [self.stats_json(c) for c in self.corpora]

    def bleu_tokenizer(self, model: str) -> str:
        from phenomt.core.metrics.bleu import default_tokenizer

        configured = self.config.get("scoring", {}).get("tokenize", "auto")
        return default_tokenizer(self.models[model]["tgt"]) if configured == "auto" else configured

    def bleu_lowercase(self, model: str) -> bool:
        """Case-insensitive BLEU when asked, or when the model only produces lowercase."""
        return bool(self.config.get("scoring", {}).get("lowercase")) or (
            self.model(model)["casing"] == "lower")

    def model_cards(self) -> list[str]:
        return [f"{self.model_dir(m)}/card.json" for m in self.models]

    def all_bleu(self) -> list[str]:
        return [self.bleu_json(m, c) for m in self.models for c in self.test_sets(m)]



def shell_args(pairs: list[tuple[str, Any]]) -> str:
    """Quote ``--flag value`` pairs for a shell command; ``None`` values are skipped."""
    import shlex

    parts: list[str] = []
    for flag, value in pairs:
        if value is None or value is False:
            continue
        if value is True:
            parts.append(flag)
        elif isinstance(value, list | tuple):
            parts.extend([flag, *(shlex.quote(str(v)) for v in value)])
        else:
            parts.extend([flag, shlex.quote(str(value))])
    return " ".join(parts)
