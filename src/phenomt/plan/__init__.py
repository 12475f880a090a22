"""The plan: a validated config turned into paths and settings for the Snakemake rules.

It sits on top of the package: the workflow (and the CLI where it must) imports it, nothing
in ``core`` or a wing does. One object per stage group, so that a rule asks a named question
(``PLAN.models.bpe_file(model, part, side)``, ``PLAN.ldd.set_inputs(...)``) and never looks
into the config itself:

- ``data``: downloads and corpora (:mod:`phenomt.plan.data`);
- ``models``: autoregressive models, their subwords, binarized data and hypotheses;
- ``ldd`` and ``locality``: the long-distance-dependency wing;
- ``nat``: the non-autoregressive wing;
- ``lexcons``: the lexical-consistency wing, and ``documents``: its sentence- and
  document-level models;
- ``systems``: scoring given system outputs.
- ``report``: the HTML report's categories, table views and captions' scale lines.

Every default lives in the config schema (``workflow/schemas/config.schema.yaml``, shipped
with the package: :data:`phenomt.plan.config.SCHEMA`), applied
when the config is validated (:func:`phenomt.plan.config.validate_config`, which the workflow
and ``evaluate`` call too); the plan reads validated configs only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from phenomt.plan.args import quote_all
from phenomt.plan.config import (
    PROJECT_ROOT,
    SCHEMA,
    SNAKEFILE,
    WORKFLOW,
    load_config,
    validate_config,
)
from phenomt.plan.data import DataPlan
from phenomt.plan.documents import DocumentsPlan
from phenomt.plan.ldd import LddPlan
from phenomt.plan.lexcons import LexconsPlan
from phenomt.plan.locality import LocalityPlan
from phenomt.plan.models import ModelPlan
from phenomt.plan.nat import NatPlan
from phenomt.plan.report import ReportPlan
from phenomt.plan.systems import SystemsPlan, challenge_corpora
from phenomt.plan.tables import latex_files, table_file_list, table_files, table_path

__all__ = ["PROJECT_ROOT", "SCHEMA", "SNAKEFILE", "WORKFLOW", "Plan", "load_config",
           "validate_config"]


class Plan:
    """Every stage's paths and settings for one validated config."""

    def __init__(self, config: dict[str, Any], root: str | Path = PROJECT_ROOT):
        """``root``: the project folder, against which the config's own checked-in files
        (folder manifests) are found; the catalog's are package data."""
        self.config = config
        self.out: str = config["outdir"]
        self.res: str = config["resources_dir"]
        self.data = DataPlan(config, self.out, self.res, str(root))
        self.models = ModelPlan(config, self.out, self.data)
        systems = config.get("systems")
        # the LDD stages also extract the challenge sets of the given systems' test sets
        self.ldd = LddPlan(config.get("ldd"), self.out, self.res, self.data, self.models,
                           challenge_corpora(systems))
        self.locality = LocalityPlan(config.get("locality"), self.out, self.models)
        self.nat = NatPlan(config.get("nat"), config["seed"], self.out, self.data, self.models)
        lexcons = config.get("lexcons")
        self.documents = DocumentsPlan(lexcons["models"] if lexcons else None, self.out,
                                       self.data, self.models)
        self.lexcons = LexconsPlan(lexcons, self.out, self.data, self.documents)
        self.systems = SystemsPlan(systems, self.out, self.data, self.ldd)
        self.report = ReportPlan(self)

    def check(self) -> None:
        """Cross-reference checks the JSON schema cannot express; raises ValueError."""
        self.data.check()
        self.models.check()
        self.ldd.check()
        self.locality.check()
        self.nat.check()
        self.lexcons.check()
        self.systems.check()

    def benchmark(self, step: str, key: str) -> str:
        """The benchmark file of one job of a step: what a training rule's ``benchmark:``
        names and the training table reads (``key`` may be a wildcard pattern)."""
        return f"{self.out}/benchmarks/{step}/{key}.tsv"

    def training_runs(self) -> list[tuple[str, str, str]]:
        """(name, model, benchmark) of every training the run makes: the models, the NAT
        systems, the locality runs and the document-level models."""
        runs = [(m, self.models.checkpoint(m), self.benchmark("train", m))
                for m in self.models.names]
        runs += [(f"{t}/{s}", self.nat.trained(t, s), self.benchmark("nat_train", f"{t}.{s}"))
                 for t in self.nat.teachers for s in self.nat.systems()]
        runs += [(f"locality/{r}", self.locality.trained(r), self.benchmark("locality_train", r))
                 for r in self.locality.runs()]
        runs += [(d, self.documents.checkpoint(d), self.benchmark("train", d))
                 for d in (self.documents.docmodels() if self.documents.enabled else [])]
        return runs

    def training_files(self) -> list[str]:
        return [path for _, model, bench in self.training_runs() for path in (model, bench)]

    def training_args(self) -> str:
        return quote_all(f"{name}={model}={bench}" for name, model, bench in self.training_runs())

    def tables(self) -> list[str]:
        names = ["corpus_stats"] + (["bleu", "training"] if self.models.names else [])
        found = [*table_file_list(self.out, names), *self.ldd.tables(),
                 *self.locality.tables(), *self.nat.tables(), *self.lexcons.tables(),
                 *self.systems.tables()]
        if self.config["latex"]:  # each table's LaTeX, made from its JSON export
            found += [path[:-len(".json")] + ".tex" for path in found if path.endswith(".json")]
        return found

    def table_files(self, stem: str) -> dict[str, str]:
        """The files of a declared table (or a rule's pattern of them), by format: a rule's
        ``output: **PLAN.table_files("bleu")``."""
        return table_files(self.out, stem)

    def latex_input(self) -> str:
        """The JSON export rule ``table_latex`` reads (wildcard ``table``)."""
        return latex_files(self.out)[0]

    def latex_output(self) -> str:
        """The LaTeX rule ``table_latex`` writes (wildcard ``table``)."""
        return latex_files(self.out)[1]

    def table(self, stem: str, ext: str) -> str:
        """One file of a declared table."""
        return table_path(self.out, stem, ext)

    def figure_title(self, text: str) -> str:
        """The title of a figure drawn from the models this run trains: smoke-scale models
        are said to be so, so that nobody reads their numbers as a finding."""
        if self.config["scale"] == "smoke":
            return f"{text} (smoke scale: the models barely trained; not a finding)"
        return text

    def figures(self) -> list[str]:
        """The figures drawn from the tables (those of ``lexcons`` are among its tables)."""
        return [*self.systems.figures(), *self.models.learning_curves(), *self.ldd.figures(),
                *self.nat.figures()]

    def targets(self) -> list[str]:
        """Everything `snakemake` builds by default: the tables, figures and document-id
        files."""
        return [*self.tables(), *self.figures(), *self.data.all_docids()]
