"""Bad input to ``phenomt evaluate``, one row per kind: each ends with exit status 2 and one
``error:`` line naming the fault (and file), no traceback, nothing written into the output
folder that a rerun would trust, and nothing run.

The test set is the first 40 lines of newstest2021 De-En (real sentences, so that the check of
the files' language has evidence to judge)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from phenomt.cli import main

LINES = 40


@dataclass(frozen=True)
class Case:
    """One bad request: the arguments (``{src}``-style placeholders name the fixture's
    files), an optional setup of the folder, and the fragment the error must hold."""

    id: str
    args: tuple[str, ...]
    message: str
    setup: Callable[[Path], None] | None = None
    #: the output folder's name in the test's folder (when the args give no --outdir)
    outdir: str = "out"


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory, mirror) -> dict[str, Path]:
    """Good De-En and Zh-En test sets, hypotheses, document ids and MQM files."""
    root = tmp_path_factory.mktemp("inputs")
    wmt21 = mirror / "sysout" / "newstest2021.de-en"
    de = (wmt21 / "_testset" / "newstest2021.de").read_text("utf-8").splitlines()[:LINES]
    en = (wmt21 / "_testset" / "newstest2021.en").read_text("utf-8").splitlines()[:LINES]
    at = (wmt21 / "VolcTrans-AT.en").read_text("utf-8").splitlines()[:LINES]
    zh_set = mirror / "wmt" / "zh-en"
    zh = (zh_set / "newstest2020.zh").read_text("utf-8").splitlines()[:LINES]
    zh_en = (zh_set / "newstest2020.en").read_text("utf-8").splitlines()[:LINES]
    details = mirror / "wmt" / "docids"
    text = {
        "src": de, "ref": en, "hyp": at, "zh": zh, "zhref": zh_en,
        "details": (details / "newstest2020.zh-en.details.tsv").read_text(
            "utf-8").splitlines()[:LINES],
        "details_ende": (details / "newstest2020.en-de.details.tsv").read_text(
            "utf-8").splitlines()[:LINES],
        "short": at[:-1], "long": [*at, "one more"], "empty_src_line": ["", *de[1:]],
        "empty_ref_line": [*en[:5], "   ", *en[6:]], "ids_single": [f"d{i}" for i in
                                                                   range(LINES)],
        "ids_short": ["d"] * (LINES - 1),
    }
    paths = {name: _write(root / f"{name}.txt", "".join(f"{ln}\n" for ln in lines))
             for name, lines in text.items()}
    paths["empty"] = _write(root / "empty.txt", b"")
    paths["crlf"] = _write(root / "crlf.txt", "".join(f"{ln}\r\n" for ln in at))
    paths["bom"] = _write(root / "bom.txt", "\ufeff" + "".join(f"{ln}\n" for ln in en))
    paths["latin1"] = _write(root / "latin1.txt",
                             "".join(f"{ln}\n" for ln in de).encode("latin-1", "replace"))
    paths["mqm_ende"] = mirror / "sysout" / "annotations" / "mqm_ted_ende.tsv"
    paths["dir"] = root / "a-folder"
    paths["dir"].mkdir()
    paths["file"] = _write(root / "a-file", "x\n")
    paths["missing"] = root / "missing.txt"
    paths["badstem"] = _write(root / "bad stem.en", "".join(f"{ln}\n" for ln in at))
    # lines of control characters only, and one between words (tab is allowed)
    paths["nul_ref_line"] = _write(root / "nul_ref.txt",
                                   "".join(f"{ln}\n" for ln in [*en[:3], "\x00", *en[4:]]))
    paths["esc_src_line"] = _write(root / "esc_src.txt",
                                   "".join(f"{ln}\n" for ln in [*de[:6], "\x1b\x07", *de[7:]]))
    paths["ctl_ref"] = _write(root / "ctl_ref.txt", "".join(
        f"{ln}\n" for ln in [*en[:1], en[1].replace(" ", " \x1b[1m", 1), *en[2:]]))
    paths["c1_hyp"] = _write(root / "c1_hyp.txt", "".join(
        f"{ln}\n" for ln in [*at[:9], at[9] + "\x85", *at[10:]]))
    # a symlink loop, a name longer than the system allows
    (root / "loop1").symlink_to(root / "loop2")
    (root / "loop2").symlink_to(root / "loop1")
    paths["loop"] = root / "loop1"
    paths["long_name"] = root / ("n" * 300)
    paths["brace_dir"] = root / "model{x}"
    paths["brace_dir"].mkdir()
    return paths


BASE = ("--src", "{src}", "--ref", "{ref}", "--langs", "de-en")
ZH = ("--src", "{zh}", "--ref", "{zhref}", "--langs", "zh-en", "--hyp", "sys={zhref}")


def _hold_lock(outdir: Path) -> None:
    """A running evaluation's lock on ``outdir`` (released by the test's teardown)."""
    lock = outdir / "results" / ".phenomt.lock"
    lock.parent.mkdir(parents=True)
    handle = open(lock, "w", encoding="utf-8")  # noqa: SIM115 (kept open while the test runs)
    handle.write("pid 4242\n")
    handle.flush()
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _LOCKS.append(handle)


_LOCKS: list = []


def _damaged_run(config: str, origins: str | None = None) -> Callable[[Path], None]:
    """An earlier run's record in the folder, damaged: its config (of the same test set,
    ``ref.de-en``) and its record of the originals."""
    def setup(outdir: Path) -> None:
        _write(outdir / "config.yaml", config)
        if origins is not None:
            _write(outdir / "inputs" / "origins.json", origins)
    return setup


#: An earlier run's config of this test set, as far as its layout goes.
_RUN_OF_REF = ("systems:\n  testsets:\n    ref.de-en:\n      baseline: a\n"
               "      outputs: {a: {path: /x.en}}\n")


def _earlier_run_of(src: str) -> Callable[[Path], None]:
    def setup(outdir: Path) -> None:
        outdir.mkdir()
        (outdir / "config.yaml").write_text(
            "systems:\n  testsets:\n    other.de-en:\n      outputs: {a: {path: x}}\n"
            f"downloads:\n  other.de-en.de: {{mirror: {src}}}\n", encoding="utf-8")
    return setup


CASES = [
    # names: data, never code
    Case("name-shell-injection", (*BASE, "--hyp", "x;touch PWNED;echo={hyp}"),
         "invalid system name 'x;touch PWNED;echo'"),
    Case("name-with-space", (*BASE, "--hyp", "my system={hyp}"), "invalid system name"),
    Case("name-with-slash", (*BASE, "--hyp", "a/b={hyp}"), "invalid system name"),
    Case("name-with-dot", (*BASE, "--hyp", "a.b={hyp}"), "invalid system name"),
    Case("name-with-dollar", (*BASE, "--hyp", "$(id)={hyp}"), "invalid system name"),
    Case("name-leading-dash", (*BASE, "--hyp=-x={hyp}"), "invalid system name"),
    Case("name-too-long", (*BASE, "--hyp", "a" * 65 + "={hyp}"), "at most 64"),
    Case("name-empty", (*BASE, "--hyp", "={hyp}"), "invalid system name ''"),
    Case("name-from-bad-file-stem", (*BASE, "--hyp", "{badstem}"),
         "makes no valid system name"),
    Case("name-without-file", (*BASE, "--hyp", "x="), "no file after 'x'="),
    Case("name-twice", (*BASE, "--hyp", "a={hyp}", "--hyp", "a={hyp}"), "given twice: a"),
    # a column of the challenge-set tables, which a system's column would overwrite
    Case("name-reserved", (*BASE, "--hyp", "a={hyp}", "--hyp", "sentences={hyp}"),
         "invalid system name 'sentences': set, phenomenon, distance, sentences, metric are "
         "columns"),
    Case("testset-name-mqm", (*BASE, "--hyp", "{hyp}", "--name", "mqm"),
         "argument --name: invalid test-set name 'mqm'"),
    Case("testset-name-train", (*BASE, "--hyp", "{hyp}", "--name", "train"),
         "argument --name: invalid test-set name 'train'"),
    Case("testset-name-injection", (*BASE, "--hyp", "{hyp}", "--name", "t;rm -rf x"),
         "invalid test-set name"),
    Case("baseline-bad-name", (*BASE, "--hyp", "a={hyp}", "--baseline", "a b"),
         "invalid system name"),
    Case("baseline-unknown", (*BASE, "--hyp", "a={hyp}", "--baseline", "b"),
         "'b' is none of the systems"),
    # language codes and the files' language
    Case("langs-not-iso", ("--src", "{src}", "--ref", "{ref}", "--langs", "xx-yy", "--hyp",
                           "{hyp}"), "'xx' is not an ISO 639 language code"),
    Case("langs-one-code", ("--src", "{src}", "--ref", "{ref}", "--langs", "de", "--hyp",
                            "{hyp}"), "SRC-TGT"),
    Case("langs-same", ("--src", "{src}", "--ref", "{ref}", "--langs", "de-de", "--hyp",
                        "{hyp}"), "the same language"),
    Case("langs-region", ("--src", "{src}", "--ref", "{ref}", "--langs", "de_DE-en",
                          "--hyp", "{hyp}"), "not an ISO 639 language code"),
    Case("langs-words", ("--src", "{src}", "--ref", "{ref}", "--langs", "german-english",
                         "--hyp", "{hyp}"), "not an ISO 639 language code"),
    Case("langs-swapped-files", ("--src", "{ref}", "--ref", "{src}", "--langs", "de-en",
                                 "--hyp", "{hyp}"), "source and reference look swapped"),
    Case("langs-wrong-pair", ("--src", "{src}", "--ref", "{ref}", "--langs", "fr-en",
                              "--hyp", "{hyp}"), "expected fr (--langs)"),
    Case("hyp-in-source-language", (*BASE, "--hyp", "copy={src}"), "expected en (--langs)"),
    # the files themselves
    Case("empty-test-set", ("--src", "{empty}", "--ref", "{empty}", "--langs", "de-en",
                            "--hyp", "{empty}"), "empty file: the test set needs"),
    Case("empty-source-line", ("--src", "{empty_src_line}", "--ref", "{ref}", "--langs",
                               "de-en", "--hyp", "{hyp}"), "empty_src_line.txt:1: empty line"),
    Case("empty-reference-line", ("--src", "{src}", "--ref", "{empty_ref_line}", "--langs",
                                  "de-en", "--hyp", "{hyp}"), "empty_ref_line.txt:6: empty line"),
    Case("source-shorter", ("--src", "{short}", "--ref", "{ref}", "--langs", "de-en",
                            "--hyp", "{hyp}"), f"short.txt:{LINES}: has {LINES - 1} lines"),
    Case("hyp-shorter", (*BASE, "--hyp", "{short}"), f"has {LINES - 1} lines"),
    Case("hyp-longer", (*BASE, "--hyp", "{long}"), f"has {LINES + 1} lines"),
    Case("hyp-crlf", (*BASE, "--hyp", "{crlf}"), "crlf.txt:1: carriage return"),
    # control characters: invisible, removed from source and reference by the cleaning
    Case("reference-line-of-nul", ("--src", "{src}", "--ref", "{nul_ref_line}", "--langs",
                                   "de-en", "--hyp", "{hyp}"),
         "nul_ref.txt:4: control character U+0000 at column 1"),
    Case("source-line-of-controls", ("--src", "{esc_src_line}", "--ref", "{ref}", "--langs",
                                     "de-en", "--hyp", "{hyp}"),
         "esc_src.txt:7: control character U+001B at column 1"),
    Case("reference-control-between-words", ("--src", "{src}", "--ref", "{ctl_ref}",
                                             "--langs", "de-en", "--hyp", "{hyp}"),
         "ctl_ref.txt:2: control character U+001B"),
    Case("hyp-c1-control", (*BASE, "--hyp", "{c1_hyp}"),
         "c1_hyp.txt:10: control character U+0085"),
    Case("reference-bom", ("--src", "{src}", "--ref", "{bom}", "--langs", "de-en", "--hyp",
                           "{hyp}"), "bom.txt:1: starts with a UTF-8 byte-order mark"),
    Case("source-not-utf8", ("--src", "{latin1}", "--ref", "{ref}", "--langs", "de-en",
                             "--hyp", "{hyp}"), "latin1.txt:2: invalid UTF-8"),
    Case("source-missing", ("--src", "{missing}", "--ref", "{ref}", "--langs", "de-en",
                            "--hyp", "{hyp}"), "missing.txt: no such file"),
    Case("hyp-is-a-folder", (*BASE, "--hyp", "x={dir}"), "a-folder: not a file"),
    # options
    Case("metrics-twice", (*BASE, "--hyp", "{hyp}", "--metrics", "ter", "ter"),
         "--metrics: given twice: ter"),
    Case("metrics-unknown", (*BASE, "--hyp", "{hyp}", "--metrics", "meteor"),
         "invalid choice: 'meteor'"),
    Case("comet-without-model", (*BASE, "--hyp", "{hyp}", "--metrics", "bleu", "comet"),
         "--comet-model: COMET needs a model"),
    Case("comet-model-missing", (*BASE, "--hyp", "{hyp}", "--metrics", "comet",
                                 "--comet-model", "{missing}"), "no COMET checkpoint"),
    Case("comet-model-without-comet", (*BASE, "--hyp", "{hyp}", "--comet-model", "{missing}"),
         "--comet-model: add comet to --metrics"),
    Case("freq-corpus-missing", (*BASE, "--hyp", "{hyp}", "--freq-corpus", "{missing}"),
         "missing.txt: no such file"),
    Case("freq-corpus-crlf", (*BASE, "--hyp", "{hyp}", "--freq-corpus", "{crlf}"),
         "crlf.txt:1: carriage return"),
    Case("freq-corpus-empty", (*BASE, "--hyp", "{hyp}", "--freq-corpus", "{empty}"),
         "empty.txt: --freq-corpus has no text"),
    Case("freq-corpus-folder", (*BASE, "--hyp", "{hyp}", "--freq-corpus", "{dir}"),
         "a-folder: not a file"),
    Case("ltcr-without-docids", (*BASE, "--hyp", "{hyp}", "--metrics", "bleu", "ltcr"),
         "--metrics: ltcr scores documents: give the test set's document ids with --docids"),
    Case("samples-one", (*BASE, "--hyp", "{hyp}", "--samples", "1"), "at least 100 resamples"),
    Case("samples-99", (*BASE, "--hyp", "{hyp}", "--samples", "99"), "at least 100 resamples"),
    Case("samples-not-a-number", (*BASE, "--hyp", "{hyp}", "--samples", "many"),
         "expected a whole number"),
    Case("cores-zero", (*BASE, "--hyp", "{hyp}", "--cores", "0"), "expected a positive integer"),
    Case("align-extra-unknown", (*BASE, "--hyp", "{hyp}", "--align-extra", "nosuch"),
         "'nosuch' is not a corpus of the catalog"),
    Case("align-extra-other-pair", (*BASE, "--hyp", "{hyp}", "--align-extra",
                                    "newstest2017.zh-en"), "is a corpus of zh-en"),
    Case("mirror-not-a-folder", (*BASE, "--hyp", "{hyp}", "--mirror", "{file}"),
         "configured mirror is not a directory"),
    Case("cache-dir-is-a-file", (*BASE, "--hyp", "{hyp}", "--cache-dir", "{file}"),
         "the cache of parses and aligner models (--cache-dir or $PHENOMT_CACHE) is not a "
         "folder"),
    Case("cache-dir-and-no-cache", (*BASE, "--hyp", "{hyp}", "--cache-dir", "{dir}",
                                    "--no-cache"), "not allowed with argument"),
    # the output folder
    Case("outdir-is-a-file", (*BASE, "--hyp", "{hyp}", "--outdir", "{file}"),
         "is a file, not a folder"),
    Case("outdir-inside-a-file", (*BASE, "--hyp", "{hyp}", "--outdir", "{file}/out"),
         "is a file, so --outdir cannot be made inside it"),
    Case("outdir-locked", (*BASE, "--hyp", "{hyp}"), "in use by a running evaluation (pid 4242)",
         setup=_hold_lock),
    Case("outdir-of-another-test-set", (*BASE, "--hyp", "{hyp}"),
         "holds the evaluation of another test set", setup=_earlier_run_of("/elsewhere.de")),
    Case("outdir-garbage-config", (*BASE, "--hyp", "{hyp}"), "not a config written by phenomt",
         setup=lambda d: _write(d / "config.yaml", "[1, 2")),
    Case("outdir-config-outputs-not-mappings", (*BASE, "--hyp", "{hyp}"),
         "out/config.yaml: not a config written by phenomt evaluate: give another --outdir",
         setup=_damaged_run("systems:\n  testsets:\n    ref.de-en:\n      baseline: a\n"
                            "      outputs: {a: 1}\n")),
    Case("outdir-config-without-outputs", (*BASE, "--hyp", "{hyp}"),
         "out/config.yaml: not a config written by phenomt evaluate",
         setup=_damaged_run("systems:\n  testsets:\n    ref.de-en: {baseline: a}\n")),
    Case("outdir-config-a-list", (*BASE, "--hyp", "{hyp}"),
         "out/config.yaml: not a config written by phenomt evaluate",
         setup=_damaged_run("- systems\n")),
    Case("outdir-origins-cut-short", (*BASE, "--hyp", "{hyp}"),
         "origins.json: not a config written by phenomt evaluate: give another --outdir",
         setup=_damaged_run(_RUN_OF_REF, '{"source": "/x')),
    Case("outdir-origins-of-another-type", (*BASE, "--hyp", "{hyp}"),
         "origins.json: not a config written by phenomt evaluate",
         setup=_damaged_run(_RUN_OF_REF, '["source", 1]')),
    Case("outdir-origins-not-paths", (*BASE, "--hyp", "{hyp}"),
         "origins.json: not a config written by phenomt evaluate",
         setup=_damaged_run(_RUN_OF_REF, '{"source": 1}')),
    # paths: braces would be Snakemake wildcards; links and names the system refuses
    Case("outdir-with-braces", (*BASE, "--hyp", "{hyp}"),
         "--outdir: a path with '{' or '}' cannot be used", outdir="out{x}"),
    Case("outdir-with-closing-brace", (*BASE, "--hyp", "{hyp}"),
         "--outdir: a path with '{' or '}' cannot be used", outdir="a}b/out"),
    Case("comet-model-with-braces", (*BASE, "--hyp", "{hyp}", "--metrics", "comet",
                                     "--comet-model", "{brace_dir}"),
         "model{x}: --comet-model: a path with '{' or '}' cannot be used"),
    Case("hyp-symlink-loop", (*BASE, "--hyp", "x={loop}"), "loop1: symlink loop"),
    Case("source-symlink-loop", ("--src", "{loop}", "--ref", "{ref}", "--langs", "de-en",
                                 "--hyp", "{hyp}"), "loop1: symlink loop"),
    Case("reference-symlink-loop", ("--src", "{src}", "--ref", "{loop}", "--langs", "de-en",
                                    "--hyp", "{hyp}"), "loop1: symlink loop"),
    Case("outdir-in-symlink-loop", (*BASE, "--hyp", "{hyp}", "--outdir", "{loop}/out"),
         "loop1/out: symlink loop"),
    Case("mqm-symlink-loop", (*BASE, "--hyp", "{hyp}", "--mqm", "{loop}"),
         "loop1: symlink loop"),
    Case("freq-corpus-symlink-loop", (*BASE, "--hyp", "{hyp}", "--freq-corpus", "{loop}"),
         "loop1: symlink loop"),
    Case("source-name-too-long", ("--src", "{long_name}", "--ref", "{ref}", "--langs",
                                  "de-en", "--hyp", "{hyp}"), "nnnn: File name too long"),
    Case("hyp-name-too-long", (*BASE, "--hyp", "x={long_name}"), "nnnn: File name too long"),
    Case("outdir-name-too-long", (*BASE, "--hyp", "{hyp}", "--outdir", "{long_name}"),
         "nnnn: File name too long"),
    Case("docids-name-too-long", (*ZH, "--docids", "{long_name}"), "nnnn: File name too long"),
    # document ids (LTCR) and MQM annotations
    Case("docids-other-pair", (*BASE, "--hyp", "{hyp}", "--docids", "{details}"),
         "defined for zh-en only"),
    Case("docids-details-of-another-pair", (*ZH, "--docids", "{details_ende}"),
         "details of 'en-de', not of this test set's zh-en"),
    Case("docids-every-line-a-document", (*ZH, "--docids", "{ids_single}"),
         f"every one of the {LINES} lines is a document of its own"),
    Case("docids-too-few", (*ZH, "--docids", "{ids_short}"), f"has {LINES - 1} lines"),
    Case("docids-empty-file", (*ZH, "--docids", "{empty}"), "empty file"),
    Case("mqm-of-another-pair", (*ZH, "--mqm", "{mqm_ende}"),
         "MQM annotations of another language pair"),
    Case("mqm-missing", (*BASE, "--hyp", "{hyp}", "--mqm", "{missing}"), "missing.txt"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_refused_before_anything_is_written(case, files, tmp_path, monkeypatch,
                                                         capsys):
    import phenomt.core.snakerun as snakerun

    monkeypatch.chdir(tmp_path)

    def never(*args, **kwargs):
        raise AssertionError("Snakemake was started")

    monkeypatch.setattr(snakerun, "run", never)
    outdir = tmp_path / case.outdir
    if case.setup is not None:
        case.setup(outdir)
    before = _listing(tmp_path)
    args = [a.format(**files) for a in case.args]
    if "--outdir" not in args:
        args += ["--outdir", str(outdir)]
    try:
        try:
            status = main(["evaluate", *args, "--no-report", "--no-ldd"])
        except SystemExit as stop:  # argparse
            status = stop.code
    finally:
        while _LOCKS:
            _LOCKS.pop().close()
    err = capsys.readouterr().err
    assert status == 2, err
    assert case.message in err, err
    assert "Traceback" not in err
    assert [ln for ln in err.splitlines() if "error:" in ln][-1:] and len(
        [ln for ln in err.splitlines() if "error:" in ln]) == 1, err
    assert _listing(tmp_path) == before  # nothing written, nothing run
    assert not list(tmp_path.rglob("PWNED"))


def _listing(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1)
                  for p in root.rglob("*"))


def test_outdir_that_cannot_be_written_is_refused(files, tmp_path, capsys):
    if os.geteuid() == 0:
        pytest.skip("root may write into any folder: the file-in-the-way case covers CI")
    locked = tmp_path / "ro"
    locked.mkdir(mode=0o555)
    try:
        status = main(["evaluate", *(a.format(**files) for a in BASE), "--hyp",
                       str(files["hyp"]), "--outdir", str(locked / "out")])
    finally:
        locked.chmod(0o755)
    assert status == 2
    assert "is not writable" in capsys.readouterr().err


def test_details_tsv_gives_documents_by_its_document_column(files):
    from phenomt.evaluate.checks import read_docids

    ids = read_docids(files["details"], ("zh", "en"), files["zhref"], LINES)
    rows = files["details"].read_text("utf-8").splitlines()
    assert ids == [row.split("\t")[3] for row in rows]
    assert 1 < len(set(ids)) < LINES  # documents of several lines, as WMT has them


def test_a_warning_names_the_evidence_when_the_language_is_doubtful(files, tmp_path):
    from phenomt.evaluate.checks import check_languages

    de = files["src"].read_text("utf-8").splitlines()
    en = files["ref"].read_text("utf-8").splitlines()
    mixed = de[:25] + en[25:]  # 25 German lines of 40 in an "English" file
    warnings = check_languages([(files["src"], de, "de"), (files["ref"], en, "en"),
                                (tmp_path / "mixed.en", mixed, "en")], force=False)
    assert len(warnings) == 1 and "mixed.en: expected en, but of" in warnings[0]
    assert " de" in warnings[0]


def test_outputs_given_twice_or_equal_to_the_reference_are_warned_of():
    from phenomt.evaluate.checks import TestSet, same_outputs

    refs = ["a b", "c d"]
    other = ["a x", "c d"]
    testset = TestSet(["s", "t"], refs, {"A": other, "B": list(refs), "C": list(other),
                                         "D": ["y", "z"], "E": list(other)})
    assert same_outputs(testset) == [
        "A, C and E have the same output, line for line: every comparison of them finds no "
        "difference",
        "B: the output is the reference itself, line for line"]
    assert same_outputs(TestSet(["s"], ["r"], {"A": ["h"], "B": ["i"]})) == []


def test_the_checks_return_the_warning_writing_nothing(files, tmp_path):
    from phenomt.cli import build_parser
    from phenomt.evaluate import prepare

    args = build_parser(["phenomt.evaluate"]).parse_args(
        ["evaluate", "--src", str(files["src"]), "--ref", str(files["ref"]), "--langs",
         "de-en", "--hyp", f"A={files['ref']}", "--hyp", f"B={files['hyp']}", "--outdir",
         str(tmp_path / "out"), "--force-langs"])
    assert prepare(args)[3] == ["A: the output is the reference itself, line for line"]
    assert not (tmp_path / "out").exists()
