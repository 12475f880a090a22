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
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from phenomt.core.cliargs import positive_int
from phenomt.core.fetch import find_mirror
from phenomt.core.io import InputError, atomic_write
from phenomt.core.metrics import base as metrics
from phenomt.core.tables import load_json
from phenomt.lexcons.convert import documents_from_ids
from phenomt.plan import PROJECT_ROOT, SNAKEFILE, Plan, load_config
from phenomt.plan.config import read_catalog
from phenomt.plan.documents import REFERENCE
from phenomt.systems.challenge import MIN_INTERVAL_SENTENCES
from phenomt.systems.mqm import read_mqm
from phenomt.systems.outputs import check_line_count, empty_lines, read_text
from phenomt.systems.scores import METRIC_KEYS, sacrebleu_keys


def parse_hyp(text: str) -> tuple[str, Path]:
    """``NAME=FILE`` or ``FILE`` (named after the file's stem)."""
    name, sep, path = text.partition("=")
    if not sep:
        name, path = Path(text).stem, text
    if not name or "/" in name or "." in name:
        raise argparse.ArgumentTypeError(f"a system name has no '/' or '.': {name!r}")
    return name, Path(path).resolve()


def with_systems(config: dict, testset: str, hyps: list[tuple[str, Path]]) -> dict:
    """``config`` with the files added as outputs of ``testset``; refuses unknown test sets,
    missing files and names that clash with configured systems."""
    testsets = config.get("systems", {}).get("testsets", {})
    if testset not in testsets:
        known = ", ".join(sorted(testsets)) or "none"
        raise InputError("--testset", f"not a configured test set {testset!r} (known: {known})")
    outputs = testsets[testset]["outputs"]
    for name, path in hyps:
        if not path.is_file():
            raise InputError(path, "no such file")
        if name in outputs:
            raise InputError(path, f"system name {name!r} is already configured for {testset}")
        outputs[name] = {"path": str(path), "origin": f"your file {path}"}
    return config


def _run(args: argparse.Namespace) -> int:
    configfile = Path(args.configfile or PROJECT_ROOT / "config" / "config.yaml")
    if not configfile.is_file():
        raise InputError(configfile, "no such config: give --configfile (outside a checkout "
                                     "there is no default config; `phenomt evaluate` needs "
                                     "none)")
    config = load_config(configfile, validate=False)
    config = with_systems(config, args.testset, args.hyp)
    plan = Plan(load_config_dict(config))
    workdir = Path(args.directory).resolve()
    overlay = workdir / plan.out / "evaluate" / "config.yaml"
    with atomic_write(overlay) as handle:
        yaml.safe_dump(config, handle, sort_keys=False)
    targets = plan.systems.tables()
    cmd = _snakemake("--configfile", str(overlay), "--directory", str(workdir),
                     "--cores", str(args.cores), *targets)
    print("running:", " ".join(cmd), file=sys.stderr)
    result = subprocess.run(cmd, env=dict(os.environ), check=False)
    if result.returncode == 0:
        print("tables:")
        for target in targets:
            print(f"  {workdir / target}")
    return result.returncode


def load_config_dict(config: dict) -> dict:
    """A validated copy of ``config`` (the schema's defaults filled in)."""
    from copy import deepcopy

    from phenomt.plan import validate_config
    from phenomt.plan.config import resolve_catalog

    return validate_config(resolve_catalog(deepcopy(config)))


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


def parse_langs(text: str) -> tuple[str, str]:
    """``de-en`` → (``de``, ``en``)."""
    src, sep, tgt = text.partition("-")
    if not sep or not re.fullmatch(r"[a-z]{2,3}", src) or not re.fullmatch(r"[a-z]{2,3}", tgt) \
            or src == tgt:
        raise argparse.ArgumentTypeError(f"expected two language codes as SRC-TGT, e.g. de-en; "
                                         f"got {text!r}")
    return src, tgt


def testset_name(ref: Path, src: str, tgt: str) -> str:
    """The test set's name from its reference file: ``newstest.en`` → ``newstest.de-en``."""
    stem = _NAME.sub("_", ref.name.split(".")[0]).strip("_") or "testset"
    return f"{stem}.{src}-{tgt}"


def check_inputs(src: Path, ref: Path, hyps: Sequence[tuple[str, Path]]) -> int:
    """The test set's line count after checking every file: UTF-8, LF endings, no empty source
    or reference line, every file as long as the reference, distinct system names. Errors
    name the file and the line."""
    for path in (src, ref, *(p for _, p in hyps)):
        if not path.is_file():
            raise InputError(path, "no such file")
    references = read_text(ref)
    sources = read_text(src)
    check_line_count(src, len(sources), len(references), ref)
    for path, lines in ((src, sources), (ref, references)):
        empty = empty_lines(lines)
        if empty:
            raise InputError(path, "empty line: every source and reference line needs text",
                             empty[0])
    names = [name for name, _ in hyps]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError("--hyp", f"system name(s) given twice: {', '.join(twice)}")
    for _, path in hyps:
        check_line_count(path, len(read_text(path)), len(references), ref)
    return len(references)


#: The pair LTCR is defined for: its repeated source words are Chinese words (jieba).
LTCR_PAIR = ("zh", "en")


def check_docids(path: Path, langs: tuple[str, str], ref: Path, lines: int) -> int:
    """The number of documents of a document-id file for LTCR after checking it: a Zh->En
    test set, UTF-8 with LF endings, one non-empty id a line, as many lines as the reference
    ``ref`` (``lines``), the lines of a document together. Errors name the file and line."""
    if langs != LTCR_PAIR:
        raise InputError(path, "--docids is for LTCR, which is defined for zh-en only (its "
                               "repeated source words are Chinese words segmented by jieba); "
                               f"this test set is {langs[0]}-{langs[1]}")
    if not path.is_file():
        raise InputError(path, "no such file")
    check_line_count(path, len(read_text(path)), lines, ref)
    return len(documents_from_ids(path, lines))


def _udpipe(lang: str, mirror: str | None) -> str | None:
    if lang not in UDPIPE:
        return None
    mirrored, official = UDPIPE[lang]
    spec = read_catalog()["downloads"][mirrored]
    return mirrored if mirror and (Path(mirror) / spec["mirror"]).is_file() else official


def evaluate_config(request: Request) -> dict[str, Any]:
    """The config of one ``phenomt evaluate`` run: the test set as a corpus of local files,
    the systems as its outputs, the LDD section when its challenge sets are asked for, its
    document ids and LTCR when given."""
    s, t, name = request.src_lang, request.tgt_lang, request.name
    outputs = {system: {"path": str(path), "origin": f"your file {path}"}
               for system, path in request.hyps}
    config: dict[str, Any] = {
        "outdir": RESULTS, "resources_dir": "resources", "mirror": request.mirror, "seed": 1,
        "corpora": {name: {"label": f"{name} (your test set)", "langs": [s, t], "split": "test",
                           "format": "plain",
                           "files": {s: {"download": f"{name}.{s}"},
                                     t: {"download": f"{name}.{t}"}}}},
        "downloads": {f"{name}.{s}": {"url": None, "mirror": str(request.src)},
                      f"{name}.{t}": {"url": None, "mirror": str(request.ref)}},
        "systems": {"samples": request.samples, "seed": 1, "metrics": list(request.metrics),
                    "testsets": {name: {
                        "corpus": name, "src": s, "tgt": t, "baseline": request.baseline,
                        "ldd": request.ldd,
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
    if request.mqm is not None:
        config["downloads"][f"{name}.mqm"] = {"url": None, "mirror": str(request.mqm)}
        config["systems"]["mqm"] = {name: mqm_set(request.mqm, f"{name}.mqm", s, t)}
    if request.ldd:
        # catalogued corpora the aligner trains on beside the test set
        config["corpora"].update({corpus: {} for corpus in request.align_extra})
        config["ldd"] = {"corpora": {}, "directions": {f"{s}-{t}": {"models": []}},
                         "udpipe": {s: _udpipe(s, request.mirror)},
                         "align": {"extra": list(request.align_extra)}}
    return config


def mqm_set(path: Path, download: str, src: str, tgt: str) -> dict[str, Any]:
    """The MQM set of an annotation file (Google's WMT MQM layout): every annotated system,
    the human translation ``ref`` as the metrics' reference, LTCR for Zh->En."""
    systems = sorted({row.system for row in read_mqm(path)})
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
    adding a system runs only that system's jobs; a different test set is refused."""
    previous = outdir / CONFIG
    if not previous.is_file():
        return request
    config = load_config(previous, validate=False)
    downloads = config.get("downloads") or {}
    same = [downloads.get(f"{request.name}.{lang}", {}).get("mirror") for lang in
            (request.src_lang, request.tgt_lang)] == [str(request.src), str(request.ref)]
    if not same:
        raise InputError(outdir, "holds the evaluation of another test set: give another "
                                 "--outdir")
    testset = config["systems"]["testsets"][request.name]
    hyps = {system: Path(spec["path"]) for system, spec in testset["outputs"].items()}
    for system, path in request.hyps:
        if system in hyps and hyps[system] != path:
            raise InputError("--hyp", f"{system!r} was {hyps[system]} in the earlier run in "
                                      f"{outdir}: give the new file another name")
        hyps[system] = path
    baseline = request.baseline if baseline_given else testset["baseline"]
    earlier_mqm = downloads.get(f"{request.name}.mqm", {}).get("mirror")
    mqm = request.mqm or (Path(earlier_mqm) if earlier_mqm else None)
    earlier_docids = downloads.get(f"{request.name}.docids", {}).get("mirror")
    docids = request.docids or (Path(earlier_docids) if earlier_docids else None)
    return replace(request, hyps=tuple(hyps.items()), baseline=baseline, mqm=mqm,
                   docids=docids)


# The workflow profile's 5 s job-rate window (workflow/profiles/default) keeps Snakemake alive
# up to 5 s after its last job, which is a third of an added system's run here; these runs
# have a few dozen jobs, so the default 1 s window costs nothing.
RATE_WINDOW = ("--max-jobs-per-timespan", "100/1s")


def _snakemake(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("snakemake")), "--snakefile",
            str(SNAKEFILE), *RATE_WINDOW, *args]


def summary_lines(plan: Plan, testset: str, root: Path) -> list[str]:
    """One line per system: each metric with its interval, CRR+DRR, LTCR and the worst
    challenge set (largest BLEU drop against the full test set); with LTCR, a last line with
    the reference's (the calibration). The run's files are under ``root``."""
    lines = []
    ltcr = testset in plan.systems.ltcr_testsets
    for system in plan.systems.systems(testset):
        scored = load_json(root / plan.systems.bleu_json(testset, system))
        main = scored["subsets"][scored["main"]]
        parts = [f"{metrics.METRICS[k].label} {main[k]['score']:.2f} "
                 f"[{main[k]['ci_low']:.2f}, {main[k]['ci_high']:.2f}]"
                 for k in scored["metrics"]]
        redundancy = load_json(root / plan.systems.redundancy_json(testset, system))
        red = redundancy["subsets"][redundancy["main"]]
        if red["redundancy"] is not None:
            low, high = red["redundancy_ci"]
            parts.append(f"CRR+DRR {100 * red['redundancy']:.2f}% "
                         f"[{100 * low:.2f}, {100 * high:.2f}]")
        if ltcr:
            parts.append(_l_all(load_json(root / plan.systems.ltcr_json(testset, system))))
        if testset in plan.systems.ldd_testsets:
            parts.append(_worst_set(load_json(root / plan.systems.ldd_json(testset, system))))
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


def _worst_set(record: dict[str, Any]) -> str:
    """The challenge set with the largest BLEU drop against the full test set, among those
    large enough for an interval; whether its whole interval lies below."""
    drops = {name: entry for name, entry in record["sets"].items()
             if entry["difference"] is not None and entry["below"] is not None}
    if not drops:
        return f"no challenge set of {MIN_INTERVAL_SENTENCES}+ sentences"
    name = min(drops, key=lambda n: drops[n]["difference"])
    entry = drops[name]
    below = "interval below the full set" if entry["below"] else "within noise"
    return (f"worst challenge set {name} ({entry['difference']:+.2f} BLEU, "
            f"{entry['sentences']} sentences, {below})")


def _evaluate(args: argparse.Namespace) -> int:
    src_lang, tgt_lang = args.langs
    hyps = tuple(args.hyp)
    names = [n for n, _ in hyps]
    outdir = Path(args.outdir).resolve()
    mirror = find_mirror(str(Path(args.mirror).resolve()) if args.mirror else None,
                         PROJECT_ROOT)
    request = Request(
        src=Path(args.src).resolve(), ref=Path(args.ref).resolve(), src_lang=src_lang,
        tgt_lang=tgt_lang, hyps=hyps,
        name=args.name or testset_name(Path(args.ref), src_lang, tgt_lang),
        baseline=args.baseline or names[0],
        ldd=not args.no_ldd and src_lang in UDPIPE and tgt_lang in UDPIPE,
        align_extra=tuple(args.align_extra), metrics=tuple(args.metrics),
        samples=args.samples, mirror=str(mirror) if mirror else None,
        mqm=Path(args.mqm).resolve() if args.mqm else None,
        docids=Path(args.docids).resolve() if args.docids else None)
    request = merged_hyps(outdir, request, args.baseline is not None)
    if request.baseline not in dict(request.hyps):
        raise InputError("--baseline", f"{request.baseline!r} is none of the systems")
    lines = check_inputs(request.src, request.ref, request.hyps)
    documents = None if request.docids is None else check_docids(
        request.docids, (request.src_lang, request.tgt_lang), request.ref, lines)
    config = evaluate_config(request)
    plan = Plan(load_config_dict(config))
    try:
        plan.check()
    except ValueError as err:
        raise InputError(outdir / CONFIG, f"the generated config is refused: {err}") from None
    with atomic_write(outdir / CONFIG) as handle:
        handle.write(f"# Written by phenomt evaluate ({len(request.hyps)} systems on "
                     f"{lines} lines); rerun the command to add systems.\n")
        yaml.safe_dump(config, handle, sort_keys=False, allow_unicode=True)
    targets = plan.systems.tables()
    common = ["--configfile", str(outdir / CONFIG), "--directory", str(outdir)]
    # One Snakemake process for the jobs and the report: a second one would parse the
    # workflow and build the DAG again (about 2 s of each further system's run).
    report = (["--report", str(outdir / "report.html"), "--report-after-run"]
              if args.report else [])
    cmd = _snakemake(*common, "--cores", str(args.cores), "report_inputs", *report)
    print("running:", " ".join(cmd), file=sys.stderr)
    result = subprocess.run(cmd, check=False, env=_child_env())
    if result.returncode != 0:
        return result.returncode
    print(f"{request.name}: {lines} lines, baseline {request.baseline}"
          + ("" if documents is None else f", LTCR on {documents} documents")
          + ("" if request.ldd else "; no LDD challenge sets (UDPipe models exist for "
                                    f"{', '.join(UDPIPE)} only)"))
    for line in summary_lines(plan, request.name, outdir):
        print(f"  {line}")
    print("tables:")
    for target in targets:
        if target.endswith(".md"):
            print(f"  {outdir / target}")
    print("figures:")
    for figure in plan.systems.figures():
        if figure.endswith(".png"):
            print(f"  {outdir / figure}")
    if args.report:
        print(f"report: {outdir / 'report.html'}")
    return 0


def _child_env() -> dict[str, str]:
    # fairseq/torch are not used here, but rules may start Python tools that read these.
    return dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))


def register_cli(tree) -> None:
    p = tree.add("evaluate", "Score your own system outputs on any test set: every metric "
                 "that applies, with intervals, paired tests, tables and a report", _evaluate)
    p.add_argument("--src", required=True, help="source sentences, one a line")
    p.add_argument("--ref", required=True, help="reference translations, one a line")
    p.add_argument("--langs", required=True, type=parse_langs, metavar="SRC-TGT")
    p.add_argument("--hyp", required=True, action="append", type=parse_hyp,
                   metavar="[NAME=]FILE", help="a system's output (repeatable)")
    p.add_argument("--baseline", help="the system the others are tested against "
                                      "(default: the first --hyp)")
    p.add_argument("--name", help="the test set's name (default: from the reference file)")
    p.add_argument("--outdir", default="phenomt-evaluation",
                   help="where the config, results and report go (default: %(default)s)")
    p.add_argument("--metrics", nargs="+", default=list(METRIC_KEYS),
                   choices=sacrebleu_keys(), metavar="METRIC",
                   help=f"sacreBLEU metrics ({', '.join(sacrebleu_keys())}; default: "
                        f"{' '.join(METRIC_KEYS)})")
    p.add_argument("--samples", type=positive_int, default=1000,
                   help="bootstrap samples of every interval and paired test")
    p.add_argument("--mqm", help="MQM annotations (Google's WMT MQM TSV layout): error rates "
                                 "per annotated system beside DRR (and LTCR for zh-en), with "
                                 "Spearman's rho")
    p.add_argument("--docids", help="the document id of every source line, one a line "
                                    "(zh-en): LTCR of every system and of the reference, its "
                                    "calibration")
    p.add_argument("--no-ldd", action="store_true",
                   help="skip the long-distance-dependency challenge sets")
    p.add_argument("--align-extra", nargs="+", default=[], metavar="CORPUS",
                   help="catalogued corpora the LDD or LTCR aligner trains on beside the "
                        "test set")
    p.add_argument("--mirror", help="the data mirror (default: $PHENOMT_MIRROR or "
                                    "../shared/data of the checkout)")
    p.add_argument("--no-report", dest="report", action="store_false",
                   help="skip the HTML report (report.html in the outdir)")
    p.add_argument("--cores", type=positive_int, default=2)

    p = tree.add("systems evaluate", "Score your own system outputs on a configured test set",
                 _run)
    p.add_argument("--testset", required=True, help="a test set under systems.testsets")
    p.add_argument("--hyp", required=True, action="append", type=parse_hyp,
                   metavar="[NAME=]FILE", help="one hypothesis a line (repeatable)")
    p.add_argument("--configfile", help="the config naming the test set (default: "
                                         "config/config.yaml of the checkout)")
    p.add_argument("--directory", default=".", help="where results/ is (default: here)")
    p.add_argument("--cores", type=int, default=2)
