"""The lexical-translation-consistency stages (Lei et al., LREC-COLING 2024): the released
test set, its statistics (Tables 1-3), LTCR with the reference as calibration, Figure 3."""

from __future__ import annotations

from dataclasses import dataclass

from phenomt.plan.args import shell_args
from phenomt.plan.data import DataPlan
from phenomt.plan.section import SectionPlan


@dataclass(frozen=True)
class LexconsPlan(SectionPlan):
    """Paths and settings of the lexical-consistency stages; empty without a ``lexcons``
    section."""

    out: str
    data: DataPlan


    def testset_dir(self) -> str:
        """The released test set, assembled from its manifest (``downloads``)."""
        return self.data.tree_dir(self.section["testset"])

    def dir(self) -> str:
        return f"{self.out}/lexcons"

    def align_model(self) -> str:
        """The aligner trained once on the test set (and extra data), for every hypothesis."""
        return f"{self.dir()}/align"

    def align_extra_inputs(self) -> list[str]:
        """Tokenized Chinese and English sides of the extra aligner corpora."""
        return [f for c in self.section["align_extra"]
                for f in (self.data.tok(c, "zh"), self.data.tok(c, "en"))]

    def align_extra_args(self) -> str:
        corpora = self.section["align_extra"]
        return shell_args([("--extra-src", [self.data.tok(c, "zh") for c in corpora] or None),
                           ("--extra-tgt", [self.data.tok(c, "en") for c in corpora] or None)])

    def stemmer_args(self) -> str:
        return shell_args([("--stemmer", self.section["stemmer"])])

    def metric_args(self) -> str:
        """Settings every LTCR score of this run shares."""
        return shell_args([("--stemmer", self.section["stemmer"]),
                           ("--resamples", self.section["resamples"]),
                           ("--seed", self.section["seed"])])

    def stats_dir(self) -> str:
        return f"{self.dir()}/stats"

    def table_files(self) -> list[str]:
        return [f"{self.out}/tables/lexcons_table{n}.{ext}" for n in (1, 2, 3)
                for ext in ("md", "csv")]

    def figure_files(self) -> list[str]:
        return [f"{self.out}/figures/lexcons_figure3.{ext}" for ext in ("png", "svg")]

    def tables(self) -> list[str]:
        """The tables and figures of the default run."""
        return [*self.table_files(), *self.figure_files()] if self.enabled else []

    def check(self) -> None:
        if not self.section:
            return
        downloads = self.data.config["downloads"]
        testset = self.section["testset"]
        if testset not in downloads or downloads[testset]["manifest"] is None:
            raise ValueError(f"lexcons.testset {testset!r} is not a folder download "
                             "(a `downloads` entry with a manifest)")
        for corpus in self.section["align_extra"]:
            if sorted(self.data.langs(corpus)) != ["en", "zh"]:
                raise ValueError(f"lexcons.align_extra: {corpus!r} is not a Zh-En corpus")
