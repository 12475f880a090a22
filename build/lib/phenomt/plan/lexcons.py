"""The lexical-translation-consistency stages (Lei et al., LREC-COLING 2024): the released
test set, its statistics (Tables 1-3), LTCR with the reference as calibration, Figure 3."""

from __future__ import annotations

from dataclasses import dataclass

from phenomt.plan.args import note_args, shell_args
from phenomt.plan.data import DataPlan
from phenomt.plan.documents import REFERENCE, DocumentsPlan
from phenomt.plan.section import SectionPlan
from phenomt.plan.tables import table_file_list


@dataclass(frozen=True)
class LexconsPlan(SectionPlan):
    """Paths and settings of the lexical-consistency stages; empty without a ``lexcons``
    section."""

    out: str
    data: DataPlan
    documents: DocumentsPlan

    def testset_dir(self) -> str:
        """The released test set, assembled from its manifest (``downloads``)."""
        return self.data.tree_dir(self.section["testset"])

    def dir(self) -> str:
        return f"{self.out}/lexcons"

    def align_model(self) -> str:
        """The run's one Zh-En aligner for LTCR, for every hypothesis of every set."""
        return f"{self.dir()}/align"

    def align_testsets(self) -> list[str]:
        """What the aligner is trained on besides ``align_extra``: the released test set and
        every LTCR set converted from another corpus. One training on all of them costs
        little more than one on the extra data, which a training per set would repeat."""
        return [self.testset_dir(),
                *(self.set_dir(c) for c in self.ltcr_sets() if not self.is_released(c))]

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
                           ("--samples", self.section["samples"]),
                           ("--seed", self.section["seed"])])

    def stats_dir(self) -> str:
        return f"{self.dir()}/stats"

    def table_files(self) -> list[str]:
        return table_file_list(self.out, [f"lexcons_table{n}" for n in (1, 2, 3)])

    def figure(self, name: str, ext: str) -> str:
        """A figure of the reference calibration: ``figure3`` or ``distance``."""
        return f"{self.out}/figures/lexcons_{name}.{ext}"

    def figure_files(self) -> list[str]:
        return [self.figure(n, ext) for n in ("figure3", "distance") for ext in ("png", "svg")]

    # --- LTCR of the trained models on document-level test sets -------------------------
    def ltcr_sets(self) -> list[str]:
        """Test corpora the sentence and document models translate and LTCR scores."""
        return self.documents.testsets() if self.documents.enabled else []

    def is_released(self, corpus: str) -> bool:
        """Whether a corpus is (a part of) the released, annotated test set."""
        spec = self.data.corpus(corpus)
        return (spec["format"] == "released_layout"
                and spec["files"]["zh"]["download"] == self.section["testset"])

    def released_set(self) -> str | None:
        return next((c for c in self.ltcr_sets() if self.is_released(c)), None)

    def set_dir(self, corpus: str) -> str:
        """A test corpus in the released folder layout."""
        return f"{self.dir()}/sets/{corpus}"

    def set_inputs(self, corpus: str) -> list[str]:
        if self.is_released(corpus):
            return [self.testset_dir()]
        return [self.data.raw(corpus, "zh"), self.data.raw(corpus, "en"),
                self.data.docids(corpus)]

    def set_args(self, corpus: str) -> str:
        """The released set: its first documents, chains included; any other corpus:
        converted from its prepared text and document ids (no chains)."""
        if self.is_released(corpus):
            spec = self.data.corpus(corpus)
            return "subset " + shell_args([("--testset", self.testset_dir()),
                                           ("--documents", spec["documents"]),
                                           ("--document-step", spec["document_step"])])
        return "convert " + shell_args([("--src", self.data.raw(corpus, "zh")),
                                        ("--ref", self.data.raw(corpus, "en")),
                                        ("--docids", self.data.docids(corpus))])

    def score_systems(self) -> list[str]:
        return [*self.documents.systems(), REFERENCE]

    def score_json(self, corpus: str, system: str) -> str:
        return f"{self.dir()}/scores/{corpus}/{system}.json"

    def score_hyp(self, corpus: str, system: str) -> str:
        if system == REFERENCE:
            return self.data.raw(corpus, "en")
        return self.documents.hyp(system, corpus)

    def model_table_files(self) -> list[str]:
        if self.released_set() is None:
            return []
        return table_file_list(self.out, [f"lexcons_table{n}" for n in (4, 5, 6)])

    def model_table_inputs(self) -> list[str]:
        corpus = self.released_set()
        if corpus is None:
            return []
        return [*(self.score_json(corpus, s) for s in self.score_systems()),
                *(self.documents.hyp(s, corpus) for s in self.documents.systems()),
                self.data.raw(corpus, "en")]

    def model_table_args(self) -> str:
        corpus = self.released_set()
        if corpus is None:
            return ""
        testset = self.data.document_sample(corpus, "310")
        return shell_args([
            ("--ltcr", [f"{s}={self.score_json(corpus, s)}" for s in self.score_systems()]),
            ("--hyp", [f"{s}={self.documents.hyp(s, corpus)}"
                       for s in self.documents.systems()]),
            ("--ref", self.data.raw(corpus, "en")),
            ("--scale", f"smoke-scale models ({self.documents.scale_note()}); the paper "
                        "trains transformer-base on 2M LDC sentence pairs"),
            ("--testset-note", testset)]) + " " + note_args(self.data.trained_notes())

    def sets_table_files(self) -> list[str]:
        if not self.ltcr_sets():
            return []
        return table_file_list(self.out, ["lexcons_sets"])

    def sets_table_inputs(self) -> list[str]:
        return [*(self.score_json(c, s) for c in self.ltcr_sets() for s in self.score_systems()),
                *self.tcp_files()]

    def sets_table_args(self) -> str:
        if not self.ltcr_sets():
            return ""
        tcp = self.section["tcp"]
        args = shell_args([
            ("--ltcr", [f"{c}/{s}={self.score_json(c, s)}" for c in self.ltcr_sets()
                        for s in self.score_systems()]),
            ("--tcp", [f"{s}={self.tcp_json(s)}" for s in self.tcp_systems()] or None),
            ("--tcp-set", tcp["corpus"] if tcp else None)])
        notes = [*self.data.trained_notes(), f"Models: {self.documents.scale_note()}"]
        valid = self.documents.models.valid(self.documents.sentence)
        if valid in self.ltcr_sets():
            notes.append(f"{valid} is also the models' validation set.")
        return f"{args} {note_args(notes)}"

    # --- TCP (Sun et al.) on the Doc2Doc test set ---------------------------------------
    def tcp_systems(self) -> list[str]:
        return self.documents.systems() if self.ltcr_sets() and self.section["tcp"] else []

    def tcp_json(self, system: str) -> str:
        return f"{self.dir()}/tcp/{system}.json"

    def tcp_files(self) -> list[str]:
        return [self.tcp_json(s) for s in self.tcp_systems()]

    def tcp_inputs(self, system: str) -> list[str]:
        tcp = self.section["tcp"]
        return [self.documents.hyp(system, tcp["corpus"]),
                self.data.download_path(tcp["reference"]),
                self.data.download_path(tcp["candidates"]), self.data.docids_file(tcp["corpus"]),
                *([self.data.docids(tcp["corpus"])] if self._tcp_sampled() else [])]

    def _tcp_sampled(self) -> bool:
        """The TCP set is a sample of its documents (a quick run's `documents` or
        `document_step`)."""
        corpus = self.data.corpus(self.section["tcp"]["corpus"])
        return corpus["documents"] is not None or corpus["document_step"] is not None

    def tcp_args(self, system: str) -> str:
        tcp = self.section["tcp"]
        return shell_args([("--hyp", self.documents.hyp(system, tcp["corpus"])),
                           ("--reference", self.data.download_path(tcp["reference"])),
                           ("--candidates", self.data.download_path(tcp["candidates"])),
                           ("--n-sent", self.data.docids_file(tcp["corpus"])),
                           ("--docids", self.data.docids(tcp["corpus"])
                            if self._tcp_sampled() else None),
                           ("--tokenize", True)])

    def tables(self) -> list[str]:
        """The tables and figures of the default run."""
        if not self.enabled:
            return []
        return [*self.table_files(), *self.figure_files(), *self.model_table_files(),
                *self.sets_table_files()]

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
        self.documents.check()
        tcp = self.section["tcp"]
        if tcp:
            corpus = self.data.corpus(tcp["corpus"])
            if tcp["corpus"] not in self.ltcr_sets():
                raise ValueError(f"lexcons.tcp.corpus {tcp['corpus']!r} is not a document-level "
                                 "test set of lexcons.models.sentence")
            if corpus["docids"]["format"] != "n_sent" or corpus["limit"] is not None:
                raise ValueError("lexcons.tcp: the corpus must be the Doc2Doc set with its "
                                 "n_sent document ids and whole documents (the key is per "
                                 "document): use documents or document_step, not limit")
            for key in ("reference", "candidates"):
                if tcp[key] not in downloads:
                    raise ValueError(f"lexcons.tcp.{key}: undeclared download {tcp[key]!r}")
