"""Score your own system outputs without writing YAML.

``phenomt evaluate`` takes any test set (source and reference files) and one or more
hypothesis files, writes a config for them into its output folder and runs the workflow's own
system-scoring rules on it (one code path with the pipeline), only the jobs needed:

    phenomt evaluate --src test.de --ref test.en --langs de-en \
        --hyp mine=out1.en [--hyp base=out2.en ...] [--outdir DIR] [--cores N]

A Zh->En test set given with ``--docids`` (one document id a line) is also scored for LTCR,
every system and the reference (its calibration), with the systems config's own LTCR rules.

``phenomt systems evaluate --testset NAME --hyp FILE`` adds files to a test set a config
already names, beside its configured systems. Both sit beside the CLI, above the plan: they
read configs as the workflow does and start Snakemake with the running interpreter's tools.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from phenomt.core import jobserver, snakerun
from phenomt.core.cliargs import positive_int
from phenomt.core.fetch import find_mirror
from phenomt.core.io import InputError, atomic_write, load_json
from phenomt.core.metrics import base as metrics
from phenomt.core.parse import CACHE_ENV
from phenomt.evaluate import checks, inputs
from phenomt.evaluate.checks import MIN_SAMPLES, parse_langs
from phenomt.plan import PROJECT_ROOT, SNAKEFILE, Plan, load_config
from phenomt.plan.config import read_catalog
from phenomt.plan.documents import REFERENCE
from phenomt.systems.challenge import MIN_INTERVAL_SENTENCES
from phenomt.systems.mqm import read_mqm
from phenomt.systems.outputs import check_line_count
from phenomt.systems.scores import METRIC_KEYS, metric_keys

__all__ = ["CONFIG", "MIN_SAMPLES", "Request", "check_inputs", "evaluate_config",
           "load_config_dict", "merged_hyps", "mqm_set", "parse_hyp", "parse_langs",
           "register_cli", "testset_name"]


def parse_hyp(text: str) -> tuple[str, Path]:
    """``NAME=FILE`` or ``FILE`` (named after the file's stem); the name must match
    :data:`phenomt.evaluate.checks.NAME`."""
    name, sep, path = text.partition("=")
    if not sep:
        name, path = Path(text).stem, text
        if not checks.NAME.fullmatch(name):
            raise argparse.ArgumentTypeError(
                f"the file name {Path(text).name!r} makes no valid system name: give one as "
                f"NAME=FILE ({checks.NAME_RULE})")
    if not path:
        raise argparse.ArgumentTypeError(f"no file after {name!r}=: expected NAME=FILE")
    name = checks.system_name(name)
    try:
        return name, checks.resolve(path)
    except InputError as err:  # argparse would hide a ValueError's message
        raise argparse.ArgumentTypeError(str(err)) from None


def with_systems(config: dict, testset: str, hyps: list[tuple[str, Path]],
                 origins: dict[str, Path] | None = None) -> dict:
    """``config`` with the files added as outputs of ``testset``; refuses unknown test sets,
    missing files and names that clash with configured systems. ``origins`` names the
    user's file of each system where ``hyps`` are copies of them."""
    testsets = config.get("systems", {}).get("testsets", {})
    if testset not in testsets:
        known = ", ".join(sorted(testsets)) or "none"
        raise InputError("--testset", f"not a configured test set {testset!r} (known: {known})")
    outputs = testsets[testset]["outputs"]
    for name, path in hyps:
        checks.require_file(path)
        if name in outputs:
            raise InputError(path, f"system name {name!r} is already configured for {testset}")
        origin = (origins or {}).get(name, path)
        outputs[name] = {"path": str(path), "origin": f"your file {origin}"}
    return config


def _run(args: argparse.Namespace) -> int:
    try:
        return _run_checked(args)
    except OSError as err:
        raise InputError(err.filename or "an input", err.strerror or str(err)) from None


def _run_checked(args: argparse.Namespace) -> int:
    from copy import deepcopy

    configfile = checks.resolve(args.configfile or PROJECT_ROOT / "config" / "config.yaml")
    if checks.kind(configfile) != "file":
        raise InputError(configfile, "no such config: give --configfile (outside a checkout "
                                     "there is no default config; `phenomt evaluate` needs "
                                     "none)")
    config = load_config(configfile, validate=False)
    workdir = checks.resolve(args.directory)
    # Every check first, writing nothing: the test set and names (on a copy of the config),
    # then each file as `phenomt evaluate` reads it.
    checks.check_unique([name for name, _ in args.hyp], "--hyp (system names)")
    with_systems(deepcopy(config), args.testset, args.hyp)
    plan = Plan(load_config_dict(config, configfile))
    ref = workdir / plan.systems.reference(args.testset)
    read = checks.read_outputs(args.hyp)  # before the reference's job: nothing runs on bad files
    if checks.kind(ref) != "file":
        # The test set's reference is made by the pipeline: prepare it (the configured
        # pipeline's own job, which no system file changes) to count the lines against.
        status = _snakemake_run(configfile, workdir, args.cores,
                                [plan.systems.reference(args.testset)])
        if status != 0:
            return status
    references = checks.read_checked(ref)[0]
    for path, (lines, _) in read.items():
        check_line_count(path, len(lines), len(references), ref)
    raw = {path: data for path, (_, data) in read.items()}
    # The workflow reads content-synced copies (see phenomt.evaluate.inputs), so that a
    # changed file is scored again whatever its time; paths relative to the working folder.
    copies = inputs.plan_copies(workdir / plan.out / "evaluate",
                                [(f"{_hyp_role(name)}.{args.testset}", path)
                                 for name, path in args.hyp])
    copied = [(name, Path(os.path.relpath(item.copy, workdir)))
              for (name, _), item in zip(args.hyp, copies, strict=True)]
    for _, path in copied:
        checks.no_wildcards(path, "--directory")
    inputs.sync(copies, {item.role: raw[item.original] for item in copies})
    config = with_systems(config, args.testset,
                          [(name, workdir / path) for name, path in copied],
                          origins=dict(args.hyp))
    for name, path in copied:
        config["systems"]["testsets"][args.testset]["outputs"][name]["path"] = str(path)
    overlay = workdir / plan.out / "evaluate" / "config.yaml"
    with atomic_write(overlay) as handle:
        yaml.safe_dump(config, handle, sort_keys=False)
    plan = Plan(load_config_dict(config, overlay))
    targets = plan.systems.tables()
    status = _snakemake_run(overlay, workdir, args.cores, targets)
    if status == 0:
        print("tables:")
        for target in targets:
            print(f"  {workdir / target}")
    return status


def _snakemake_run(configfile: Path, workdir: Path, cores: int, targets: Sequence[str]
                   ) -> int:
    cmd = _snakemake("--configfile", str(configfile), "--directory", str(workdir),
                     "--cores", str(cores), *targets)
    print("running:", " ".join(cmd), file=sys.stderr)
    return subprocess.run(cmd, env=dict(os.environ), check=False).returncode


def load_config_dict(config: dict, source: str | os.PathLike[str] = "config") -> dict:
    """A validated copy of ``config`` (the schema's defaults filled in) as the workflow
    validates it; an invalid one raises :class:`InputError` naming ``source``."""
    from copy import deepcopy

    from phenomt.plan.config import resolve_catalog, validate_config

    return validate_config(resolve_catalog(deepcopy(config)), source=source)


# --------------------------------------------------------------------------- phenomt evaluate

#: UDPipe models by source language: the mirror's (when it holds the file), else the official.
UDPIPE = {"de": ("udpipe.german-mirror", "udpipe.german-gsd-2.5"),
          "en": ("udpipe.english-mirror", "udpipe.english-ewt-2.5")}
#: Where the run's files go inside the output folder, and its generated config.
RESULTS, CONFIG = "results", "config.yaml"
_NAME = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Request:
    """What ``phenomt evaluate`` was asked: the test set, the systems and the settings."""

    src: Path
    ref: Path
    src_lang: str
    tgt_lang: str
    hyps: tuple[tuple[str, Path], ...]
    name: str
    baseline: str
    ldd: bool
    align_extra: tuple[str, ...]
    metrics: tuple[str, ...]
    samples: int
    mirror: str | None
    mqm: Path | None = None
    docids: Path | None = None
    latex: bool = False
    freq_corpus: Path | None = None
    comet_model: Path | None = None
    pos_buckets: bool = True


def testset_name(ref: Path, src: str, tgt: str) -> str:
    """The test set's name from its reference file: ``newstest.en`` → ``newstest.de-en``."""
    stem = _NAME.sub("_", ref.name.split(".")[0]).strip("_-+")[:48] or "testset"
    return f"{stem}.{src}-{tgt}"


def check_inputs(src: Path, ref: Path, hyps: Sequence[tuple[str, Path]]) -> int:
    """The test set's line count after checking every file (see
    :func:`phenomt.evaluate.checks.check_files`)."""
    return len(checks.check_files(src, ref, hyps).references)


#: The pair LTCR is defined for: its repeated source words are Chinese words (jieba).
LTCR_PAIR = ("zh", "en")


def check_docids(path: Path, langs: tuple[str, str], ref: Path, lines: int) -> list[str]:
    """The document id of every line of a Zh->En test set for LTCR, after checking the file
    (one id a line or WMT's details.tsv; see :func:`phenomt.evaluate.checks.read_docids`)."""
    if langs != LTCR_PAIR:
        raise InputError(path, "--docids is for LTCR, which is defined for zh-en only (its "
                               "repeated source words are Chinese words segmented by jieba); "
                               f"this test set is {langs[0]}-{langs[1]}")
    return checks.read_docids(path, langs, ref, lines)


def check_freq_corpus(path: Path) -> int:
    """The line count of a frequency corpus after reading it as strictly as the test set
    (UTF-8, LF line endings; an error names the file and line); empty is refused."""
    from phenomt.core.io import read_text

    checks.require_file(path)
    lines = read_text(path)
    if not any(line.strip() for line in lines):
        raise InputError(path, "--freq-corpus has no text to count words in")
    return len(lines)


def _udpipe(lang: str, mirror: str | None) -> str | None:
    if lang not in UDPIPE:
        return None
    mirrored, official = UDPIPE[lang]
    spec = read_catalog()["downloads"][mirrored]
    return mirrored if mirror and (Path(mirror) / spec["mirror"]).is_file() else official


def evaluate_config(request: Request, origins: dict[str, Path] | None = None,
                    mqm_systems: Sequence[str] | None = None) -> dict[str, Any]:
    """The config of one ``phenomt evaluate`` run: the test set as a corpus of local files,
    the systems as its outputs, the LDD section when its challenge sets are asked for, its
    document ids and LTCR when given. ``origins`` names the user's file of each system where
    the request reads copies; ``mqm_systems`` the MQM file's systems where already read."""
    s, t, name = request.src_lang, request.tgt_lang, request.name
    origins = origins or {}
    outputs = {system: {"path": str(path),
                        "origin": f"your file {origins.get(system, path)}"}
               for system, path in request.hyps}
    config: dict[str, Any] = {
        "outdir": RESULTS, "resources_dir": "resources", "mirror": request.mirror, "seed": 1,
        "latex": request.latex,
        "corpora": {name: {"label": f"{name} (your test set)", "langs": [s, t], "split": "test",
                           "format": "plain",
                           "files": {s: {"download": f"{name}.{s}"},
                                     t: {"download": f"{name}.{t}"}}}},
        "downloads": {f"{name}.{s}": {"url": None, "mirror": str(request.src)},
                      f"{name}.{t}": {"url": None, "mirror": str(request.ref)}},
        "systems": {"samples": request.samples, "seed": 1, "metrics": list(request.metrics),
                    "testsets": {name: {
                        "corpus": name, "src": s, "tgt": t, "baseline": request.baseline,
                        "ldd": request.ldd, "pos_buckets": request.pos_buckets,
                        "compare": [[system, request.baseline] for system in outputs
                                    if system != request.baseline],
                        "outputs": outputs}}},
    }
    if request.docids is not None:
        config["corpora"][name]["docids"] = {"download": f"{name}.docids", "format": "lines"}
        config["downloads"][f"{name}.docids"] = {"url": None, "mirror": str(request.docids)}
        config["systems"]["testsets"][name].update(ltcr=True,
                                                   align_extra=list(request.align_extra))
        # catalogued corpora the LTCR aligner trains on beside the test set
        config["corpora"].update({corpus: {} for corpus in request.align_extra})
    if request.comet_model is not None:  # read in place: a COMET model is gigabytes
        config["systems"]["comet_model"] = str(request.comet_model)
    if request.freq_corpus is not None:
        config["downloads"][f"{name}.freq"] = {"url": None, "mirror": str(request.freq_corpus)}
        config["systems"]["testsets"][name]["freq_download"] = f"{name}.freq"
    if request.mqm is not None:
        config["downloads"][f"{name}.mqm"] = {"url": None, "mirror": str(request.mqm)}
        config["systems"]["mqm"] = {name: mqm_set(request.mqm, f"{name}.mqm", s, t,
                                                  mqm_systems)}
    if request.ldd:
        # catalogued corpora the aligner trains on beside the test set
        config["corpora"].update({corpus: {} for corpus in request.align_extra})
        config["ldd"] = {"corpora": {}, "directions": {f"{s}-{t}": {"models": []}},
                         # the target's model tags the reference for the POS buckets
                         "udpipe": {lang: _udpipe(lang, request.mirror)
                                    for lang in ((s, t) if request.pos_buckets else (s,))
                                    if lang in UDPIPE},
                         "align": {"extra": list(request.align_extra)}}
    return config


def mqm_set(path: Path, download: str, src: str, tgt: str,
            systems: Sequence[str] | None = None) -> dict[str, Any]:
    """The MQM set of an annotation file (Google's WMT MQM layout): every annotated system
    (``systems`` when already read), the human translation ``ref`` as the metrics'
    reference, LTCR for Zh->En."""
    systems = sorted(set(systems) if systems is not None
                     else {row.system for row in read_mqm(path)})
    for system in systems:
        if not checks.NAME.fullmatch(system):
            raise InputError(path, f"annotated system name {system!r} cannot name files and "
                                   f"table rows ({checks.NAME_RULE})")
    if "ref" not in systems:
        raise InputError(path, "no system 'ref' among the annotated outputs: the metrics "
                               "beside the MQM rates take the human translation as reference")
    if len(systems) < 3:
        raise InputError(path, f"{len(systems) - 1} annotated system(s) besides 'ref': a "
                               "rank correlation needs more")
    return {"annotations": download, "src": src, "tgt": tgt, "systems": systems,
            "reference": "ref", "ltcr": (src, tgt) == ("zh", "en")}


def merged_hyps(outdir: Path, request: Request, baseline_given: bool) -> Request:
    """``request`` with the systems an earlier run in ``outdir`` scored on the same test set
    first, and its baseline, MQM annotations and document ids unless given again, so that
    adding a system runs only that system's jobs; a different test set is refused. Paths are
    the user's files (the originals of the run's copies), read again on every run."""
    previous = outdir / CONFIG
    if checks.kind(previous) != "file":
        return request
    config, origins = _earlier_run(outdir, request.name)
    testsets, downloads = config["systems"]["testsets"], config.get("downloads") or {}

    def earlier(role: str, download: str) -> Path | None:
        path = origins.get(role) or (downloads.get(download) or {}).get("mirror")
        return Path(path) if path else None

    name = request.name
    same = (name in testsets and earlier("source", f"{name}.{request.src_lang}") == request.src
            and earlier("reference", f"{name}.{request.tgt_lang}") == request.ref)
    if not same:
        raise InputError(outdir, "holds the evaluation of another test set: give another "
                                 "--outdir")
    testset = testsets[name]
    hyps = {system: origins.get(_hyp_role(system)) or Path(spec["path"])
            for system, spec in testset["outputs"].items()}
    for system in hyps:
        if not checks.NAME.fullmatch(system):
            raise InputError(previous, f"system name {system!r} of an earlier run is no longer "
                                       f"valid ({checks.NAME_RULE}): give another --outdir")
    for system, path in request.hyps:
        if system in hyps and hyps[system] != path:
            raise InputError("--hyp", f"{system!r} was {hyps[system]} in the earlier run in "
                                      f"{outdir}: give the new file another name")
        hyps[system] = path
    baseline = request.baseline if baseline_given else testset["baseline"]
    mqm = request.mqm or earlier("mqm", f"{name}.mqm")
    docids = request.docids or earlier("docids", f"{name}.docids")
    freq = request.freq_corpus or earlier("freq", f"{name}.freq")
    return replace(request, hyps=tuple(hyps.items()), baseline=baseline, mqm=mqm,
                   docids=docids, freq_corpus=freq)


def _earlier_run(outdir: Path, name: str) -> tuple[dict[str, Any], dict[str, Path]]:
    """The config and the originals' record of an earlier run in ``outdir``, checked to be
    of the layout :func:`evaluate_config` writes (test sets, the test set ``name`` with
    outputs with paths and a baseline, downloads with mirror paths); anything else (cut
    short, edited, another program's) raises InputError naming the file."""
    previous = outdir / CONFIG
    refused = InputError(previous, "not a config written by phenomt evaluate: give another "
                                   "--outdir")
    try:
        config = load_config(previous, validate=False)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, yaml.YAMLError):
        raise refused from None

    def mapping(value: Any) -> bool:
        return isinstance(value, dict)

    def text(value: Any) -> bool:
        return isinstance(value, str) and bool(value)

    systems = config.get("systems") if mapping(config) else None
    testsets = systems.get("testsets") if mapping(systems) else None
    if not mapping(testsets):
        raise refused
    spec = testsets.get(name)
    if spec is not None and not (
            mapping(spec) and text(spec.get("baseline")) and mapping(spec.get("outputs"))
            and spec["outputs"] and all(mapping(out) and text(out.get("path"))
                                        for out in spec["outputs"].values())):
        raise refused
    downloads = config.get("downloads")
    if downloads is not None and not (mapping(downloads) and all(
            mapping(d) and (d.get("mirror") is None or text(d["mirror"]))
            for d in downloads.values())):
        raise refused
    return config, inputs.read_origins(outdir)


def _hyp_role(system: str) -> str:
    return f"hyp.{system}"


def input_copies(outdir: Path, request: Request) -> list[inputs.Copy]:
    """Where the run keeps a copy of each of the request's files (see
    :mod:`phenomt.evaluate.inputs`)."""
    roles = [("source", request.src), ("reference", request.ref),
             *((_hyp_role(name), path) for name, path in request.hyps)]
    roles += [(role, path) for role, path in (("docids", request.docids),
                                              ("mqm", request.mqm),
                                              ("freq", request.freq_corpus))
              if path is not None]
    return inputs.plan_copies(outdir, roles)


def staged(request: Request, copies: Sequence[inputs.Copy]) -> Request:
    """``request`` reading the copies instead of the user's files."""
    copy = {item.role: item.copy for item in copies}
    return replace(request, src=copy["source"], ref=copy["reference"],
                   hyps=tuple((name, copy[_hyp_role(name)]) for name, _ in request.hyps),
                   docids=copy.get("docids"), mqm=copy.get("mqm"),
                   freq_corpus=copy.get("freq"))


def _snakemake(*args: str) -> list[str]:
    # through snakerun's launcher: the process ends with the run, not after the workflow
    # profile's 5 s job-rate window
    return snakerun.command("--snakefile", str(SNAKEFILE), *args)


def summary_lines(plan: Plan, testset: str, root: Path) -> list[str]:
    """One line per system: each metric with its interval, CRR+DRR, LTCR and what the
    challenge sets found (:func:`_challenge_verdict`); with LTCR, a last line with
    the reference's (the calibration). The run's files are under ``root``."""
    lines = []
    ltcr = testset in plan.systems.ltcr_testsets
    for system in plan.systems.systems(testset):
        scored = load_json(root / plan.systems.bleu_json(testset, system))
        main = scored["subsets"][scored["main"]]
        parts = [f"{metrics.METRICS[k].label} {main[k]['score']:.2f} "
                 f"[{main[k]['ci_low']:.2f}, {main[k]['ci_high']:.2f}]"
                 + (f" ({main[k]['ci_reason']})" if main[k].get("ci_reason") else "")
                 for k in scored["metrics"]]
        redundancy = load_json(root / plan.systems.redundancy_json(testset, system))
        red = redundancy["subsets"][redundancy["main"]]
        if red["redundancy"] is not None:
            low, high = red["redundancy_ci"]
            parts.append(f"CRR+DRR {100 * red['redundancy']:.2f}% "
                         f"[{100 * low:.2f}, {100 * high:.2f}]")
        if ltcr and "ltcr" not in scored["metrics"]:  # else a metric cell above
            parts.append(_l_all(load_json(root / plan.systems.ltcr_json(testset, system))))
        if testset in plan.systems.ldd_testsets:
            ldd = load_json(root / plan.systems.ldd_json(testset, system))
            parts.append(_challenge_verdict(ldd) + _ribes_verdict(ldd))
        lines.append(f"{system}: " + ", ".join(parts))
    if ltcr:
        record = load_json(root / plan.systems.ltcr_json(testset, REFERENCE))
        lines.append(f"reference (calibration): {_l_all(record)}, the reference scored as "
                     "a hypothesis")
    return lines


def _l_all(record: dict[str, Any]) -> str:
    """LTCR's L-All of a record with its interval and the pairs judged."""
    if record["l_all"] is None:
        return f"LTCR L-All: no pair judged of {record['pairs_all']}"
    bounds = record["intervals"]["l_all"]
    interval = f" [{100 * bounds[0]:.2f}, {100 * bounds[1]:.2f}]" if bounds else ""
    return (f"LTCR L-All {100 * record['l_all']:.2f}%{interval} ({record['judged_all']} of "
            f"{record['pairs_all']} pairs judged)")


def _challenge_verdict(record: dict[str, Any]) -> str:
    """What the challenge sets of a system's record found, among the sets large enough for a
    verdict (paired, Holm-adjusted over the sets): how many are significantly below the full
    test set and the one with the largest drop among them; where none is, the largest drop
    with "within noise" (a test that did not reject: no claim that the sets are as good)."""
    judged = {name: entry for name, entry in record["sets"].items()
              if entry["difference"] is not None and entry["below"] is not None}
    if not judged:
        return f"no challenge set of {MIN_INTERVAL_SENTENCES}+ sentences"
    below = {name: entry for name, entry in judged.items() if entry["below"]}
    name = min(below or judged, key=lambda n: (below or judged)[n]["difference"])
    entry = judged[name]
    worst = f"{name} ({entry['difference']:+.2f} BLEU, {entry['sentences']} sentences"
    if below:
        return (f"challenge sets: {len(below)} of {len(judged)} significantly below the full "
                f"set, most {worst})")
    return (f"challenge sets: none of {len(judged)} significantly below the full set; "
            f"largest drop {worst}, within noise)")


def _ribes_verdict(record: dict[str, Any]) -> str:
    """The reordering sets' RIBES verdicts (Table 6), as :func:`_challenge_verdict` gives
    BLEU's; empty where no reordering set is large enough for one."""
    judged = {name: entry["ribes"] for name, entry in record["sets"].items()
              if (entry.get("ribes") or {}).get("below") is not None}
    if not judged:
        return ""
    below = {name: entry for name, entry in judged.items() if entry["below"]}
    if not below:
        return f"; RIBES: none of {len(judged)} reordering sets significantly below"
    name = min(below, key=lambda n: below[n]["difference"])
    return (f"; RIBES: {len(below)} of {len(judged)} reordering sets significantly below, "
            f"most {name} ({below[name]['difference']:+.4f})")


#: What a run prints when Ctrl-C stopped it.
INTERRUPTED = "interrupted; the same command continues where it stopped"
#: The run's Snakemake log inside the output folder.
SNAKEMAKE_LOG = "snakemake.log"
#: What the workflow's Snakefile imports besides Snakemake (the plan: 0.1 s), imported by the
#: Snakemake process while the inputs are checked.
WORKFLOW_IMPORTS = ("jsonschema", "phenomt.plan", "phenomt.core.fetch")
#: The job server's own errors (its jobs' go to their rules' logs).
JOBSERVER_LOG = "results/logs/jobserver.log"


def check_align_extra(corpora: Sequence[str], langs: tuple[str, str]) -> None:
    """Refuse corpora the catalog does not declare, or declares for another pair."""
    catalog = read_catalog()["corpora"]
    checks.check_unique(corpora, "--align-extra")
    for corpus in corpora:
        if corpus not in catalog:
            pair = f"{langs[0]}-{langs[1]}"
            near = sorted(c for c in catalog if c.endswith(pair) or c.endswith(
                f"{langs[1]}-{langs[0]}"))[:6]
            raise InputError("--align-extra", f"{corpus!r} is not a corpus of the catalog "
                                              f"(of {pair}: {', '.join(near) or 'none'})")
        if set(catalog[corpus].get("langs") or []) != set(langs):
            raise InputError("--align-extra", f"{corpus!r} is a corpus of "
                                              f"{'-'.join(catalog[corpus].get('langs') or [])}, "
                                              f"not of {langs[0]}-{langs[1]}")


def check_comet(metrics: Sequence[str], model: str | None) -> Path | None:
    """The COMET model folder, checked, when ``comet`` is among the metrics: the extra must
    be installed and the folder hold a COMET checkpoint."""
    from phenomt.core.metrics import comet

    if model is not None and "comet" not in metrics:
        raise InputError("--comet-model", "add comet to --metrics to score with it")
    if "comet" not in metrics:
        return None
    # read in place, not copied: the folder is a rule input as it is
    path = checks.resolve(model) if model is not None else None
    if path is not None:
        checks.no_wildcards(path, "--comet-model")
    try:
        comet.require(model)
    except RuntimeError as err:
        raise InputError("--metrics", str(err)) from None
    except (ValueError, FileNotFoundError) as err:
        raise InputError("--comet-model", str(err)) from None
    return path


def prepare(args: argparse.Namespace) -> tuple[Request, Path, dict[str, Any], list[str]]:
    """Every check of ``phenomt evaluate``, writing nothing: the request (the user's files),
    the output folder, the run's config and the warnings to print. Raises InputError, also
    for a path the system cannot read (no permission, a name too long)."""
    try:
        return _prepare(args)
    except OSError as err:
        raise InputError(err.filename or "an input", err.strerror or str(err)) from None


def _optional_path(text: str | None) -> Path | None:
    return checks.resolve(text) if text else None


def _prepare(args: argparse.Namespace) -> tuple[Request, Path, dict[str, Any], list[str]]:
    src_lang, tgt_lang = args.langs
    outdir = checks.resolve(args.outdir)
    checks.check_outdir(outdir)
    cache = parse_cache(args)
    if cache and checks.kind(Path(cache)) not in ("dir", "missing"):
        raise InputError(cache, "the cache of parses and aligner models (--cache-dir or "
                                "$PHENOMT_CACHE) is not a folder")
    checks.check_unique(args.metrics, "--metrics")
    if "ltcr" in args.metrics and not args.docids:
        raise InputError("--metrics", "ltcr scores documents: give the test set's document "
                                      "ids with --docids (Zh->En)")
    check_align_extra(args.align_extra, args.langs)
    comet_model = check_comet(args.metrics, args.comet_model)
    hyps = tuple(args.hyp)
    mirror = find_mirror(str(checks.resolve(args.mirror)) if args.mirror else None,
                         PROJECT_ROOT)
    request = Request(
        src=checks.resolve(args.src), ref=checks.resolve(args.ref), src_lang=src_lang,
        tgt_lang=tgt_lang, hyps=hyps,
        name=args.name or testset_name(Path(args.ref), src_lang, tgt_lang),
        baseline=args.baseline or hyps[0][0],
        ldd=_scores_ldd_sets(args),
        align_extra=tuple(args.align_extra), metrics=tuple(args.metrics),
        samples=args.samples, mirror=str(mirror) if mirror else None,
        mqm=_optional_path(args.mqm), docids=_optional_path(args.docids), latex=args.latex,
        freq_corpus=_optional_path(args.freq_corpus),
        comet_model=comet_model, pos_buckets=not args.no_pos_buckets)
    request = merged_hyps(outdir, request, args.baseline is not None)
    if request.baseline not in dict(request.hyps):
        raise InputError("--baseline", f"{request.baseline!r} is none of the systems "
                                       f"({', '.join(dict(request.hyps))})")
    testset = checks.check_files(request.src, request.ref, request.hyps)
    warnings = checks.same_outputs(testset)
    if not args.force_langs:
        warnings += [f"{warning} (--force-langs silences this)" for warning in
                     checks.check_languages(
                         [(request.src, testset.sources, src_lang),
                          (request.ref, testset.references, tgt_lang),
                          *((path, testset.hyps[name], tgt_lang)
                            for name, path in request.hyps)],
                         force=False)]
    docids = None if request.docids is None else check_docids(
        request.docids, (src_lang, tgt_lang), request.ref, len(testset.references))
    # the files read by other readers: their digest before the check, which the bytes
    # copied must have (see inputs.sync)
    digests = {}
    if request.freq_corpus is not None:
        checks.require_file(request.freq_corpus)
        digests["freq"] = inputs.digest(request.freq_corpus)
        check_freq_corpus(request.freq_corpus)
    mqm_systems = None
    if request.mqm is not None:
        checks.require_file(request.mqm)
        digests["mqm"] = inputs.digest(request.mqm)
        rows = read_mqm(request.mqm)
        checks.check_mqm_languages(request.mqm, [r.source for r in rows],
                                   [r.target for r in rows], args.langs, args.force_langs)
        mqm_systems = sorted({row.system for row in rows})
    copies = input_copies(outdir, request)
    config = evaluate_config(staged(request, copies), dict(request.hyps), mqm_systems)
    try:
        plan = Plan(load_config_dict(config))
        plan.check()
    except ValueError as err:  # the config is not written: name what made it
        raise InputError("phenomt evaluate", f"the options make a config the workflow "
                                             f"refuses: {str(err).splitlines()[0]}") from None
    # the copies of the test set and the systems: the bytes the checks read
    contents = {item.role: testset.raw[item.original] for item in copies
                if item.original in testset.raw
                and item.role in ("source", "reference", *map(_hyp_role, dict(request.hyps)))}
    if docids is not None:
        contents["docids"] = "".join(f"{d}\n" for d in docids).encode("utf-8")
    return request, outdir, {"config": config, "plan": plan, "copies": copies,
                             "contents": contents, "digests": digests,
                             "lines": len(testset.references),
                             "documents": None if docids is None else len(dict.fromkeys(docids))
                             }, warnings


def _evaluate(args: argparse.Namespace) -> int:
    # The job server and Snakemake start first and load their modules (about 2 s and 1 s of
    # CPU) while the inputs are checked; a refused run closes them before they do anything.
    with ExitStack() as started:
        env = _child_env(args)
        served = None
        if args.job_server:
            served = started.enter_context(jobserver.running(env, _server_args(args)))
            env = served.env
        ahead = started.enter_context(snakerun.Ahead(env, WORKFLOW_IMPORTS))
        request, outdir, prepared, warnings = prepare(args)
        for warning in warnings:
            print(f"phenomt: warning: {warning}", file=sys.stderr)
        # Every check has passed: only from here on is anything written (the copies first:
        # a file changed since it was checked is refused before any is written).
        copies = prepared["copies"]
        inputs.sync(copies, prepared["contents"], prepared["digests"])
        if served is not None:
            served.keep_log = outdir / JOBSERVER_LOG
        inputs.write_origins(outdir, copies)
        config, lines = prepared["config"], prepared["lines"]
        with atomic_write(outdir / CONFIG) as handle:
            handle.write(f"# Written by phenomt evaluate ({len(request.hyps)} systems on "
                         f"{lines} lines); rerun the command to add systems.\n")
            yaml.safe_dump(config, handle, sort_keys=False, allow_unicode=True)
        plan = prepared["plan"]
        common = ["--configfile", str(outdir / CONFIG), "--directory", str(outdir)]
        # One Snakemake process for the jobs and the report: a second one would parse the
        # workflow and build the DAG again (about 2 s of each further system's run).
        # Without the report, its HTML views of the tables are not made either.
        report = (["report_inputs", "--report", str(outdir / "report.html"),
                   "--report-after-run"] if args.report else ["all"])
        cmd = _snakemake(*common, "--cores", str(args.cores), *report)
        log = outdir / SNAKEMAKE_LOG
        if args.verbose:
            print("running:", shlex.join(cmd), file=sys.stderr)
        result = snakerun.run(cmd, log, verbose=args.verbose, ahead=ahead)
    if result.interrupted:
        print(f"phenomt: {INTERRUPTED}", file=sys.stderr)
        return 130
    if result.returncode != 0:
        for failure in snakerun.failures(log, outdir):
            print(f"phenomt: error: {failure.line(_way_out(failure, request))}",
                  file=sys.stderr)
        return 1
    progress = result.progress
    print(f"{progress.done} of {progress.total or 0} jobs run in "
          f"{int(time.monotonic() - progress.started)} s; log: {log}", file=sys.stderr)
    _print_summary(plan, request, outdir, lines, prepared["documents"], args.report)
    return 0


def _server_args(args: argparse.Namespace) -> list[str]:
    """The job server's options, decided before the checks from the command line alone:
    ``--wordfreq`` the target language, whose list makes the frequency buckets unless a
    frequency corpus is given (one of an earlier run into the folder only makes the server
    load a list no job reads); ``--ldd`` where the run scores the LDD challenge sets; with
    several systems, the reference, its language and the metrics, whose n-grams it
    extracts once for their score jobs (for one, its job does that as fast itself; a
    reference the checks refuse is only read there: nothing is written)."""
    shared = ([f"--reference={args.ref}", f"--target-lang={args.langs[1]}",
               f"--metrics={','.join(args.metrics)}"] if len(args.hyp) > 1 else [])
    return ([] if args.freq_corpus else [f"--wordfreq={args.langs[1]}"]) + \
        (["--ldd"] if _scores_ldd_sets(args) else []) + shared


def _scores_ldd_sets(args: argparse.Namespace) -> bool:
    """Whether the run extracts and scores the LDD challenge sets: not refused by
    ``--no-ldd``, and a UDPipe model for both languages."""
    return not args.no_ldd and all(lang in UDPIPE for lang in args.langs)


def _way_out(failure: snakerun.Failure, request: Request) -> str:
    """A download's own error says how to give a mirror; here, what else skips it."""
    if failure.rule in ("fetch", "fetch_tree") and request.ldd:
        return "; or skip the challenge sets with --no-ldd"
    return ""


def _print_summary(plan: Plan, request: Request, outdir: Path, lines: int,
                   documents: int | None, report: bool) -> None:
    langs = (request.src_lang, request.tgt_lang)
    why = ("--no-ldd" if all(lang in UDPIPE for lang in langs)
           else f"UDPipe models exist for {', '.join(UDPIPE)} only")
    print(f"{request.name}: {lines} lines, baseline {request.baseline}"
          + ("" if documents is None else f", LTCR on {documents} documents")
          + ("" if request.ldd else f"; no LDD challenge sets ({why})"))
    for line in summary_lines(plan, request.name, outdir):
        print(f"  {line}")
    print("tables:")
    for target in plan.systems.tables():
        if target.endswith(".md"):
            print(f"  {outdir / target}")
    print("figures:")
    for figure in plan.systems.figures():
        if figure.endswith(".png"):
            print(f"  {outdir / figure}")
    if report:
        print(f"report: {outdir / 'report.html'}")


def _child_env(args: argparse.Namespace) -> dict[str, str]:
    # fairseq/torch are not used here, but rules may start Python tools that read these.
    return dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
                **{CACHE_ENV: parse_cache(args)})


def parse_cache(args: argparse.Namespace) -> str:
    """The folder of phenomt's caches for the run's jobs (``$PHENOMT_CACHE``, see
    :func:`phenomt.core.parse.cache_dir`), absolute since the jobs run in the output folder;
    empty for none. ``--cache-dir`` first, then ``$PHENOMT_CACHE`` where set (empty: none),
    else ``$XDG_CACHE_HOME/phenomt`` (``~/.cache/phenomt``)."""
    if args.no_cache:
        return ""
    if args.cache_dir is not None:
        return str(checks.resolve(args.cache_dir))
    if CACHE_ENV in os.environ:
        given = os.environ[CACHE_ENV]
        return str(checks.resolve(given)) if given else ""
    home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(checks.resolve(home) / "phenomt")


EVALUATE_HELP = """Score your own system outputs on any test set: every metric that applies, with
intervals, paired tests against a baseline, tables, figures and an HTML report.

Every input is checked before anything is written (UTF-8 with LF endings, equal line counts,
no empty source or reference line, language codes, the files' language, names); a failed
check prints one line naming the file and line and exits with status 2. A rerun into the same
--outdir follows the files' content: changed files are scored again, unchanged ones are not,
and a further --hyp runs only its own jobs.

When a mirror is needed: the LDD challenge sets (source and target German or English) parse
the test set with a UDPipe model and --align-extra trains the aligner on catalogued corpora.
Both are read from a data mirror (--mirror DIR, $PHENOMT_MIRROR, or ../shared/data beside a
checkout) or downloaded from their upstream URLs; with neither, give --no-ldd. Metrics, CRR/DRR,
MQM and LTCR need no mirror."""


def register_cli(tree) -> None:
    p = tree.add("evaluate", EVALUATE_HELP.split("\n\n")[0].replace("\n", " "), _evaluate)
    p.description = EVALUATE_HELP
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--src", required=True, metavar="FILE",
                   help="source sentences, one a line (UTF-8)")
    p.add_argument("--ref", required=True, metavar="FILE",
                   help="reference translations, one a line, aligned with --src")
    p.add_argument("--langs", required=True, type=parse_langs, metavar="SRC-TGT",
                   help="ISO 639 codes of source and target, e.g. de-en; the files' language "
                        "is checked against them")
    p.add_argument("--hyp", required=True, action="append", type=parse_hyp,
                   metavar="[NAME=]FILE",
                   help="a system's output, one a line (repeatable); NAME defaults to the "
                        f"file's stem and must be {checks.NAME_RULE}")
    p.add_argument("--baseline", type=checks.system_name, metavar="NAME",
                   help="the system the others are tested against (default: the first --hyp, "
                        "or the earlier run's)")
    p.add_argument("--name", type=checks.testset_name,
                   help="the test set's name in tables and paths (default: from the reference "
                        "file, e.g. newstest2021.de-en)")
    p.add_argument("--outdir", default="phenomt-evaluation", metavar="DIR",
                   help="where the config, copies of the inputs, results, report and log go; "
                        "rerun into it to add systems (default: %(default)s)")
    p.add_argument("--metrics", nargs="+", default=list(METRIC_KEYS),
                   choices=metric_keys(), metavar="METRIC",
                   help=f"registered metrics ({', '.join(metric_keys())}; default: "
                        f"{' '.join(METRIC_KEYS)})")
    p.add_argument("--samples", type=checks.samples, default=1000, metavar="N",
                   help=f"bootstrap resamples of every interval and paired test (at least "
                        f"{MIN_SAMPLES}; default: %(default)s)")
    p.add_argument("--mqm", metavar="FILE",
                   help="MQM annotations (Google's WMT MQM TSV layout) of the same language "
                        "pair: error rates per annotated system beside DRR (and LTCR for "
                        "zh-en), with Spearman's rho")
    p.add_argument("--docids", metavar="FILE",
                   help="zh-en only: the document id of every line (one a line, or WMT's "
                        "details.tsv): LTCR of every system and of the reference, its "
                        "calibration")
    p.add_argument("--no-ldd", action="store_true",
                   help="skip the long-distance-dependency challenge sets (needs no UDPipe "
                        "model, hence no mirror or network)")
    p.add_argument("--no-pos-buckets", action="store_true",
                   help="with the LDD sets, leave out the word recall by part of speech: "
                        "no UDPipe tagging of the reference (about a third of a first run's "
                        "time with the sets)")
    cache = p.add_mutually_exclusive_group()
    cache.add_argument("--cache-dir", metavar="DIR",
                       help="where the UDPipe parses of the LDD sets and the POS buckets, and "
                            "the aligner models of the reordering sets, are kept and reused "
                            "by any later run on the same test set, in any output folder "
                            "(keyed by the SHA-256 of the inputs, the tool's version and its "
                            "settings; default: $PHENOMT_CACHE, else "
                            "$XDG_CACHE_HOME/phenomt or ~/.cache/phenomt)")
    cache.add_argument("--no-cache", action="store_true",
                       help="parse and train the aligner without reading or keeping cached "
                            "results")
    p.add_argument("--align-extra", nargs="+", default=[], metavar="CORPUS",
                   help="catalogued corpora of the pair the LDD or LTCR aligner trains on "
                        "beside the test set (from the mirror or downloaded)")
    p.add_argument("--mirror", metavar="DIR",
                   help="the data mirror (default: $PHENOMT_MIRROR or ../shared/data of the "
                        "checkout); needed offline for the LDD sets and --align-extra")
    p.add_argument("--force-langs", action="store_true",
                   help="skip the check of the files' language against --langs")
    p.add_argument("--comet-model", metavar="DIR",
                   help="with --metrics ... comet: a downloaded COMET model folder (hparams.yaml, "
                        "checkpoints/model.ckpt; e.g. Unbabel/wmt22-comet-da), read in place; "
                        "needs pip install 'phenomt[comet]'")
    p.add_argument("--freq-corpus", metavar="FILE",
                   help="target-language training text (one sentence a line) whose word "
                        "counts make the frequency buckets (default: wordfreq's list of the "
                        "target language); a rerun keeps it")
    p.add_argument("--latex", action="store_true",
                   help="also write every table as LaTeX (results/tables/<name>.tex); every "
                        "table is written as Markdown, CSV and JSON in any case")
    p.add_argument("--no-report", dest="report", action="store_false",
                   help="skip the HTML report (report.html in the outdir) and its views of "
                        "the tables")
    p.add_argument("--cores", type=positive_int, default=2,
                   help="jobs run at once (default: %(default)s)")
    p.add_argument("--no-job-server", dest="job_server", action="store_false",
                   help="start every job as a process of its own, instead of forking it from "
                        "one process that has imported numpy, sacreBLEU, pandas and "
                        "matplotlib once (the same outputs; slower, but Snakemake's benchmark "
                        "files then measure each job's CPU time and memory)")
    p.add_argument("--verbose", action="store_true",
                   help=f"show Snakemake's log as it runs (always written to "
                        f"OUTDIR/{SNAKEMAKE_LOG})")

    p = tree.add("systems evaluate", "Score your own system outputs on a configured test set",
                 _run)
    p.add_argument("--testset", required=True, help="a test set under systems.testsets")
    p.add_argument("--hyp", required=True, action="append", type=parse_hyp,
                   metavar="[NAME=]FILE", help="one hypothesis a line (repeatable)")
    p.add_argument("--configfile", help="the config naming the test set (default: "
                                         "config/config.yaml of the checkout)")
    p.add_argument("--directory", default=".", help="where results/ is (default: here)")
    p.add_argument("--cores", type=positive_int, default=2,
                   help="jobs run at once (default: %(default)s)")
