"""The HTML report (``make report``, Snakemake's ``--report``): the chapter, label and caption
of every table (from its declaration, :mod:`phenomt.plan.tables`), the HTML view of every
table (Snakemake shows HTML inline but CSV only as a download), and the one-line scale of the
run each caption states."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from phenomt.plan.args import shell_args
from phenomt.plan.tables import CHAPTERS, spec

if TYPE_CHECKING:
    from phenomt.plan import Plan

#: Given-systems tables whose rows name challenge sets, buckets or lines of a test set.
DRILL_TABLES = frozenset({"systems_ldd_table4", "systems_ldd_table5", "systems_ldd_table6",
                          "systems_ldd_metrics", "systems_buckets", "systems_examples"})


def paper_of(name: str) -> str:
    """The report chapter of a table: its declaration's (``ldd_table4`` → ``ldd``)."""
    return spec(name).chapter


@dataclass(frozen=True)
class ReportPlan:
    """The report's view of a plan: categories, table views and scale lines."""

    plan: Plan

    @staticmethod
    def category(paper: str) -> str:
        return CHAPTERS[paper]

    @staticmethod
    def paper_table(name: str) -> str:
        """The paper's table of ``name`` (``ldd_reorder_grid.news.de-en`` → Section 3)."""
        return spec(name).paper or "—"

    @staticmethod
    def caption(name: str) -> str:
        """The report's caption of a table, from its declaration."""
        return spec(name).caption_text()

    def table_label(self, name: str) -> str:
        """How the report lists a table: ``ldd_table4 (paper: Table 4)``. One label only:
        Snakemake's report turns a second label with two values into a switch."""
        paper = self.paper_table(name)
        return name if paper == "—" else f"{name} (paper: {paper})"

    def view(self, table: str) -> str:
        """The HTML view of a table, in its paper's folder."""
        return f"{self.plan.out}/report/{paper_of(table)}/{table}.html"

    def views(self) -> list[str]:
        """The HTML view of every table of the run that has a CSV and a Markdown file."""
        files = set(self.plan.tables())
        names = [PurePosixPath(f).name.removesuffix(".csv") for f in self.plan.tables()
                 if f.endswith(".csv") and f.removesuffix(".csv") + ".md" in files]
        return [self.view(n) for n in names]

    def sentences(self, table: str) -> list[str]:
        """The sentences records a given-systems table opens its cells from: its test set's
        (``systems_ldd_table4.<test set>``, ``systems_buckets.<test set>``, ...), or for the
        LTCR table, which spans test sets, every LTCR test set's."""
        if table == "systems_ltcr":
            return [self.plan.systems.sentences_json(t)
                    for t in self.plan.systems.ltcr_testsets
                    if t in self.plan.systems.sentences_testsets]
        stem, _, testset = table.partition(".")
        if stem not in DRILL_TABLES or testset not in self.plan.systems.sentences_testsets:
            return []
        return [self.plan.systems.sentences_json(testset)]

    def sentences_args(self, table: str) -> str:
        found = self.sentences(table)
        return shell_args([("--sentences", found)]) if found else ""

    def inputs(self) -> list[str]:
        """Everything the report shows: the run's targets and the table views."""
        return [*self.plan.targets(), *self.views()]

    # --- the scale of the run, one line per category -----------------------------------------
    def scale(self, paper: str) -> str:
        """What a caption says about the size of this run."""
        return {"data": self._data_scale, "ldd": self._ldd_scale, "nat": self._nat_scale,
                "lexcons": self._lexcons_scale, "systems": self._systems_scale}[paper]()

    def model_scale(self, name: str) -> str:
        """``transformer.de-en`` (de-en): transformer 2+2 layers, 128 dimensions, 50
        updates."""
        settings = self.plan.models.settings(name)
        arch = settings["architecture"]
        size = ""
        if arch.get("encoder_layers") is not None:
            size = (f" {arch.get('encoder_layers')}+{arch.get('decoder_layers')} layers, "
                    f"{arch.get('encoder_embed_dim')} dimensions,")
        return (f"{name} ({self.plan.models.direction(name)}): "
                f"{arch.get('arch') or 'transformer'}{size} "
                f"{settings['training'].get('max_update')} updates")

    def _data_scale(self) -> str:
        models = "; ".join(self.model_scale(m) for m in self.plan.models.names)
        return (f"{len(self.plan.data.corpora)} corpora"
                + (f"; models: {models}" if models else "") + ".")

    def _ldd_scale(self) -> str:
        ldd = self.plan.ldd
        if not ldd.corpora:
            return ""
        models = "; ".join(self.model_scale(m) for m in
                           dict.fromkeys(m for m, _ in ldd.scoring_models()))
        return (f"challenge sets of {', '.join(ldd.corpora)} ({', '.join(ldd.directions)})"
                + (f", scored with {models}" if models else "") + ".")

    def _nat_scale(self) -> str:
        notes = self.plan.nat.scale_notes()
        return notes[0] if notes else ""

    def _lexcons_scale(self) -> str:
        section = self.plan.lexcons.section
        if not section:
            return ""
        return (f"the released test set ({section['testset']}), LTCR intervals from "
                f"{section['samples']} bootstrap resamples of its documents.")

    def _systems_scale(self) -> str:
        systems = self.plan.systems
        outputs = sum(len(systems.systems(t)) for t in systems.testsets)
        return f"{outputs} system outputs on {len(systems.testsets)} test sets."
