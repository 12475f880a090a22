"""Paths and settings of the long-distance-dependency stages (challenge sets, Table 1-6).

Kept apart from :mod:`phenomt.plan.base` so each paper's stages read on their own; the class is
mixed into :class:`phenomt.plan.base.Plan`.
"""

from __future__ import annotations

from typing import Any

from phenomt.core.nmt import USER_DIR

LEXICAL_BINS = ["all", "ge1", "ge2", "ge3", "eq0", "eq1", "eq2", "eq3", "eq4", "eq5"]
MIN_DISTANCE_BINS = ["all", "ge1", "ge2", "ge3"]



def bin_arguments(label: str) -> str:
    """``all``/``geK``/``eqK`` → the extraction CLI's distance arguments."""
    if label == "all":
        return "--min-distance 0"
    kind, value = label[:2], int(label[2:])
    return f"--min-distance {value}" + (" --exact" if kind == "eq" else "")


class LddPlan:
    config: dict[str, Any]
    out: str

    @property
    def ldd(self) -> dict[str, Any]:
        return self.config.get("ldd") or {}

    @property
    def ldd_corpora(self) -> dict[str, dict[str, Any]]:
        return self.ldd.get("corpora", {})

    @property
    def ldd_directions(self) -> dict[str, dict[str, Any]]:
        return self.ldd.get("directions", {})

    @staticmethod
    def direction_langs(direction: str) -> tuple[str, str]:
        src, tgt = direction.split("-")
        return src, tgt

    def ldd_phenomena(self, direction: str) -> list[str]:
        """Lexical phenomena for a direction; preposition stranding only for English sources."""
        src, _ = self.direction_langs(direction)
        phenomena = ["particle", "reflexive"]
        return phenomena + (["preposition-stranding"] if src == "en" else [])

    @property
    def reorder_distance(self) -> int:
        return int(self.ldd.get("reorder_min_distance", 5))

    def ldd_sets(self, direction: str) -> list[str]:
        lexical = [f"{p}.{b}" for p in self.ldd_phenomena(direction) for b in LEXICAL_BINS]
        return [*lexical, f"reorder.ge{self.reorder_distance}"]

    def ldd_corpus_name(self, lcorpus: str) -> str:
        return self.ldd_corpora[lcorpus]["corpus"]

    def ldd_set_prefix(self, lcorpus: str, direction: str, setname: str) -> str:
        return f"{self.out}/ldd/sets/{lcorpus}/{direction}/{setname}"

    def ldd_set_key(self, lcorpus: str, direction: str, setname: str) -> str:
        """The set name used in LDD tables: ``corpus/direction/phenomenon/bin``."""
        phenomenon, label = setname.split(".")
        return f"{lcorpus}/{direction}/{phenomenon}/{label}"

    def ldd_models(self) -> list[tuple[str, str]]:
        """(model, direction) pairs whose models translate the challenge sets."""
        return [(m, d) for d, spec in self.ldd_directions.items() for m in spec.get("models", [])]

    def ldd_score(self, model: str, lcorpus: str, setname: str) -> str:
        return f"{self.out}/ldd/scores/{model}/{lcorpus}/{setname}.json"

    def ldd_set_inputs(self, model: str, lcorpus: str, setname: str) -> dict[str, str]:
        """Files to score a set: the model's full-corpus hypotheses, the reference, the
        tokenized source (for length matching) and, except for the baseline, the set's ids."""
        corpus = self.ldd_corpus_name(lcorpus)
        direction = self.ldd_model_direction(model)
        src, tgt = self.direction_langs(direction)
        files = {"hyp": f"{self.out}/models/{model}/hyp/{corpus}.txt",
                 "ref": self.raw(corpus, tgt), "src_tok": self.tok(corpus, src)}
        if self.ldd.get("tokenize") == "none":
            # The paper's multi-bleu setting: BLEU on Moses-tokenized hypotheses and references.
            files["hyp"] = f"{self.out}/models/{model}/hyp-tok/{corpus}.txt"
            files["ref"] = self.tok(corpus, tgt)
        if setname != "baseline.all":
            files["ids"] = f"{self.ldd_set_prefix(lcorpus, direction, setname)}.ids"
        return files

    def ldd_control(self, model: str, lcorpus: str, setname: str) -> str:
        return f"{self.out}/ldd/control/{model}/{lcorpus}/{setname}.json"

    def ldd_control_sets(self, direction: str) -> list[str]:
        bins = self.ldd.get("control", {}).get("bins", ["eq0", "eq1", "eq2", "eq3"])
        lexical = [f"{p}.{b}" for p in self.ldd_phenomena(direction) for b in bins]
        return [*lexical, f"reorder.ge{self.reorder_distance}"]

    def ldd_all_sets(self) -> list[tuple[str, str, str]]:
        return [(c, d, s) for c in self.ldd_corpora for d in self.ldd_directions
                for s in self.ldd_sets(d)]

    def ldd_all_scores(self) -> list[str]:
        out = []
        for model, direction in self.ldd_models():
            for lcorpus in self.ldd_corpora:
                out.append(self.ldd_score(model, lcorpus, "baseline.all"))
                out += [self.ldd_score(model, lcorpus, s) for s in self.ldd_sets(direction)]
        return out

    def ldd_all_controls(self) -> list[str]:
        return [self.ldd_control(m, c, s) for m, d in self.ldd_models() for c in self.ldd_corpora
                for s in self.ldd_control_sets(d)]

    def ldd_model_direction(self, model: str) -> str:
        spec = self.config["models"][model]
        return f"{spec['src']}-{spec['tgt']}"

    def ldd_align_corpora(self, direction: str) -> list[str]:
        """Corpora the aligner of a direction is trained on: the LDD corpora, then extras."""
        extra = self.ldd.get("align", {}).get("extra", [])
        return list(dict.fromkeys([*map(self.ldd_corpus_name, self.ldd_corpora), *extra]))

    def ldd_notes(self) -> list[str]:
        return [f"{lcorpus}: {spec['note']}" for lcorpus, spec in self.ldd_corpora.items()
                if spec.get("note")]

    def ldd_tables(self) -> list[str]:
        if not self.ldd_corpora:
            return []
        names = ["ldd_table2", "ldd_table3"]
        if self.ldd_models():
            names += ["ldd_table4", "ldd_table5", "ldd_table6", "ldd_control"]
        if self.ldd.get("sheet", {}).get("filled"):
            names.append("ldd_validation")
        tables = [f"{self.out}/tables/{n}.{ext}" for n in names for ext in ("md", "csv")]
        return [*tables, f"{self.out}/ldd/validation_sheet.tsv"]

    def check_ldd(self) -> None:
        """Cross-references of the ``ldd`` and ``locality`` sections; raises ValueError."""
        corpora = self.config.get("corpora", {})
        downloads = self.config.get("downloads", {})
        models = self.config.get("models", {})
        for lcorpus, spec in self.ldd_corpora.items():
            if spec["corpus"] not in corpora:
                raise ValueError(f"ldd corpus {lcorpus!r}: undeclared corpus {spec['corpus']!r}")
        for direction, spec in self.ldd_directions.items():
            src, tgt = self.direction_langs(direction)
            for lcorpus in self.ldd_corpora:
                langs = corpora[self.ldd_corpus_name(lcorpus)]["langs"]
                if sorted(langs) != sorted([src, tgt]):
                    raise ValueError(f"ldd corpus {lcorpus!r} is {langs}, not {direction}")
            if self.ldd["udpipe"].get(src) not in downloads:
                raise ValueError(f"ldd: no UDPipe model download for source language {src!r}")
            for model in spec.get("models", []):
                if model not in models:
                    raise ValueError(f"ldd direction {direction}: undeclared model {model!r}")
                if self.ldd_model_direction(model) != direction:
                    raise ValueError(f"ldd: model {model!r} does not translate {direction}")
        for corpus in self.ldd.get("align", {}).get("extra", []):
            if corpus not in corpora:
                raise ValueError(f"ldd align: undeclared extra corpus {corpus!r}")
        if self.locality and self.locality.get("model") not in models:
            raise ValueError(f"locality: undeclared model {self.locality.get('model')!r}")

    # --- locality-bias experiment (Table 1) ----------------------------------------------
    @property
    def locality(self) -> dict[str, Any]:
        return self.config.get("locality") or {}

    def locality_source(self, side: str) -> str:
        """The assembled, tokenized training data the experiment draws its sentences from."""
        return f"{self.out}/models/{self.locality.get('model')}/data/train.tok.{side}"

    def locality_runs(self) -> list[str]:
        """Run names ``<setting>.<pos_emb>.<arch>.s<seed>``."""
        seeds = self.locality.get("seeds", [1])
        return [f"{r['setting']}.{r['pos_emb']}.{r['arch']}.s{s}"
                for r in self.locality.get("runs", []) for s in seeds]

    @staticmethod
    def parse_locality_run(run: str) -> dict[str, Any]:
        setting, pos_emb, arch, seed = run.split(".")
        return {"setting": setting, "pos_emb": pos_emb, "arch": arch, "seed": int(seed[1:])}

    def locality_train_options(self, run: str) -> dict[str, Any]:
        """fairseq options of one run: the architecture, its positions, and training."""
        spec = self.parse_locality_run(run)
        loc = self.locality
        options = dict(loc.get("training", {}))
        if spec["arch"] == "lstm":
            options.update(loc.get("lstm", {"arch": "lstm"}))
            return options
        options.update(loc.get("transformer", {"arch": "transformer"}))
        if spec["setting"] == "perposemb":
            options["user_dir"] = USER_DIR
            options["arch"] = loc.get("perposemb_arch", "transformer_permuted_positions_tiny")
        if spec["pos_emb"] == "learned":
            options.update(encoder_learned_pos=True, decoder_learned_pos=True)
        return options

    def locality_decode_options(self, run: str) -> dict[str, Any]:
        options = dict(self.locality.get("decode", {"beam": 5, "batch_size": 64}))
        if self.parse_locality_run(run)["setting"] == "perposemb":
            options["user_dir"] = USER_DIR
        return options

    def locality_tables(self) -> list[str]:
        if not self.locality.get("runs"):
            return []
        return [f"{self.out}/tables/ldd_table1.{ext}" for ext in ("md", "csv")]
