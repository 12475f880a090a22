"""UDPipe parsing, scatter/gather and model training."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from phenomt.core import parse
from phenomt.core.cliargs import CommandTree
from phenomt.core.conllu import read_conllu
from phenomt.core.io import InputError
from phenomt.core.linelimit import MAX_TOKENS
from phenomt.core.parse import (
    _with_iterations,
    is_skipped,
    load_model,
    merge_conllu,
    parse_file,
    parse_lines,
    register_cli,
    shard_sizes,
    split_text,
    train_model,
)
from phenomt.ldd.extract import LEXICAL_PHENOMENA, PARTICLE, extract_lexical, lexical_instances

DATA = Path(__file__).parent / "data" / "ldd"
TREEBANK = DATA / "tiny_treebank.conllu"

# Small settings keep training and model loading fast.
FAST_TAGGER = "models=1;guesser_suffix_rules=1;guesser_enrich_dictionary=1"
FAST_PARSER = "hidden_layer=20"

SENTENCES = [
    "The dog saw the cat .",
    "She woke him up .",
    "A bird sang .",
    "He hurt himself .",
    "The cat  slept .",  # a double space still separates just two tokens
    "She gave the book back .",
    "A dog barked .",
]


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="phenomt")
    register_cli(CommandTree(parser))
    args = parser.parse_args(argv)
    return args.handler(args)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small model trained for one iteration on the hand-made treebank (about a second)."""
    return train_model([TREEBANK], tmp_path_factory.mktemp("model") / "tiny.udpipe",
                       iterations=1, tagger=FAST_TAGGER, parser=FAST_PARSER)


@pytest.fixture()
def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "input.tok"
    path.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    return path


def test_parse_one_sentence_per_line(tiny_model: Path, text_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.conllu"
    assert parse_file(tiny_model, text_file, out) == len(SENTENCES)
    sentences = read_conllu(out)
    assert len(sentences) == len(SENTENCES)
    for number, (sentence, line) in enumerate(zip(sentences, SENTENCES, strict=True), start=1):
        assert sentence.comments == (f"# sent_id = {number}", f"# text = {line}")
        assert [w.form for w in sentence.words] == line.split()
        assert all(w.head is not None for w in sentence.words)
        assert sum(1 for w in sentence.words if w.head == 0) >= 1
    # Parsing is deterministic.
    again = tmp_path / "again.conllu"
    parse_file(tiny_model, text_file, again)
    assert again.read_bytes() == out.read_bytes()


def test_tag_only_gives_the_parses_tags_without_heads(tiny_model: Path, text_file: Path,
                                                      tmp_path: Path) -> None:
    parsed, tagged = tmp_path / "parsed.conllu", tmp_path / "tagged.conllu"
    parse_file(tiny_model, text_file, parsed)
    assert parse_file(tiny_model, text_file, tagged, tag_only=True) == len(SENTENCES)

    def tags(path: Path) -> list[tuple]:
        return [(w.form, w.lemma, w.upos, w.xpos, w.feats) for s in read_conllu(path)
                for w in s.words]

    assert tags(tagged) == tags(parsed)
    assert {(w.head, w.deprel) for s in read_conllu(tagged) for w in s.words} == {(None, "_")}
    assert any(w.head is not None for s in read_conllu(parsed) for w in s.words)


def test_a_cached_parse_is_reused_only_for_the_same_bytes_model_and_options(
        tiny_model: Path, text_file: Path, tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    first, again = tmp_path / "first.conllu", tmp_path / "again.conllu"
    assert parse.parse_or_reuse(tiny_model, text_file, first, False, cache) == (
        len(SENTENCES), None)
    [entry] = cache.iterdir()
    assert entry.read_bytes() == first.read_bytes()
    # the same bytes by the same model: copied, the model never loaded
    monkeypatch.setattr(parse, "load_model", lambda path: pytest.fail("the model was loaded"))
    assert parse.parse_or_reuse(tiny_model, text_file, again, False, cache) == (
        len(SENTENCES), entry)
    assert again.read_bytes() == first.read_bytes()
    # another option, another input or another model: other keys
    key = parse.cache_key(tiny_model, text_file, False)
    assert entry.name == f"{key}.conllu"
    assert parse.cache_key(tiny_model, text_file, True) != key
    other_text = tmp_path / "other.tok"
    other_text.write_text("\n".join(SENTENCES[:-1]) + "\n", encoding="utf-8")
    assert parse.cache_key(tiny_model, other_text, False) != key
    other_model = tmp_path / "other.udpipe"
    other_model.write_bytes(tiny_model.read_bytes() + b"\0")
    assert parse.cache_key(other_model, text_file, False) != key


def test_a_damaged_cache_entry_is_parsed_again(tiny_model: Path, text_file: Path,
                                               tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    out = tmp_path / "out.conllu"
    parse.parse_or_reuse(tiny_model, text_file, out, False, cache)
    [entry] = cache.iterdir()
    whole = entry.read_bytes()
    entry.write_bytes(whole[: len(whole) // 2])  # a sentence count that is not the input's
    again = tmp_path / "again.conllu"
    assert parse.parse_or_reuse(tiny_model, text_file, again, False, cache) == (
        len(SENTENCES), None)
    assert again.read_bytes() == whole and entry.read_bytes() == whole


def test_an_unwritable_cache_only_warns(tiny_model: Path, text_file: Path, tmp_path: Path,
                                        caplog) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    out = tmp_path / "out.conllu"
    assert parse.parse_or_reuse(tiny_model, text_file, out, False, blocked / "udpipe") == (
        len(SENTENCES), None)
    assert len(read_conllu(out)) == len(SENTENCES)
    assert "could not keep the parse in the cache" in caplog.text


def test_the_cache_folder_comes_from_the_environment(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv(parse.CACHE_ENV, raising=False)
    assert parse.cache_dir() is None
    monkeypatch.setenv(parse.CACHE_ENV, "")
    assert parse.cache_dir() is None
    monkeypatch.setenv(parse.CACHE_ENV, str(tmp_path))
    assert parse.cache_dir() == tmp_path / "udpipe"


def test_shard_sizes() -> None:
    assert shard_sizes(7, 3) == [3, 2, 2]
    assert shard_sizes(2, 4) == [1, 1, 0, 0]
    assert shard_sizes(0, 2) == [0, 0]
    with pytest.raises(ValueError):
        shard_sizes(3, 0)


@pytest.mark.parametrize("shards", [1, 3, 10])
def test_sharded_parse_equals_unsharded(tiny_model: Path, text_file: Path, tmp_path: Path,
                                        shards: int) -> None:
    whole = tmp_path / "whole.conllu"
    parse_file(tiny_model, text_file, whole)
    pieces = [tmp_path / f"shard{k}.tok" for k in range(shards)]
    sizes = split_text(text_file, pieces)
    assert sum(sizes) == len(SENTENCES)
    assert "".join(p.read_text(encoding="utf-8") for p in pieces) == text_file.read_text(
        encoding="utf-8")
    parsed = [tmp_path / f"shard{k}.conllu" for k in range(shards)]
    for piece, out in zip(pieces, parsed, strict=True):
        parse_file(tiny_model, piece, out)
    merged = tmp_path / "merged.conllu"
    assert merge_conllu(parsed, merged) == len(SENTENCES)
    assert merged.read_bytes() == whole.read_bytes()


def test_empty_input_line_is_an_error(tiny_model: Path, tmp_path: Path) -> None:
    path = tmp_path / "gap.tok"
    path.write_text("A dog barked .\n\nThe cat slept .\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{path}:2: empty line"):
        parse_file(tiny_model, path, tmp_path / "gap.conllu")
    assert not (tmp_path / "gap.conllu").exists()


def test_parse_lines_numbers_from_first_id(tiny_model: Path) -> None:
    (block,) = parse_lines(load_model(tiny_model), ["A bird sang ."], first_id=41)
    assert block.startswith("# sent_id = 41\n# text = A bird sang .\n1\tA\t")
    assert block.endswith("\n\n")


class SpyModel:
    """A UDPipe model that records how many words every sentence it tags has."""

    def __init__(self, model) -> None:
        self.model, self.DEFAULT, self.tagged = model, model.DEFAULT, []

    def tag(self, sentence, options, error) -> bool:
        self.tagged.append(len(sentence.words) - 1)  # words[0] is UDPipe's root
        return self.model.tag(sentence, options, error)

    def parse(self, sentence, options, error) -> bool:
        return self.model.parse(sentence, options, error)


HUGE = "a " * 500_000  # a 1 MB line of 500,000 tokens


def test_a_1mb_line_never_reaches_udpipe(tiny_model: Path, tmp_path: Path, monkeypatch,
                                         caplog) -> None:
    """The line gets a placeholder sentence that holds no phenomenon; the sentences around it
    are parsed and keep their places, so the parse stays line-parallel with its input."""
    lines = [SENTENCES[1], HUGE, SENTENCES[3], " ".join(["x"] * MAX_TOKENS)]
    text = tmp_path / "huge.tok"
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    spy = SpyModel(load_model(tiny_model))
    monkeypatch.setattr(parse, "load_model", lambda path: spy)
    out = tmp_path / "huge.conllu"
    with caplog.at_level("WARNING", logger="phenomt.core.parse"):
        assert parse_file(tiny_model, text, out) == 4
    # UDPipe saw the three other lines, the last of exactly MAX_TOKENS tokens, never the 1 MB one
    assert spy.tagged == [5, 4, MAX_TOKENS]
    sentences = read_conllu(out)
    assert [s.sent_id for s in sentences] == ["1", "2", "3", "4"]
    assert [is_skipped(s) for s in sentences] == [False, True, False, False]
    skipped = sentences[1]
    assert skipped.text is None and len(skipped.words) == 1 and skipped.words[0].head == 0
    assert skipped.metadata["skipped"] == (f"500000 tokens, over the limit of {MAX_TOKENS}: "
                                           "not parsed")
    for phenomenon in LEXICAL_PHENOMENA:
        assert all(i.sentence != 2 for i in lexical_instances(sentences, phenomenon, "en"))
    assert "1 of 4 lines over 1000 tokens kept out of the parse" in caplog.text
    assert "line 2" in caplog.text
    # a sharded parse puts the placeholder where the unsharded one does
    pieces = [tmp_path / f"huge{k}.tok" for k in range(3)]
    split_text(text, pieces)
    parsed = [tmp_path / f"huge{k}.conllu" for k in range(3)]
    for piece, shard in zip(pieces, parsed, strict=True):
        parse_file(tiny_model, piece, shard)
    merged = tmp_path / "merged.conllu"
    assert merge_conllu(parsed, merged) == 4
    assert merged.read_bytes() == out.read_bytes()


def test_parse_lines_records_the_lines_kept_out(tiny_model: Path) -> None:
    skipped: list[int] = []
    blocks = list(parse_lines(SpyModel(load_model(tiny_model)), ["A bird sang .", HUGE],
                              first_id=7, skipped=skipped))
    assert skipped == [8]
    assert blocks[1] == (f"# sent_id = 8\n# skipped = 500000 tokens, over the limit of "
                         f"{MAX_TOKENS}: not parsed\n1\t_\t_\tX\t_\t_\t0\troot\t_\t_\n\n")


def test_missing_model_file(tmp_path: Path, text_file: Path) -> None:
    missing = tmp_path / "nowhere.udpipe"
    with pytest.raises(InputError, match=rf"{missing}: UDPipe model file not found"):
        parse_file(missing, text_file, tmp_path / "out.conllu")
    assert not (tmp_path / "out.conllu").exists()
    broken = tmp_path / "broken.udpipe"
    broken.write_bytes(b"not a model")
    with pytest.raises(InputError, match="cannot load UDPipe model"):
        load_model(broken)


def test_training_rejects_malformed_treebank(tmp_path: Path) -> None:
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tA\ta\tDET\t_\t_\t2\tdet\t_\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{bad}:1: expected 10"):
        train_model([bad], tmp_path / "m.udpipe", iterations=1)
    assert not (tmp_path / "m.udpipe").exists()


def test_iteration_option_strings() -> None:
    assert _with_iterations("default", "iterations", 2) == "iterations=2"
    assert _with_iterations("none", "epochs", 2) == "none"
    assert _with_iterations("hidden_layer=50", "iterations", 3) == "hidden_layer=50;iterations=3"
    assert _with_iterations("default", "iterations", None) == "default"


def test_cli_train_parse_scatter_gather(tmp_path: Path, text_file: Path) -> None:
    model = tmp_path / "cli.udpipe"
    assert run_cli(["parse", "train", "--treebank", str(TREEBANK), "--output", str(model),
                    "--iterations", "1", "--tagger", FAST_TAGGER, "--parser", FAST_PARSER]) == 0
    whole = tmp_path / "whole.conllu"
    assert run_cli(["parse", "run", "--model", str(model), "--input", str(text_file),
                    "--output", str(whole)]) == 0
    shards = [str(tmp_path / f"s{k}.tok") for k in range(2)]
    assert run_cli(["parse", "scatter", "--input", str(text_file), "--outputs", *shards]) == 0
    parsed = []
    for shard in shards:
        parsed.append(shard.replace(".tok", ".conllu"))
        assert run_cli(["parse", "run", "--model", str(model), "--input", shard,
                        "--output", parsed[-1]]) == 0
    merged = tmp_path / "merged.conllu"
    assert run_cli(["parse", "gather", "--inputs", *parsed, "--output", str(merged)]) == 0
    assert merged.read_bytes() == whole.read_bytes()


def test_mirror_english_model_finds_a_particle(mirror: Path, tmp_path: Path) -> None:
    model = mirror / "udpipe" / "english.udpipe"
    if not model.is_file():
        pytest.skip("the mirror has no English UDPipe model")
    text = tmp_path / "en.tok"
    text.write_text("I woke him up .\nThe dog barked .\n", encoding="utf-8")
    parsed = tmp_path / "en.conllu"
    assert parse_file(model, text, parsed) == 2
    up = read_conllu(parsed)[0].word(4)
    assert (up.form, up.deprel, up.head) == ("up", "compound:prt", 2)
    result = extract_lexical(parsed, PARTICLE, tmp_path / "set", min_distance=1)
    assert result.ids == (1,)
    assert (tmp_path / "set.src_marked").read_text(encoding="utf-8") == "I *woke* him *up* .\n"
