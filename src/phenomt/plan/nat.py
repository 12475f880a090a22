"""Paths and settings of the non-autoregressive translation (NAT) stages (Wang et al., "On the
Information Redundancy in Non-Autoregressive Translation", Tables 5 and 10).

Layout, for a teacher (an AR model under ``models``, one per language pair) and a *system*:
``ar`` for the teacher itself, or ``<model>.<data>`` for a NAT model of
:data:`phenomt.nat.recipes.NAT_MODELS` trained on ``raw`` (the teacher's own training data)
or ``distilled`` data (the teacher's beam-search translation of its training source)::

    <out>/nat/<teacher>/distill/train.bpe.{src,tgt}     distilled training data (BPE)
    <out>/nat/<teacher>/bin-distilled/                 binarized with the teacher's dictionary
    <out>/nat/<teacher>/<system>/checkpoints/          fairseq checkpoints (NAT systems)
    <out>/nat/<teacher>/<system>/trained.pt            the training run's best checkpoint
    <out>/nat/<teacher>/<system>/model.pt, average.json   best-N average, its ranking
    <out>/nat/<teacher>/<system>/hyp/<corpus>.{txt,bpe}   detokenized / subword hypotheses
                                    (the AR row reads <out>/models/<teacher>/hyp/ instead)
    <out>/nat/<teacher>/<system>/scores/<corpus>.{bleu,redundancy}.json
    <out>/nat/<teacher>/speed/<system>.json             decoding speed
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from phenomt.core.metrics.redundancy import default_stopword_count
from phenomt.core.nmt import fairseq_value
from phenomt.nat.recipes import (
    AR_GREEDY,
    AR_SYSTEM,
    AR_SYSTEMS,
    NAT_DATA,
    NAT_MODELS,
    SYSTEM_LABELS,
    base_model,
    finetune_options,
    generate_options,
    parse_nat_system,
    train_options,
    update_freq,
)
from phenomt.plan.args import note_args, options_json, quote_all, shell_args
from phenomt.plan.data import DataPlan
from phenomt.plan.models import ModelPlan
from phenomt.plan.section import SectionPlan
from phenomt.plan.tables import table_file_list

#: Snakemake wildcard constraints built from the one list of NAT models.
SYSTEM_PATTERN = f"({'|'.join(NAT_MODELS)})\\.({'|'.join(NAT_DATA)})"
#: The AR teacher's names: its own search, and greedy search (speed table only).
AR_PATTERN = "|".join(sorted(AR_SYSTEMS, key=len, reverse=True))


@dataclass(frozen=True)
class NatPlan(SectionPlan):
    """Paths and settings of the NAT stages; empty without a ``nat`` section."""

    seed_default: int
    out: str
    data: DataPlan
    models: ModelPlan

    # --- settings ------------------------------------------------------------------------

    @property
    def teachers(self) -> list[str]:
        """The AR teachers, one per language pair (``nat.teacher``: a name or a list)."""
        if not self.section:
            return []
        teacher = self.section["teacher"]
        return [teacher] if isinstance(teacher, str) else list(teacher)

    @property
    def nat_models(self) -> list[str]:
        return list(self.section["models"])

    @property
    def data_conditions(self) -> list[str]:
        return list(self.section["data"])

    @property
    def scale(self) -> str:
        return self.section["scale"]

    @property
    def seed(self) -> int:
        seed = self.section["seed"]
        return int(self.seed_default if seed is None else seed)

    @property
    def average(self) -> int:
        """How many of the best checkpoints are averaged (5 in the paper)."""
        return int(self.section["average"])

    def systems(self) -> list[str]:
        """Every NAT system, ``<model>.<data>``."""
        return [f"{m}.{d}" for d in self.data_conditions for m in self.nat_models]

    def resources(self, system: str, decoding: bool = False) -> dict[str, int]:
        """``nat.resources`` with the model's ``nat.model_resources`` entry over it.

        Training uses every GPU it is given; decoding (``decoding=True``) needs at most one.
        """
        model, _ = parse_nat_system(system)
        resources = {**self.section["resources"]}
        if model in self.section["model_resources"]:
            resources.update(self.section["model_resources"][model])
        if decoding:
            resources["gpu"] = min(1, int(resources["gpu"]))
        return resources

    def resource(self, system: str, key: str, decoding: bool = False) -> int:
        return int(self.resources(system, decoding)[key])

    def direction(self, teacher: str) -> str:
        return self.models.direction(teacher)

    def tgt_lang(self, teacher: str) -> str:
        return self.models.tgt(teacher)

    @staticmethod
    def model_name(system: str) -> str:
        return parse_nat_system(system)[0]

    @staticmethod
    def data_name(system: str) -> str:
        return parse_nat_system(system)[1]

    # --- locations -------------------------------------------------------------------------
    def dir(self, teacher: str) -> str:
        return f"{self.out}/nat/{teacher}"

    def system_dir(self, teacher: str, system: str) -> str:
        return f"{self.dir(teacher)}/{system}"

    def distilled_bpe(self, teacher: str, side: str) -> str:
        return f"{self.dir(teacher)}/distill/train.bpe.{side}"

    def data_bin(self, teacher: str, data: str) -> str:
        """The binarized training and validation data of a data condition."""
        if data == "raw":
            return self.models.bin_dir(teacher)
        if data == "distilled":
            return f"{self.dir(teacher)}/bin-distilled"
        raise ValueError(f"unknown NAT data {data!r}")

    def system_data_bin(self, teacher: str, system: str) -> str:
        """The binarized data a NAT system is trained and validated on."""
        return self.data_bin(teacher, parse_nat_system(system)[1])

    def binarize_distilled_args(self, teacher: str) -> str:
        """Distilled training data and the teacher's validation data, with its dictionaries."""
        valid = self.models.bpe_file(teacher, self.models.valid(teacher), "src")
        train = self.distilled_bpe(teacher, "src")
        return shell_args([("--trainpref", train.removesuffix(".src")),
                           ("--validpref", valid.removesuffix(".src")),
                           ("--dict-dir", self.models.bin_dir(teacher))])

    def checkpoint(self, teacher: str, system: str) -> str:
        """The checkpoint a system decodes with: the teacher's, or the NAT model's average."""
        if system in AR_SYSTEMS:
            return self.models.checkpoint(teacher)
        return f"{self.system_dir(teacher, system)}/model.pt"

    def trained(self, teacher: str, system: str) -> str:
        return f"{self.system_dir(teacher, system)}/trained.pt"

    def hyp(self, teacher: str, system: str, corpus: str, kind: str) -> str:
        """A system's hypotheses, ``kind`` ``txt`` (detokenized) or ``bpe`` (subwords). The AR
        row reuses the teacher's own test-set translations (decoded once, for ``bleu``)."""
        if kind not in ("txt", "bpe"):
            raise ValueError(f"unknown hypothesis kind {kind!r}")
        if system == AR_SYSTEM:
            return self.models.hyp(teacher, corpus, kind)
        return f"{self.system_dir(teacher, system)}/hyp/{corpus}.{kind}"

    def valid_reference(self, teacher: str) -> str:
        """The teacher's validation target (BPE), against which checkpoints are ranked."""
        return self.models.bpe_file(teacher, self.models.valid(teacher), "tgt")

    def valid_source(self, teacher: str) -> str:
        return self.models.bpe_file(teacher, self.models.valid(teacher), "src")

    def bleu_json(self, teacher: str, system: str, corpus: str) -> str:
        return f"{self.system_dir(teacher, system)}/scores/{corpus}.bleu.json"

    def redundancy_json(self, teacher: str, system: str, corpus: str) -> str:
        return f"{self.system_dir(teacher, system)}/scores/{corpus}.redundancy.json"

    def selection_json(self, teacher: str, system: str) -> str:
        return f"{self.system_dir(teacher, system)}/average.json"

    def speed_dir(self, teacher: str) -> str:
        return f"{self.dir(teacher)}/speed"

    def speed_json(self, teacher: str, system: str) -> str:
        return f"{self.speed_dir(teacher)}/{system}.json"

    def speed_binarize_args(self, teacher: str) -> str:
        return shell_args([("--testpref", f"{self.speed_dir(teacher)}/test.bpe"),
                           ("--dict-dir", self.models.bin_dir(teacher))])

    # --- fairseq options -------------------------------------------------------------------
    def train_options(self, teacher: str, system: str) -> dict[str, Any]:
        """The recipe of ``nat.scale``, then ``nat.training``, then ``nat.model_overrides``.

        "+OaXE" models start from their base model's selected (averaged) checkpoint on the same
        data.
        At paper scale ``--update-freq`` follows an overridden ``max_tokens`` unless it is
        overridden itself.
        """
        model, data = parse_nat_system(system)
        gpus = max(1, self.resource(system, "gpu"))
        base = base_model(model)
        if base is None:
            options = train_options(model, self.scale, gpus)
        else:
            checkpoint = self.checkpoint(teacher, f"{base}.{data}")
            options = finetune_options(model, checkpoint, self.scale, gpus)
        overrides = dict(self.section["training"])
        if model in self.section["model_overrides"]:
            overrides.update(self.section["model_overrides"][model])
        options.update(overrides)
        if self.scale == "paper" and "max_tokens" in overrides and (
                "update_freq" not in overrides):
            options["update_freq"] = update_freq(int(options["max_tokens"]), gpus)
        return options

    def train_options_json(self, teacher: str, system: str) -> str:
        return options_json(self.train_options(teacher, system))

    def base_checkpoints(self, teacher: str, system: str) -> list[str]:
        """The checkpoint a "+OaXE" system is fine-tuned from (an empty list otherwise)."""
        model, data = parse_nat_system(system)
        base = base_model(model) if model not in AR_SYSTEMS else None
        return [self.checkpoint(teacher, f"{base}.{data}")] if base else []

    def decode_options(self, teacher: str, system: str) -> dict[str, Any]:
        """fairseq-generate options: the teacher's beam search, or single-pass NAT decoding
        with ``nat.decode`` (batch size ...) over it."""
        if system == AR_SYSTEM:
            return self.models.decode_options(teacher)
        if system == AR_GREEDY:
            return {**self.models.decode_options(teacher), "beam": 1}
        model, _ = parse_nat_system(system)
        return {**generate_options(model), **self.section["decode"]}

    def decode_options_json(self, teacher: str, system: str) -> str:
        return options_json(self.decode_options(teacher, system))

    def distill_options(self, teacher: str) -> dict[str, Any]:
        """The teacher's decoding with ``nat.distill`` over it."""
        return {**self.models.decode_options(teacher), **self.section["distill"]}

    def distill_options_json(self, teacher: str) -> str:
        return options_json(self.distill_options(teacher))

    # --- redundancy --------------------------------------------------------------------------
    def redundancy_options(self, teacher: str) -> dict[str, Any]:
        """``phenomt score redundancy`` settings: the teacher's embeddings and dictionary,
        stopwords from its BPE training target (k = 3 for Chinese targets, else 10), and the
        dictionary's most frequent tokens (``paper``: the same k, Wang et al.'s Appendix B.3
        "top-3 frequent chinese tokens in mBART dict ... for other languages the top-10")."""
        settings = self.section["redundancy"]
        count = settings["embedding_stopword_count"]
        return {
            **settings,
            "embedding_stopword_count": (default_stopword_count(self.models.tgt(teacher))
                                         if count == "paper" else count),
            "embeddings": self.models.checkpoint(teacher),
            "embeddings_dict": f"{self.models.bin_dir(teacher)}/dict.tgt.txt",
            "stopword_corpus": self.models.bpe_file(teacher, "train", "tgt"),
            "stopword_count": default_stopword_count(self.models.tgt(teacher)),
        }

    def _redundancy_flags(self, teacher: str | None, synonyms: bool) -> list[str]:
        """The metric's settings as arguments (files are the rules' inputs): the threshold
        when synonyms are looked up, the stopword counts when a teacher gives the stopwords."""
        settings = self.section["redundancy"]
        pairs: list[tuple[str, Any]] = [("--threshold", settings["threshold"] if synonyms
                                         else None)]
        if teacher:
            options = self.redundancy_options(teacher)
            pairs += [("--stopword-count", options["stopword_count"]),
                      ("--embedding-stopword-count", options["embedding_stopword_count"])]
        pairs += [("--level", settings["level"]), ("--ignore-case", bool(settings["ignore_case"]))]
        return [arg for arg in (shell_args([pair]) for pair in pairs) if arg]

    def redundancy_args(self, teacher: str) -> str:
        """Arguments of ``phenomt score redundancy`` besides its input files."""
        return " ".join(self._redundancy_flags(teacher, synonyms=True))

    # --- speed -------------------------------------------------------------------------------
    @property
    def speed(self) -> dict[str, Any]:
        return self.section["speed"]

    @property
    def speed_sentences(self) -> int:
        return int(self.speed["sentences"])

    @property
    def speed_exclusive(self) -> bool:
        return bool(self.speed["exclusive"])

    def speed_batch_sizes(self) -> str:
        return quote_all(str(b) for b in self.speed["batch_sizes"])

    def speed_data(self) -> str:
        """The data condition whose NAT models are timed (speed does not depend on it)."""
        return self.speed["data"] or (
            "distilled" if "distilled" in self.data_conditions else self.data_conditions[0])

    def speed_systems(self, teacher: str) -> list[str]:
        """The teacher's own search, greedy search too when that is a beam search, and the
        NAT models."""
        teacher_beam = int(fairseq_value(self.models.decode_options(teacher), "beam"))
        ar = [AR_SYSTEM, AR_GREEDY] if teacher_beam > 1 else [AR_SYSTEM]
        return [*ar, *(f"{m}.{self.speed_data()}" for m in self.nat_models)]

    def speed_corpus(self, teacher: str) -> str:
        return self.speed["corpus"] or self.models.test_sets(teacher)[0]

    def speed_source(self, teacher: str, side: str) -> str:
        return self.models.bpe_file(teacher, self.speed_corpus(teacher), side)

    def speed_notes(self) -> list[str]:
        speed = self.speed
        corpora = ", ".join(f"{self.speed_corpus(t)} ({self.direction(t)})"
                            for t in self.teachers)
        alone = ("; each measurement ran with no other pipeline job beside it"
                 if speed["exclusive"] else "")
        search = _search(self.decode_options(self.teachers[0], AR_SYSTEM))
        return [f"The first {speed['sentences']} sentences of {corpora}; NAT models trained "
                f"on {self.speed_data()} data; AR: the teacher's {search}"
                f"{alone}."]

    def all_speeds(self) -> list[str]:
        return [self.speed_json(t, s) for t in self.teachers for s in self.speed_systems(t)]

    def bleu_meta(self, teacher: str, system: str, corpus: str) -> str:
        """``KEY=VALUE`` fields stored with a system's BLEU score (read by the tables)."""
        model, data = parse_nat_system(system)
        return quote_all([f"teacher={teacher}", f"system={system}", f"model={model}",
                          f"data={data}", f"testset={corpus}",
                          f"direction={self.direction(teacher)}"])

    # --- targets -----------------------------------------------------------------------------
    def result_systems(self) -> list[str]:
        """The rows of the results tables: the AR teacher, then every NAT model on every
        training data condition (Tables 5 and 10 both show raw and distilled)."""
        return [AR_SYSTEM, *self.systems()]

    def table_scores(self) -> list[tuple[str, str]]:
        """(BLEU, redundancy) score files of the results tables, on every test set of every
        teacher."""
        return [(self.bleu_json(t, s, c), self.redundancy_json(t, s, c))
                for t in self.teachers for c in self.models.test_sets(t)
                for s in self.result_systems()]

    def table_score_files(self) -> list[str]:
        return [f for pair in self.table_scores() for f in pair]

    def table_score_args(self) -> str:
        return quote_all(f"{b}={r}" for b, r in self.table_scores())

    @property
    def judge_claims(self) -> bool:
        """Whether the claims table gives verdicts: ``nat.judge_claims``, or (null) whether
        the run's top-level ``scale`` is findings or paper (not smoke)."""
        judge = (self.section or {}).get("judge_claims")
        if judge is None:
            return self.models.config.get("scale") in ("findings", "paper")
        return bool(judge)

    def claims_args(self) -> str:
        """``--samples N --seed S`` of the claims table, and ``--smoke-scale`` (no verdicts)
        unless :attr:`judge_claims`."""
        return " ".join([self.models.claims_args(),
                         *([] if self.judge_claims else ["--smoke-scale"])])

    def table_selections(self) -> list[str]:
        return [self.selection_json(t, s) for t in self.teachers for s in self.systems()]

    def teacher_cards(self) -> list[str]:
        return self.models.cards(self.teachers)

    @staticmethod
    def result_tables() -> list[str]:
        """The paper's results tables: 5 (BLEU, Redu.) and 10 (CRR, DRR)."""
        return ["5", "10"]

    def tables(self) -> list[str]:
        if not self.teachers:
            return []
        names = [f"nat_table{n}" for n in self.result_tables()] + ["nat_speed"]
        if self.models.samples:
            names.append("nat_claims")
        if self.section["annotations"]:
            names.append("nat_agreement")
        return table_file_list(self.out, names)

    def figure(self, name: str, ext: str) -> str:
        """A figure drawn from the NAT tables: ``redundancy`` (Table 10) or ``speedup``."""
        return f"{self.out}/figures/nat_{name}.{ext}"

    def figures(self) -> list[str]:
        """The figures of the default run, PNG for reading and SVG for print."""
        if not self.teachers:
            return []
        return [self.figure(n, ext) for n in ("redundancy", "speedup") for ext in ("png", "svg")]

    def scale_notes(self) -> list[str]:
        """What the tables should say about the scale of the NAT runs."""
        if not self.teachers:
            return []
        trained = self.data.trained_notes()
        teacher = self.teachers[0]
        parts = []
        epoch_checkpoints = False
        for model in self.nat_models:
            options = self.train_options(teacher, f"{model}.{self.data_conditions[0]}")
            interval = options.get("save_interval_updates")
            kept = f", a checkpoint every {interval}" if interval else ""
            if not options.get("no_epoch_checkpoints"):
                epoch_checkpoints = True
                kept += ", a checkpoint every epoch"
            if not options.get("max_update") and options.get("max_epoch"):
                # The paper-scale +OaXE fine-tuning is bounded by epochs, not updates.
                kind = ("epochs of fine-tuning from the selected base model" if base_model(model)
                        else "epochs")
                parts.append(f"{SYSTEM_LABELS[model]} {options['max_epoch']} {kind}{kept}")
            else:
                kind = ("fine-tuning updates from the selected base model" if base_model(model)
                        else "updates")
                parts.append(f"{SYSTEM_LABELS[model]} {options.get('max_update')} {kind}{kept}")
        first = f"{self.nat_models[0]}.{self.data_conditions[0]}"
        options = self.train_options(teacher, first)
        size = (f"{options.get('encoder_layers')}+{options.get('decoder_layers')} layers, "
                f"{options.get('encoder_embed_dim')} dimensions, FFN "
                f"{options.get('encoder_ffn_embed_dim')}")
        gpus = max(1, self.resource(first, "gpu"))
        tokens = (int(fairseq_value(options, "max_tokens"))
                  * int(fairseq_value(options, "update_freq")) * gpus)
        kinds = "interval, epoch" if epoch_checkpoints else "interval"
        return [
            *trained,
            f"NAT models: {self.scale} recipe, {size}, up to {tokens} tokens per update; "
            f"{'; '.join(parts)}; the best {self.average} of the kept checkpoints "
            f"({kinds}, last, best by loss) by validation BLEU averaged (all of them, unranked, "
            f"when no more are kept; the best single checkpoint instead when the average "
            f"validates lower; the paper ensembles its best 5); seed "
            f"{self.seed}.",
            f"Distilled data: the teacher's translation of its own training source "
            f"({self._distill_description(teacher)}), binarized with the teacher's "
            "dictionary (raw and distilled share the vocabulary).",
        ]

    def scale_note_args(self) -> str:
        return note_args(self.scale_notes())

    def speed_note_args(self) -> str:
        return note_args([*self.speed_notes(), *self.scale_notes()])

    def _distill_description(self, teacher: str) -> str:
        options = self.distill_options(teacher)
        text = _search(options)
        if "max_len_a" in options or "max_len_b" in options:
            text += (f", at most {fairseq_value(options, 'max_len_a')} x source length + "
                     f"{fairseq_value(options, 'max_len_b')} tokens")
        return text

    # --- checks ------------------------------------------------------------------------------
    def check(self) -> None:
        """Cross-references of the ``nat`` section; raises ValueError."""
        if not self.section:
            return
        models = self.models.names
        for teacher in self.teachers:
            if teacher not in models:
                raise ValueError(f"nat: teacher {teacher!r} is not declared under 'models'")
        pairs = [self.direction(t) for t in self.teachers]
        if len(set(pairs)) != len(pairs):
            raise ValueError(f"nat: two teachers translate the same direction ({pairs})")
        for model in self.nat_models:
            base = base_model(model)
            if base and base not in self.nat_models:
                raise ValueError(f"nat: {model!r} is fine-tuned from {base!r}, which is not "
                                 "in nat.models")
        if self.speed_data() not in self.data_conditions:
            raise ValueError(f"nat.speed.data {self.speed_data()!r} is not in nat.data")
        for teacher in self.teachers:
            corpus = self.speed_corpus(teacher)
            if corpus not in self.models.test_sets(teacher):
                raise ValueError(f"nat.speed.corpus {corpus!r} is not a test set of {teacher!r}")
        annotations = self.section["annotations"] or {}
        if annotations.get("teacher") and annotations["teacher"] not in models:
            raise ValueError(f"nat.annotations: undeclared teacher {annotations['teacher']!r}")

    # --- annotations (paper Tables 4 and 9) --------------------------------------------------
    def agreement_inputs(self) -> dict[str, Any]:
        """Files of the agreement check: annotations, hypotheses, and the metric's resources."""
        spec = self.section["annotations"] if self.section else None
        if not spec:
            return {}
        files: dict[str, Any] = {"annotations": spec["file"], "hyps": list(spec["hyp"].values())}
        for key in ("src", "ref"):
            if spec.get(key):
                files[key] = spec[key]
        if spec.get("vectors"):
            files["embeddings"] = spec["vectors"]
        teacher = spec.get("teacher")
        if teacher:
            options = self.redundancy_options(teacher)
            files["stopwords"] = options["stopword_corpus"]
            if not spec.get("vectors"):
                files["embeddings"] = options["embeddings"]
                files["dicts"] = self.models.bin_dir(teacher)
        return files

    def agreement_args(self) -> str:
        """Arguments of ``phenomt score redundancy-agreement`` besides its input files."""
        spec = self.section["annotations"]
        args = [f"--hyp {shlex.quote(f'{name}={path}')}" for name, path in spec["hyp"].items()]
        synonyms = bool(spec.get("vectors") or spec.get("teacher"))
        return " ".join(args + self._redundancy_flags(spec.get("teacher"), synonyms))

    def agreement_note(self) -> str:
        return f"Annotations: {self.section['annotations']['file']}."

    @staticmethod
    def agreement_file_args(files: dict[str, str]) -> str:
        """The optional file arguments of the agreement check, from its rule's inputs."""
        flags = {"src": "--src", "ref": "--ref", "embeddings": "--embeddings",
                 "stopwords": "--stopword-corpus"}
        return shell_args([*((flag, files.get(key) or None) for key, flag in flags.items()),
                           ("--embeddings-dict",
                            f"{files['dicts']}/dict.tgt.txt" if files.get("dicts") else None)])


def _search(options: dict[str, Any]) -> str:
    """fairseq-generate's search in words."""
    beam = int(fairseq_value(options, "beam"))
    return "greedy search" if beam == 1 else f"beam search, beam {beam}"
