"""CoNLL-U reader and writer."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from phenomt.core.conllu import (
    count_sentences,
    iter_conllu,
    parse_conllu,
    parse_features,
    read_conllu,
    write_conllu,
)
from phenomt.core.io import InputError

DATA = Path(__file__).parent / "data" / "ldd"
DE = DATA / "de_lexical.conllu"


def row(*columns: object) -> str:
    return "\t".join(str(c) for c in columns)


def word(i: int, form: str, head: object = 0, deprel: str = "root", feats: str = "_") -> str:
    return row(i, form, form.lower(), "X", "_", feats, head, deprel, "_", "_")


def test_reads_sentences_words_heads_and_comments() -> None:
    sentences = read_conllu(DE)
    assert len(sentences) == 9
    first = sentences[0]
    assert first.sent_id == "de-1"
    assert first.text == "Er ruft sie morgen an ."
    assert first.comments == ("# sent_id = de-1", "# text = Er ruft sie morgen an .")
    assert [w.form for w in first.words] == ["Er", "ruft", "sie", "morgen", "an", "."]
    assert first.word(2).head == 0 and first.word(2).deprel == "root"
    assert first.word(5).head == 2 and first.word(5).deprel == "compound:prt"
    assert first.first_line == 1
    assert first.word(1).line == 3
    # A sentence without "# text" still reads; its text comes from the tokens.
    assert sentences[2].text is None
    assert sentences[2].surface_text() == "Das ist gut ."


def test_multiword_token_keeps_words_and_surface_form() -> None:
    sentence = read_conllu(DE)[3]
    assert [w.form for w in sentence.words] == ["Er", "fängt", "zu", "dem", "Glück", "heute",
                                                "an", "."]
    (token,) = sentence.multiword_tokens
    assert (token.start, token.end, token.form) == (3, 4, "zum")
    surface = sentence.surface_tokens()
    assert [t.form for t in surface] == ["Er", "fängt", "zum", "Glück", "heute", "an", "."]
    assert (surface[2].first_word, surface[2].last_word) == (3, 4)


def test_empty_nodes_are_not_words() -> None:
    sentence = read_conllu(DE)[4]
    assert len(sentence.words) == 8
    assert [w.id for w in sentence.words] == list(range(1, 9))
    (node,) = sentence.empty_nodes
    assert (node.major, node.minor, node.form) == (5, 1, "kauft")
    assert sentence.surface_text() == "Anna kauft Brot , Paul Milch ein ."
    assert [t.form for t in sentence.surface_tokens()] == [w.form for w in sentence.words]


def test_features() -> None:
    reflexive = read_conllu(DE)[1].word(3)
    assert reflexive.has_feature("Reflex", "Yes")
    assert reflexive.features()["Case"] == "Acc"
    assert parse_features("_") == {}
    assert parse_features("PronType=Int,Rel|Number=Sing") == {"PronType": "Int,Rel",
                                                              "Number": "Sing"}
    (w,) = parse_conllu(word(1, "x", feats="PronType=Int,Rel"))[0].words
    assert w.has_feature("PronType", "Rel") and not w.has_feature("PronType", "Dem")


def test_write_back_is_byte_identical(tmp_path: Path) -> None:
    out = tmp_path / "copy.conllu"
    assert write_conllu(out, read_conllu(DE)) == 9
    assert out.read_bytes() == DE.read_bytes()
    # A selection is written exactly as its sentences were read.
    chosen = [s for s in read_conllu(DE) if s.sent_id in ("de-4", "de-5")]
    write_conllu(out, chosen)
    blocks = DE.read_text(encoding="utf-8").split("\n\n")
    assert out.read_text(encoding="utf-8") == blocks[3] + "\n\n" + blocks[4] + "\n\n"
    write_conllu(out, [])
    assert out.read_bytes() == b""


def test_gzip_and_count(tmp_path: Path) -> None:
    packed = tmp_path / "de.conllu.gz"
    packed.write_bytes(gzip.compress(DE.read_bytes()))
    assert count_sentences(packed) == 9
    assert [s.sent_id for s in iter_conllu(packed)] == [f"de-{i}" for i in range(1, 10)]


def test_tolerates_extra_blank_lines_and_missing_final_blank() -> None:
    text = "\n\n" + word(1, "A") + "\n\n\n" + word(1, "B")
    assert [s.words[0].form for s in parse_conllu(text)] == ["A", "B"]


def test_metadata_keeps_equals_signs_and_first_occurrence() -> None:
    text = "# newdoc id = d1\n# text = a = b\n# text = ignored\n# plain remark\n" + word(1, "a")
    sentence = parse_conllu(text)[0]
    assert sentence.text == "a = b"
    assert sentence.metadata == {"newdoc id": "d1", "text": "a = b"}


@pytest.mark.parametrize(
    ("lines", "bad_line", "message"),
    [
        ([word(1, "a"), "2\tb\tb\tX\t_\t_\t1\tdep\t_"], 2, "10 tab-separated columns"),
        ([word(1, "a"), row("two", "b", "b", "X", "_", "_", 1, "dep", "_", "_")], 2,
         "malformed ID"),
        ([word(1, "a"), word(2, "b", head="x", deprel="dep")], 2, "HEAD 'x'"),
        ([word(1, "a"), word(2, "b", head=-1, deprel="dep")], 2, "HEAD '-1'"),
        ([word(1, "a"), word(3, "b", head=1, deprel="dep")], 2, "out of sequence"),
        ([word(1, "a"), word(2, "b", head=7, deprel="dep")], 2, "exceeds"),
        ([word(1, "a"), word(2, "b", head=2, deprel="dep")], 2, "its own head"),
        ([word(1, "a"), row(2, "b", "", "X", "_", "_", 1, "dep", "_", "_")], 2,
         "column 3 is empty"),
        ([word(1, "a"), "# late comment"], 2, "comment line after"),
        ([row("2-3", "ab", *["_"] * 8), word(1, "a")], 1, "must start at word 1"),
        ([row("1-1", "a", *["_"] * 8), word(1, "a")], 1, "empty range"),
        ([row("1-3", "abc", *["_"] * 8), word(1, "a"), word(2, "b", 1, "dep")], 1, "exceeds"),
        ([word(1, "a"), row("2.1", "b", *["_"] * 8)], 2, "must follow word 2"),
        (["# only a comment"], 1, "no word lines"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path: Path, lines: list[str], bad_line: int,
                                            message: str) -> None:
    path = tmp_path / "bad.conllu"
    # Put a good sentence first so line numbers are counted across sentences.
    path.write_text(word(1, "ok") + "\n\n" + "\n".join(lines) + "\n\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_conllu(path)
    assert caught.value.path == str(path)
    assert caught.value.line == bad_line + 2
    assert f"{path}:{bad_line + 2}:" in str(caught.value)
    assert message in str(caught.value)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        read_conllu(tmp_path / "absent.conllu")
