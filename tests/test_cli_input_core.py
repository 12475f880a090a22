"""Bad input to the core commands (corpus, bpe, data, nmt, doc) gives a one-line error with
exit status 2 naming the file or option at fault, never a traceback, and writes nothing
under a final name."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from pathlib import Path

import pytest

from phenomt.core.requires import missing
from tests.conftest import ROOT, error_of

SYSTEMS = ROOT / "tests" / "data" / "systems"
SRC, REF = SYSTEMS / "src.de", SYSTEMS / "ref.en"  # 6 parallel lines
# A light install stops these commands first, saying torch and fairseq are missing.
needs_training = pytest.mark.skipif(bool(missing()), reason="needs torch and fairseq")


def _write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- corpus prepare

def prepare(tmp_path: Path, *extra: object, inputs=(SRC, REF), langs=("de", "en"),
            fmt: str = "plain") -> list[object]:
    return ["corpus", "prepare", "--format", fmt, "--langs", *langs, "--inputs", *inputs,
            "--report", tmp_path / "report.json", *extra]


def _docids(tmp_path: Path) -> list[object]:
    ids = _write(tmp_path / "ids.txt", "".join(f"d{i // 2}\n" for i in range(6)))
    return ["--docids", ids, "--docids-format", "lines"]


@pytest.mark.parametrize("option, value", [
    ("--limit", "-3"), ("--limit", "0"), ("--max-tokens", "-3"), ("--max-tokens", "0"),
    ("--documents", "-2"), ("--documents", "0"), ("--document-step", "-1"),
    ("--document-step", "0")])
def test_prepare_counts_must_be_positive(tmp_path, capsys, option, value):
    err = error_of(capsys, *prepare(tmp_path, "--outputs", tmp_path / "o.de",
                                    tmp_path / "o.en", *_docids(tmp_path), option, value))
    assert f"argument {option}: expected a positive integer, got {value}" in err
    assert not (tmp_path / "o.de").exists() and not (tmp_path / "report.json").exists()


def test_prepare_tsv_columns_must_not_be_negative(tmp_path, capsys):
    err = error_of(capsys, *prepare(tmp_path, "--columns", "0", "-1", "--outputs", "a", "b",
                                    fmt="tsv", inputs=(SRC, SRC)))
    assert "argument --columns: expected a non-negative integer, got -1" in err


@pytest.mark.parametrize("text, line", [
    ('<?xml version="1.0"?>\n<tmx><body>\n<tu><tuv xml:lang="de"><seg>a</seg></tuv>\n', 4),
    ("", 1)])
def test_prepare_a_truncated_or_empty_tmx_names_file_and_line(tmp_path, capsys, text, line):
    tmx = _write(tmp_path / "corpus.tmx", text)
    err = error_of(capsys, *prepare(tmp_path, "--outputs", tmp_path / "o.de",
                                    tmp_path / "o.en", fmt="tmx", inputs=(tmx, tmx)))
    assert f"{tmx}:{line}: not well-formed XML: no element found" in err
    assert not (tmp_path / "o.de").exists()


def test_prepare_needs_one_input_per_language(tmp_path, capsys):
    err = error_of(capsys, *prepare(tmp_path, "--outputs", "a", "b", inputs=(SRC,)))
    assert "--inputs: 1 files for the 2 languages of --langs (de en)" in err


def test_prepare_needs_one_output_per_language(tmp_path, capsys):
    err = error_of(capsys, *prepare(tmp_path, "--outputs", tmp_path / "o.de"))
    assert "--outputs: 1 files for the 2 languages of --langs (de en)" in err
    assert not (tmp_path / "o.de").exists()


def test_prepare_side_must_be_one_of_the_languages(tmp_path, capsys):
    err = error_of(capsys, *prepare(tmp_path, "--side", "fr", "--output", tmp_path / "o.fr"))
    assert "--side: 'fr' is not one of --langs (de en)" in err


def test_prepare_side_needs_an_output(tmp_path, capsys):
    err = error_of(capsys, *prepare(tmp_path, "--side", "de"))
    assert "--side: needs --output" in err


@pytest.mark.parametrize("option", ["--documents", "--document-step"])
def test_prepare_document_selection_needs_docids(tmp_path, capsys, option):
    err = error_of(capsys, *prepare(tmp_path, "--outputs", "a", "b", option, "2"))
    assert f"{option}: needs the corpus's document ids: give --docids" in err


# --------------------------------------------------------------------------- corpus assemble

@pytest.mark.parametrize("option", ["--train", "--heldout"])
def test_assemble_refuses_an_odd_number_of_files(tmp_path, capsys, option):
    files = {"--train": [SRC, REF, SRC], "--heldout": [SRC]}[option]
    argv = ["corpus", "assemble", "--outputs", tmp_path / "t.de", tmp_path / "t.en"]
    argv += ["--train", *files] if option == "--train" else ["--train", SRC, REF,
                                                              "--heldout", *files]
    err = error_of(capsys, *argv)
    assert f"{option}: expected src tgt pairs of files, got {len(files)} files" in err
    assert not (tmp_path / "t.de").exists()


def test_assemble_needs_one_docids_file_per_corpus(tmp_path, capsys):
    ids = _write(tmp_path / "ids.txt", "d\n" * 6)
    err = error_of(capsys, "corpus", "assemble", "--train", SRC, REF, "--outputs",
                   tmp_path / "t.de", tmp_path / "t.en", "--train-docids", ids, ids,
                   "--docids-output", tmp_path / "t.ids")
    assert "--train-docids: 2 document-id files for the 1 corpora of --train" in err
    assert not (tmp_path / "t.ids").exists()


# --------------------------------------------------------------------------- corpus stats

def stats(tmp_path: Path, *extra: object) -> list[object]:
    return ["corpus", "stats", "--inputs", SRC, REF, "--label", "x", "--split", "train",
            "--output", tmp_path / "stats.json", *extra]


def test_stats_needs_one_language_per_file(tmp_path, capsys):
    err = error_of(capsys, *stats(tmp_path, "--langs", "de"))
    assert "--langs: 1 languages for the 2 files of --inputs" in err
    assert not (tmp_path / "stats.json").exists()


@pytest.mark.parametrize("paper, message", [("{bad", "invalid JSON (Expecting property"),
                                            ("[1]", "expected a JSON object, got '[1]'")])
def test_stats_paper_must_be_a_json_object(tmp_path, capsys, paper, message):
    err = error_of(capsys, *stats(tmp_path, "--langs", "de", "en", "--paper", paper))
    assert f"argument --paper: {message}" in err


# --------------------------------------------------------------------------- bpe

@pytest.mark.parametrize("merges", ["0", "-1"])
def test_bpe_merges_must_be_positive(tmp_path, capsys, merges):
    err = error_of(capsys, "bpe", "learn", "--inputs", SRC, "--codes", tmp_path / "codes",
                   "--merges", merges)
    assert f"argument --merges: expected a positive integer, got {merges}" in err
    assert not (tmp_path / "codes").exists()


def test_bpe_learn_on_an_empty_file_names_it(tmp_path, capsys):
    empty = _write(tmp_path / "empty.txt", "")
    err = error_of(capsys, "bpe", "learn", "--inputs", empty, "--codes", tmp_path / "codes",
                   "--merges", "10")
    assert f"{empty}: no word of two or more characters to learn BPE merges from" in err
    assert not (tmp_path / "codes").exists()


@pytest.mark.parametrize("codes, message", [
    (b"#version: 0.2\na b\n\xff\xfe x\n", ":3: invalid UTF-8"),
    (b"#version: 0.2\na b\na b c\n", ":3: expected two subword units separated by a space"),
    (b"#version: 0.2\n", ": holds no BPE merge operations")])
def test_bpe_apply_refuses_bad_codes_naming_file_and_line(tmp_path, capsys, codes, message):
    path = _write(tmp_path / "codes.txt", codes)
    err = error_of(capsys, "bpe", "apply", "--codes", path, "--input", SRC,
                   "--output", tmp_path / "out")
    assert f"{path}{message}" in err
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- data

def test_fetch_with_a_wrong_sha256_leaves_no_file(tmp_path, capsys, monkeypatch):
    renamed: list[Path] = []
    replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (renamed.append(Path(b)), replace(a, b)))
    dest = tmp_path / "downloads" / "corpus.de"
    err = error_of(capsys, "data", "fetch", "--output", dest, "--url", SRC.as_uri(),
                   "--sha256", "0" * 64)
    assert f"{dest}: sha256 mismatch: expected {'0' * 64}" in err
    assert renamed == []  # verified before the rename, not removed after it
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []  # nor a temporary file


@pytest.mark.parametrize("url, reason", [("http://host:$(port)/y", "nonnumeric port"),
                                         ("http://host/a b", "URL can't contain control"),
                                         ("host/y", "unknown url type")])
def test_fetch_refuses_a_malformed_url(tmp_path, capsys, url, reason):
    # refused before any connection: no network is needed
    err = error_of(capsys, "data", "fetch", "--output", tmp_path / "f", "--url", url)
    assert f"f: {url!r} is not a valid URL ({reason}" in err
    assert not (tmp_path / "f").exists()


@pytest.mark.parametrize("content, message", [(None, ": file not found"),
                                              (b"\xff\xfe\n", ":1: invalid UTF-8")])
def test_fetch_tree_names_a_missing_or_undecodable_manifest(tmp_path, capsys, content,
                                                            message):
    manifest = tmp_path / "manifest.tsv"
    if content is not None:
        manifest.write_bytes(content)
    err = error_of(capsys, "data", "fetch-tree", "--output", tmp_path / "tree",
                   "--manifest", manifest)
    assert f"{manifest}{message}" in err
    assert not (tmp_path / "tree").exists()


def test_unpack_a_missing_archive(tmp_path, capsys):
    err = error_of(capsys, "data", "unpack", "--archive", tmp_path / "nope.tar.gz",
                   "--output", tmp_path / "out")
    assert f"{tmp_path / 'nope.tar.gz'}: archive not found" in err


def test_unpack_a_truncated_archive_names_it(tmp_path, capsys):
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        for name in ("a.txt", "b.txt"):
            info = tarfile.TarInfo(name)
            body = bytes(range(256)) * 40
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    whole = gzip.compress(data.getvalue())
    archive = _write(tmp_path / "data.tar.gz", whole[:len(whole) // 2])
    err = error_of(capsys, "data", "unpack", "--archive", archive, "--output", tmp_path / "out")
    assert f"{archive}: damaged or incomplete archive" in err
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out*"))


# --------------------------------------------------------------------------- nmt

@pytest.mark.parametrize("command", ["train", "generate"])
def test_nmt_options_must_be_a_json_object(tmp_path, capsys, command):
    argv = {"train": ["nmt", "train", "--data-bin", tmp_path, "--save-dir", tmp_path / "s",
                      "--output", tmp_path / "m.pt"],
            "generate": ["nmt", "generate", "--data-bin", tmp_path, "--model", tmp_path / "m",
                         "--source", SRC, "--output", tmp_path / "o", "--tgt-lang", "en"]}
    err = error_of(capsys, *argv[command], "--options", "{bad")
    assert "argument --options: invalid JSON" in err


def test_nmt_train_names_a_bad_extra_args_file(tmp_path, capsys):
    extra = _write(tmp_path / "extra.json", "{\n bad")
    err = error_of(capsys, "nmt", "train", "--data-bin", tmp_path, "--save-dir", tmp_path / "s",
                   "--output", tmp_path / "m.pt", "--extra-args-file", extra)
    assert f"{extra}:2: invalid JSON" in err


def test_learning_curve_names_a_missing_log(tmp_path, capsys):
    err = error_of(capsys, "nmt", "learning-curve", "--log", tmp_path / "nope.log")
    assert f"{tmp_path / 'nope.log'}: cannot be read (No such file or directory)" in err


@pytest.mark.parametrize(("info", "message"), [
    ("[1, 2]", "expected a JSON object at the top level, not an array"),
    ('{"validation": 3}', "expected the JSON object of 'phenomt nmt train'")])
def test_learning_curve_refuses_model_info_of_another_shape(tmp_path, capsys, info, message):
    path = _write(tmp_path / "list.json", info)
    err = error_of(capsys, "nmt", "learning-curve", "--model-info", path, "--csv",
                   tmp_path / "c.csv")
    assert f"{path}: {message}" in err
    assert not (tmp_path / "c.csv").exists()


@needs_training
def test_binarize_names_a_missing_prefix_file(tmp_path, capsys):
    prefix = tmp_path / "nope"
    err = error_of(capsys, "nmt", "binarize", "--destdir", tmp_path / "bin",
                   "--trainpref", prefix)
    assert f"{prefix}.src: file not found (from --trainpref)" in err
    assert not (tmp_path / "bin").exists()


@needs_training
def test_binarize_needs_a_prefix(tmp_path, capsys):
    err = error_of(capsys, "nmt", "binarize", "--destdir", tmp_path / "bin")
    assert "nothing to binarize: give --trainpref, --validpref or --testpref" in err


@pytest.mark.skipif("torch" in missing(), reason="needs torch")
def test_average_refuses_a_file_that_is_no_checkpoint(tmp_path, capsys):
    err = error_of(capsys, "nmt", "average", "--inputs", REF, "--output", tmp_path / "a.pt")
    assert f"{REF}: not a fairseq checkpoint" in err
    assert not (tmp_path / "a.pt").exists()


# --------------------------------------------------------------------------- doc select

def test_doc_select_names_the_short_input(tmp_path, capsys):
    ids = _write(tmp_path / "ids.txt", "".join(f"d{i // 2}\n" for i in range(20)))
    err = error_of(capsys, "doc", "select", "--docids", ids, "--inputs", REF, "--outputs",
                   tmp_path / "o.en", "--docids-output", tmp_path / "o.ids")
    assert f"{ids}:7: 6 lines in {REF} but 20 document ids in {ids}" in err
    assert not (tmp_path / "o.en").exists()
