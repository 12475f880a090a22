"""``phenomt score <metric>`` checks its files as strictly as ``phenomt evaluate``: every
registered metric's command refuses, in one line naming the file and the line, a CR line
ending, a byte-order mark, invalid UTF-8, an empty file, an empty reference or source line and
files that are not as long as the reference, before it writes anything; and a sacreBLEU
tokenizer whose optional packages are missing says what to install before any file is read."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import pytest
import sacrebleu

from phenomt.cli import main
from phenomt.core import io
from phenomt.core.io import InputError
from phenomt.core.metrics import base, bleu
from phenomt.core.metrics.base import read_score_inputs, score_files
from phenomt.systems import outputs

REFS = ["the cat sat on a mat .", "the dog barks", "hello there , friend", "nothing here"]
SRCS = ["die Katze sass auf der Matte .", "der Hund bellt", "hallo , Freund", "nichts hier"]
HYPS = ["the cat sat on the mat .", "a dog dog barks loudly", "hello there", ""]
BASE = ["the cat is on the mat", "dog barks", "hello", "nothing"]
GOOD = {"hyp": HYPS, "ref": REFS, "src": SRCS, "baseline": BASE}
#: The metrics with a generated ``phenomt score <name>`` (LTCR keeps its own command, whose
#: input checks tests/test_ltcr.py covers).
COMMANDS = [name for name in base.names() if base.METRICS[name].command]


def _bytes(lines: list[str], ending: str = "\n") -> bytes:
    return "".join(line + ending for line in lines).encode("utf-8")


@dataclass(frozen=True)
class Case:
    """One bad file: its role, its bytes, the line the error names (None: the whole file), a
    fragment of the message, and the role of the file the error names when not this one."""

    id: str
    role: str
    data: bytes
    line: int | None
    fragment: str
    named: str | None = None


def _cases() -> list[Case]:
    cases = []
    for role, lines in GOOD.items():
        invalid = _bytes(lines[:1]) + b"caf\xe9 au lait\n" + _bytes(lines[2:])
        old_mac = _bytes(lines[:2]) + (lines[2] + "\r" + lines[3] + "\n").encode("utf-8")
        cases += [
            Case(f"{role}-crlf", role, _bytes(lines, "\r\n"), 1, "carriage return (CR)"),
            Case(f"{role}-cr", role, old_mac, 3, "carriage return (CR)"),
            Case(f"{role}-bom", role, b"\xef\xbb\xbf" + _bytes(lines), 1, "byte-order mark"),
            Case(f"{role}-invalid-utf8", role, invalid, 2, "invalid UTF-8 at byte 3"),
            Case(f"{role}-empty-file", role, b"", None, "empty file"),
        ]
    for role in ("hyp", "src", "baseline"):
        lines = GOOD[role]
        cases += [
            Case(f"{role}-fewer-lines", role, _bytes(lines[:3]), 4,
                 "has 3 lines but {ref} has 4: it ends before line 4"),
            Case(f"{role}-more-lines", role, _bytes([*lines, "one more"]), 5,
                 "has 5 lines but {ref} has 4: line 5 has no counterpart"),
        ]
    for role in ("ref", "src"):
        for blank, what in (("", "empty"), ("  \t", "whitespace")):
            lines = [*GOOD[role][:2], blank, *GOOD[role][3:]]
            cases.append(Case(f"{role}-{what}-line", role, _bytes(lines), 3,
                              "empty line: every reference and source line needs text"))
    # the reference is read first: with a shorter reference, the hypothesis does not align
    cases.append(Case("ref-fewer-lines", "ref", _bytes(REFS[:3]), 4,
                      "has 4 lines but {ref} has 3: line 4 has no counterpart", named="hyp"))
    return cases


def _write(folder: Path, overrides: dict[str, bytes] | None = None) -> dict[str, Path]:
    paths = {}
    for role, lines in GOOD.items():
        paths[role] = folder / f"{role}.txt"
        paths[role].write_bytes((overrides or {}).get(role, _bytes(lines)))
    return paths


@pytest.fixture
def settings(request, metric) -> list[str]:
    """A metric's model where it needs one: COMET's built here (skips without the extra)."""
    if metric == "comet":
        return ["--model", str(request.getfixturevalue("tiny_comet"))]
    return []


def _argv(metric: str, paths: dict[str, Path], out: Path, settings: list[str] = ()
          ) -> list[str]:
    argv = ["score", metric, "--hyp", str(paths["hyp"]), "--ref", str(paths["ref"]),
            "--baseline", str(paths["baseline"]), "--output", str(out), *settings]
    if base.METRICS[metric].needs_source:
        argv += ["--src", str(paths["src"])]
    return argv


def _params() -> list:
    return [pytest.param(metric, case, id=f"{metric}-{case.id}") for metric in COMMANDS
            for case in _cases()
            if case.role != "src" or base.METRICS[metric].needs_source]


@pytest.mark.parametrize("metric, case", _params())
def test_a_bad_file_is_refused_in_one_line_naming_it(tmp_path, capsys, metric, case,
                                                     settings):
    paths = _write(tmp_path, {case.role: case.data})
    out = tmp_path / "score.json"
    assert main(_argv(metric, paths, out, settings)) == 2
    captured = capsys.readouterr()
    bad = paths[case.named or case.role]
    where = f"{bad}:{case.line}" if case.line is not None else str(bad)
    assert captured.err.startswith(f"phenomt: error: {where}: ")
    assert case.fragment.format(ref=paths["ref"]) in captured.err
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.out == ""
    assert not out.exists()


@pytest.mark.parametrize("metric", COMMANDS)
def test_a_missing_file_is_named(tmp_path, capsys, metric, settings):
    paths = _write(tmp_path)
    paths["hyp"] = tmp_path / "absent.txt"
    out = tmp_path / "score.json"
    assert main(_argv(metric, paths, out, settings)) == 2
    assert capsys.readouterr().err == f"phenomt: error: {paths['hyp']}: file not found\n"
    assert not out.exists()


@pytest.mark.parametrize("metric", COMMANDS)
def test_good_files_with_an_empty_hypothesis_line_are_scored(tmp_path, capsys, metric,
                                                            settings):
    """An empty hypothesis line (a system that output nothing) is scored as an empty
    hypothesis, as sacreBLEU scores it; so is an empty baseline line."""
    paths = _write(tmp_path, {"baseline": _bytes([*BASE[:3], "  "])})
    out = tmp_path / "score.json"
    assert main(_argv(metric, paths, out, settings)) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert json.loads(capsys.readouterr().out) == record
    assert record["sentences"] == len(REFS)
    sources = SRCS if base.METRICS[metric].needs_source else None
    made = {"model": settings[1]} if settings else {}
    assert record["score"] == pytest.approx(
        base.get(metric, **made).corpus_score(HYPS, REFS, sources).value)


@pytest.mark.parametrize("name, reference", [
    ("bleu", lambda h, r: sacrebleu.corpus_bleu(h, [r]).score),
    ("chrf", lambda h, r: sacrebleu.corpus_chrf(h, [r]).score),
    ("ter", lambda h, r: sacrebleu.corpus_ter(h, [r]).score),
])
def test_score_files_scores_what_sacrebleu_scores(tmp_path, name, reference):
    paths = _write(tmp_path)
    record = score_files(base.get(name), paths["hyp"], paths["ref"])
    assert record["score"] == pytest.approx(reference(HYPS, REFS))


def test_score_inputs_keep_the_lines_as_written(tmp_path):
    paths = _write(tmp_path, {"hyp": _bytes(["  a  ", "", "\tb", "c "])})
    inputs = read_score_inputs(paths["hyp"], paths["ref"], paths["src"])
    assert inputs.hypotheses == ["  a  ", "", "\tb", "c "]
    assert (inputs.references, inputs.sources, inputs.baseline) == (REFS, SRCS, None)
    # a last line without its LF is a line
    paths["ref"].write_bytes(_bytes(REFS)[:-1])
    assert read_score_inputs(paths["hyp"], paths["ref"]).references == REFS


# --------------------------------------------------------------------------- one strict reader

def test_one_strict_reader_for_scoring_and_evaluate():
    """``phenomt score`` and ``phenomt evaluate`` read files with the same functions."""
    assert outputs.read_text is io.read_text
    assert outputs.check_line_count is io.check_line_count


# --------------------------------------------------------------------------- tokenizers

def _missing(name: str) -> list[str]:
    return [m for m in bleu.OPTIONAL_TOKENIZERS[name][0] if find_spec(m) is None]


@pytest.mark.parametrize("metric", ["bleu", "ribes"])
@pytest.mark.parametrize("name, extra", [("ja-mecab", "ja"), ("ko-mecab", "ko")])
def test_a_mecab_tokenizer_that_is_not_installed_says_what_to_install(tmp_path, capsys,
                                                                      metric, name, extra):
    if not _missing(name):
        pytest.skip(f"{name}'s packages are installed")
    out = tmp_path / "score.json"
    # the files do not exist: the tokenizer is checked before any file is read
    assert main(["score", metric, "--tokenize", name, "--hyp", str(tmp_path / "no.hyp"),
                 "--ref", str(tmp_path / "no.ref"), "--output", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(
        f"phenomt: error: --tokenize: {name} needs the `{extra}` extra: "
        f"pip install 'phenomt[{extra}]' (sacrebleu[{extra}]: ")
    assert captured.err.endswith(f"); not installed: {', '.join(_missing(name))}\n")
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.out == "" and not out.exists()


@pytest.mark.parametrize("name", [n for n in bleu.OPTIONAL_TOKENIZERS
                                  if n in bleu.tokenizers() and "mecab" not in n])
def test_every_optional_sacrebleu_tokenizer_is_checked(name):
    if not _missing(name):
        pytest.skip(f"{name}'s packages are installed (making it may download a model)")
    for metric in ("bleu", "ribes"):
        with pytest.raises(bleu.MissingTokenizer, match=f"^--tokenize: {name} needs "):
            base.get(metric, tokenize=name)


def test_the_optional_tokenizers_are_sacrebleus():
    assert {"ja-mecab", "ko-mecab"} <= set(bleu.tokenizers())
    assert set(bleu.OPTIONAL_TOKENIZERS) <= set(bleu.tokenizers())


@pytest.mark.parametrize("failure", [RuntimeError("no dictionary\n  at all"),
                                     ImportError("libmecab.so.2: cannot open"),
                                     AssertionError("Please use the IPA dictionary"),
                                     SystemExit(1)], ids=lambda e: type(e).__name__)
def test_a_tokenizer_sacrebleu_cannot_make_is_one_line(monkeypatch, failure):
    def refuse(**_settings):
        raise failure

    monkeypatch.setattr(bleu, "BLEU", refuse)
    with pytest.raises(InputError, match="^--tokenize: sacreBLEU ") as caught:
        bleu.make_bleu("13a")
    assert "\n" not in str(caught.value)
    if not isinstance(failure, SystemExit):
        assert " ".join(str(failure).split()) in str(caught.value)


def test_the_command_itself_prints_no_traceback(tmp_path):
    if not _missing("ja-mecab"):
        pytest.skip("ja-mecab's packages are installed")
    result = subprocess.run([sys.executable, "-m", "phenomt.cli", "score", "bleu", "--tokenize",
                             "ja-mecab", "--hyp", "h", "--ref", "r"], capture_output=True,
                            text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 2
    assert result.stderr.startswith("phenomt: error: --tokenize: ja-mecab needs the `ja` "
                                    "extra: pip install 'phenomt[ja]'")
    assert result.stderr.count("\n") == 1 and result.stdout == ""
