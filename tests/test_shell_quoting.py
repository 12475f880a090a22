"""Every value a rule hands to a shell is quoted: names, paths and notes that hold shell
metacharacters reach the commands as one word each and run nothing.

Three layers: the rules' shell strings quote every file, log and wildcard placeholder
(Snakemake's ``:q``, which quotes each element of a list); the plan functions that build a
rule's ready-made arguments quote every value with ``shlex.quote``; and the commands Snakemake
itself formats, for jobs whose names and paths are hostile, run no injected code."""

from __future__ import annotations

import ast
import copy
import json
import re
import shlex
import string
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, TINY_CONFIG, run_snakemake, tiny_workdir

RULES = sorted((ROOT / "workflow" / "rules").glob("*.smk"))

#: A name or path fragment that runs code wherever it reaches a shell unquoted.
HOSTILE = "a;touch PWNED $(touch PWNED) `touch PWNED` 'q' \"d\" &"
#: A system name of the kind a wildcard carries into a command.
HOSTILE_NAME = "x;touch PWNED;echo"

#: Placeholders that must carry ``:q``: the job's files, logs, wildcards and resources.
QUOTED_ROOTS = ("input", "output", "log", "wildcards", "resources")
#: ``params`` that are ready-made argument strings: built by plan functions that quote each
#: value themselves (tests below), so the rule must not quote them again. Every other
#: ``params`` placeholder is a single value (a path, name or number) and needs ``:q``.
ARGUMENT_PARAMS = frozenset({
    "args", "settings", "identity", "mask", "pair", "target", "sets", "extra", "notes",
    "bleu", "samples", "resampling", "scores", "files", "concat", "docids", "corpora",
    "reorder", "lexical", "layout", "set", "pretok", "reference", "truecaser", "meta",
    "batch_sizes", "runs", "source"})


# --------------------------------------------------------------------------- shell strings

def shell_strings(path: Path) -> Iterator[tuple[str, int, str]]:
    """(rule, line, command) of every ``shell:`` of a rule file: the string literals that
    follow the directive, joined as Python joins adjacent literals."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rule = "?"
    for number, line in enumerate(lines):
        if match := re.match(r"^(?:use )?rule (\w+)", line):
            rule = match.group(1)
        if line.strip() != "shell:":
            continue
        literal = []
        for following in lines[number + 1:]:
            if not following.lstrip().startswith(('"', "'")):
                break
            literal.append(following)
        assert literal, f"{path.name}:{number + 1}: a shell: without a string literal"
        yield rule, number + 1, ast.literal_eval("(" + "\n".join(literal) + "\n)")


def placeholders(command: str) -> Iterator[tuple[str, str]]:
    """(field, format spec) of every placeholder of a Snakemake shell string."""
    for _, field, spec, _ in string.Formatter().parse(command):
        if field is not None:
            yield field, spec or ""


def unquoted(command: str) -> list[str]:
    """The placeholders of a command that reach the shell unquoted but must not."""
    found = []
    for field, spec in placeholders(command):
        root, _, name = field.partition(".")
        must_quote = root in QUOTED_ROOTS or (root == "params" and name not in ARGUMENT_PARAMS)
        if must_quote and not spec.endswith("q"):
            found.append(field)
        elif root not in (*QUOTED_ROOTS, "params", "threads"):
            found.append(f"{field} (unknown to this check)")
    return found


ALL_SHELLS = [(path.name, *shell) for path in RULES for shell in shell_strings(path)]


def test_the_rule_files_have_shell_commands():
    assert len(ALL_SHELLS) > 90
    assert {name for name, *_ in ALL_SHELLS} == {p.name for p in RULES}


@pytest.mark.parametrize("command", [pytest.param(command, id=f"{name}:{line}:{rule}")
                                     for name, rule, line, command in ALL_SHELLS])
def test_every_file_wildcard_and_value_placeholder_is_quoted(command):
    assert not unquoted(command), f"unquoted: {unquoted(command)}"


def test_the_check_sees_a_lost_quote():
    """The check above fails when one placeholder loses its ``:q``."""
    for name, rule, line, command in ALL_SHELLS:
        for field, spec in placeholders(command):
            if spec == "q" and field.split(".")[0] in QUOTED_ROOTS:
                broken = command.replace(f"{{{field}:q}}", f"{{{field}}}", 1)
                assert unquoted(broken) == [field], f"{name}:{line} {rule}"
    assert unquoted("x --out {output.md:q} --name {params.model}") == ["params.model"]
    assert unquoted("x {params.args} {params.note:q} --jobs {threads}") == []
    assert unquoted("x {wildcards.sysname}") == ["wildcards.sysname"]


# --------------------------------------------------------------------------- formatted jobs

class _Files(list):
    """A job's input, output or log for the formatter: the whole list and every named entry
    are paths with :data:`HOSTILE` in them (a named entry is a list of two, as a named list
    input is)."""

    def __init__(self, kind: str):
        super().__init__([f"{kind}/one {HOSTILE}", f"{kind}/two {HOSTILE}"])
        object.__setattr__(self, "kind", kind)

    def __getattr__(self, name: str) -> list[str]:
        return [f"{self.kind}/{name} {HOSTILE}", f"{self.kind}/{name}.2 {HOSTILE}"]


class _Values:
    """Wildcards, params and resources for the formatter: a hostile value for every name,
    but an empty string for the ready-made argument strings of :data:`ARGUMENT_PARAMS`
    (their plan functions are checked below)."""

    def __init__(self, value: str, arguments: frozenset[str] = frozenset()):
        self.value, self.arguments = value, arguments

    def __getattr__(self, name: str) -> str:
        return "" if name in self.arguments else self.value


def snakemake_format(command: str, **job: object) -> str:
    """``command`` formatted by Snakemake's own formatter, as a job's shell command is."""
    from snakemake.utils import format as format_command

    return format_command(command, **job)


def run_stubbed(commands: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run shell commands with the programs they call stubbed out (``phenomt``, ``head``,
    ``cp``): only code injected through an unquoted value can still do anything."""
    script = "phenomt() { :; }\nhead() { :; }\ncp() { :; }\n" + "\n".join(commands) + "\n"
    return subprocess.run(["bash", "-s"], input=script, cwd=cwd, capture_output=True,
                          text=True, timeout=60)


def hostile_words(command: str) -> list[str]:
    """The shell words of ``command`` that hold a piece of :data:`HOSTILE` or
    :data:`HOSTILE_NAME` but not the whole (a JSON word holds it JSON-escaped): what an
    unquoted value splits into."""
    whole = [HOSTILE, HOSTILE_NAME, json.dumps(HOSTILE)[1:-1]]
    return [word for word in shlex.split(command)
            if "PWNED" in word and not any(value in word for value in whole)]


def test_snakemake_formats_hostile_jobs_into_harmless_commands(tmp_path):
    """Every rule's command, formatted by Snakemake for a job whose wildcards (a system name
    among them), files and single-value params hold shell metacharacters: each such value is
    one shell word, and running the commands injects nothing."""
    job = {"input": _Files("in"), "output": _Files("out"), "log": _Files("log"),
           "wildcards": _Values(HOSTILE_NAME), "params": _Values(HOSTILE, ARGUMENT_PARAMS),
           "resources": _Values(HOSTILE), "threads": 1}
    commands = [snakemake_format(command, **job) for *_, command in ALL_SHELLS]
    for command in commands:
        assert not hostile_words(command), command
    # a wildcard reaches the command as one word
    (compare,) = [c for _, rule, _, c in ALL_SHELLS if rule == "systems_compare"]
    words = shlex.split(snakemake_format(compare, **job))
    assert words[words.index("--testset") + 1] == HOSTILE_NAME
    # a named list input is quoted element by element
    (table,) = [c for _, rule, _, c in ALL_SHELLS if rule == "table_systems_redundancy"]
    words = shlex.split(snakemake_format(table, **job))
    assert words[words.index("--records") + 1:words.index("--comparisons")] == [
        f"in/records {HOSTILE}", f"in/records.2 {HOSTILE}"]
    result = run_stubbed(commands, tmp_path)
    assert not (tmp_path / "PWNED").exists(), result.stderr[-2000:]
    # and the same commands unquoted would have run it: the check can fail
    bare = [re.sub(r"\{([\w.]+):q\}", r"{\1}", c) for *_, c in ALL_SHELLS[:3]]
    run_stubbed([snakemake_format(c, **job) for c in bare], tmp_path)
    assert (tmp_path / "PWNED").exists()


# --------------------------------------------------------------------------- plan arguments

@pytest.fixture(scope="module")
def hostile_plan():
    """The default config's plan with shell metacharacters in the output folders, the notes,
    a system's name, file, origin and licence, and an MQM system's name (set after
    validation, which refuses such names)."""
    from phenomt.plan import Plan, load_config

    config = copy.deepcopy(load_config(ROOT / "config" / "config.yaml"))
    config["outdir"] = f"out {HOSTILE}/results"
    config["resources_dir"] = f"res {HOSTILE}"
    config["trained_note"] = f"note {HOSTILE}"
    testset = config["systems"]["testsets"]["newstest2021.de-en"]
    testset["outputs"][HOSTILE_NAME] = {
        **testset["outputs"]["UEdin"], "download": None, "path": f"/tmp/{HOSTILE}.en",
        "origin": f"origin {HOSTILE}", "licence": f"licence {HOSTILE}"}
    testset["compare"].append([HOSTILE_NAME, testset["baseline"]])
    zh = config["systems"]["testsets"]["newstest2021.zh-en"]
    zh.update(ltcr=True, align_extra=["newstest2020.zh-en"])
    config["systems"]["metrics"] = [*config["systems"]["metrics"], "ltcr"]
    mqm = next(iter(config["systems"]["mqm"].values()))
    mqm["systems"].append(HOSTILE_NAME)
    config["models"]["transformer.de-en"]["casing"] = "truecase"
    return Plan(config)


def _plan_arguments(plan) -> dict[str, Callable[[], str]]:
    """Every plan function whose string a rule passes to its shell unquoted, on the values
    of :func:`hostile_plan`."""
    systems, ldd, nat, lexcons = plan.systems, plan.ldd, plan.nat, plan.lexcons
    models, data, documents, locality = plan.models, plan.data, plan.documents, plan.locality
    t, zh, mqm = "newstest2021.de-en", "newstest2021.zh-en", systems.mqm_sets[0]
    baseline = systems.baseline(t)
    teacher, natsys = nat.teachers[0], nat.systems()[0]
    model, lcorpus = ldd.scoring_models()[0][0], ldd.corpora[0]
    download = next(iter(plan.config["downloads"]))
    tree = next(d for d, spec in plan.config["downloads"].items() if spec["manifest"])
    return {
        "systems.identity_args": lambda: systems.identity_args(t, HOSTILE_NAME),
        "systems.score_args": lambda: systems.score_args(t, HOSTILE_NAME),
        "systems.redundancy_args": lambda: systems.redundancy_args(t),
        "systems.comparison_args": lambda: systems.comparison_args(t, HOSTILE_NAME, baseline),
        "systems.tokenize_args": lambda: systems.tokenize_args(t),
        "systems.mask_args": lambda: systems.mask_args(zh),
        "systems.ldd_set_args": lambda: systems.ldd_set_args(t),
        "systems.ldd_table_args": lambda: systems.ldd_table_args(t),
        "systems.ldd_tables_args": lambda: systems.ldd_tables_args(t),
        "systems.analysis_tables_args": lambda: systems.analysis_tables_args(t),
        "systems.mqm_prepare_args": lambda: systems.mqm_prepare_args(mqm),
        "systems.mqm_redundancy_args": lambda: systems.mqm_redundancy_args(mqm, HOSTILE_NAME),
        "systems.mqm_metric_args": lambda: systems.mqm_metric_args(mqm),
        "systems.mqm_reference_args": lambda: systems.mqm_reference_args(mqm),
        "systems.ltcr_layout_args": lambda: systems.ltcr_layout_args(zh),
        "systems.ltcr_align_extra_args": lambda: systems.ltcr_align_extra_args(zh),
        "systems.ltcr_table_args": systems.ltcr_table_args,
        "systems.analysis_args": lambda: systems.analysis_args(t),
        "systems.analysis_pair_args": lambda: systems.analysis_pair_args(
            t, systems.analysis_pairs(t)[0]),
        "systems.sentences_args": lambda: systems.sentences_args(t),
        "report.sentences_args": lambda: plan.report.sentences_args(f"systems_buckets.{t}"),
        "systems.score_args(ltcr)": lambda: systems.score_args(zh, systems.systems(zh)[0]),
        "ldd.set_assignments": ldd.set_assignments,
        "ldd.set_assignments(reorder)": lambda: ldd.set_assignments("reorder", ".ids"),
        "ldd.corpus_source_args": ldd.corpus_source_args,
        "ldd.scores_args": lambda: ldd.scores_args(model, lcorpus),
        "ldd.set_args": lambda: ldd.set_args(model, HOSTILE_NAME, "particle.ge1"),
        "ldd.align_extra_args": lambda: ldd.align_extra_args("de-en"),
        "ldd.note_args": ldd.note_args,
        "lexcons.set_args": lambda: lexcons.set_args(lexcons.ltcr_sets()[0]),
        "lexcons.align_extra_args": lexcons.align_extra_args,
        "lexcons.tcp_args": lambda: lexcons.tcp_args(documents.systems()[0]),
        "lexcons.model_table_args": lexcons.model_table_args,
        "lexcons.sets_table_args": lexcons.sets_table_args,
        "nat.bleu_meta": lambda: nat.bleu_meta(teacher, natsys, HOSTILE_NAME),
        "nat.table_score_args": nat.table_score_args,
        "nat.binarize_distilled_args": lambda: nat.binarize_distilled_args(teacher),
        "nat.speed_binarize_args": lambda: nat.speed_binarize_args(teacher),
        "nat.redundancy_args": lambda: nat.redundancy_args(teacher),
        "nat.agreement_file_args": lambda: nat.agreement_file_args(
            {"src": f"src {HOSTILE}", "ref": f"ref {HOSTILE}", "dicts": f"dicts {HOSTILE}"}),
        "nat.scale_note_args": nat.scale_note_args,
        "models.bleu_args": lambda: models.bleu_args(teacher),
        "models.binarize_args": lambda: models.binarize_args(teacher),
        "models.binarize_test_args": lambda: models.binarize_test_args(
            teacher, "newstest2013.de-en"),
        "models.truecase_args": lambda: models.truecase_args("transformer.de-en", "src"),
        "models.note_args": models.note_args,
        "data.corpus_args": lambda: data.corpus_args("newstest2013.de-en"),
        "data.fetch_args": lambda: data.fetch_args(download, f"mirror {HOSTILE}"),
        "data.fetch_tree_args": lambda: data.fetch_tree_args(tree, f"mirror {HOSTILE}"),
        "documents.train_docids_args": documents.train_docids_args,
        "documents.binarize_args": lambda: documents.binarize_args(documents.docmodels()[0]),
        "documents.binarize_test_args": lambda: documents.binarize_test_args(
            documents.docmodels()[0], "lexcons.test"),
        "locality.meta": lambda: locality.meta(locality.runs()[0]),
        "locality.binarize_args": lambda: locality.binarize_args("regular"),
        "training_args": plan.training_args,
    }


#: Functions whose strings hold no name or path of the config (settings and fixed words).
NO_HOSTILE_VALUE = {"nat.redundancy_args", "models.bleu_args", "locality.meta",
                    "systems.mqm_reference_args"}


def test_plan_arguments_keep_every_hostile_value_one_word(hostile_plan):
    for name, build in _plan_arguments(hostile_plan).items():
        args = build()
        assert not hostile_words(args), (name, args)
        words = shlex.split(args)
        if name not in NO_HOSTILE_VALUE:
            assert any(HOSTILE in w or HOSTILE_NAME in w for w in words), (name, args)


def test_plan_arguments_give_names_and_paths_back_exactly(hostile_plan):
    systems = hostile_plan.systems
    t = "newstest2021.de-en"

    def value(args: str, flag: str) -> list[str]:
        words = shlex.split(args)
        start = words.index(flag) + 1
        return words[start:next((i for i in range(start, len(words))
                                 if words[i].startswith("--")), len(words))]

    identity = systems.identity_args(t, HOSTILE_NAME)
    assert value(identity, "--system") == [HOSTILE_NAME]
    assert value(identity, "--origin") == [f"origin {HOSTILE}"]
    pair = systems.comparison_args(t, HOSTILE_NAME, systems.baseline(t))
    assert value(pair, "--a") == [f"{HOSTILE_NAME}=/tmp/{HOSTILE}.en"]
    assert value(systems.score_args(systems.testsets[0], "KIT"), "--baseline-hyp") == [
        f"res {HOSTILE}/downloads/sysout.newstest2017.en-de.uedin-nmt"]
    assert value(systems.tokenize_args(t), "--src-out") == [
        f"out {HOSTILE}/results/systems/{t}/tokens.src"]
    mqm = systems.mqm_sets[0]
    assert value(systems.mqm_redundancy_args(mqm, HOSTILE_NAME), "--system") == [HOSTILE_NAME]
    assert systems.mqm_has_ltcr(mqm)
    assert f"{HOSTILE_NAME}={systems.ltcr_json(f'mqm/{mqm}', HOSTILE_NAME)}" in value(
        systems.mqm_metric_args(mqm), "--named-records")
    ldd = hostile_plan.ldd
    extra = value(ldd.align_extra_args("de-en"), "--extra-src")
    assert extra == ldd.align_sides("de-en", "src")[1:] and all(HOSTILE in f for f in extra)
    assert shlex.split(ldd.set_assignments()) == [
        f"{ldd.set_key(*s)}={ldd.set_prefix(*s)}" for s in ldd.all_sets()]
    nat = hostile_plan.nat
    assert shlex.split(nat.table_score_args()) == [f"{b}={r}" for b, r in nat.table_scores()]
    assert value(nat.agreement_file_args({"dicts": f"d {HOSTILE}"}), "--embeddings-dict") == [
        f"d {HOSTILE}/dict.tgt.txt"]
    assert shlex.split(hostile_plan.training_args()) == [
        f"{n}={m}={b}" for n, m, b in hostile_plan.training_runs()]
    assert value(hostile_plan.models.truecase_args("transformer.de-en", "src"), "--model") == [
        f"out {HOSTILE}/results/models/transformer.de-en/data/truecase.src.model"]
    assert hostile_plan.models.truecase_args("transformer.zh-en", "src") == ""


# --------------------------------------------------------------------------- end to end

def test_dry_run_prints_every_command_with_hostile_paths_quoted(tmp_path):
    """``snakemake -n -p`` on the tiny config with output folders and a user's system file
    whose paths hold shell metacharacters (paths pass the config's validation): every
    printed command keeps them one word, and running the commands with the programs stubbed
    out creates no file."""
    workdir = tiny_workdir(tmp_path / "work")
    config = yaml.safe_load(TINY_CONFIG.read_text(encoding="utf-8"))
    config["outdir"] = f"out {HOSTILE}/results"
    config["resources_dir"] = f"res {HOSTILE}"
    hyp = workdir / f"{HOSTILE}.en"
    hyp.write_text("a line\n", encoding="utf-8")
    testset = next(iter(config["systems"]["testsets"].values()))
    testset["outputs"]["mine"] = {"path": str(hyp)}
    path = tmp_path / "hostile.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = run_snakemake("-n", "-p", "--configfile", str(path), "--directory", str(workdir))
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-3000:]
    commands = [line.removeprefix("Shell command: ") for line in result.stdout.splitlines()
                if line.startswith("Shell command: ") and line != "Shell command: None"]
    assert len(commands) > 300
    for command in commands:
        assert not hostile_words(command), command
    mine = [c for c in commands if " --system mine " in c and "systems score" in c]
    assert len(mine) == 1 and shlex.quote(str(hyp)) in mine[0]
    run = tmp_path / "run"
    run.mkdir()
    ran = run_stubbed(commands, run)
    assert not (run / "PWNED").exists(), ran.stderr[-2000:]
    assert list(run.iterdir()) == []
