"""Scoring given system outputs (``systems``): every configured output on its test set with
sacreBLEU/chrF (intervals, paired significance against a baseline) and word-level CRR/DRR
(sentence-bootstrap intervals, paired tests between named systems); the LDD challenge sets of
a test set (extracted by the LDD stages) scored for every system; LTCR (Zh->En) of a test set
with document ids, the reference scored beside as its calibration; MQM-annotated outputs with
their error rates beside LTCR and DRR."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from phenomt.plan.args import note_args, shell_args
from phenomt.plan.config import check_baselines
from phenomt.plan.data import DataPlan
from phenomt.plan.documents import REFERENCE
from phenomt.plan.ldd import LddPlan
from phenomt.plan.section import SectionPlan
from phenomt.plan.tables import table_file_list, table_files, table_path

#: Distance bins of the lexical challenge sets scored for given systems (the paper's Table 5).
LDD_BINS = ["all", "ge1", "ge2", "ge3"]
#: Paper table number → the kind of the ``table systems-ldd`` command.
LDD_TABLES = {"4": "bleu", "5": "distance", "6": "ribes"}
#: Folder of the MQM sets under the systems' output folder (not a test set name).
MQM_DIR = "mqm"
#: Names no system may take: the challenge-set tables have a column per system beside these
#: columns of their own, which such a name would overwrite.
RESERVED_SYSTEM_NAMES = ("set", "phenomenon", "distance", "sentences", "metric")
#: The tables of ``phenomt systems analyse`` (``table systems-analysis --kind``).
ANALYSIS_TABLES = ("buckets", "ngrams", "examples")
#: An LTCR set of the rules: a test set's name, or ``mqm/<MQM set>``.
LTCR_SET = rf"(?:{MQM_DIR}/)?[^/]+"


def _table_outputs(out: str, stems: dict[str, str]) -> dict[str, str]:
    """The files of several tables made by one job, as a rule's named outputs."""
    return {f"{kind}_{ext}": path for kind, stem in stems.items()
            for ext, path in table_files(out, stem).items()}


def _tables_args(out: str, stems: dict[str, str]) -> str:
    """The ``--kind K ... --md M ... --csv C ...`` of a command that makes several tables."""
    return shell_args([("--kind", list(stems)),
                       ("--md", [table_path(out, s, "md") for s in stems.values()]),
                       ("--csv", [table_path(out, s, "csv") for s in stems.values()])])


def ldd_corpus(testset: str) -> str:
    """The challenge-set corpus name of a test set (LDD paths take no dots)."""
    return testset.replace(".", "_")


def mqm_key(name: str) -> str:
    """The LTCR set of an MQM set (its files are under ``systems/mqm/<name>``)."""
    return f"{MQM_DIR}/{name}"


def challenge_corpora(section: dict[str, Any] | None) -> dict[str, str]:
    """Challenge-set corpus → declared corpus, for the test sets with ``ldd: true``."""
    if not section:
        return {}
    return {ldd_corpus(name): spec["corpus"] for name, spec in section["testsets"].items()
            if spec["ldd"]}


@dataclass(frozen=True)
class SystemsPlan(SectionPlan):
    """Paths and settings of the system-scoring stages; empty without a ``systems`` section.

    A test set is named ``<corpus>`` of a declared test corpus; its direction is given by
    ``src`` and ``tgt``. Each job reads only its own system's output (and the baseline's), so
    adding a system re-runs only that system's jobs and the tables.
    """

    out: str
    data: DataPlan
    ldd: LddPlan

    @property
    def testsets(self) -> list[str]:
        return list(self.section["testsets"]) if self.section else []

    def _testset(self, testset: str) -> dict[str, Any]:
        return self.section["testsets"][testset]

    def systems(self, testset: str) -> list[str]:
        return list(self._testset(testset)["outputs"])

    def hyp(self, testset: str, system: str) -> str:
        """A system's output: a download of the config or a user's file."""
        spec = self._testset(testset)["outputs"][system]
        return self.data.download_path(spec["download"]) if spec["download"] else spec["path"]

    def _langs(self, testset: str) -> tuple[str, str]:
        spec = self._testset(testset)
        return spec["src"], spec["tgt"]

    def source(self, testset: str) -> str:
        return self.data.raw(self._testset(testset)["corpus"], self._langs(testset)[0])

    def reference(self, testset: str) -> str:
        return self.data.raw(self._testset(testset)["corpus"], self._langs(testset)[1])

    def mask(self, testset: str) -> list[str]:
        """The 1/0 line mask of the main result (e.g. official lines), if any."""
        mask = self._testset(testset)["mask"]
        return [self.data.download_path(mask)] if mask else []

    def baseline(self, testset: str) -> str | None:
        return self._testset(testset)["baseline"]

    def baseline_inputs(self, testset: str, system: str) -> list[str]:
        """What a score job reads of the baseline: its output and its own score record (the
        paired tests take the baseline's statistics from it)."""
        baseline = self.baseline(testset)
        return ([self.hyp(testset, baseline), self.bleu_json(testset, baseline)]
                if baseline and baseline != system else [])

    def identity_args(self, testset: str, system: str) -> str:
        spec = self._testset(testset)["outputs"][system]
        return shell_args([("--testset", testset), ("--system", system),
                           ("--kind", spec["kind"]), ("--origin", spec["origin"]),
                           ("--licence", spec["licence"])])

    def score_metrics(self, testset: str) -> list[str]:
        """The metrics of the test set's systems table: ``metrics`` of the config, LTCR only
        where it is defined (a Zh->En test set with ``ltcr: true``, whose aligner the LTCR
        rules train)."""
        return [m for m in self.section["metrics"]
                if m != "ltcr" or testset in self.ltcr_testsets]

    def score_inputs(self, testset: str) -> list[str]:
        """What a score job reads besides the texts: LTCR's pair set and aligner, the COMET
        checkpoint."""
        metrics = self.score_metrics(testset)
        ltcr = ([self.ltcr_pairs(testset), self.ltcr_align_model(testset)]
                if "ltcr" in metrics else [])
        return [*ltcr, *self.comet_inputs(metrics)]

    def score_args(self, testset: str, system: str) -> str:
        baseline = self.baseline_inputs(testset, system)
        src, tgt = self._langs(testset)
        metrics = self.score_metrics(testset)
        settings = [f"ltcr.pairs={self.ltcr_pairs(testset)}",
                    f"ltcr.align_model={self.ltcr_align_dir(testset)}"] \
            if "ltcr" in metrics else []
        settings += self.comet_settings(metrics)
        return shell_args([("--target-lang", tgt), ("--source-lang", src),
                           ("--baseline", self.baseline(testset)),
                           ("--baseline-hyp", baseline[0] if baseline else None),
                           ("--baseline-record", baseline[1] if baseline else None),
                           ("--metrics", metrics), ("--setting", settings or None),
                           ("--samples", self.section["samples"]),
                           ("--seed", self.section["seed"])])

    # --- COMET from a local model (the optional extra) ---------------------------------------
    @property
    def comet_model(self) -> str | None:
        return self.section["comet_model"]

    def comet_checkpoint(self) -> str:
        """The checkpoint of ``comet_model``: the file itself, or a model folder's
        ``checkpoints/model.ckpt``."""
        model = self.comet_model.rstrip("/")
        return model if model.endswith(".ckpt") else f"{model}/checkpoints/model.ckpt"

    def comet_inputs(self, metrics: list[str]) -> list[str]:
        return [self.comet_checkpoint()] if "comet" in metrics else []

    def comet_settings(self, metrics: list[str]) -> list[str]:
        return [f"comet.model={self.comet_model}"] if "comet" in metrics else []

    def redundancy_args(self, testset: str) -> str:
        src, tgt = self._langs(testset)
        return shell_args([("--src", self.source(testset)), ("--ref", self.reference(testset)),
                           ("--source-lang", src), ("--target-lang", tgt),
                           ("--tokens", self.tokens(testset)),
                           ("--samples", self.section["samples"]),
                           ("--seed", self.section["seed"])])

    def tokens(self, testset: str) -> list[str]:
        """The word tokens of the test set's source and reference, written once for the
        CRR/DRR jobs of all its systems: the corpus's tokenized files (the same tokenizer,
        and a run makes them for its statistics anyway), or for a pretokenized corpus,
        whose tokenized files only have their spacing normalised, the test set's own."""
        corpus = self._testset(testset)["corpus"]
        if not self.data.pretokenized(corpus):
            return [self.data.tok(corpus, lang) for lang in self._langs(testset)]
        return self._own_tokens(testset)

    def _own_tokens(self, testset: str) -> list[str]:
        return [f"{self.dir(testset)}/tokens.{side}" for side in ("src", "ref")]

    def tokenize_args(self, testset: str) -> str:
        """The arguments of ``systems tokenize`` (a test set on a pretokenized corpus)."""
        src, tgt = self._langs(testset)
        source, reference = self._own_tokens(testset)
        return shell_args([("--src", self.source(testset)), ("--ref", self.reference(testset)),
                           ("--source-lang", src), ("--target-lang", tgt),
                           ("--src-out", source), ("--ref-out", reference)])

    def mask_args(self, testset: str) -> str:
        mask = self.mask(testset)
        return shell_args([("--mask", mask[0] if mask else None)])

    # --- files -----------------------------------------------------------------------------
    def dir(self, testset: str) -> str:
        return f"{self.out}/systems/{testset}"

    def bleu_json(self, testset: str, system: str) -> str:
        return f"{self.dir(testset)}/{system}.bleu.json"

    def redundancy_json(self, testset: str, system: str) -> str:
        return f"{self.dir(testset)}/{system}.redundancy.json"

    def hyp_tokens(self, testset: str, system: str) -> str:
        """The output's word tokens, written by its CRR/DRR job."""
        return f"{self.dir(testset)}/{system}.tokens"

    def comparisons(self, testset: str) -> list[tuple[str, str]]:
        return [tuple(pair) for pair in self._testset(testset)["compare"]]

    def comparison_json(self, testset: str, a: str, b: str) -> str:
        return f"{self.dir(testset)}/compare.{a}.{b}.json"

    def comparison_args(self, testset: str, a: str, b: str) -> str:
        """The two systems and their CRR/DRR records, whose sentence counts are tested."""
        return shell_args([("--a", f"{a}={self.hyp(testset, a)}"),
                           ("--b", f"{b}={self.hyp(testset, b)}"),
                           ("--records", [self.redundancy_json(testset, a),
                                          self.redundancy_json(testset, b)])])

    def all_bleu(self) -> list[str]:
        return [self.bleu_json(t, s) for t in self.testsets for s in self.systems(t)]

    def all_redundancy(self) -> list[str]:
        return [self.redundancy_json(t, s) for t in self.testsets for s in self.systems(t)]

    def all_comparisons(self) -> list[str]:
        return [self.comparison_json(t, a, b) for t in self.testsets
                for a, b in self.comparisons(t)]

    # --- LDD challenge sets of a test set ----------------------------------------------------
    @property
    def ldd_testsets(self) -> list[str]:
        """Test sets whose challenge sets are extracted and scored for every system."""
        return [t for t in self.testsets if self._testset(t)["ldd"]]

    def direction(self, testset: str) -> str:
        return "-".join(self._langs(testset))

    def ldd_sets(self, testset: str) -> list[str]:
        """``phenomenon.bin`` names: the lexical phenomena of the source language at the
        bins of :data:`LDD_BINS`, and the reordering set at the LDD section's distance."""
        direction = self.direction(testset)
        lexical = [f"{p}.{b}" for p in self.ldd.phenomena(direction) for b in LDD_BINS]
        return [*lexical, f"reorder.ge{self.ldd.reorder_distance}"]

    def _set_prefix(self, testset: str, setname: str) -> str:
        return self.ldd.set_prefix(ldd_corpus(testset), self.direction(testset), setname)

    def ldd_set_files(self, testset: str) -> list[str]:
        """The ``.ids`` and ``.ref`` files of every challenge set of a test set, and the
        tokenized source and reference the sets were parsed and aligned from."""
        return [*(f"{self._set_prefix(testset, s)}{ext}" for s in self.ldd_sets(testset)
                  for ext in (".ids", ".ref")), *self.ldd_tokenized(testset)]

    def ldd_tokenized(self, testset: str) -> list[str]:
        """The tokenized source and reference of a test set, as the parse and the aligner
        read them (the record names the lines they kept out as too long)."""
        corpus, direction = ldd_corpus(testset), self.direction(testset)
        return [self.ldd.source(corpus, direction), self.ldd.target(corpus, direction)]

    def ldd_set_args(self, testset: str) -> str:
        return shell_args([("--set", [f"{s}={self._set_prefix(testset, s)}"
                                      for s in self.ldd_sets(testset)]),
                           ("--tokenized", self.ldd_tokenized(testset))])

    def ldd_json(self, testset: str, system: str) -> str:
        return f"{self.dir(testset)}/{system}.ldd.json"

    def target_lang_args(self, testset: str) -> str:
        return shell_args([("--target-lang", self._langs(testset)[1])])

    def ldd_score_args(self) -> str:
        return shell_args([("--samples", self.section["samples"]),
                           ("--seed", self.section["seed"]),
                           ("--metrics", self.ldd_metrics or None),
                           ("--setting", self.comet_settings(self.ldd_metrics) or None)])

    @property
    def ldd_metrics(self) -> list[str]:
        """The registered metrics scored on the challenge sets besides BLEU (none in a
        config without given systems)."""
        return list(self.section["ldd_metrics"]) if self.section else []

    def ldd_source_inputs(self, testset: str) -> list[str]:
        """The test set's source, when a challenge-set metric reads it (CRR, DRR, COMET), and
        the COMET checkpoint."""
        from phenomt.core.metrics import base as metrics

        reads = any(metrics.get(name).needs_source for name in self.ldd_metrics)
        return [self.source(testset)] if reads else []

    def ldd_metric_inputs(self) -> list[str]:
        """What the challenge-set metrics read besides the texts: the COMET checkpoint."""
        return self.comet_inputs(self.ldd_metrics)

    def ldd_source_args(self, testset: str) -> str:
        inputs = self.ldd_source_inputs(testset)
        if not inputs:
            return ""
        return shell_args([("--src", inputs[0]), ("--source-lang", self._langs(testset)[0])])

    def ldd_records(self, testset: str) -> list[str]:
        return [self.ldd_json(testset, s) for s in self.systems(testset)]

    def ldd_aligner_settings(self, testset: str) -> str:
        """The ``settings.json`` of the aligner the test set's reordering set comes from: the
        tables' note on its training data is read from it, not restated from the config."""
        return f"{self.ldd.align_dir(self.direction(testset))}/model/settings.json"

    def ldd_table_args(self, testset: str) -> str:
        """The tables' notes besides the aligner's settings: the UDPipe model, the alignment
        the reordering set reads, and the test set's tokenized source as the aligner saw it
        (the note says whether it is among the aligner's training corpora)."""
        direction = self.direction(testset)
        return shell_args([
            ("--min-sentences", self.section["ldd_min_sentences"]),
            ("--udpipe", self.ldd.section["udpipe"][self.ldd.source_lang(direction)]),
            ("--alignment", self.ldd.alignment),
            ("--aligned-source", self.ldd.source(ldd_corpus(testset), direction))])

    def _ldd_table_stems(self, testset: str) -> dict[str, str]:
        """``table systems-ldd`` kind -> the stem of its table: Tables 4 to 6, and the other
        metrics' table with ``ldd_metrics``."""
        stems = {kind: f"systems_ldd_table{n}.{testset}" for n, kind in LDD_TABLES.items()}
        if self.ldd_metrics:
            stems["metrics"] = f"systems_ldd_metrics.{testset}"
        return stems

    def ldd_table_outputs(self) -> dict[str, str]:
        """The files of a test set's challenge-set tables (wildcard ``testset``), all made
        by one job: ``<kind>_<format>`` -> file."""
        return _table_outputs(self.out, self._ldd_table_stems("{testset}"))

    def ldd_tables_args(self, testset: str) -> str:
        """``--kind``, ``--md`` and ``--csv`` of those tables, in one order."""
        return _tables_args(self.out, self._ldd_table_stems(testset))

    # --- MQM-annotated outputs ---------------------------------------------------------------
    def _mqm_sets(self) -> dict[str, dict[str, Any]]:
        return self.section["mqm"] if self.section else {}

    @property
    def mqm_sets(self) -> list[str]:
        return list(self._mqm_sets())

    def _mqm(self, name: str) -> dict[str, Any]:
        return self._mqm_sets()[name]

    def mqm_dir(self, name: str) -> str:
        return f"{self.out}/systems/{MQM_DIR}/{name}"

    def mqm_annotations(self, name: str) -> str:
        return self.data.download_path(self._mqm(name)["annotations"])

    def mqm_outputs_dir(self, name: str) -> str:
        """The plain outputs recovered from the annotations (``systems prepare-mqm``)."""
        return f"{self.mqm_dir(name)}/outputs"

    def mqm_systems(self, name: str) -> list[str]:
        return list(self._mqm(name)["systems"])

    def mqm_prepare_args(self, name: str) -> str:
        spec = self._mqm(name)
        return shell_args([("--src-lang", spec["src"]), ("--tgt-lang", spec["tgt"]),
                           ("--systems", spec["systems"])])

    def mqm_hyp(self, name: str, system: str) -> str:
        return f"{self.mqm_outputs_dir(name)}/{system}.{self._mqm(name)['tgt']}"

    def mqm_source(self, name: str) -> str:
        return f"{self.mqm_outputs_dir(name)}/_source.{self._mqm(name)['src']}"

    def mqm_docids(self, name: str) -> str:
        return f"{self.mqm_outputs_dir(name)}/_docs.txt"

    def mqm_reference(self, name: str) -> str:
        """The annotated human translation the metrics take as the reference."""
        return self.mqm_hyp(name, self._mqm(name)["reference"])

    def mqm_scored(self, name: str) -> list[str]:
        """Outputs scored for CRR/DRR: every listed one but the reference itself (scored
        against itself it has no redundancy by construction)."""
        reference = self._mqm(name)["reference"]
        return [s for s in self.mqm_systems(name) if s != reference]

    def mqm_redundancy_json(self, name: str, system: str) -> str:
        return f"{self.mqm_dir(name)}/{system}.redundancy.json"

    def mqm_redundancy_args(self, name: str, system: str) -> str:
        spec = self._mqm(name)
        return shell_args([("--testset", name), ("--system", system),
                           ("--src", self.mqm_source(name)),
                           ("--ref", self.mqm_reference(name)),
                           ("--source-lang", spec["src"]), ("--target-lang", spec["tgt"]),
                           ("--samples", self.section["samples"]),
                           ("--seed", self.section["seed"])])

    def mqm_has_ltcr(self, name: str) -> bool:
        return bool(self._mqm(name)["ltcr"])

    def mqm_ltcr_sets(self) -> list[str]:
        return [n for n in self.mqm_sets if self.mqm_has_ltcr(n)]

    def mqm_metric_inputs(self, name: str) -> dict[str, list[str]]:
        """Score records of the annotated outputs: CRR/DRR, and LTCR where configured."""
        ltcr = self.mqm_has_ltcr(name)
        return {"redundancy": [self.mqm_redundancy_json(name, s) for s in self.mqm_scored(name)],
                "ltcr": [self.ltcr_json(mqm_key(name), s) for s in self.mqm_systems(name)]
                if ltcr else []}

    def mqm_metric_args(self, name: str) -> str:
        """The metric columns set beside the rates: DRR (and LTCR's L-All), their records, and
        the categories and weak-evidence threshold of the correlations."""
        spec = self._mqm(name)
        inputs = self.mqm_metric_inputs(name)
        ltcr = self.mqm_has_ltcr(name)
        return shell_args([
            ("--records", inputs["redundancy"]),
            ("--named-records", [f"{s}={self.ltcr_json(mqm_key(name), s)}"
                                 for s in self.mqm_systems(name)] if ltcr else None),
            ("--metric", ["drr", "l_all"] if ltcr else ["drr"]),
            ("--categories", spec["categories"]), ("--weak-below", spec["weak_below"])])

    def mqm_reference_args(self, name: str) -> str:
        return shell_args([("--reference", self._mqm(name)["reference"])])

    def mqm_json(self, name: str) -> str:
        return f"{self.mqm_dir(name)}/mqm.json"

    def mqm_table(self, name: str, ext: str) -> str:
        return table_path(self.out, f"systems_mqm.{name}", ext)

    # --- LTCR (Zh->En) of test sets with document ids and of MQM sets -----------------------
    @property
    def ltcr_testsets(self) -> list[str]:
        """Test sets scored for LTCR, every system and the reference (the calibration)."""
        return [t for t in self.testsets if self._testset(t)["ltcr"]]

    def ltcr_sets(self) -> list[str]:
        """What the LTCR rules score: the LTCR test sets and ``mqm/<name>`` of the MQM sets
        with LTCR, each with its own layout and aligner under ``systems/<set>``."""
        return [*self.ltcr_testsets, *(mqm_key(m) for m in self.mqm_ltcr_sets())]

    def _mqm_name(self, ltcr_set: str) -> str | None:
        head, sep, name = ltcr_set.partition("/")
        return name if sep and head == MQM_DIR else None

    def _ltcr_spec(self, ltcr_set: str) -> dict[str, Any]:
        name = self._mqm_name(ltcr_set)
        return self._mqm(name) if name is not None else self._testset(ltcr_set)

    def _ltcr_text(self, ltcr_set: str) -> tuple[str, str, str]:
        """Source, reference and document ids (one a line) of an LTCR set."""
        name = self._mqm_name(ltcr_set)
        if name is not None:
            return self.mqm_source(name), self.mqm_reference(name), self.mqm_docids(name)
        corpus = self._testset(ltcr_set)["corpus"]
        return self.source(ltcr_set), self.reference(ltcr_set), self.data.docids(corpus)

    def ltcr_dir(self, ltcr_set: str) -> str:
        return f"{self.out}/systems/{ltcr_set}"

    def ltcr_layout_dir(self, ltcr_set: str) -> str:
        """The set's source and reference in the released lexical-consistency layout."""
        return f"{self.ltcr_dir(ltcr_set)}/testset"

    def ltcr_layout_inputs(self, ltcr_set: str) -> list[str]:
        name = self._mqm_name(ltcr_set)
        return [self.mqm_outputs_dir(name)] if name is not None else list(
            self._ltcr_text(ltcr_set))

    def ltcr_layout_args(self, ltcr_set: str) -> str:
        src, ref, docids = self._ltcr_text(ltcr_set)
        return shell_args([("--src", src), ("--ref", ref), ("--docids", docids)])

    def ltcr_pairs(self, ltcr_set: str) -> str:
        """The set's pairs of repeated source words, for the registered metric ``ltcr``."""
        return f"{self.ltcr_dir(ltcr_set)}/pairs.json"

    def ltcr_align_dir(self, ltcr_set: str) -> str:
        return f"{self.ltcr_dir(ltcr_set)}/align"

    def ltcr_align_model(self, ltcr_set: str) -> str:
        return f"{self.ltcr_align_dir(ltcr_set)}/settings.json"

    def _align_extra_files(self, ltcr_set: str, side: str) -> list[str]:
        spec = self._ltcr_spec(ltcr_set)
        return [self.data.tok(c, spec[side]) for c in spec["align_extra"]]

    def ltcr_align_extra_inputs(self, ltcr_set: str) -> list[str]:
        """Tokenized sides of the corpora the set's aligner trains on beside the set."""
        return [f for pair in zip(self._align_extra_files(ltcr_set, "src"),
                                  self._align_extra_files(ltcr_set, "tgt"), strict=True)
                for f in pair]

    def ltcr_align_extra_args(self, ltcr_set: str) -> str:
        return shell_args([("--extra-src", self._align_extra_files(ltcr_set, "src") or None),
                           ("--extra-tgt", self._align_extra_files(ltcr_set, "tgt") or None)])

    def ltcr_systems(self, ltcr_set: str) -> list[str]:
        """The hypotheses scored: an MQM set's annotated outputs (its reference among them);
        a test set's systems, then :data:`REFERENCE`, its reference (the calibration)."""
        name = self._mqm_name(ltcr_set)
        return self.mqm_systems(name) if name is not None else [
            *self.systems(ltcr_set), REFERENCE]

    def ltcr_hyp(self, ltcr_set: str, system: str) -> str:
        name = self._mqm_name(ltcr_set)
        if name is not None:
            return self.mqm_hyp(name, system)
        return self.reference(ltcr_set) if system == REFERENCE else self.hyp(ltcr_set, system)

    def ltcr_hyp_inputs(self, ltcr_set: str, system: str) -> list[str]:
        """What a scoring job waits for: an MQM set's recovered outputs, or the file."""
        name = self._mqm_name(ltcr_set)
        return [self.mqm_outputs_dir(name)] if name is not None else [
            self.ltcr_hyp(ltcr_set, system)]

    def ltcr_json(self, ltcr_set: str, system: str) -> str:
        return f"{self.ltcr_dir(ltcr_set)}/{system}.ltcr.json"

    def ltcr_args(self) -> str:
        return shell_args([("--samples", self.section["samples"]),
                           ("--seed", self.section["seed"])])

    def all_ltcr(self) -> list[str]:
        """The records of the LTCR table: every system and the calibration of each test set."""
        return [self.ltcr_json(t, s) for t in self.ltcr_testsets for s in self.ltcr_systems(t)]

    def ltcr_table_args(self) -> str:
        """Records by test set and system, each test set's baseline, and a note of what its
        aligner was trained on."""
        notes = []
        for testset in self.ltcr_testsets:
            extra = self._testset(testset)["align_extra"]
            notes.append(f"{testset}: one aligner trained on its source and reference"
                         + (f" and {', '.join(extra)}" if extra else "") + ".")
        return shell_args([
            ("--records", [f"{t}/{s}={self.ltcr_json(t, s)}" for t in self.ltcr_testsets
                           for s in self.ltcr_systems(t)]),
            ("--baseline", [f"{t}={self.baseline(t)}" for t in self.ltcr_testsets
                            if self.baseline(t)] or None),
            ("--calibration", REFERENCE), ("--samples", self.section["samples"]),
            ("--seed", self.section["seed"])]) + " " + note_args(notes)

    # --- compare-mt's analyses: each system against the baseline, merged per test set ------
    @property
    def analysis_testsets(self) -> list[str]:
        """Test sets with two or more systems, when ``analysis`` is on."""
        if not self.section or not self.section["analysis"]:
            return []
        return [t for t in self.testsets if len(self.systems(t)) > 1]

    def analysis_json(self, testset: str) -> str:
        return f"{self.dir(testset)}/analysis.json"

    def _freq_corpus(self, testset: str) -> list[str]:
        """The text whose word counts make the frequency buckets: the target side of
        ``freq_corpus`` or the file of ``freq_download``; none: wordfreq's list."""
        spec = self._testset(testset)
        if spec["freq_download"]:
            return [self.data.download_path(spec["freq_download"])]
        corpus = spec["freq_corpus"]
        return [self.data.raw(corpus, self._langs(testset)[1])] if corpus else []

    def _reference_parse(self, testset: str) -> list[str]:
        """The UDPipe tags of the test set's tokenized reference, where its challenge sets
        are extracted, its POS buckets are not turned off and a model of the target language
        is set: from the sets' own parse of that side where they parse it, else tagged alone
        (the buckets read the part of speech only)."""
        tgt = self._langs(testset)[1]
        if (testset not in self.ldd_testsets or not self._testset(testset)["pos_buckets"]
                or tgt not in self.ldd.section["udpipe"]):
            return []
        corpus = ldd_corpus(testset)
        if self.ldd.is_parsed(corpus, tgt):
            return [self.ldd.parse_output(corpus, tgt)]
        return [self.ldd.tags_output(corpus, tgt)]

    def analysis_pairs(self, testset: str) -> list[str]:
        """The systems analysed against the baseline: every other one."""
        return [s for s in self.systems(testset) if s != self.baseline(testset)]

    def analysis_pair_json(self, testset: str, system: str) -> str:
        return f"{self.dir(testset)}/{system}.analysis.json"

    def _pair(self, testset: str, system: str) -> list[str]:
        """The baseline and ``system``, in the test set's order of systems."""
        return [s for s in self.systems(testset) if s in (system, self.baseline(testset))]

    def analysis_pair_inputs(self, testset: str, system: str) -> list[str]:
        """The outputs of ``system`` and the baseline, the source and reference, the
        frequency corpus if any, the reference's parse if any (not the score records: the
        pair's words are analysed while the systems are scored)."""
        pair = self._pair(testset, system)
        return [*(self.hyp(testset, s) for s in pair), self.source(testset),
                self.reference(testset), *self._freq_corpus(testset),
                *self._reference_parse(testset), *self._pair_tokens(testset, pair)]

    def _pair_tokens(self, testset: str, pair: list[str]) -> list[str]:
        """The outputs' word tokens, which the POS buckets read (with a reference parse)."""
        if not self._reference_parse(testset):
            return []
        return [self.hyp_tokens(testset, s) for s in pair]

    def analysis_pair_args(self, testset: str, system: str) -> str:
        freq, parse = self._freq_corpus(testset), self._reference_parse(testset)
        tgt = self._langs(testset)[1]
        pair = self._pair(testset, system)
        return shell_args([
            ("--testset", testset),
            ("--hyp", [f"{s}={self.hyp(testset, s)}" for s in pair]),
            ("--baseline", self.baseline(testset)), ("--src", self.source(testset)),
            ("--ref", self.reference(testset)), ("--target-lang", tgt),
            ("--freq-corpus", freq[0] if freq else None),
            ("--ref-conllu", parse[0] if parse else None),
            ("--udpipe-model", self.ldd.section["udpipe"][tgt] if parse else None),
            ("--hyp-tokens", [f"{s}={self.hyp_tokens(testset, s)}" for s in pair]
             if parse else None),
            ("--words-only", True),
            ("--samples", self.section["samples"]), ("--seed", self.section["seed"])])

    def analysis_inputs(self, testset: str) -> list[str]:
        """Each system's analysis against the baseline, and every system's output and score
        record (their BLEU and chrF sentence statistics make the length buckets and
        examples)."""
        systems = self.systems(testset)
        return [*(self.analysis_pair_json(testset, s) for s in self.analysis_pairs(testset)),
                *(self.hyp(testset, s) for s in systems), self.source(testset),
                self.reference(testset), *(self.bleu_json(testset, s) for s in systems)]

    def analysis_args(self, testset: str) -> str:
        systems = self.systems(testset)
        return shell_args([
            ("--systems", systems),
            ("--record", [f"{s}={self.analysis_pair_json(testset, s)}"
                          for s in self.analysis_pairs(testset)]),
            ("--hyp", [f"{s}={self.hyp(testset, s)}" for s in systems]),
            ("--src", self.source(testset)), ("--ref", self.reference(testset)),
            ("--scores", [f"{s}={self.bleu_json(testset, s)}" for s in systems])])

    # --- the sentences behind the cells, for the report's drill-down -------------------------
    @property
    def sentences_testsets(self) -> list[str]:
        """Test sets with challenge sets, analyses or LTCR: their cells open their
        sentences."""
        covered = set(self.ldd_testsets) | set(self.analysis_testsets) | set(
            self.ltcr_testsets)
        return [t for t in self.testsets if t in covered]

    def sentences_json(self, testset: str) -> str:
        return f"{self.dir(testset)}/sentences.json"

    def _drill_sets(self, testset: str) -> list[tuple[str, str]]:
        if testset not in self.ldd_testsets:
            return []
        return [(s, self._set_prefix(testset, s)) for s in self.ldd_sets(testset)]

    def sentences_inputs(self, testset: str) -> list[str]:
        """Every output, source and reference; each challenge set's ids and marked source;
        the analysis record, when the test set has one; its LTCR pairs and aligner."""
        sets = [f"{prefix}{ext}" for _, prefix in self._drill_sets(testset)
                for ext in (".ids", ".src_marked")]
        analysis = [self.analysis_json(testset)] if testset in self.analysis_testsets else []
        ltcr = ([self.ltcr_pairs(testset), self.ltcr_align_model(testset)]
                if testset in self.ltcr_testsets else [])
        return [*(self.hyp(testset, s) for s in self.systems(testset)), self.source(testset),
                self.reference(testset), *sets, *analysis, *ltcr, *self.tokens(testset)]

    def sentences_args(self, testset: str) -> str:
        analysis = self.analysis_json(testset) if testset in self.analysis_testsets else None
        return shell_args([
            ("--testset", testset),
            ("--hyp", [f"{s}={self.hyp(testset, s)}" for s in self.systems(testset)]),
            ("--src", self.source(testset)), ("--ref", self.reference(testset)),
            ("--set", [f"{name}={prefix}" for name, prefix in self._drill_sets(testset)]
             or None),
            ("--analysis", analysis), ("--tokens", self.tokens(testset)),
            ("--ltcr", [self.ltcr_pairs(testset), self.ltcr_align_dir(testset)]
             if testset in self.ltcr_testsets else None),
            ("--source-lang", self._langs(testset)[0]),
            ("--target-lang", self._langs(testset)[1])])

    def _analysis_table_stems(self, testset: str) -> dict[str, str]:
        return {kind: f"systems_{kind}.{testset}" for kind in ANALYSIS_TABLES}

    def analysis_table_outputs(self) -> dict[str, str]:
        """The files of a test set's analysis tables (wildcard ``testset``), all made by one
        job: ``<kind>_<format>`` -> file."""
        return _table_outputs(self.out, self._analysis_table_stems("{testset}"))

    def analysis_tables_args(self, testset: str) -> str:
        """``--kind``, ``--md`` and ``--csv`` of those tables, in one order."""
        return _tables_args(self.out, self._analysis_table_stems(testset))

    def analysis_tables(self) -> list[str]:
        return table_file_list(self.out, [stem for t in self.analysis_testsets
                                          for stem in self._analysis_table_stems(t).values()])

    def tables(self) -> list[str]:
        if not self.testsets:
            return []
        stems = ["systems_bleu", "systems_redundancy"]
        if self.ltcr_testsets:
            stems.append("systems_ltcr")
        stems += [stem for t in self.ldd_testsets for stem in self._ldd_table_stems(t).values()]
        stems += [f"systems_mqm.{m}" for m in self.mqm_sets]
        return [*table_file_list(self.out, stems), *self.analysis_tables()]

    # --- figures: the findings a reader looks at first ---------------------------------------
    def figure(self, name: str, ext: str) -> str:
        """``redundancy``, ``ldd_sets.<test set>`` or ``mqm.<MQM set>``."""
        return f"{self.out}/figures/systems_{name}.{ext}"

    def figure_names(self) -> list[str]:
        if not self.testsets:
            return []
        return ["redundancy", *(f"ldd_sets.{t}" for t in self.ldd_testsets),
                *(f"mqm.{m}" for m in self.mqm_sets),
                *(f"buckets.{t}" for t in self.analysis_testsets)]

    def figures(self) -> list[str]:
        return [self.figure(n, ext) for n in self.figure_names() for ext in ("png", "svg")]

    def mqm_scale(self, name: str) -> str:
        """The scale line of an MQM figure's caption: its own, so that adding a system to a
        test set does not redraw it."""
        return f"the MQM annotations of {len(self.mqm_systems(name))} outputs ({name})."

    def check(self) -> None:
        if not self.section:
            return
        # validate_config refuses a bad baseline first, naming the file
        check_baselines({"systems": self.section}, "config")
        for testset, spec in self.section["testsets"].items():
            if testset == MQM_DIR:
                raise ValueError(f"systems: {MQM_DIR!r} cannot name a test set (the folder of "
                                 "the MQM sets)")
            reserved = sorted(set(spec["outputs"]) & set(RESERVED_SYSTEM_NAMES))
            if reserved:
                raise ValueError(f"systems.{testset}: {', '.join(map(repr, reserved))} cannot "
                                 "name a system (a column of the challenge-set tables)")
            if spec["ldd"]:
                self._check_ldd(testset)
            if spec["ltcr"]:
                self._check_ltcr(testset)
                if spec["mask"] and "ltcr" in self.section["metrics"]:
                    raise ValueError(f"systems.{testset}: metric ltcr scores whole documents "
                                     "and cannot be combined with a mask")
            elif spec["align_extra"]:
                raise ValueError(f"systems.{testset}: align_extra trains the LTCR aligner, "
                                 "which needs ltcr: true")
            corpus = spec["corpus"]
            if sorted(self.data.langs(corpus)) != sorted([spec["src"], spec["tgt"]]):
                raise ValueError(f"systems.{testset}: corpus {corpus!r} is not "
                                 f"{spec['src']}-{spec['tgt']}")
            freq = spec["freq_corpus"]
            if freq and spec["freq_download"]:
                raise ValueError(f"systems.{testset}: freq_corpus and freq_download exclude "
                                 "each other")
            if spec["freq_download"] and spec["freq_download"] not in self.data.config[
                    "downloads"]:
                raise ValueError(f"systems.{testset}: undeclared freq_download "
                                 f"{spec['freq_download']!r}")
            if freq and spec["tgt"] not in self.data.langs(freq):
                raise ValueError(f"systems.{testset}: freq_corpus {freq!r} has no "
                                 f"{spec['tgt']} side")
            names = set(spec["outputs"])
            for pair in spec["compare"]:
                if len(pair) != 2 or not set(pair) <= names or pair[0] == pair[1]:
                    raise ValueError(f"systems.{testset}: compare {pair} needs two of its "
                                     "outputs")
            for system, output in spec["outputs"].items():
                if bool(output["download"]) == bool(output["path"]):
                    raise ValueError(f"systems.{testset}.{system}: give a download or a path")
                if output["download"] and output["download"] not in self.data.config[
                        "downloads"]:
                    raise ValueError(f"systems.{testset}.{system}: undeclared download "
                                     f"{output['download']!r}")
        for name in self.mqm_sets:
            self._check_mqm(name)
        if "comet" in [*self.section["metrics"], *self.ldd_metrics] and not self.comet_model:
            raise ValueError("systems: metric comet needs comet_model (a COMET model folder, "
                             "e.g. a copy of Unbabel/wmt22-comet-da)")

    def _check_ldd(self, testset: str) -> None:
        if not self.ldd.enabled:
            raise ValueError(f"systems.{testset}: ldd needs the ldd section (UDPipe models, "
                             "aligner, reordering distance)")
        direction = self.direction(testset)
        src = self.ldd.source_lang(direction)
        if src not in self.ldd.section["udpipe"]:
            raise ValueError(f"systems.{testset}: ldd needs a UDPipe model for {src!r} under "
                             "ldd.udpipe")
        if direction not in self.ldd.directions:
            raise ValueError(f"systems.{testset}: ldd needs {direction} under ldd.directions "
                             "(its aligner aligns the test set)")
        if ldd_corpus(testset) in self.ldd.corpora:
            raise ValueError(f"systems.{testset}: its challenge-set name "
                             f"{ldd_corpus(testset)!r} is an ldd corpus")
        names = [t for t in self.ldd_testsets if ldd_corpus(t) == ldd_corpus(testset)]
        if len(names) > 1:
            raise ValueError(f"systems: test sets {names} share the challenge-set name "
                             f"{ldd_corpus(testset)!r}")

    def _check_mqm(self, name: str) -> None:
        spec = self._mqm(name)
        if spec["annotations"] not in self.data.config["downloads"]:
            raise ValueError(f"systems.mqm.{name}: undeclared download "
                             f"{spec['annotations']!r}")
        if spec["reference"] not in spec["systems"]:
            raise ValueError(f"systems.mqm.{name}: the reference {spec['reference']!r} is not "
                             "one of its systems")
        if spec["ltcr"] and (spec["src"], spec["tgt"]) != ("zh", "en"):
            raise ValueError(f"systems.mqm.{name}: LTCR is defined for Zh->En only")
        self._check_align_extra(f"systems.mqm.{name}", spec)

    def _check_ltcr(self, testset: str) -> None:
        spec = self._testset(testset)
        if (spec["src"], spec["tgt"]) != ("zh", "en"):
            raise ValueError(f"systems.{testset}: LTCR is defined for Zh->En only (the "
                             "repeated source words are Chinese words segmented by jieba)")
        if not self.data.has_docids(spec["corpus"]):
            raise ValueError(f"systems.{testset}: ltcr needs the document ids of corpus "
                             f"{spec['corpus']!r} (its docids)")
        if REFERENCE in spec["outputs"]:
            raise ValueError(f"systems.{testset}: with ltcr no system can be named "
                             f"{REFERENCE!r}, the reference scored as a hypothesis (the "
                             "calibration row)")
        self._check_align_extra(f"systems.{testset}", spec)

    def _check_align_extra(self, where: str, spec: dict[str, Any]) -> None:
        for corpus in spec["align_extra"]:
            if sorted(self.data.langs(corpus)) != sorted([spec["src"], spec["tgt"]]):
                raise ValueError(f"{where}.align_extra: {corpus!r} is not "
                                 f"{spec['src']}-{spec['tgt']}")
