"""The GPU path on one CUDA GPU, checked and timed in one run: ``make gpu-check OUT=DIR``.

1. **overfit**: every overfitting test (``tests/test_overfit.py``) on CUDA in fp32 and in fp16,
   each against its training-BLEU target (pytest, in parallel workers when pytest-xdist is
   installed: the models are tiny, so one GPU holds many).
2. **epochs**: one epoch of the findings training data (Multi30k task 1 De->En, the findings
   config's BPE) for the AR teacher and every NAT kind, with the paper configs' models and
   batches (``config/papers/wang_nat.yaml``: transformer-base sizes, tokens per batch, update
   frequency) in fp16. "+OaXE" fine-tunes its base kind's one-epoch model, as the recipe
   fine-tunes the trained one.
3. **speed**: decoding the findings test set (Multi30k test2016) with each of those models:
   every NAT kind in one pass against the teacher's beam 5, at batch 1 (the first
   ``--batch1-sentences`` sentences) and batch 128 (all). The models had one epoch, so their
   output lengths are not those of trained models: the AR teacher's output is capped at
   1.2 x source + 10 tokens (a trained model stops near the reference length; a one-epoch one
   need not stop), and every row gives its tokens per sentence beside the rate.

Writes ``gpu-check.json`` and ``gpu-check.md`` (device, versions, every figure) to the output
folder after each stage, so an interrupted run keeps what it measured. Exit status 1 when an
overfitting test failed or a stage broke.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FINDINGS = ROOT / "results" / "findings" / "models" / "transformer.de-en"
DEFAULT_DATA = FINDINGS / "bin"
DEFAULT_TEST = FINDINGS / "bin-test" / "multi30k.test2016"
DEFAULT_CONFIG = ROOT / "config" / "papers" / "wang_nat.yaml"
NAT_KINDS = ("cmlm", "glat", "dat", "cmlm_oaxe", "glat_oaxe")
TEACHER_ROW = "transformer (AR teacher)"
#: The AR teacher's output cap in the speed stage (fairseq's --max-len-a/--max-len-b).
AR_LENGTH_CAP = {"max_len_a": 1.2, "max_len_b": 10}
GPU = {"cpu": False, "fp16": True}


def versions(commit: str | None) -> dict[str, Any]:
    import fairseq
    import torch

    info: dict[str, Any] = {
        "python": platform.python_version(), "torch": torch.__version__,
        "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
        "fairseq": fairseq.__version__, "commit": commit or git_commit(),
        "cpus": os.cpu_count(), "cuda_available": torch.cuda.is_available()}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info.update(device=props.name, memory_gib=round(props.total_memory / 2**30, 1),
                    capability=f"{props.major}.{props.minor}")
    else:
        info["device"] = "none (no CUDA device visible)"
    return info


def git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


# --------------------------------------------------------------------------- stage 1: overfit

def junit_outcomes(path: Path) -> list[dict[str, Any]]:
    """One record per test case of a JUnit XML report: id, outcome, seconds, message."""
    if not path.is_file():
        return []
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            child = case.find(tag)
            if child is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message = (child.get("message") or "").splitlines()[0][:300] \
                    if child.get("message") else ""
                break
        cases.append({"test": case.get("name"), "outcome": outcome,
                      "seconds": round(float(case.get("time") or 0), 1), "message": message})
    return cases


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def run_overfit(out: Path, workers: int, timeout: float) -> dict[str, Any]:
    """The overfitting tests' CUDA variants; their outcomes and every run's BLEU."""
    results, junit = out / "overfit.jsonl", out / "overfit.xml"
    results.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "pytest", "tests/test_overfit.py", "-k", "cuda", "-q",
           "-p", "no:cacheprovider", "--junitxml", str(junit)]
    parallel = workers > 1 and _has_module("xdist")
    if parallel:
        cmd += ["-n", str(workers)] + xdist_balance()
    env = {**os.environ, "PHENOMT_OVERFIT_RESULTS": str(results),
           "PHENOMT_REQUIRE_FAIRSEQ": "1", "PHENOMT_REQUIRE_MIRROR": "1"}
    start = time.perf_counter()
    status, log = run_group(cmd, env, timeout, out / "overfit.log")
    cases = junit_outcomes(junit)
    return {"command": " ".join(cmd), "workers": workers if parallel else 1,
            "seconds": round(time.perf_counter() - start, 1), "status": status,
            "summary": pytest_summary(log, status),
            "tests": cases, "runs": read_jsonl(results),
            "passed": status == 0 and bool(cases)
            and all(c["outcome"] == "passed" for c in cases)}


def pytest_summary(log: str, status: int | str) -> str:
    """pytest's closing line (``3 passed, 1 failed in 80.1s``), or what stopped it."""
    for line in reversed(log.splitlines()):
        if " in " in line and any(w in line for w in ("passed", "failed", "error", "skipped")):
            return line.strip("= ")
    return f"pytest stopped ({status}) before its summary"


def run_group(cmd: list[str], env: dict[str, str], timeout: float, log_path: Path
              ) -> tuple[int | str, str]:
    """Run ``cmd`` in a process group of its own, its output to ``log_path``; at the timeout
    the whole group is killed (pytest's workers and the fairseq processes they started,
    which would otherwise run on and slow down the timings of the next stages)."""
    import signal

    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            status: int | str = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            status = "timeout"
    text = log_path.read_text(encoding="utf-8", errors="replace")
    if status == "timeout":
        text += f"\n[gpu-check] stopped after {timeout:.0f} s\n"
        log_path.write_text(text, encoding="utf-8")
    return status, text


def xdist_balance() -> list[str]:
    """Work stealing where pytest-xdist has it (3.2 and later): the runs last 50-200 s each,
    and a worker left with two long ones queued would set the stage's time."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        major, minor = (int(x) for x in version("pytest-xdist").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return []
    return ["--dist", "worksteal"] if (major, minor) >= (3, 2) else []


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


# --------------------------------------------------------------------------- stage 2: epochs

def epoch_options(plan, teacher: str, kind: str, base_models: dict[str, str],
                  half: dict[str, Any]) -> dict[str, Any]:
    """The paper config's training options of ``kind`` for one epoch on the GPU, without
    validation or mid-epoch checkpoints."""
    from phenomt.nat.recipes import base_model

    if kind == TEACHER_ROW:
        options = plan.models.train_options(teacher)
    else:
        options = plan.nat.train_options(teacher, f"{kind}.raw")
        base = base_model(kind)
        if base is not None:
            if base not in base_models:
                raise RuntimeError(f"no {base} model to fine-tune: its epoch failed")
            options["finetune_from_model"] = base_models[base]
    options.update(max_epoch=1, disable_validation=True, save_interval_updates=0,
                   log_interval=10, **half)
    return options


def run_epochs(plan, data_bin: Path, work: Path, half: dict[str, Any], rows: list,
               done=lambda: None) -> dict[str, str]:
    """One epoch of each kind, a row per kind appended to ``rows`` (``done`` called after
    each); returns the model each run kept."""
    from phenomt.core import nmt
    from phenomt.core.curves import parse_train_epochs

    teacher = plan.nat.teachers[0]
    models: dict[str, str] = {}
    for kind in (TEACHER_ROW, *NAT_KINDS):
        name = kind.split()[0]
        save_dir = work / name
        shutil.rmtree(save_dir, ignore_errors=True)
        row: dict[str, Any] = {"kind": kind}
        try:
            options = epoch_options(plan, teacher, kind, models, half)
            row.update(arch=options["arch"], max_tokens=options.get("max_tokens"),
                       update_freq=options.get("update_freq", 1))
            start = time.perf_counter()
            nmt.train(str(data_bin), str(save_dir), str(save_dir / "model.pt"), options, 1,
                      str(work / f"{name}.train.log"))
            row["process_seconds"] = round(time.perf_counter() - start, 1)
            summary = parse_train_epochs((save_dir / "fairseq.log").read_text(encoding="utf-8"))
            if not summary:
                raise RuntimeError(f"no epoch summary in {save_dir / 'fairseq.log'}")
            last = summary[-1]
            row.update({key: last[key] for key in ("num_updates", "wps", "train_wall",
                                                    "wall", "loss", "gb_free", "loss_scale")
                        if key in last})
            models[name] = str(save_dir / "model.pt")
        except Exception as err:  # one kind's failure must not hide the others' figures
            row["error"] = f"{type(err).__name__}: {err}"[:500]
        rows.append(row)
        done()
    return models


def earlier_models(work: Path) -> dict[str, str]:
    """The one-epoch models an earlier run of the epoch stage kept in ``work``, by kind."""
    names = [TEACHER_ROW.split()[0], *NAT_KINDS]
    return {name: str(work / name / "model.pt") for name in names
            if (work / name / "model.pt").is_file()}


# --------------------------------------------------------------------------- stage 3: speed

def head_layout(test_dir: Path, dest: Path, n: int) -> int:
    """The first ``n`` sentences of a text-layout test set (:func:`nmt.write_text_layout`)."""
    from phenomt.core.nmt import TEXT_TEST_FILES

    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in ("dict.src.txt", "dict.tgt.txt"):
        shutil.copyfile(test_dir / name, dest / name)
    count = 0
    for side in ("src", "tgt"):
        lines = (test_dir / TEXT_TEST_FILES[side]).read_text(encoding="utf-8").splitlines()[:n]
        (dest / TEXT_TEST_FILES[side]).write_text("".join(f"{x}\n" for x in lines),
                                                  encoding="utf-8")
        count = len(lines)
    return count


def run_speed(plan, models: dict[str, str], test_dir: Path, work: Path, batch1: int,
              half: dict[str, Any]) -> list[dict[str, Any]]:
    """Sentences per second of each model at batch 1 and 128; NAT rows with their speed-up
    over the teacher's beam 5 at the same batch size."""
    from phenomt.core.io import count_lines
    from phenomt.core.nmt import TEXT_TEST_FILES
    from phenomt.nat.recipes import AR_SYSTEM
    from phenomt.nat.tables import measure_speed

    teacher = plan.nat.teachers[0]
    subset = work / "test-head"
    sets = {1: (subset, head_layout(test_dir, subset, batch1)),
            128: (test_dir, count_lines(test_dir / TEXT_TEST_FILES["src"]))}
    systems = [("transformer", "transformer beam 5",
                {**plan.nat.decode_options(teacher, AR_SYSTEM), **AR_LENGTH_CAP})]
    systems += [(kind, kind, plan.nat.decode_options(teacher, f"{kind}.raw"))
                for kind in NAT_KINDS]
    rows = []
    warmed = False
    for name, label, options in systems:
        if name not in models:
            rows.append({"system": label, "error": "no model (its epoch failed)"})
            continue
        options = {**options, **half, "dataset_impl": "raw"}  # the text layout
        for batch, (data, n) in sets.items():
            row: dict[str, Any] = {"system": label, "batch_size": batch, "sentences": n}
            try:
                if not warmed:  # CUDA's first kernels and handles stay out of the figures
                    measure_speed(subset, models[name], options, [8], sets[1][1])
                    warmed = True
                measured = measure_speed(data, models[name], options, [batch], n)[0]
                row.update(sentences_per_second=round(measured["sentences_per_second"], 1),
                           latency_ms=round(measured["latency_ms"], 2),
                           tokens_per_sentence=round(measured["tokens"] / n, 1))
            except Exception as err:
                row["error"] = f"{type(err).__name__}: {err}"[:500]
            rows.append(row)
    ar = {r["batch_size"]: r.get("sentences_per_second") for r in rows
          if r["system"] == "transformer beam 5" and "batch_size" in r}
    for row in rows:
        base = ar.get(row.get("batch_size"))
        if base and row.get("sentences_per_second") and row["system"] != "transformer beam 5":
            row["speedup"] = round(row["sentences_per_second"] / base, 1)
    return rows


# --------------------------------------------------------------------------- summary

def markdown(report: dict[str, Any]) -> str:
    info = report["versions"]
    lines = ["# GPU check", "",
             f"Device: {info.get('device')} ({info.get('memory_gib', '?')} GiB, compute "
             f"capability {info.get('capability', '?')}), {info.get('cpus')} CPU cores. "
             f"Python {info.get('python')}, torch {info.get('torch')} (CUDA {info.get('cuda')}, "
             f"cuDNN {info.get('cudnn')}), fairseq {info.get('fairseq')}, commit "
             f"{info.get('commit') or 'unknown'}. Total {report.get('seconds', '?')} s.", ""]
    overfit = report.get("overfit")
    if overfit:
        lines += ["## Overfitting tests on CUDA (training BLEU, target >= 90)", "",
                  f"{overfit['summary']} ({overfit['seconds']} s, {overfit['workers']} "
                  "parallel workers)", "", "| run | device | BLEU | seconds |",
                  "|---|---|---:|---:|"]
        for run in sorted(overfit["runs"], key=lambda r: (r["device"], r["kind"])):
            lines.append(f"| {run['kind']} | {run['device']} | {run['bleu']:.1f} | "
                         f"{run['seconds']:.0f} |")
        failed = [c for c in overfit["tests"] if c["outcome"] not in ("passed", "skipped")]
        if failed:
            lines += ["", "Failed:", ""] + [f"- `{c['test']}`: {c['message']}" for c in failed]
        lines.append("")
    epochs = report.get("epochs")
    if epochs:
        lines += ["## One epoch of the findings data at the paper config's settings "
                  f"({report['precision']})", "",
                  "| kind | arch | tokens/batch x update freq | updates | train s | process s "
                  "| target words/s | GPU GiB free |", "|---|---|---|---:|---:|---:|---:|---:|"]
        for row in epochs:
            if "error" in row:
                lines.append(f"| {row['kind']} | failed: {row['error']} | | | | | | |")
                continue
            lines.append(f"| {row['kind']} | {row['arch']} | {row['max_tokens']} x "
                         f"{row['update_freq']} | {row.get('num_updates', 0):.0f} | "
                         f"{row.get('train_wall', 0):.0f} | {row['process_seconds']:.0f} | "
                         f"{row.get('wps', 0):,.0f} | {row.get('gb_free', float('nan')):.1f} |")
        lines.append("")
    speed = report.get("speed")
    if speed:
        lines += [f"## Decoding speed ({report['precision']}; one-epoch models)", "",
                  "| system | batch | sentences | sentences/s | ms/sentence | tokens/sentence "
                  "| speed-up over beam 5 |", "|---|---:|---:|---:|---:|---:|---:|"]
        for row in speed:
            if "error" in row:
                lines.append(f"| {row['system']} | {row.get('batch_size', '')} | failed: "
                             f"{row['error']} | | | | |")
                continue
            lines.append(f"| {row['system']} | {row['batch_size']} | {row['sentences']} | "
                         f"{row['sentences_per_second']} | {row['latency_ms']} | "
                         f"{row['tokens_per_sentence']} | {row.get('speedup', '')} |")
        lines.append("")
    if report.get("errors"):
        lines += ["## Stages that broke", ""] + [f"- {e}" for e in report["errors"]] + [""]
    return "\n".join(lines)


def write_report(out: Path, report: dict[str, Any]) -> None:
    from phenomt.core.io import atomic_write

    with atomic_write(out / "gpu-check.json") as handle:
        handle.write(json.dumps(report, indent=1, sort_keys=True) + "\n")
    with atomic_write(out / "gpu-check.md") as handle:
        handle.write(markdown(report))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for gpu-check.json/.md and the logs")
    parser.add_argument("--data-bin", type=Path, default=DEFAULT_DATA,
                        help="the findings teacher's binarized training data")
    parser.add_argument("--test-data", type=Path, default=DEFAULT_TEST,
                        help="the findings test set in the text layout (bin-test/...)")
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG,
                        help="the paper config whose models and batches are timed")
    parser.add_argument("--stages", default="overfit,epochs,speed",
                        help="comma-separated; speed without epochs decodes the models an "
                        "earlier run left in --work")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="parallel pytest workers for the overfitting tests")
    parser.add_argument("--overfit-timeout", type=float, default=240.0,
                        help="seconds before the overfitting stage is stopped (its workers too)")
    parser.add_argument("--batch1-sentences", type=int, default=200)
    parser.add_argument("--work", type=Path,
                        help="folder for the timed models (default OUT/work; several GB)")
    parser.add_argument("--commit", help="the commit checked (default: git rev-parse HEAD)")
    parser.add_argument("--fp32", action="store_true",
                        help="time epochs and decoding in fp32 (also what a CPU run uses)")
    args = parser.parse_args(argv)
    stages = set(args.stages.split(","))
    unknown = stages - {"overfit", "epochs", "speed"}
    if unknown:
        parser.error(f"unknown stage(s): {', '.join(sorted(unknown))}")
    os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.work or args.out / "work"
    started = time.perf_counter()
    report: dict[str, Any] = {"versions": versions(args.commit), "errors": []}
    half = {"cpu": False} if args.fp32 else GPU
    if not report["versions"]["cuda_available"]:
        half = {"cpu": True}
    report["precision"] = "fp16" if half.get("fp16") else "fp32"
    config = args.config.resolve()
    # relative to the checkout where it lies there: the report names no machine's paths
    report["config"] = str(config.relative_to(ROOT)) if config.is_relative_to(ROOT) \
        else str(args.config)
    write_report(args.out, report)

    def finish_stage() -> None:
        report["seconds"] = round(time.perf_counter() - started, 1)
        write_report(args.out, report)
        print(f"[gpu-check] {report['seconds']:.0f} s", flush=True)

    if "overfit" in stages:
        print("[gpu-check] overfitting tests on CUDA, fp32 and fp16", flush=True)
        report["overfit"] = run_overfit(args.out, args.workers, args.overfit_timeout)
        print(f"[gpu-check] {report['overfit']['summary']}", flush=True)
        finish_stage()
    models: dict[str, str] = {}
    if stages & {"epochs", "speed"}:
        from phenomt.plan import Plan, load_config

        plan = Plan(load_config(args.config))
        if "epochs" in stages:
            print("[gpu-check] one epoch per kind", flush=True)
            report["epochs"] = []
            try:
                models = run_epochs(plan, args.data_bin, work, half, report["epochs"],
                                    lambda: write_report(args.out, report))
            except Exception as err:
                report["errors"].append(f"epochs: {type(err).__name__}: {err}")
            finish_stage()
        else:  # the speed stage alone decodes the models an earlier run left in --work
            models = earlier_models(work)
        if "speed" in stages:
            print("[gpu-check] decoding speed", flush=True)
            try:
                report["speed"] = run_speed(plan, models, args.test_data, work,
                                            args.batch1_sentences, half)
            except Exception as err:
                report["errors"].append(f"speed: {type(err).__name__}: {err}")
            finish_stage()
    print(markdown(report))
    broken = report["errors"] or any("error" in r for r in report.get("epochs", []) +
                                     report.get("speed", []))
    overfit_failed = "overfit" in report and not report["overfit"]["passed"]
    return 1 if broken or overfit_failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.exit(main())
