"""The long-distance-dependency stages (Choshen & Abend 2019): alignment, parsing, challenge
sets, their scores, controls and Tables 2-6."""

from __future__ import annotations

from dataclasses import dataclass, field

from phenomt.plan.args import note_args, quote_all, shell_args
from phenomt.plan.data import DataPlan
from phenomt.plan.models import ModelPlan
from phenomt.plan.section import SectionPlan
from phenomt.plan.tables import table_file_list, table_path

LEXICAL_BINS = ["all", "ge1", "ge2", "ge3", "eq0", "eq1", "eq2", "eq3", "eq4", "eq5"]
BASELINE_SET = "baseline.all"


def direction_langs(direction: str) -> tuple[str, str]:
    """``de-en`` → ``("de", "en")``."""
    src, tgt = direction.split("-")
    return src, tgt


@dataclass(frozen=True)
class LddPlan(SectionPlan):
    """Paths and settings of the LDD stages; every list is empty without an ``ldd`` section."""

    out: str
    res: str
    data: DataPlan
    models: ModelPlan
    extra_corpora: dict[str, str] = field(default_factory=dict)
    """Challenge-set corpora of other stages (the given systems' test sets): name → declared
    corpus. Their sets are extracted by the same rules, with the direction's aligner, but
    neither scored by the LDD models nor shown in the LDD tables."""

    @property
    def corpora(self) -> list[str]:
        """Challenge-set corpus names (``news``, ``books``)."""
        return list(self.section["corpora"]) if self.section else []

    @property
    def directions(self) -> list[str]:
        return list(self.section["directions"]) if self.section else []

    def corpus_name(self, lcorpus: str) -> str:
        """The declared corpus behind a challenge-set corpus."""
        if lcorpus in self.extra_corpora:
            return self.extra_corpora[lcorpus]
        return self.section["corpora"][lcorpus]["corpus"]

    # --- settings ----------------------------------------------------------------------------
    @property
    def reorder_distance(self) -> int:
        return int(self.section["reorder_min_distance"])

    @property
    def parse_shards(self) -> int:
        return int(self.section["parse_shards"]) if self.section else 1

    @property
    def tokenize(self) -> str:
        return self.section["tokenize"]

    @property
    def align_iterations(self) -> int:
        return int(self.section["align"]["iterations"])

    @property
    def alignment(self) -> str:
        """Which alignment the reordering sets read: forward, reverse or gdfa."""
        return self.section["align"]["alignment"]

    def control_settings(self) -> str:
        control = self.section["control"]
        return shell_args([("--draws", control["draws"]), ("--seed", control["seed"])])

    def sheet_settings(self) -> str:
        sheet = self.section["sheet"]
        return shell_args([("--per-set", sheet["per_set"]), ("--seed", sheet["seed"])])

    @property
    def filled_sheet(self) -> list[str]:
        """The filled validation sheet to import, if one is configured."""
        filled = self.section["sheet"]["filled"] if self.section else None
        return [filled] if filled else []

    def notes(self) -> list[str]:
        if not self.section:
            return []
        return [*self.data.trained_notes(),
                *(f"{lcorpus}: {spec['note']}" for lcorpus, spec in self.section["corpora"].items()
                  if spec["note"])]

    def note_args(self) -> str:
        return note_args(self.notes())

    # --- languages -------------------------------------------------------------------------
    def phenomena(self, direction: str) -> list[str]:
        """Lexical phenomena for a direction; preposition stranding only for English sources."""
        src, _ = direction_langs(direction)
        return ["particle", "reflexive"] + (["preposition-stranding"] if src == "en" else [])

    @staticmethod
    def source_lang(direction: str) -> str:
        return direction_langs(direction)[0]

    def source(self, lcorpus: str, direction: str, tokenized: bool = True) -> str:
        """The source side of a challenge-set corpus, tokenized or raw."""
        src, _ = direction_langs(direction)
        corpus = self.corpus_name(lcorpus)
        return self.data.tok(corpus, src) if tokenized else self.data.raw(corpus, src)

    def target(self, lcorpus: str, direction: str, tokenized: bool = True) -> str:
        _, tgt = direction_langs(direction)
        corpus = self.corpus_name(lcorpus)
        return self.data.tok(corpus, tgt) if tokenized else self.data.raw(corpus, tgt)

    # --- alignment and parsing --------------------------------------------------------------
    def align_corpora(self) -> list[str]:
        """Corpora the aligner is trained on: every corpus it aligns (the LDD corpora, then
        the given systems' test sets, as an unsupervised aligner is trained on what it
        aligns), then the extras."""
        names = [self.corpus_name(c) for c in [*self.corpora, *self.extra_corpora]]
        return list(dict.fromkeys([*names, *self.section["align"]["extra"]]))

    def align_sides(self, direction: str, side: str) -> list[str]:
        """Tokenized ``src`` or ``tgt`` files of the aligner's training corpora."""
        lang = direction_langs(direction)[0 if side == "src" else 1]
        return [self.data.tok(c, lang) for c in self.align_corpora()]

    def align_extra_args(self, direction: str) -> str:
        """``--extra-src``/``--extra-tgt`` of ``phenomt align train``: every training corpus
        after the first (which is given as ``--src``/``--tgt``)."""
        src, tgt = self.align_sides(direction, "src"), self.align_sides(direction, "tgt")
        return shell_args([("--extra-src", src[1:] or None), ("--extra-tgt", tgt[1:] or None)])

    def align_dir(self, direction: str) -> str:
        return f"{self.out}/ldd/align/{direction}"

    def alignment_file(self, lcorpus: str, direction: str, kind: str | None = None) -> str:
        """``forward``, ``reverse`` or ``gdfa`` links of a corpus (default: the one in use)."""
        return f"{self.align_dir(direction)}/{lcorpus}.{kind or self.alignment}"

    def udpipe_model(self, lang: str) -> str:
        return self.data.download_path(self.section["udpipe"][lang])

    def parse_input(self, lcorpus: str, lang: str) -> str:
        return self.data.tok(self.corpus_name(lcorpus), lang)

    def conllu(self, lcorpus: str, direction: str) -> str:
        return self.parse_output(lcorpus, direction_langs(direction)[0])

    def parse_output(self, lcorpus: str, lang: str) -> str:
        """The UDPipe parse of one side of a corpus (rules parse_scatter ... parse_gather)."""
        return f"{self.out}/ldd/parse/{lcorpus}.{lang}.conllu"

    def tags_output(self, lcorpus: str, lang: str) -> str:
        """The UDPipe tags (no parse) of one side of a corpus: the same rules, ``kind`` tags."""
        return f"{self.out}/ldd/tags/{lcorpus}.{lang}.conllu"

    def is_parsed(self, lcorpus: str, lang: str) -> bool:
        """Whether the configured challenge sets parse this side of a corpus of theirs (it is
        the source of one of their directions). A given systems' test set is extracted in its
        own direction only: its target side is never parsed."""
        return lcorpus in self.corpora and any(
            direction_langs(d)[0] == lang for d in self.directions)

    @staticmethod
    def parse_args(kind: str) -> str:
        """``phenomt parse run`` options of a ``kind`` (parse, tags) of the parse rules."""
        if kind not in ("parse", "tags"):
            raise ValueError(f"unknown parse kind {kind!r}")
        return shell_args([("--tag-only", kind == "tags")])

    def udpipe_treebanks(self, name: str) -> list[str]:
        treebanks = self.section["udpipe_training"][name]["treebanks"]
        return [self.data.download_path(d) for d in treebanks]

    def udpipe_iterations(self, name: str) -> int:
        return int(self.section["udpipe_training"][name]["iterations"])

    # --- sets --------------------------------------------------------------------------------
    def sets(self, direction: str) -> list[str]:
        lexical = [f"{p}.{b}" for p in self.phenomena(direction) for b in LEXICAL_BINS]
        return [*lexical, f"reorder.ge{self.reorder_distance}"]

    def set_prefix(self, lcorpus: str, direction: str, setname: str) -> str:
        return f"{self.out}/ldd/sets/{lcorpus}/{direction}/{setname}"

    @staticmethod
    def set_key(lcorpus: str, direction: str, setname: str) -> str:
        """The set name used in LDD tables: ``corpus/direction/phenomenon/bin``."""
        phenomenon, label = setname.split(".")
        return f"{lcorpus}/{direction}/{phenomenon}/{label}"

    def all_sets(self) -> list[tuple[str, str, str]]:
        return [(c, d, s) for c in self.corpora for d in self.directions for s in self.sets(d)]

    def all_set_ids(self) -> list[str]:
        return [f"{self.set_prefix(*s)}.ids" for s in self.all_sets()]

    def set_assignments(self, kind: str | None = None, suffix: str = "") -> str:
        """``corpus/direction/phenomenon/bin=PATH`` for every set (``reorder`` or
        ``lexical`` sets only when ``kind`` is given)."""
        return quote_all(
            f"{self.set_key(*s)}={self.set_prefix(*s)}{suffix}" for s in self.all_sets()
            if kind is None or s[2].startswith("reorder") == (kind == "reorder"))

    def corpus_sources(self) -> list[str]:
        """The raw source side of every (corpus, direction), for the size tables."""
        return [self.source(c, d, tokenized=False) for c in self.corpora for d in self.directions]

    def corpus_source_args(self) -> str:
        return quote_all(f"{c}/{d}={self.source(c, d, tokenized=False)}"
                         for c in self.corpora for d in self.directions)

    # --- scoring -----------------------------------------------------------------------------
    def scoring_models(self) -> list[tuple[str, str]]:
        """(model, direction) pairs whose models translate the challenge sets."""
        if not self.section:
            return []
        return [(m, d) for d, spec in self.section["directions"].items() for m in spec["models"]]

    def scoring_cards(self) -> list[str]:
        return self.models.cards([m for m, _ in self.scoring_models()])

    def score_json(self, model: str, lcorpus: str) -> str:
        """The scores of every set of a corpus (and its baseline) for one model, in one file:
        one job per model and corpus rather than one per set, whose start-up would cost more
        than the scoring."""
        return f"{self.out}/ldd/scores/{model}/{lcorpus}.json"

    def control_json(self, model: str, lcorpus: str, setname: str) -> str:
        return f"{self.out}/ldd/control/{model}/{lcorpus}/{setname}.json"

    def set_inputs(self, model: str, lcorpus: str, setname: str) -> dict[str, str]:
        """Files to score a set: the model's full-corpus hypotheses, the reference, the
        tokenized source (for length matching) and, except for the baseline, the set's ids."""
        corpus = self.corpus_name(lcorpus)
        direction = self.models.direction(model)
        src, tgt = direction_langs(direction)
        files = {"hyp": self.models.hyp(model, corpus), "ref": self.data.raw(corpus, tgt),
                 "src_tok": self.data.tok(corpus, src)}
        if self.tokenize == "none":
            # The paper's multi-bleu setting: BLEU on Moses-tokenized hypotheses and references.
            files["hyp"] = self.models.hyp(model, corpus, "tok")
            files["ref"] = self.data.tok(corpus, tgt)
        if setname != BASELINE_SET:
            files["ids"] = f"{self.set_prefix(lcorpus, direction, setname)}.ids"
        return files

    def scores_inputs(self, model: str, lcorpus: str) -> dict[str, str | list[str]]:
        """Files to score every set of a corpus: as :meth:`set_inputs` of the baseline, with
        the ``ids`` of every set."""
        files: dict[str, str | list[str]] = dict(self.set_inputs(model, lcorpus, BASELINE_SET))
        del files["src_tok"]
        files["ids"] = list(self._set_ids(model, lcorpus).values())
        return files

    def scores_args(self, model: str, lcorpus: str) -> str:
        """The sets ``phenomt ldd score-sets`` scores, besides the baseline, as arguments."""
        return shell_args([("--model", model), ("--corpus", lcorpus),
                           ("--direction", self.models.direction(model)),
                           ("--tokenize", self.tokenize),
                           ("--set", [f"{s}={ids}" for s, ids in
                                      self._set_ids(model, lcorpus).items()])])

    def _set_ids(self, model: str, lcorpus: str) -> dict[str, str]:
        """Set name → its ``.ids`` file, for every set of the model's direction."""
        direction = self.models.direction(model)
        return {s: f"{self.set_prefix(lcorpus, direction, s)}.ids" for s in self.sets(direction)}

    def set_args(self, model: str, lcorpus: str, setname: str) -> str:
        """The set a score or control is about, as command arguments."""
        phenomenon, label = setname.split(".")
        return shell_args([("--model", model), ("--corpus", lcorpus),
                           ("--direction", self.models.direction(model)),
                           ("--phenomenon", phenomenon), ("--bin", label),
                           ("--tokenize", self.tokenize)])

    @staticmethod
    def score_table_kind(number: str) -> str:
        """Which score table paper Table ``number`` (4, 5 or 6) is."""
        return {"4": "bleu", "5": "distance", "6": "ribes"}[number]

    def control_sets(self, direction: str) -> list[str]:
        lexical = [f"{p}.{b}" for p in self.phenomena(direction)
                   for b in self.section["control"]["bins"]]
        return [*lexical, f"reorder.ge{self.reorder_distance}"]

    def all_scores(self) -> list[str]:
        return [self.score_json(model, lcorpus) for model, _ in self.scoring_models()
                for lcorpus in self.corpora]

    def all_controls(self) -> list[str]:
        return [self.control_json(m, c, s) for m, d in self.scoring_models()
                for c in self.corpora for s in self.control_sets(d)]

    def reorder_grid_table(self, lcorpus: str, direction: str, ext: str) -> str:
        return table_path(self.out, f"ldd_reorder_grid.{lcorpus}.{direction}", ext)

    @staticmethod
    def paper_set(lcorpus: str, direction: str) -> str:
        return f"{lcorpus}/{direction}"

    # --- targets -------------------------------------------------------------------------------
    def validation_sheet(self) -> str:
        return f"{self.out}/ldd/validation_sheet.tsv"

    def tables(self) -> list[str]:
        if not self.corpora:
            return []
        names = ["ldd_table2", "ldd_table3"]
        if self.scoring_models():
            names += ["ldd_table4", "ldd_table5", "ldd_table6", "ldd_control"]
        if self.filled_sheet:
            names.append("ldd_validation")
        names += [f"ldd_reorder_grid.{c}.{d}" for c in self.corpora for d in self.directions]
        return [*table_file_list(self.out, names), self.validation_sheet()]

    def figure(self, name: str, ext: str) -> str:
        """A figure drawn from the LDD tables: ``distance`` (Table 5) or ``sets`` (Table 4)."""
        return f"{self.out}/figures/ldd_{name}.{ext}"

    def figures(self) -> list[str]:
        """The figures of the default run, PNG for reading and SVG for print."""
        if not (self.corpora and self.scoring_models()):
            return []
        return [self.figure(n, ext) for n in ("distance", "sets") for ext in ("png", "svg")]

    def sets_figure_args(self) -> str:
        """How ``phenomt ldd figure-sets`` reads Table 4: the paper's sets (lexical at ≥1,
        reordering at the minimum distance), the baseline in each row."""
        return shell_args([("--baseline-column", "baseline BLEU"),
                           ("--where", f"bin=ge1,ge{self.reorder_distance}")])

    def check(self) -> None:
        """Cross-references of the ``ldd`` section; raises ValueError."""
        if not self.section:
            return
        corpora = self.data.corpora
        downloads = self.data.config["downloads"]
        for lcorpus, spec in self.section["corpora"].items():
            if spec["corpus"] not in corpora:
                raise ValueError(f"ldd corpus {lcorpus!r}: undeclared corpus {spec['corpus']!r}")
        for direction, spec in self.section["directions"].items():
            src, tgt = direction_langs(direction)
            for lcorpus in self.corpora:
                langs = self.data.langs(self.corpus_name(lcorpus))
                if sorted(langs) != sorted([src, tgt]):
                    raise ValueError(f"ldd corpus {lcorpus!r} is {langs}, not {direction}")
            if self.section["udpipe"].get(src) not in downloads:
                raise ValueError(f"ldd: no UDPipe model download for source language {src!r}")
            for model in spec["models"]:
                if model not in self.models.names:
                    raise ValueError(f"ldd direction {direction}: undeclared model {model!r}")
                if self.models.direction(model) != direction:
                    raise ValueError(f"ldd: model {model!r} does not translate {direction}")
        for corpus in self.section["align"]["extra"]:
            if corpus not in corpora:
                raise ValueError(f"ldd align: undeclared extra corpus {corpus!r}")
