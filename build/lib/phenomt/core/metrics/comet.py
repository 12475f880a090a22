"""COMET (Rei et al., EMNLP 2020) from a local model, through ``unbabel-comet`` (the optional
extra ``pip install 'phenomt[comet]'``), as a registered metric.

The corpus score is the mean of the segment scores, as ``comet-score`` reports it, so each
sentence's statistics are its segment score and a count of 1: the shared resampling engine
gives COMET intervals, paired tests and challenge-set cells like any metric. Scores are shown
x 100 (wmt22-comet-da's 0.8512 is 85.12), as WMT's findings papers print them.

No model is downloaded: ``model`` names a COMET model folder as ``comet`` saves it
(``hparams.yaml`` and ``checkpoints/model.ckpt``, e.g. a copy of Unbabel/wmt22-comet-da) or its
checkpoint file. Its encoder's files must be where its ``hparams.yaml`` says (a Hugging Face
cache filled beforehand): the metric loads with ``local_files_only``.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from phenomt.core.metrics.base import Metric, register

INSTALL = ("COMET needs the optional extra: pip install 'phenomt[comet]' (unbabel-comet), "
           "then pass a downloaded COMET model folder (--comet-model DIR, or the setting "
           "comet.model=DIR)")


def checkpoint_of(model: str | os.PathLike[str]) -> Path:
    """The checkpoint file of a COMET model folder (or the file itself), checked to exist
    with the ``hparams.yaml`` comet reads beside its folder."""
    path = Path(model)
    checkpoint = path / "checkpoints" / "model.ckpt" if path.is_dir() else path
    if not checkpoint.is_file():
        raise FileNotFoundError(f"no COMET checkpoint at {checkpoint} (a COMET model folder "
                                "holds checkpoints/model.ckpt and hparams.yaml)")
    if not (checkpoint.parents[1] / "hparams.yaml").is_file():
        raise FileNotFoundError(f"no hparams.yaml in {checkpoint.parents[1]}: not a COMET "
                                "model folder")
    return checkpoint


def require(model: str | os.PathLike[str] | None) -> Path:
    """The checkpoint of ``model``, or an error that says what to install or pass: the
    front doors call it before anything runs."""
    if importlib.util.find_spec("comet") is None:
        raise RuntimeError(INSTALL)
    if not model:
        raise ValueError("COMET needs a model: pass --comet-model DIR (a downloaded COMET "
                         "model folder such as Unbabel/wmt22-comet-da's), or the setting "
                         "comet.model=DIR")
    return checkpoint_of(model)


@register
class Comet(Metric):
    """The mean COMET segment score (x 100) of a local model."""

    name = "comet"
    label = "COMET"
    columns = ("segment_score", "sentences")
    bounds = (None, None)  # a regression model's score is unbounded
    needs_source = True

    def __init__(self, model: str | None = None, batch_size: int = 16, gpus: int = 0) -> None:
        """``model``: a COMET model folder (or its checkpoint file); ``gpus``: 0 on the CPU."""
        self.model, self.batch_size, self.gpus = model, batch_size, gpus
        self._loaded: Any = None

    def ready(self) -> None:
        from phenomt.core.io import InputError

        try:
            require(self.model)
        except RuntimeError as err:
            raise InputError("comet", str(err)) from None
        except (ValueError, FileNotFoundError) as err:
            raise InputError("--model" if self.model is None else self.model, str(err)) \
                from None

    def signature(self) -> str:
        checkpoint = require(self.model)
        from importlib.metadata import version

        return (f"model:{checkpoint.parents[1].name}|size:{checkpoint.stat().st_size}"
                f"|comet:{version('unbabel-comet')}|scale:x100")

    def _model(self) -> Any:
        if self._loaded is None:
            from comet import load_from_checkpoint

            self._loaded = load_from_checkpoint(str(require(self.model)),
                                                local_files_only=True)
        return self._loaded

    def statistics(self, hypotheses: Sequence[str], references: Sequence[str],
                   sources: Sequence[str] | None = None) -> np.ndarray:
        self._check(hypotheses, references, sources)
        if not hypotheses:
            return np.zeros((0, 2))
        data = [{"src": s, "mt": h, "ref": r}
                for s, h, r in zip(sources, hypotheses, references, strict=True)]
        output = self._model().predict(data, batch_size=self.batch_size, gpus=self.gpus,
                                       progress_bar=False)
        scores = np.asarray(output.scores, dtype=np.float64)
        return np.column_stack([scores, np.ones_like(scores)])

    def score(self, totals: np.ndarray) -> float:
        return float(self.scores(totals)[0])

    def scores(self, totals: np.ndarray) -> np.ndarray:
        rows = np.atleast_2d(np.asarray(totals, dtype=np.float64))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(rows[:, 1] > 0, 100 * rows[:, 0] / rows[:, 1], np.nan)
