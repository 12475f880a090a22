"""The locality-bias experiment of the LDD paper (Table 1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from phenomt.core.nmt import USER_DIR
from phenomt.plan.args import options_json, quote_all, shell_args
from phenomt.plan.models import ModelPlan
from phenomt.plan.section import SectionPlan
from phenomt.plan.tables import table_file_list


def parse_run(run: str) -> dict[str, Any]:
    """``perposemb.learned.transformer.s1`` → setting, pos_emb, arch and seed."""
    setting, pos_emb, arch, seed = run.split(".")
    return {"setting": setting, "pos_emb": pos_emb, "arch": arch, "seed": int(seed[1:])}


@dataclass(frozen=True)
class LocalityPlan(SectionPlan):
    """Paths and settings of the experiment; empty without a ``locality`` section."""

    out: str
    models: ModelPlan


    def model(self) -> str:
        """The model whose assembled training data the experiment draws from."""
        return self.section["model"]

    def source(self, side: str) -> str:
        return self.models.tok_input(self.model(), "train", side)

    @property
    def tgt_lang(self) -> str:
        return self.models.tgt(self.model())

    def prepare_args(self) -> str:
        loc = self.section
        return shell_args([("--length", loc["length"]), ("--n-test", loc["n_test"]),
                           ("--n-valid", loc["n_valid"]), ("--seed", loc["split_seed"])])

    def runs(self) -> list[str]:
        """Run names ``<setting>.<pos_emb>.<arch>.s<seed>``."""
        if not self.section:
            return []
        return [f"{r['setting']}.{r['pos_emb']}.{r['arch']}.s{s}"
                for r in self.section["runs"] for s in self.section["seeds"]]

    def trained(self, run: str) -> str:
        """The trained model of one run (``run`` may be the rules' wildcard)."""
        return f"{self.out}/locality/models/{run}/model.pt"

    @staticmethod
    def setting(run: str) -> str:
        return parse_run(run)["setting"]

    @staticmethod
    def seed(run: str) -> int:
        return parse_run(run)["seed"]

    @staticmethod
    def meta(run: str) -> str:
        """``KEY=VALUE`` fields stored with a run's BLEU score."""
        return quote_all(f"{k}={v}" for k, v in parse_run(run).items())

    def data_dir(self, setting: str) -> str:
        return f"{self.out}/locality/data/{setting}"

    def bin_dir(self, setting: str) -> str:
        return f"{self.out}/locality/bin/{setting}"

    def binarize_args(self, setting: str) -> str:
        """Word-level data of a setting, each side with its own dictionary."""
        prefix = f"{self.data_dir(setting)}/"
        return shell_args([("--trainpref", f"{prefix}train"), ("--validpref", f"{prefix}valid"),
                           ("--testpref", f"{prefix}test")])

    def resource(self, key: str) -> int:
        return int(self.section["resources"][key])

    def train_options(self, run: str) -> dict[str, Any]:
        """fairseq options of one run: the architecture, its positions, and training."""
        spec = parse_run(run)
        loc = self.section
        options = dict(loc["training"])
        if spec["arch"] == "lstm":
            options.update(loc["lstm"])
            return options
        options.update(loc["transformer"])
        if spec["setting"] == "perposemb":
            options["user_dir"] = USER_DIR
            options["arch"] = loc["perposemb_arch"]
        if spec["pos_emb"] == "learned":
            options.update(encoder_learned_pos=True, decoder_learned_pos=True)
        return options

    def train_options_json(self, run: str) -> str:
        return options_json(self.train_options(run))

    def decode_options(self, run: str) -> dict[str, Any]:
        options = dict(self.section["decode"])
        if self.setting(run) == "perposemb":
            options["user_dir"] = USER_DIR
        return options

    def decode_options_json(self, run: str) -> str:
        return options_json(self.decode_options(run))

    def scale_note(self) -> str:
        loc = self.section
        return " ".join([
            f"Scale: {loc['training'].get('max_update')} updates per run, architectures "
            f"{loc['transformer'].get('arch')} / {loc['lstm'].get('arch')}, seeds "
            f"{loc['seeds']}.", *self.models.data.trained_notes()])

    @property
    def judge_claims(self) -> bool:
        """Whether the claims table gives verdicts: ``locality.judge_claims``, or (null)
        whether the run's top-level ``scale`` is findings or paper (not smoke, not unstated)."""
        judge = (self.section or {}).get("judge_claims")
        if judge is None:
            return self.models.config.get("scale") in ("findings", "paper")
        return bool(judge)

    def lstm_encoder(self) -> str:
        """The LSTM runs' encoder as fairseq trains it: bidirectional only with
        ``encoder_bidirectional`` (fairseq's ``lstm`` is unidirectional by default)."""
        options = {**self.section["training"], **self.section["lstm"]}
        return "bidirectional" if options.get("encoder_bidirectional") else "unidirectional"

    def claims_args(self) -> str:
        """``--lstm-encoder`` and, unless :attr:`judge_claims`, ``--smoke-scale`` of the claims
        table: it names the LSTM as trained and gives no verdicts for smoke-scale models."""
        return shell_args([("--lstm-encoder", self.lstm_encoder()),
                           ("--smoke-scale", not self.judge_claims)])

    def scores(self) -> list[str]:
        return [f"{self.out}/locality/scores/{r}.json" for r in self.runs()]

    def tables(self) -> list[str]:
        if not self.runs():
            return []
        names = ["ldd_table1"] + (["ldd_locality_claims"] if self.models.samples else [])
        return table_file_list(self.out, names)

    def check(self) -> None:
        if self.section and self.model() not in self.models.names:
            raise ValueError(f"locality: undeclared model {self.model()!r}")
