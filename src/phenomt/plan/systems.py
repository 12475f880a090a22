"""Scoring given system outputs (``systems``): every configured output on its test set with
sacreBLEU/chrF (intervals, paired significance against a baseline) and word-level CRR/DRR
(sentence-bootstrap intervals, paired tests between named systems)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from phenomt.plan.args import shell_args
from phenomt.plan.data import DataPlan
from phenomt.plan.section import SectionPlan


@dataclass(frozen=True)
class SystemsPlan(SectionPlan):
    """Paths and settings of the system-scoring stages; empty without a ``systems`` section.

    A test set is named ``<corpus>`` of a declared test corpus; its direction is given by
    ``src`` and ``tgt``. Each job reads only its own system's output (and the baseline's), so
    adding a system re-runs only that system's jobs and the tables.
    """

    out: str
    data: DataPlan


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
        baseline = self.baseline(testset)
        return [self.hyp(testset, baseline)] if baseline and baseline != system else []

    def identity_args(self, testset: str, system: str) -> str:
        spec = self._testset(testset)["outputs"][system]
        return shell_args([("--testset", testset), ("--system", system),
                           ("--kind", spec["kind"]), ("--origin", spec["origin"]),
                           ("--licence", spec["licence"])])

    def score_args(self, testset: str, system: str) -> str:
        baseline_hyp = self.baseline_inputs(testset, system)
        return shell_args([("--target-lang", self._langs(testset)[1]),
                           ("--baseline", self.baseline(testset)),
                           ("--baseline-hyp", baseline_hyp[0] if baseline_hyp else None),
                           ("--samples", self.section["samples"]),
                           ("--seed", self.section["seed"])])

    def redundancy_args(self, testset: str) -> str:
        src, tgt = self._langs(testset)
        return shell_args([("--src", self.source(testset)), ("--ref", self.reference(testset)),
                           ("--source-lang", src), ("--target-lang", tgt),
                           ("--samples", self.section["samples"]),
                           ("--seed", self.section["seed"])])

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

    def comparisons(self, testset: str) -> list[tuple[str, str]]:
        return [tuple(pair) for pair in self._testset(testset)["compare"]]

    def comparison_json(self, testset: str, a: str, b: str) -> str:
        return f"{self.dir(testset)}/compare.{a}.{b}.json"

    def comparison_args(self, testset: str, a: str, b: str) -> str:
        return shell_args([("--a", f"{a}={self.hyp(testset, a)}"),
                           ("--b", f"{b}={self.hyp(testset, b)}")])

    def all_bleu(self) -> list[str]:
        return [self.bleu_json(t, s) for t in self.testsets for s in self.systems(t)]

    def all_redundancy(self) -> list[str]:
        return [self.redundancy_json(t, s) for t in self.testsets for s in self.systems(t)]

    def all_comparisons(self) -> list[str]:
        return [self.comparison_json(t, a, b) for t in self.testsets
                for a, b in self.comparisons(t)]

    def tables(self) -> list[str]:
        if not self.testsets:
            return []
        return [f"{self.out}/tables/systems_{n}.{ext}" for n in ("bleu", "redundancy")
                for ext in ("md", "csv")]

    def check(self) -> None:
        if not self.section:
            return
        for testset, spec in self.section["testsets"].items():
            corpus = spec["corpus"]
            if sorted(self.data.langs(corpus)) != sorted([spec["src"], spec["tgt"]]):
                raise ValueError(f"systems.{testset}: corpus {corpus!r} is not "
                                 f"{spec['src']}-{spec['tgt']}")
            names = set(spec["outputs"])
            if spec["baseline"] and spec["baseline"] not in names:
                raise ValueError(f"systems.{testset}: baseline {spec['baseline']!r} is not "
                                 "one of its outputs")
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
