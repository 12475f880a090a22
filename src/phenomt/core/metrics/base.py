"""The metric interface and its registry.

A metric turns every hypothesis sentence (with its reference, and its source when the metric
needs one) into a row of **sufficient statistics**, and the corpus score is a function of the
rows summed over the corpus: BLEU's n-gram counts, chrF's character and word n-gram counts,
TER's edits and reference length, CRR/DRR's pair counts over |Y| - 1, RIBES's sentence scores
and their count. So one sentence bootstrap and one paired test
(:mod:`phenomt.core.metrics.resample`) serve every metric, and a subset of a test set (a
challenge set, a distance bin, a masked part) is scored by summing its rows.

A metric states every setting that changes its number in :meth:`Metric.signature`, as
sacreBLEU does. Metrics register themselves by name with :func:`register`; :func:`get` finds
them (importing the metric modules on first use, so that a command that needs no metric does
not pay for them). Adding a metric is its module (a :class:`Metric` subclass decorated with
``@register``), its schema entry and its test.
"""

from __future__ import annotations

import importlib
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from phenomt.core.metrics import resample


@dataclass(frozen=True)
class MetricScore:
    """A corpus score with what is needed to read and reproduce it."""

    metric: str
    value: float
    signature: str
    sentences: int
    interval: list[float] | None = None
    bootstrap: dict | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "score": self.value, "signature": self.signature,
                "sentences": self.sentences, "ci": self.interval, "bootstrap": self.bootstrap}


class Metric(ABC):
    """A corpus metric computed from summed per-sentence statistics."""

    #: registry key and the name in commands and configs
    name: ClassVar[str]
    #: the column header of tables
    label: ClassVar[str]
    #: names of the statistics columns, in order
    columns: ClassVar[tuple[str, ...]]
    higher_is_better: ClassVar[bool] = True
    #: the range of the score (None: unbounded), which intervals are clipped to
    bounds: ClassVar[tuple[float | None, float | None]] = (0.0, 100.0)
    #: whether :meth:`statistics` reads the source sentences
    needs_source: ClassVar[bool] = False
    #: whether ``phenomt score <name>`` is generated (LTCR keeps its own, fuller command)
    command: ClassVar[bool] = True

    @abstractmethod
    def signature(self) -> str:
        """Every setting that changes the number, ``key:value`` joined by ``|``."""

    @abstractmethod
    def statistics(self, hypotheses: Sequence[str], references: Sequence[str],
                   sources: Sequence[str] | None = None) -> np.ndarray:
        """One row of :attr:`columns` per sentence."""

    @abstractmethod
    def score(self, totals: np.ndarray) -> float:
        """The corpus score of one vector of summed statistics."""

    def scores(self, totals: np.ndarray) -> np.ndarray:
        """The corpus score of every row of a matrix of summed statistics (one resample a
        row). Metrics override it with array arithmetic that gives :meth:`score`'s numbers:
        a bootstrap of many systems and slices scores thousands of rows."""
        return np.array([self.score(row) for row in np.atleast_2d(totals)], dtype=np.float64)

    def details(self, totals: np.ndarray) -> dict[str, Any]:
        """What else a reader wants to know of the corpus score (BLEU: its precisions and
        brevity penalty), from the same summed statistics; none by default."""
        return {}

    def clusters(self, sentences: int) -> list[str] | None:
        """The resampling unit of each of ``sentences`` rows: None when sentences are drawn
        one by one (every sentence-level metric); a label per row when rows of one label are
        drawn together (LTCR: a document, whose pairs span its sentences)."""
        return None

    def engine(self, sentences: int, samples: int, seed: int = resample.DEFAULT_SEED,
               method: str = "percentile") -> resample.Resampler:
        """The resamples this metric's intervals and tests draw, by its :meth:`clusters`."""
        return resample.Resampler(sentences, samples, seed, method=method,
                                  clusters=self.clusters(sentences))

    def ready(self) -> None:
        """Raise an InputError naming the setting when the metric cannot score as set up (a
        model that is missing): the commands call it before reading any file. Every metric
        that needs nothing beyond its texts is ready."""
        return None

    @classmethod
    def choices(cls) -> dict[str, list[str]]:
        """The allowed values of settings that take one of a few names (a tokenizer)."""
        return {}

    def _check(self, hypotheses: Sequence[str], references: Sequence[str],
               sources: Sequence[str] | None) -> None:
        if len(hypotheses) != len(references):
            raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
        if self.needs_source and (sources is None or len(sources) != len(references)):
            raise ValueError(f"{self.name} needs one source sentence per reference")

    def sentence_scores(self, hypotheses: Sequence[str], references: Sequence[str],
                        sources: Sequence[str] | None = None) -> list[float]:
        """The score of each sentence alone (NaN where it is undefined)."""
        return [self.score(row) for row in self.statistics(hypotheses, references, sources)]

    def corpus_score(self, hypotheses: Sequence[str], references: Sequence[str],
                     sources: Sequence[str] | None = None, *, samples: int = 0,
                     seed: int = resample.DEFAULT_SEED) -> MetricScore:
        """The corpus score; with ``samples``, its percentile interval over sentence
        resamples."""
        stats = self.statistics(hypotheses, references, sources)
        if not samples:
            return MetricScore(self.name, self.score(stats.sum(axis=0)), self.signature(),
                               len(stats))
        engine = self.engine(len(stats), samples, seed)
        value, values = engine.resampled(self.score, stats)
        return MetricScore(self.name, value, self.signature(), len(stats),
                           list(engine.interval(values)), _bootstrap_note(engine))

    def compare(self, hypotheses_a: Sequence[str], hypotheses_b: Sequence[str],
                references: Sequence[str], sources: Sequence[str] | None = None, *,
                samples: int = resample.DEFAULT_SAMPLES, seed: int = resample.DEFAULT_SEED
                ) -> resample.Comparison:
        """System a against system b on the same sentences (paired bootstrap, drawing the
        metric's resampling units)."""
        stats_a = self.statistics(hypotheses_a, references, sources)
        engine = self.engine(len(stats_a), samples, seed)
        return resample.paired_test(stats_a, self.statistics(hypotheses_b, references, sources),
                                    self.score, engine.weights)


def _bootstrap_note(engine: resample.Resampler) -> dict[str, Any]:
    """What a record says of its resamples: how many, the seed, the level and the unit."""
    return {"samples": engine.samples, "seed": engine.seed, "confidence": engine.confidence,
            "unit": engine.unit}


METRICS: dict[str, type[Metric]] = {}


def register(cls: type[Metric]) -> type[Metric]:
    """Class decorator: make ``cls`` known by its :attr:`Metric.name`."""
    if cls.name in METRICS and METRICS[cls.name] is not cls:
        raise ValueError(f"two metrics named {cls.name!r}: {METRICS[cls.name]} and {cls}")
    METRICS[cls.name] = cls
    return cls


def _load_all() -> None:
    """Import every module of this package once, so that their metrics register."""
    package = importlib.import_module("phenomt.core.metrics")
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"phenomt.core.metrics.{module.name}")


def names() -> list[str]:
    """Every registered metric, sorted."""
    _load_all()
    return sorted(METRICS)


def get(name: str, **settings: Any) -> Metric:
    """The metric ``name`` made with ``settings`` (its constructor's keywords)."""
    _load_all()
    if name not in METRICS:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(sorted(METRICS))}")
    return METRICS[name](**settings)


#: sacreBLEU's reference information by metric, signature and the lines' hash: (the
#: reference lines, the information of the first lines, all of them once complete), for the
#: last :data:`KEPT_REFERENCES` references. See :meth:`SacrebleuMetric.reference_info`.
_REFERENCE_INFO: dict[tuple[str, str, int], tuple[list[str], list[Any]]] = {}
#: How many references it keeps (a score job's subsets: the masked lines, then all).
KEPT_REFERENCES = 4


class SacrebleuMetric(Metric):
    """A metric that sacreBLEU computes (``self.metric``, made by the subclass). Its
    per-sentence statistics come from ``_extract_corpus_statistics`` and its score from
    ``_compute_score_from_stats`` of their sum: the two methods sacreBLEU's own paired tests
    use, so our intervals resample exactly what sacreBLEU would."""

    metric: Any

    def signature(self) -> str:
        # sacreBLEU learns the reference count from the first scoring; ours is always one
        if not hasattr(self.metric, "num_refs"):
            self.metric.num_refs = 1
        return str(self.metric.get_signature())

    def statistics(self, hypotheses: Sequence[str], references: Sequence[str],
                   sources: Sequence[str] | None = None) -> np.ndarray:
        self._check(hypotheses, references, sources)
        if not hypotheses:
            rows = self.metric._extract_corpus_statistics([], [list(references)])
        else:
            # sacreBLEU's own loop over the hypotheses, on the references' cached information
            # (as when the metric is made with ``references=``)
            self.metric._ref_cache = self.reference_info(references)
            rows = self.metric._extract_corpus_statistics(list(hypotheses), None)
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), -1)

    def reference_info(self, references: Sequence[str], limit: int | None = None
                       ) -> list[Any]:
        """sacreBLEU's information of each reference line (its n-grams: what its
        ``_cache_references`` extracts), kept in this process for the last references
        scored with each setting (signature), so that the same references are read once: in
        the job server, before it forks the score jobs of every system. ``limit``: extract
        no more than the first ``limit`` lines (the server's warm-up goes in steps); a later
        call extracts the rest. Each line's information depends on that line alone."""
        lines = list(references)
        key = (type(self).__name__, self.signature(), hash(tuple(lines)))
        known = _REFERENCE_INFO.get(key)
        info = known[1] if known is not None and known[0] == lines else []
        end = len(lines) if limit is None else min(limit, len(lines))
        if len(info) < end:
            info = info + self.metric._cache_references([lines[len(info):end]])
            _REFERENCE_INFO.pop(key, None)
            _REFERENCE_INFO[key] = (lines, info)
            while len(_REFERENCE_INFO) > KEPT_REFERENCES:
                del _REFERENCE_INFO[next(iter(_REFERENCE_INFO))]
        # what sacreBLEU's reference cache sets besides: ours always has one reference
        self.metric.num_refs = 1
        return info

    def score(self, totals: np.ndarray) -> float:
        return float(self.metric._compute_score_from_stats([float(x) for x in totals]).score)


# --------------------------------------------------------------------------- score records

def score_record(metric: Metric, hypotheses: Sequence[str], references: Sequence[str],
                 sources: Sequence[str] | None = None, *, samples: int = 0,
                 seed: int = resample.DEFAULT_SEED, meta: dict[str, str] | None = None,
                 baseline: Sequence[str] | None = None) -> dict[str, Any]:
    """The JSON record of ``phenomt score <metric>``: the corpus score with its signature,
    the metric's details, and with ``samples`` its interval and the per-sentence statistics
    (so that tables can resample subsets and pair systems later); ``meta`` names what was
    scored (model, test set ...). With ``baseline`` (another system's output on the same
    sentences), the paired bootstrap against it under ``"baseline"``."""
    stats = metric.statistics(hypotheses, references, sources)
    totals = stats.sum(axis=0)
    # drawn only when an interval or a paired test needs them
    engine = (metric.engine(len(stats), samples or resample.DEFAULT_SAMPLES, seed)
              if samples or baseline is not None else None)
    if engine is not None and samples:
        value, values = engine.resampled(metric.score, stats)
        scored = MetricScore(metric.name, value, metric.signature(), len(stats),
                             list(engine.interval(values)), _bootstrap_note(engine))
    else:
        scored = MetricScore(metric.name, metric.score(totals), metric.signature(), len(stats))
    record = scored.as_dict()
    record.update(label=metric.label, higher_is_better=metric.higher_is_better,
                  details=metric.details(totals), meta=dict(meta or {}))
    if samples:
        record["statistics"] = {"columns": list(metric.columns), "rows": stats.tolist()}
    if engine is not None and baseline is not None:
        # the hypothesis' statistics above serve the pairing too
        record["baseline"] = resample.paired_test(
            stats, metric.statistics(baseline, references, sources), metric.score,
            engine.weights).as_dict()
    return record


@dataclass(frozen=True)
class ScoreInputs:
    """The lines of the files a metric scores, checked by :func:`read_score_inputs`."""

    hypotheses: list[str]
    references: list[str]
    sources: list[str] | None = None
    baseline: list[str] | None = None


def read_score_inputs(hyp: str | Path, ref: str | Path, src: str | Path | None = None,
                      baseline: str | Path | None = None) -> ScoreInputs:
    """Read the files of ``phenomt score <metric>`` as strictly as ``phenomt evaluate`` reads
    its own, each once, raising an :class:`~phenomt.core.io.InputError` that names the file
    and, where there is one, the line:

    - every file through :func:`phenomt.core.io.read_text`: UTF-8, LF line endings, no
      byte-order mark; and at least one line;
    - the reference and the source: no empty or whitespace-only line (a sentence with nothing
      to score against);
    - the hypothesis, the source and the baseline: as many lines as the reference (the error
      names the first line where they stop being aligned).

    An empty line of the hypothesis or the baseline is kept: a system that output nothing for
    a sentence is scored with an empty hypothesis there, as sacreBLEU scores it.
    """
    from phenomt.core.io import InputError, check_line_count, read_text

    def lines_of(path: str | Path, *, texts: bool) -> list[str]:
        lines = read_text(path)
        if not lines:
            raise InputError(path, "empty file: no line to score")
        if texts:
            empty = next((n for n, line in enumerate(lines, start=1) if not line.strip()), None)
            if empty is not None:
                raise InputError(path, "empty line: every reference and source line needs "
                                       "text", empty)
        return lines

    def aligned(path: str | Path, *, texts: bool) -> list[str]:
        lines = lines_of(path, texts=texts)
        check_line_count(path, len(lines), len(references), ref)
        return lines

    references = lines_of(ref, texts=True)
    hypotheses = aligned(hyp, texts=False)
    sources = aligned(src, texts=True) if src is not None else None
    return ScoreInputs(hypotheses, references, sources,
                       aligned(baseline, texts=False) if baseline is not None else None)


def score_files(metric: Metric, hyp: str | Path, ref: str | Path, src: str | Path | None = None,
                *, samples: int = 0, seed: int = resample.DEFAULT_SEED,
                meta: dict[str, str] | None = None, baseline: str | Path | None = None
                ) -> dict[str, Any]:
    """:func:`score_record` of files, one sentence a line, with their paths; the files are
    read and checked by :func:`read_score_inputs` (each once)."""
    inputs = read_score_inputs(hyp, ref, src, baseline)
    record = score_record(metric, inputs.hypotheses, inputs.references, inputs.sources,
                          samples=samples, seed=seed, meta=meta, baseline=inputs.baseline)
    record.update(hypothesis=str(hyp), reference=str(ref))
    if baseline is not None:
        record["baseline"] = {"hypothesis": str(baseline), **record["baseline"]}
    return record


# --------------------------------------------------------------------------- command line

def setting_options(cls: type[Metric]) -> list[tuple[str, type, Any]]:
    """The metric's settings, as its constructor declares them: ``(name, type, default)``
    with ``type`` one of bool, int, float, str (``X | None`` counts as ``X``)."""
    import inspect
    import typing

    hints = typing.get_type_hints(cls.__init__)
    options = []
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if name == "self":
            continue
        kinds = [t for t in typing.get_args(hints[name]) or (hints[name],)
                 if t is not type(None)]
        if len(kinds) != 1 or kinds[0] not in (bool, int, float, str):
            raise TypeError(f"{cls.__name__}: setting {name!r} needs a bool, int, float or "
                            f"str annotation, has {hints[name]}")
        options.append((name, kinds[0], parameter.default))
    return options


def parse_settings(texts: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``METRIC.SETTING=VALUE`` texts (``--setting``) as metric -> setting -> value, each
    value typed as the metric's constructor declares it; a ValueError naming the text when
    the metric or the setting is unknown or the value does not parse."""
    found: dict[str, dict[str, Any]] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        metric, dot, name = key.partition(".")
        if not sep or not dot or not metric or not name:
            raise ValueError(f"setting {text!r}: expected METRIC.SETTING=VALUE")
        _load_all()
        if metric not in METRICS:
            raise ValueError(f"setting {text!r}: unknown metric {metric!r}; known: "
                             f"{', '.join(sorted(METRICS))}")
        options = {n: (kind, default) for n, kind, default in setting_options(METRICS[metric])}
        if name not in options:
            raise ValueError(f"setting {text!r}: {metric} has no setting {name!r}; its "
                             f"settings: {', '.join(options) or 'none'}")
        kind = options[name][0]
        choices = METRICS[metric].choices().get(name)
        try:
            if kind is bool:
                if value.lower() not in ("true", "false"):
                    raise ValueError(value)
                typed: Any = value.lower() == "true"
            else:
                typed = kind(value)
        except ValueError:
            raise ValueError(f"setting {text!r}: {value!r} is no {kind.__name__}") from None
        if choices is not None and typed not in choices:
            raise ValueError(f"setting {text!r}: one of {', '.join(choices)}")
        if name in found.setdefault(metric, {}):
            raise ValueError(f"setting {metric}.{name} given twice")
        found[metric][name] = typed
    return found


def _meta(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        import argparse

        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def _score_command(args: Any) -> int:
    import json

    from phenomt.core.io import atomic_write

    cls = METRICS[args.metric]
    metric = cls(**{name: getattr(args, name) for name, _, _ in setting_options(cls)})
    metric.ready()
    record = score_files(metric, args.hyp, args.ref, args.src, samples=args.samples,
                         seed=args.seed, meta=dict(args.meta), baseline=args.baseline)
    text = json.dumps(record, indent=2, ensure_ascii=False)
    if args.output:
        with atomic_write(args.output) as out:
            out.write(text + "\n")
    print(text)
    return 0


def _list_command(args: Any) -> int:
    for name in names():
        cls = METRICS[name]
        better = "higher" if cls.higher_is_better else "lower"
        print(f"{name:8s} {cls.label:10s} {better} is better; "
              f"{(cls.__doc__ or '').strip().splitlines()[0]}")
    return 0


def _add_score_command(tree: Any, cls: type[Metric]) -> None:
    """``phenomt score <name>``: the metric's settings become options of the same names."""
    from phenomt.core.cliargs import non_negative_int, positive_int

    summary = (cls.__doc__ or cls.label).strip().splitlines()[0]
    p = tree.add(f"score {cls.name}", f"{summary} Printed as JSON with its signature.",
                 _score_command)
    p.set_defaults(metric=cls.name)
    p.add_argument("--hyp", required=True, help="system output, one sentence a line")
    p.add_argument("--ref", required=True, help="reference, one sentence a line")
    if cls.needs_source:
        p.add_argument("--src", required=True, help="source sentences, one a line")
    else:
        p.set_defaults(src=None)
    for name, kind, default in setting_options(cls):
        flag = "--" + name.replace("_", "-")
        if kind is bool:
            p.add_argument(("--no-" + flag[2:]) if default else flag, dest=name,
                           action="store_false" if default else "store_true",
                           help=f"metric setting {name} (default {default})")
        else:
            p.add_argument(flag, dest=name, type=kind, default=default,
                           choices=cls.choices().get(name),
                           help=f"metric setting (default {default})")
    p.add_argument("--meta", nargs="*", type=_meta, default=[], metavar="KEY=VALUE",
                   help="what was scored (model, test set ...), stored in the record's meta")
    p.add_argument("--baseline", help="another system's output: paired bootstrap against it")
    p.add_argument("--samples", type=non_negative_int, default=0, metavar="N",
                   help="95%% interval from N sentence resamples, and the per-sentence "
                        "statistics (0: neither)")
    p.add_argument("--seed", type=positive_int, default=resample.DEFAULT_SEED,
                   help="seed of the resampling")
    p.add_argument("--output", help="also write the JSON here")


def register_cli(tree: Any) -> None:
    for name in names():
        if METRICS[name].command:
            _add_score_command(tree, METRICS[name])
    tree.add("score metrics", "List the registered metrics", _list_command)
