"""Paths and settings of the non-autoregressive translation (NAT) stages (Wang et al., "On the
Information Redundancy in Non-Autoregressive Translation", Tables 5 and 10).

Kept apart from :mod:`phenomt.plan.base` so each paper's stages read on their own; the class is
mixed into :class:`phenomt.plan.base.Plan`.

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

from typing import Any

from phenomt.nat.recipes import (
    AR_SYSTEM,
    NAT_DATA,
    NAT_MODELS,
    NAT_TABLE_DATA,
    SYSTEM_LABELS,
    base_model,
    finetune_options,
    generate_options,
    parse_nat_system,
    train_options,
    update_freq,
)

_DEFAULT_RESOURCES = {"gpu": 0, "mem_mb": 4000, "runtime": 240}
_DEFAULT_SPEED = {"sentences": 200, "batch_sizes": [1, 128], "exclusive": True}




class NatPlan:
    """The NAT stages; uses :class:`phenomt.plan.base.Plan`'s ``model``, ``model_dir`` and
    ``bpe_file``."""

    config: dict[str, Any]
    out: str

    # --- settings ------------------------------------------------------------------------
    @property
    def nat(self) -> dict[str, Any]:
        return self.config.get("nat") or {}

    @property
    def nat_teachers(self) -> list[str]:
        """The AR teachers, one per language pair (``nat.teacher``: a name or a list)."""
        teacher = self.nat.get("teacher", [])
        return [teacher] if isinstance(teacher, str) else list(teacher)

    @property
    def nat_models(self) -> list[str]:
        return list(self.nat.get("models", NAT_MODELS))

    @property
    def nat_data(self) -> list[str]:
        return list(self.nat.get("data", NAT_DATA))

    @property
    def nat_scale(self) -> str:
        return self.nat.get("scale", "demo")

    def nat_systems(self) -> list[str]:
        """Every NAT system, ``<model>.<data>``."""
        return [f"{m}.{d}" for d in self.nat_data for m in self.nat_models]

    def nat_resources(self, system: str, decoding: bool = False) -> dict[str, Any]:
        """``nat.resources`` with the model's ``nat.model_resources`` entry over it.

        Training uses every GPU it is given; decoding (``decoding=True``) needs at most one.
        """
        model, _ = parse_nat_system(system)
        resources = {**_DEFAULT_RESOURCES, **self.nat.get("resources", {})}
        resources.update(self.nat.get("model_resources", {}).get(model, {}))
        if decoding:
            resources["gpu"] = min(1, int(resources.get("gpu", 0)))
        return resources

    def nat_direction(self, teacher: str) -> str:
        spec = self.config["models"][teacher]
        return f"{spec['src']}-{spec['tgt']}"

    # --- locations -------------------------------------------------------------------------
    def nat_dir(self, teacher: str) -> str:
        return f"{self.out}/nat/{teacher}"

    def nat_system_dir(self, teacher: str, system: str) -> str:
        return f"{self.nat_dir(teacher)}/{system}"

    def nat_data_bin(self, teacher: str, data: str) -> str:
        """The binarized training and validation data of a data condition."""
        if data == "raw":
            return f"{self.model_dir(teacher)}/bin"
        if data == "distilled":
            return f"{self.nat_dir(teacher)}/bin-distilled"
        raise ValueError(f"unknown NAT data {data!r}")

    def nat_system_data_bin(self, teacher: str, system: str) -> str:
        """The binarized data a NAT system is trained and validated on."""
        return self.nat_data_bin(teacher, parse_nat_system(system)[1])

    def nat_checkpoint(self, teacher: str, system: str) -> str:
        """The checkpoint a system decodes with: the teacher's, or the NAT model's average."""
        if system == AR_SYSTEM:
            return f"{self.model_dir(teacher)}/model.pt"
        return f"{self.nat_system_dir(teacher, system)}/model.pt"

    def nat_hyp(self, teacher: str, system: str, corpus: str, kind: str) -> str:
        """A system's hypotheses, ``kind`` ``txt`` (detokenized) or ``bpe`` (subwords). The AR
        row reuses the teacher's own test-set translations (decoded once, for ``bleu``)."""
        if kind not in ("txt", "bpe"):
            raise ValueError(f"unknown hypothesis kind {kind!r}")
        if system == AR_SYSTEM:
            return f"{self.model_dir(teacher)}/hyp/{corpus}.{kind}"
        return f"{self.nat_system_dir(teacher, system)}/hyp/{corpus}.{kind}"

    def nat_valid_reference(self, teacher: str) -> str:
        """The teacher's validation target (BPE), against which checkpoints are ranked."""
        return self.bpe_file(teacher, self.config["models"][teacher]["valid"], "tgt")

    def nat_bleu_json(self, teacher: str, system: str, corpus: str) -> str:
        return f"{self.nat_system_dir(teacher, system)}/scores/{corpus}.bleu.json"

    def nat_redundancy_json(self, teacher: str, system: str, corpus: str) -> str:
        return f"{self.nat_system_dir(teacher, system)}/scores/{corpus}.redundancy.json"

    def nat_selection_json(self, teacher: str, system: str) -> str:
        return f"{self.nat_system_dir(teacher, system)}/average.json"

    def nat_speed_json(self, teacher: str, system: str) -> str:
        return f"{self.nat_dir(teacher)}/speed/{system}.json"

    # --- fairseq options -------------------------------------------------------------------
    def nat_train_options(self, teacher: str, system: str) -> dict[str, Any]:
        """The recipe of ``nat.scale``, then ``nat.training``, then ``nat.model_overrides``.

        "+OaXE" models start from their base model's averaged checkpoint on the same data.
        At paper scale ``--update-freq`` follows an overridden ``max_tokens`` unless it is
        overridden itself.
        """
        model, data = parse_nat_system(system)
        gpus = max(1, int(self.nat_resources(system).get("gpu", 0)))
        base = base_model(model)
        if base is None:
            options = train_options(model, self.nat_scale, gpus)
        else:
            checkpoint = self.nat_checkpoint(teacher, f"{base}.{data}")
            options = finetune_options(model, checkpoint, self.nat_scale, gpus)
        overrides = {**self.nat.get("training", {}),
                     **self.nat.get("model_overrides", {}).get(model, {})}
        options.update(overrides)
        if self.nat_scale == "paper" and "max_tokens" in overrides and (
                "update_freq" not in overrides):
            options["update_freq"] = update_freq(int(options["max_tokens"]), gpus)
        return options

    def nat_base_checkpoints(self, teacher: str, system: str) -> list[str]:
        """The checkpoint a "+OaXE" system is fine-tuned from (an empty list otherwise)."""
        model, data = parse_nat_system(system)
        base = base_model(model) if model != AR_SYSTEM else None
        return [self.nat_checkpoint(teacher, f"{base}.{data}")] if base else []

    def nat_decode_options(self, teacher: str, system: str) -> dict[str, Any]:
        """fairseq-generate options: the teacher's beam search, or single-pass NAT decoding
        with ``nat.decode`` (batch size ...) over it."""
        if system == AR_SYSTEM:
            return dict(self.model(teacher)["decode"])
        model, _ = parse_nat_system(system)
        return {**generate_options(model), **self.nat.get("decode", {})}

    def nat_distill_options(self, teacher: str) -> dict[str, Any]:
        """The teacher's decoding with ``nat.distill`` over it."""
        return {**self.model(teacher)["decode"], **self.nat.get("distill", {})}

    @property
    def nat_average(self) -> int:
        """How many of the best checkpoints are averaged (5 in the paper)."""
        return int(self.nat.get("average", 5))

    # --- redundancy --------------------------------------------------------------------------
    @property
    def nat_redundancy_settings(self) -> dict[str, Any]:
        """``nat.redundancy`` with its defaults (threshold 0.8, BPE level, case-sensitive)."""
        settings = self.nat.get("redundancy", {})
        return {"threshold": settings.get("threshold", 0.8),
                "embedding_stopword_count": settings.get("embedding_stopword_count", 0),
                "level": settings.get("level", "bpe"),
                "ignore_case": bool(settings.get("ignore_case", False))}

    def nat_redundancy_options(self, teacher: str) -> dict[str, Any]:
        """``phenomt score redundancy`` settings: the teacher's embeddings and dictionary,
        stopwords from its BPE training target (k = 3 for Chinese targets, else 10)."""
        from phenomt.core.metrics.redundancy import default_stopword_count

        model_dir = self.model_dir(teacher)
        return {
            **self.nat_redundancy_settings,
            "embeddings": f"{model_dir}/model.pt",
            "embeddings_dict": f"{model_dir}/bin/dict.tgt.txt",
            "stopword_corpus": self.bpe_file(teacher, "train", "tgt"),
            "stopword_count": default_stopword_count(self.config["models"][teacher]["tgt"]),
        }

    def _redundancy_flags(self, teacher: str | None, synonyms: bool) -> list[str]:
        """The metric's settings as arguments (files are the rules' inputs): the threshold
        when synonyms are looked up, the stopword counts when a teacher gives the stopwords."""
        settings = self.nat_redundancy_settings
        args = [f"--threshold {settings['threshold']}"] if synonyms else []
        if teacher:
            options = self.nat_redundancy_options(teacher)
            args += [f"--stopword-count {options['stopword_count']}",
                     f"--embedding-stopword-count {options['embedding_stopword_count']}"]
        args.append(f"--level {settings['level']}")
        return args + (["--ignore-case"] if settings["ignore_case"] else [])

    def nat_redundancy_args(self, teacher: str) -> str:
        """Arguments of ``phenomt score redundancy`` besides its input files."""
        return " ".join(self._redundancy_flags(teacher, synonyms=True))

    # --- speed -------------------------------------------------------------------------------
    @property
    def nat_speed(self) -> dict[str, Any]:
        return {**_DEFAULT_SPEED, **self.nat.get("speed", {})}

    def nat_speed_data(self) -> str:
        """The data condition whose NAT models are timed (speed does not depend on it)."""
        return self.nat_speed.get("data") or (
            "distilled" if "distilled" in self.nat_data else self.nat_data[0])

    def nat_speed_systems(self) -> list[str]:
        return [AR_SYSTEM, *(f"{m}.{self.nat_speed_data()}" for m in self.nat_models)]

    def nat_speed_corpus(self, teacher: str) -> str:
        return self.nat_speed.get("corpus") or self.config["models"][teacher]["test"][0]

    def nat_speed_notes(self) -> list[str]:
        speed = self.nat_speed
        corpora = ", ".join(f"{self.nat_speed_corpus(t)} ({self.nat_direction(t)})"
                            for t in self.nat_teachers)
        alone = ("; each measurement ran with no other pipeline job beside it"
                 if speed.get("exclusive") else "")
        return [f"The first {speed['sentences']} sentences of {corpora}; NAT models trained "
                f"on {self.nat_speed_data()} data; AR: the teacher's beam search"
                f"{alone}."]

    def nat_bleu_meta(self, teacher: str, system: str, corpus: str) -> str:
        """``KEY=VALUE`` fields stored with a system's BLEU score (read by the tables)."""
        model, data = parse_nat_system(system)
        return " ".join([f"teacher={teacher}", f"system={system}", f"model={model}",
                         f"data={data}", f"testset={corpus}",
                         f"direction={self.nat_direction(teacher)}"])

    # --- targets -----------------------------------------------------------------------------
    def nat_table_scores(self, table: str) -> list[tuple[str, str]]:
        """(BLEU, redundancy) score files of a results table: the AR teacher, then every NAT
        system trained on the table's data, on every test set of every teacher."""
        data = NAT_TABLE_DATA[table]
        systems = [AR_SYSTEM, *(f"{m}.{data}" for m in self.nat_models)]
        return [(self.nat_bleu_json(t, s, c), self.nat_redundancy_json(t, s, c))
                for t in self.nat_teachers for c in self.config["models"][t]["test"]
                for s in systems]

    def nat_table_selections(self, table: str) -> list[str]:
        data = NAT_TABLE_DATA[table]
        return [self.nat_selection_json(t, f"{m}.{data}") for t in self.nat_teachers
                for m in self.nat_models]

    def nat_result_tables(self) -> list[str]:
        """The results tables this config produces: 5 for distilled data, 10 for raw data."""
        return [n for n, data in NAT_TABLE_DATA.items() if data in self.nat_data]

    def nat_tables(self) -> list[str]:
        if not self.nat_teachers:
            return []
        names = [f"nat_table{n}" for n in self.nat_result_tables()] + ["nat_speed"]
        if self.nat.get("annotations"):
            names.append("nat_agreement")
        return [f"{self.out}/tables/{n}.{ext}" for n in names for ext in ("md", "csv")]

    def nat_scale_notes(self) -> list[str]:
        """What the tables should say about the scale of the NAT runs."""
        if not self.nat_teachers:
            return []
        teacher = self.nat_teachers[0]
        parts = []
        for model in self.nat_models:
            options = self.nat_train_options(teacher, f"{model}.{self.nat_data[0]}")
            kind = "fine-tuning updates from the averaged base model" if base_model(model) \
                else "updates"
            interval = options.get("save_interval_updates")
            kept = f", a checkpoint every {interval}" if interval else ""
            parts.append(f"{SYSTEM_LABELS[model]} {options.get('max_update')} {kind}{kept}")
        first = f"{self.nat_models[0]}.{self.nat_data[0]}"
        options = self.nat_train_options(teacher, first)
        size = (f"{options.get('encoder_layers')}+{options.get('decoder_layers')} layers, "
                f"{options.get('encoder_embed_dim')} dimensions, FFN "
                f"{options.get('encoder_ffn_embed_dim')}")
        gpus = max(1, int(self.nat_resources(first).get("gpu", 0)))
        tokens = int(options.get("max_tokens", 0)) * int(options.get("update_freq", 1)) * gpus
        return [
            f"NAT models: {self.nat_scale} recipe, {size}, up to {tokens} tokens per update; "
            f"{'; '.join(parts)}; the best {self.nat_average} of the kept checkpoints "
            f"(interval, last, best by loss) by validation BLEU averaged; seed "
            f"{self.nat_seed}.",
            f"Distilled data: the teacher's translation of its own training source "
            f"({self._distill_description(teacher)}), binarized with the teacher's "
            "dictionary (raw and distilled share the vocabulary).",
        ]

    def _distill_description(self, teacher: str) -> str:
        options = self.nat_distill_options(teacher)
        beam = int(options.get("beam", 5))
        text = "greedy search" if beam == 1 else f"beam search, beam {beam}"
        if "max_len_a" in options or "max_len_b" in options:
            text += (f", at most {options.get('max_len_a', 0)} x source length + "
                     f"{options.get('max_len_b', 200)} tokens")
        return text

    @property
    def nat_seed(self) -> int:
        return int(self.nat.get("seed", self.config.get("seed", 1)))

    # --- checks ------------------------------------------------------------------------------
    def check_nat(self) -> None:
        """Cross-references of the ``nat`` section; raises ValueError."""
        if not self.nat:
            return
        models = self.config.get("models", {})
        if not self.nat_teachers:
            raise ValueError("nat: no teacher")
        for teacher in self.nat_teachers:
            if teacher not in models:
                raise ValueError(f"nat: teacher {teacher!r} is not declared under 'models'")
        pairs = [self.nat_direction(t) for t in self.nat_teachers]
        if len(set(pairs)) != len(pairs):
            raise ValueError(f"nat: two teachers translate the same direction ({pairs})")
        for model in self.nat_models:
            if model not in NAT_MODELS:
                raise ValueError(f"nat: unknown model {model!r}")
            base = base_model(model)
            if base and base not in self.nat_models:
                raise ValueError(f"nat: {model!r} is fine-tuned from {base!r}, which is not "
                                 "in nat.models")
        for data in self.nat_data:
            if data not in NAT_DATA:
                raise ValueError(f"nat: unknown data {data!r}")
        if self.nat_speed_data() not in self.nat_data:
            raise ValueError(f"nat.speed.data {self.nat_speed_data()!r} is not in nat.data")
        for teacher in self.nat_teachers:
            corpus = self.nat_speed_corpus(teacher)
            if corpus not in models[teacher]["test"]:
                raise ValueError(f"nat.speed.corpus {corpus!r} is not a test set of {teacher!r}")
        if self.nat_average < 1 or min(self.nat_speed["batch_sizes"]) < 1 or (
                self.nat_speed["sentences"] < 1):
            raise ValueError("nat: average, speed.sentences and speed.batch_sizes must be >= 1")
        annotations = self.nat.get("annotations") or {}
        if annotations.get("teacher") and annotations["teacher"] not in models:
            raise ValueError(f"nat.annotations: undeclared teacher {annotations['teacher']!r}")

    # --- annotations (paper Tables 4 and 9) --------------------------------------------------
    def nat_agreement_inputs(self) -> dict[str, Any]:
        """Files of the agreement check: annotations, hypotheses, and the metric's resources."""
        spec = self.nat.get("annotations") or {}
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
            options = self.nat_redundancy_options(teacher)
            files["stopwords"] = options["stopword_corpus"]
            if not spec.get("vectors"):
                files["embeddings"] = options["embeddings"]
                files["dicts"] = f"{self.model_dir(teacher)}/bin"
        return files

    def nat_agreement_args(self) -> str:
        """Arguments of ``phenomt score redundancy-agreement`` besides its input files."""
        import shlex

        spec = self.nat.get("annotations") or {}
        args = [f"--hyp {shlex.quote(f'{name}={path}')}" for name, path in spec["hyp"].items()]
        synonyms = bool(spec.get("vectors") or spec.get("teacher"))
        return " ".join(args + self._redundancy_flags(spec.get("teacher"), synonyms))

    @staticmethod
    def nat_agreement_file_args(files: dict[str, str]) -> str:
        """The optional file arguments of the agreement check, from its rule's inputs."""
        flags = {"src": "--src", "ref": "--ref", "embeddings": "--embeddings",
                 "stopwords": "--stopword-corpus"}
        args = [f"{flag} {files[key]}" for key, flag in flags.items() if files.get(key)]
        if files.get("dicts"):
            args.append(f"--embeddings-dict {files['dicts']}/dict.tgt.txt")
        return " ".join(args)
