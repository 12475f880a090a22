"""CRR/DRR: the paper's Table 1 examples, exemptions, pooling, loaders, agreement and the CLI.

Unless stated otherwise, the embeddings are tests/data/redundancy/vectors.txt:
I=(0,1,1), ate=(3,4,0), had=(4,3,0), pizza=(0,0,1), tonight=(1,0,-1), void=(0,0,0).
Cosines: ate/had 24/25 = 0.96; I/pizza 0.707; I/ate 0.566; had/tonight 0.566; I/had 0.424;
ate/tonight 0.424; ate/pizza = had/pizza = 0; I/tonight -0.5; pizza/tonight -0.707.
With threshold 0.9 the only synonyms are ate and had.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from phenomt.core.cliargs import CommandTree
from phenomt.core.io import InputError
from phenomt.core.metrics.redundancy import (
    Annotation,
    Embeddings,
    EmbeddingSynonyms,
    agreement,
    corpus_stopwords,
    default_stopword_count,
    embeddings_from_table,
    exemption_quota,
    frequent_tokens,
    load_embeddings,
    load_vectors_text,
    merge_bpe,
    pool,
    read_annotations,
    read_fairseq_dictionary,
    read_stopwords,
    read_tokenized,
    redundant,
    register_cli,
    score_sentences,
    sentence_redundancy,
    tokenize,
)

DATA = Path(__file__).parent / "data" / "redundancy"
VECTORS = DATA / "vectors.txt"


@pytest.fixture(scope="module")
def synonyms() -> EmbeddingSynonyms:
    return EmbeddingSynonyms(load_vectors_text(VECTORS), 0.9)


def score(text: str, src: str = "", ref: str = "", **kwargs):
    return sentence_redundancy(text.split(), src.split(), ref.split(), **kwargs)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def run_cli(argv: list[str], capsys) -> dict:
    parser = argparse.ArgumentParser(prog="phenomt")
    register_cli(CommandTree(parser))
    args = parser.parse_args(argv)
    assert args.handler(args) == 0
    return json.loads(capsys.readouterr().out)


# ----------------------------------------------------------------- Table 1 of the paper

def test_table1_continuous_repetition(synonyms):
    # "I ate ate pizza tonight": |Y| = 5, denominator 4. y2 = ate = y1 -> Cr = 1.
    # Operational reading: y2 is already continuous, so it is not counted again as Dr.
    # CRR = 1/4, DRR = 0/4 (a literal reading would give DRR = 1/4).
    result = score("I ate ate pizza tonight", synonyms=synonyms)
    assert (result.continuous, result.discontinuous, result.denominator) == (1, 0, 4)
    assert result.crr == 0.25 and result.drr == 0.0
    assert result.continuous_pairs == ((1, 2),)


def test_table1_discontinuous_repetition_depends_on_case(synonyms):
    # "Tonight I ate pizza tonight": tokens are compared as strings, "Tonight" != "tonight"
    # (and "Tonight" has no vector), so nothing is redundant: CRR = DRR = 0/4.
    result = score("Tonight I ate pizza tonight", synonyms=synonyms)
    assert (result.crr, result.drr) == (0.0, 0.0)
    # Folding case: y4 = tonight = y0, y3 = pizza is not redundant with it -> Dr = 1.
    # CRR = 0/4, DRR = 1/4, pair (0, 4).
    folded = sentence_redundancy(tokenize("Tonight I ate pizza tonight", lowercase=True),
                                 synonyms=EmbeddingSynonyms(load_vectors_text(VECTORS), 0.9,
                                                            lowercase=True))
    assert (folded.crr, folded.drr) == (0.0, 0.25)
    assert folded.discontinuous_pairs == ((0, 4),)


def test_table1_continuous_synonym(synonyms):
    # "I ate had pizza tonight": cos(had, ate) = 0.96 > 0.9 -> Cr(y2) = 1; y4 tonight vs
    # pizza -0.707, vs had/ate/I 0.566/0.424/-0.5: nothing. CRR = 1/4, DRR = 0/4.
    result = score("I ate had pizza tonight", synonyms=synonyms)
    assert (result.crr, result.drr) == (0.25, 0.0)
    assert result.continuous_pairs == ((1, 2),)
    # Without embeddings only identical tokens are redundant: 0/4 and 0/4.
    plain = score("I ate had pizza tonight")
    assert (plain.crr, plain.drr) == (0.0, 0.0)


def test_table1_discontinuous_synonym(synonyms):
    # "I ate pizza had tonight": y3 had vs y2 pizza: cos 0 -> Cr = 0; had ~ ate (y1) -> Dr = 1,
    # pair (1, 3). CRR = 0/4, DRR = 1/4.
    result = score("I ate pizza had tonight", synonyms=synonyms)
    assert (result.crr, result.drr) == (0.0, 0.25)
    assert result.discontinuous_pairs == ((1, 3),)


def test_any_synonym_function_gives_the_same_counts():
    # The embedding relation replaced by a plain function marking ate/had: same as above.
    def ate_had(a: str, b: str) -> bool:
        return {a, b} == {"ate", "had"}

    assert score("I ate had pizza tonight", synonyms=ate_had).continuous_pairs == ((1, 2),)
    assert score("I ate pizza had tonight", synonyms=ate_had).discontinuous_pairs == ((1, 3),)
    assert redundant("ate", "had", ate_had) and not redundant("ate", "had")


def test_threshold_is_strict_and_configurable():
    # cos(ate, had) = 0.96: synonyms above threshold 0.95, not above 0.97.
    table = load_vectors_text(VECTORS)
    assert EmbeddingSynonyms(table, 0.95)("ate", "had")
    assert not EmbeddingSynonyms(table, 0.97)("had", "ate")
    assert score("I ate had", synonyms=EmbeddingSynonyms(table, 0.97)).crr == 0.0
    with pytest.raises(ValueError):
        EmbeddingSynonyms(table, 1.5)


def test_unknown_and_zero_vectors_have_no_synonyms():
    # Even threshold -1 (every known pair is "similar") spares "void" (zero vector) and "xyz".
    relation = EmbeddingSynonyms(load_vectors_text(VECTORS), -1.0)
    assert relation("I", "tonight")
    assert not relation("void", "I") and not relation("xyz", "I")
    assert relation.cosine("void", "I") is None
    # The per-sentence matrix agrees with single decisions.
    tokens = ["I", "ate", "void", "xyz", "tonight"]
    table = relation.table(tokens)
    assert all(table[x][y] == relation(a, b) for x, a in enumerate(tokens)
               for y, b in enumerate(tokens) if a != b)


# ----------------------------------------------------------------- exemptions

def test_stopwords_exempt_discontinuous_only():
    # "the cat saw the dog": y3 the matches y0 -> Dr, unless "the" is a stopword.
    # Without stopwords DRR = 1/4; with {the}: 0/4 and one stopword exemption.
    assert score("the cat saw the dog").drr == 0.25
    exempt = score("the cat saw the dog", stopwords={"the"})
    assert (exempt.drr, exempt.stopword_exemptions) == (0.0, 1)
    # Continuous repeats are never exempt: "the the cat" -> CRR = 1/2.
    assert score("the the cat", stopwords={"the"}).crr == 0.5


def test_quota_from_reference_is_used_up():
    # Reference "a x a": quota(a) = max(0, 2) - 1 = 1.
    # "a y a z a" (|Y| = 5): y2 a exempt (quota 1 -> 0); y4 a counts, nearest partner y2.
    # DRR = 1/4, one exemption.
    assert exemption_quota([], ["a", "x", "a"]) == {"a": 1}
    result = score("a y a z a", ref="a x a")
    assert (result.discontinuous, result.multiple_exemptions) == (1, 1)
    assert result.drr == 0.25 and result.discontinuous_pairs == ((2, 4),)


def test_quota_takes_the_larger_count():
    # Source "a a a" (3), reference "a" (1): quota = max(3, 1) - 1 = 2, both repeats exempt.
    assert exemption_quota(["a", "a", "a"], ["a"]) == {"a": 2}
    result = score("a y a z a", src="a a a", ref="a")
    assert (result.drr, result.multiple_exemptions) == (0.0, 2)
    # Once each: a type seen once in each side has no quota.
    assert exemption_quota(["a"], ["a"]) == {}


def test_quota_does_not_cover_continuous_repeats():
    # "a a" with reference "a a": Cr(y1) = 1, CRR = 1/1; the quota is not touched.
    result = score("a a", ref="a a")
    assert (result.crr, result.multiple_exemptions) == (1.0, 0)


def test_stopwords_use_no_quota():
    # Stopword "a", reference "a a" (quota 1): "a b a" -> y2 is a stopword exemption, quota unused.
    result = score("a b a", ref="a a", stopwords={"a"})
    assert (result.stopword_exemptions, result.multiple_exemptions, result.drr) == (1, 0, 0.0)


def test_synonym_of_a_repeated_reference_token_is_exempt(synonyms):
    # Reference "I had and had": quota(had) = 1. "I ate pizza ate": y3 ate repeats y1 (Cr = 0,
    # pizza/ate cos 0). M~ has no "ate", but its synonym "had" has quota -> exempt.
    # DRR = 0/3 with embeddings; without them "had" does not cover "ate": DRR = 1/3.
    with_embeddings = score("I ate pizza ate", ref="I had and had", synonyms=synonyms)
    assert (with_embeddings.drr, with_embeddings.multiple_exemptions) == (0.0, 1)
    assert score("I ate pizza ate", ref="I had and had").drr == pytest.approx(1 / 3)


def test_discontinuous_partner_is_the_nearest_earlier_match():
    # "a b a c a": y2 -> (0, 2), y4 -> (2, 4); DRR = 2/4.
    result = score("a b a c a")
    assert result.discontinuous_pairs == ((0, 2), (2, 4)) and result.drr == 0.5


# ----------------------------------------------------------------- edges and pooling

def test_short_sentences_have_no_ratio():
    # |Y| = 1 and |Y| = 0: denominator 0, ratios undefined.
    for text in ("hello", ""):
        result = score(text)
        assert (result.denominator, result.crr, result.drr) == (0, None, None)
    assert pool([score("hello"), score("")]).crr is None


def test_corpus_pooling_and_macro_average():
    # "a a b": denominator 2, Cr(y1) = 1 -> CRR 1/2, DRR 0.
    # "a b c d a": denominator 4, Dr(y4) = 1 -> CRR 0, DRR 1/4.
    # "x" and "": no ratio, nothing added.
    # Pooled: CRR = (1 + 0) / (2 + 4) = 1/6, DRR = (0 + 1) / 6 = 1/6.
    # Macro over the two scored sentences: CRR (1/2 + 0)/2 = 1/4, DRR (0 + 1/4)/2 = 1/8.
    corpus = pool(score_sentences([s.split() for s in ("a a b", "a b c d a", "x", "")]))
    assert (corpus.continuous, corpus.discontinuous, corpus.denominator) == (1, 1, 6)
    assert corpus.crr == pytest.approx(1 / 6) and corpus.drr == pytest.approx(1 / 6)
    assert corpus.crr_macro == pytest.approx(1 / 4) and corpus.drr_macro == pytest.approx(1 / 8)
    assert (corpus.sentences, corpus.scored_sentences, corpus.tokens) == (4, 2, 9)


def test_sources_must_match_hypotheses():
    with pytest.raises(ValueError):
        score_sentences([["a"], ["b"]], sources=[["a"]])


# ----------------------------------------------------------------- tokens and stopwords

def test_bpe_and_word_level():
    assert merge_bpe("pi@@ zza is ho@@ t@@") == "pizza is hot"
    # BPE level "pi@@ zza pi@@ zza": y2, y3 repeat y0, y1 non-adjacently -> DRR 2/3, CRR 0.
    bpe = sentence_redundancy(tokenize("pi@@ zza pi@@ zza"))
    assert (bpe.crr, bpe.drr) == (0.0, pytest.approx(2 / 3))
    # Word level "pizza pizza": CRR 1/1.
    word = sentence_redundancy(tokenize("pi@@ zza pi@@ zza", level="word"))
    assert (word.crr, word.drr) == (1.0, 0.0)
    with pytest.raises(ValueError):
        tokenize("a", level="char")


def test_frequent_tokens_and_stopword_files(tmp_path):
    # Counts in "a b a / c a b / y x": a 3, b 2, c x y 1; ties go to the smaller string.
    corpus = write(tmp_path / "train.txt", "a b a\nc a b\ny x\n")
    assert frequent_tokens(read_tokenized(corpus), 3) == ["a", "b", "c"]
    assert corpus_stopwords(corpus, 2) == {"a", "b"}
    assert corpus_stopwords(corpus, 0) == frozenset()
    assert read_stopwords(write(tmp_path / "stop", " The \n\nof\n"), lowercase=True) == {
        "the", "of"}
    with pytest.raises(InputError, match=r"stop2:2"):
        read_stopwords(write(tmp_path / "stop2", "a\nb c\n"))
    assert (default_stopword_count("zh"), default_stopword_count("de")) == (3, 10)


def test_embedding_dictionary_frequent_tokens():
    # A vectors file is in frequency order by convention; "void" is 6th.
    assert load_vectors_text(VECTORS).frequent_tokens(2) == ["I", "ate"]


# ----------------------------------------------------------------- embedding files

def test_vectors_file_without_header(tmp_path):
    table = load_vectors_text(write(tmp_path / "v.txt", "x 1 0 \ny 0 1\n\n"))
    assert table.tokens == ("x", "y") and table.dim == 2


@pytest.mark.parametrize(("text", "message"), [
    ("x 1 0\ny 1 0 0\n", r"v\.txt:2: .*3 values.*dimension 2"),
    ("2 2\nx 1 0\ny 1\n", r"v\.txt:3: .*1 values.*header on line 1"),
    ("x 1 0\ny 0 1\nx 1 1\n", r"v\.txt:3: duplicate token 'x' \(first on line 1\)"),
    ("3 2\nx 1 0\ny 0 1\n", r"v\.txt:1: header announces 3 vectors, the file has 2"),
    ("x 1 zero\n", r"v\.txt:1: values of 'x' are not all numbers"),
    ("x 1 nan\n", r"v\.txt:1: .*not finite"),
    ("x\n", r"v\.txt:1: token 'x' has no vector values"),
    ("\n", r"v\.txt: no vectors"),
])
def test_vectors_file_errors(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        load_vectors_text(write(tmp_path / "v.txt", text))


def test_checkpoint_without_dictionary_is_refused(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(b"PK\x03\x04 not text")
    with pytest.raises(InputError, match="--embeddings-dict"):
        load_embeddings(path)


def fairseq_table() -> np.ndarray:
    # Rows 0-3: <s> <pad> </s> <unk>; row 4 + line index for each dict.txt line.
    rng = np.random.default_rng(0)
    table = rng.normal(size=(8, 3))
    table[4:] = [[3, 4, 0], [4, 3, 0], [0, 0, 1], [0, 1, 0]]
    return table


def test_fairseq_dictionary_rows(tmp_path):
    # dict.txt line 1 "ate" -> row 1 + 3 = 4 (0-based index 0 + 4 specials), had -> 5, ...
    dictionary = write(tmp_path / "dict.txt", "ate 10\nhad 7\npizza 3\nmadeupword0000 0\n")
    table = embeddings_from_table(fairseq_table(), dictionary)
    assert table.tokens[:4] == ("<s>", "<pad>", "</s>", "<unk>")
    assert [table.index[t] for t in ("ate", "had", "pizza")] == [4, 5, 6]
    assert EmbeddingSynonyms(table, 0.9)("ate", "had")
    # Specials and zero-count padding are never frequent tokens.
    assert table.frequent_tokens(10) == ["ate", "had", "pizza"]


def test_fairseq_dictionary_counts_and_overwrite(tmp_path):
    symbols, counts = read_fairseq_dictionary(
        write(tmp_path / "dict.txt", "b 1\na b 5\nb 9 #fairseq:overwrite\n"))
    # "a b" keeps its space (the count is the last field); the overwritten "b" takes row 6.
    assert symbols[4:] == ["b", "a b", "b"] and counts[4:] == [1, 5, 9]
    table = embeddings_from_table(np.eye(7), tmp_path / "dict.txt")
    assert table.index["b"] == 6
    assert table.frequent_tokens(2) == ["b", "a b"]  # counts 9, 5


def test_fairseq_table_size_must_match(tmp_path):
    dictionary = write(tmp_path / "dict.txt", "ate 10\nhad 7\npizza 3\nmadeupword0000 0\n")
    with pytest.raises(InputError, match=r"ckpt: embedding table has 7 rows, .* 8 symbols"):
        embeddings_from_table(fairseq_table()[:7], dictionary, table_source="ckpt")
    larger = np.vstack([fairseq_table(), np.ones((2, 3))])
    with pytest.raises(InputError, match="10 rows"):
        embeddings_from_table(larger, dictionary)
    # Appended symbols (language tags, <mask>) may be allowed; they are ignored.
    assert len(embeddings_from_table(larger, dictionary, allow_extra_rows=True).tokens) == 8
    with pytest.raises(InputError, match="7 rows"):
        embeddings_from_table(fairseq_table()[:7], dictionary, allow_extra_rows=True)


@pytest.mark.parametrize(("text", "message"), [
    ("ate 10\nate 3\n", r"dict\.txt:2: duplicate token 'ate'"),
    ("<unk> 3\n", r"dict\.txt:1: duplicate token '<unk>'"),
    ("ate\n", r"dict\.txt:1: expected '<token> <count>"),
    ("ate ten\n", r"dict\.txt:1: expected"),
])
def test_fairseq_dictionary_errors(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        read_fairseq_dictionary(write(tmp_path / "dict.txt", text))


def test_fairseq_checkpoint(tmp_path):
    torch = pytest.importorskip("torch")
    dictionary = write(tmp_path / "dict.txt", "ate 10\nhad 7\npizza 3\nmadeupword0000 0\n")
    weights = torch.tensor(fairseq_table(), dtype=torch.float32)
    # fairseq keeps its configuration beside the weights (here an argparse Namespace).
    torch.save({"args": argparse.Namespace(arch="cmlm"),
                "model": {"decoder.embed_tokens.weight": weights}}, tmp_path / "dec.pt")
    torch.save({"model": {"encoder.embed_tokens.weight": weights}}, tmp_path / "enc.pt")
    for name in ("dec.pt", "enc.pt"):
        table = load_embeddings(tmp_path / name, dictionary)
        assert table.index["had"] == 5
        assert EmbeddingSynonyms(table, 0.9)("ate", "had")
    torch.save({"model": {"other": weights}}, tmp_path / "none.pt")
    with pytest.raises(InputError, match="no embedding table"):
        load_embeddings(tmp_path / "none.pt", dictionary)
    torch.save({"model": {"decoder.embed_tokens.weight": weights[:6]}}, tmp_path / "small.pt")
    with pytest.raises(InputError, match="6 rows"):
        load_embeddings(tmp_path / "small.pt", dictionary)


def test_embeddings_shape_is_checked():
    with pytest.raises(ValueError):
        Embeddings(["a", "b"], np.ones((3, 2)))


# ----------------------------------------------------------------- human agreement

def annotated() -> tuple[dict, dict]:
    hyps = {name: read_tokenized(DATA / f"{name}.hyp") for name in ("sys_a", "sys_b")}
    return hyps, {name: score_sentences(lines) for name, lines in hyps.items()}


def test_agreement_by_hand():
    # Metric without embeddings, stopwords or M~:
    #   sys_a 0 "I ate ate pizza tonight"  cont (1,2)
    #   sys_a 1 "the cat saw the cat"      disc (0,3) (1,4)
    #   sys_a 2 "I ate pizza had tonight"  -
    #   sys_a 3 "he had had enough"        cont (1,2)
    #   sys_b 0 "we we went home home"     cont (0,1) (3,4)
    #   sys_b 1 "it rains and it rains"    disc (0,3) (1,4)
    #   sys_b 2 "yes no yes no yes"        disc (0,2) (1,3) (2,4)
    #   sys_b 3 "a big large house"        -
    # Humans: cont a0(1,2) b0(0,1) b0(3,4) b3(1,2);
    #         disc a1(1,4) a2(1,3) b1(1,4) b2(0,2) b2(1,3) b2(0,4).
    # Pairs, continuous: auto 4, human 4, matched 3 (a0, b0 x2): P = R = F1 = 3/4.
    # Pairs, discontinuous: auto 7, human 6, matched 4 (a1(1,4) b1(1,4) b2(0,2) b2(1,3)):
    #   P = 4/7, R = 4/6, F1 = 2*4/(7+6) = 8/13.
    # Tokens (later position), continuous: as for pairs, 3/4 each.
    # Tokens, discontinuous: auto a1:3 a1:4 b1:3 b1:4 b2:2 b2:3 b2:4 (7); human a1:4 a2:3 b1:4
    #   b2:2 b2:3 b2:4 (6); matched 5: P = 5/7, R = 5/6, F1 = 10/13.
    hyps, results = annotated()
    notes = read_annotations(DATA / "annotations.tsv", hyps)
    assert len(notes) == 10 and notes[0] == Annotation("sys_a", 0, 1, 2, "continuous", 3)
    report = agreement(notes, results)
    cont, disc = report["pairs"]["continuous"], report["pairs"]["discontinuous"]
    assert (cont["matched"], cont["automatic"], cont["human"]) == (3, 4, 4)
    assert cont["precision"] == cont["recall"] == cont["f1"] == 0.75
    assert (disc["matched"], disc["automatic"], disc["human"]) == (4, 7, 6)
    assert disc["precision"] == pytest.approx(4 / 7)
    assert disc["recall"] == pytest.approx(4 / 6)
    assert disc["f1"] == pytest.approx(8 / 13)
    tokens = report["tokens"]
    assert tokens["continuous"]["f1"] == 0.75
    assert (tokens["discontinuous"]["precision"], tokens["discontinuous"]["recall"],
            tokens["discontinuous"]["f1"]) == pytest.approx((5 / 7, 5 / 6, 10 / 13))


def test_agreement_per_system_adds_up_to_the_pooled_counts():
    # sys_a alone, by hand: continuous pairs auto a0(1,2) a3(1,2), human a0(1,2): 1 of 2, 1;
    # discontinuous pairs auto a1(0,3) a1(1,4), human a1(1,4) a2(1,3): 1 of 2, 2.
    hyps, results = annotated()
    report = agreement(read_annotations(DATA / "annotations.tsv", hyps), results)
    own = report["systems"]["sys_a"]["pairs"]
    assert (own["continuous"]["matched"], own["continuous"]["automatic"],
            own["continuous"]["human"]) == (1, 2, 1)
    assert (own["discontinuous"]["matched"], own["discontinuous"]["automatic"],
            own["discontinuous"]["human"]) == (1, 2, 2)
    for unit in ("pairs", "tokens"):
        for kind in ("continuous", "discontinuous"):
            for count in ("matched", "automatic", "human"):
                total = sum(s[unit][kind][count] for s in report["systems"].values())
                assert total == report[unit][kind][count], (unit, kind, count)


def test_human_and_automatic_ratios_by_hand():
    # Denominators: sys_a 4 + 4 + 4 + 3 = 15, sys_b 4 + 4 + 4 + 3 = 15.
    # sys_a automatic: cont 2, disc 2 -> 2/15, 2/15; human: cont 1 (a0:2), disc 2 -> 1/15, 2/15.
    # sys_b automatic: cont 2, disc 5 -> 2/15, 5/15; human: cont 3, disc 4 -> 3/15, 4/15.
    hyps, results = annotated()
    systems = agreement(read_annotations(DATA / "annotations.tsv", hyps), results)["systems"]
    expected = {"sys_a": ((1, 2), (2, 2)), "sys_b": ((3, 4), (2, 5))}
    for name, (human, automatic) in expected.items():
        for side, (cont, disc) in (("human", human), ("automatic", automatic)):
            ratios = systems[name][side]
            assert (ratios["continuous"], ratios["discontinuous"]) == (cont, disc)
            assert ratios["denominator"] == 15
            assert (ratios["crr"], ratios["drr"]) == pytest.approx((cont / 15, disc / 15))


def test_human_token_marked_continuous_is_not_also_discontinuous(tmp_path):
    # "a a a": human (0,1) and (1,2) continuous plus (0,2) discontinuous: the token at 2 counts
    # once, as continuous: CRR 2/2, DRR 0/2.
    hyps = {"s": [["a", "a", "a"]]}
    notes = read_annotations(write(tmp_path / "a.tsv", "s\t0\t0\t1\tcontinuous\n"
                                   "s\t0\t1\t2\tcontinuous\ns\t0\t0\t2\tdiscontinuous\n"), hyps)
    human = agreement(notes, {"s": score_sentences(hyps["s"])})["systems"]["s"]["human"]
    assert (human["crr"], human["drr"]) == (1.0, 0.0)


@pytest.mark.parametrize(("row", "message"), [
    ("sys_a\t4\t0\t1\tcontinuous", r"a\.tsv:1: sentence 4 out of range"),
    ("sys_a\t3\t2\t4\tdiscontinuous", r"a\.tsv:1: positions 2, 4 out of range.*4 tokens"),
    ("sys_a\t0\t2\t1\tcontinuous", r"a\.tsv:1: positions 2, 1"),
    ("sys_c\t0\t0\t1\tcontinuous", r"a\.tsv:1: unknown system 'sys_c'"),
    ("sys_a\t0\t0\t2\tcontinuous", r"a\.tsv:1: continuous pair 0, 2"),
    ("sys_a\t0\t0\t1\tdiscontinuous", r"a\.tsv:1: discontinuous pair 0, 1"),
    ("sys_a\t0\t0\t1\trepeat", r"a\.tsv:1: type 'repeat'"),
    ("sys_a\t0\t0\t1", r"a\.tsv:1: expected 5 tab-separated fields"),
    ("sys_a\tx\t0\t1\tcontinuous", r"a\.tsv:1: sentence, a and b must be integers"),
    ("sys_a\t0\t1\t2\tcontinuous\nsys_a\t0\t1\t2\tcontinuous", r"a\.tsv:2: duplicate"),
])
def test_annotation_errors(tmp_path, row, message):
    hyps, _ = annotated()
    with pytest.raises(InputError, match=message):
        read_annotations(write(tmp_path / "a.tsv", row + "\n"), hyps)


# ----------------------------------------------------------------- command line

def test_cli_score(tmp_path, capsys):
    # Line 1 "I ate pizza had tonight": with embeddings Dr(had) (pair 1,3), 1/4.
    # Line 2 "the cat saw the cat": y3 the (stopword: exempt), y4 cat ~ y1 -> Dr; 1/4.
    # Line 3 "ok": no ratio. Pooled: CRR 0/8, DRR 2/8 = 0.25.
    hyp = write(tmp_path / "hyp", "I ate pizza had tonight\nthe cat saw the cat\nok\n")
    stop = write(tmp_path / "stop", "the\n")
    per_sentence = tmp_path / "sentences.jsonl"
    report = run_cli(["score", "redundancy", "--hyp", str(hyp), "--embeddings", str(VECTORS),
                      "--threshold", "0.9", "--stopwords", str(stop),
                      "--per-sentence", str(per_sentence),
                      "--output", str(tmp_path / "out.json")], capsys)
    assert json.loads((tmp_path / "out.json").read_text()) == report
    assert (report["crr"], report["drr"]) == (0.0, 0.25)
    assert (report["continuous"], report["discontinuous"], report["denominator"]) == (0, 2, 8)
    assert (report["exempt_stopword"], report["sentences"], report["scored_sentences"]) == (
        1, 3, 2)
    rows = [json.loads(line) for line in per_sentence.read_text().splitlines()]
    assert rows[0]["discontinuous_pairs"] == [[1, 3]] and rows[2]["crr"] is None


def test_cli_defaults_and_exemption_files(tmp_path, capsys):
    # No embeddings and no stopword option: "I ate pizza had tonight" -> 0/4, 0/4;
    # "a y a z a" with reference "a x a" -> one repeat exempt, DRR 1/4. Pooled DRR 1/8.
    hyp = write(tmp_path / "hyp", "I ate pizza had tonight\na y a z a\n")
    ref = write(tmp_path / "ref", "I had pizza\na x a\n")
    src = write(tmp_path / "src", "ich\nb\n")
    report = run_cli(["score", "redundancy", "--hyp", str(hyp), "--src", str(src),
                      "--ref", str(ref)], capsys)
    assert (report["crr"], report["drr"], report["exempt_multiple"]) == (0.0, 0.125, 1)
    assert report["settings"]["stopwords"] == 0


def test_cli_stopword_corpus_and_embedding_stopwords(tmp_path, capsys):
    # Corpus top-1 is "cat" (3 times), embedding dictionary top-2 is I, ate.
    # "cat I saw I cat ate x ate": y3 I, y4 cat, y7 ate are all exempt -> DRR 0/7.
    hyp = write(tmp_path / "hyp", "cat I saw I cat ate x ate\n")
    corpus = write(tmp_path / "train", "cat cat dog\ncat\n")
    base = ["score", "redundancy", "--hyp", str(hyp)]
    assert run_cli(base, capsys)["drr"] == pytest.approx(3 / 7)
    report = run_cli(base + ["--stopword-corpus", str(corpus), "--stopword-count", "1",
                             "--embeddings", str(VECTORS), "--threshold", "0.9",
                             "--embedding-stopword-count", "2"], capsys)
    assert (report["drr"], report["exempt_stopword"], report["settings"]["stopwords"]) == (
        0.0, 3, 3)


def test_cli_word_level_and_case(tmp_path, capsys):
    # Word level "pizza Pizza": different strings -> 0/1; ignoring case -> CRR 1/1.
    hyp = write(tmp_path / "hyp", "pi@@ zza Pi@@ zza\n")
    base = ["score", "redundancy", "--hyp", str(hyp), "--level", "word"]
    assert run_cli(base, capsys)["crr"] == 0.0
    assert run_cli(base + ["--ignore-case"], capsys)["crr"] == 1.0


def test_cli_line_count_mismatch_names_files(tmp_path):
    hyp = write(tmp_path / "hyp.txt", "a b\nc d\n")
    src = write(tmp_path / "src.txt", "a\nb\nc\n")
    parser = argparse.ArgumentParser()
    register_cli(CommandTree(parser))
    args = parser.parse_args(["score", "redundancy", "--hyp", str(hyp), "--src", str(src)])
    with pytest.raises(InputError, match=r"hyp\.txt.*2 lines.*src\.txt: 3 lines"):
        args.handler(args)


@pytest.mark.parametrize("extra", [
    ["--threshold", "0.5"],
    ["--embeddings", str(VECTORS)],
    ["--stopword-count", "3"],
    ["--embedding-stopword-count", "3"],
    ["--embeddings", str(VECTORS), "--threshold", "1.5"],
])
def test_cli_option_errors(tmp_path, extra, capsys):
    hyp = write(tmp_path / "hyp", "a\n")
    parser = argparse.ArgumentParser()
    register_cli(CommandTree(parser))
    args = parser.parse_args(["score", "redundancy", "--hyp", str(hyp), *extra])
    with pytest.raises(SystemExit):
        args.handler(args)


def test_cli_agreement(capsys):
    report = run_cli(["score", "redundancy-agreement", "--annotations",
                      str(DATA / "annotations.tsv"), "--hyp", f"sys_a={DATA / 'sys_a.hyp'}",
                      "--hyp", f"sys_b={DATA / 'sys_b.hyp'}"], capsys)
    assert report["pairs"]["discontinuous"]["f1"] == pytest.approx(8 / 13)
    assert report["systems"]["sys_b"]["automatic"]["drr"] == pytest.approx(5 / 15)
    # With the embeddings, "had" in sys_a 2 becomes a discontinuous synonym of "ate":
    # pairs auto 8, human 6, matched 5 -> F1 = 10/14.
    report = run_cli(["score", "redundancy-agreement", "--annotations",
                      str(DATA / "annotations.tsv"), "--hyp", f"sys_a={DATA / 'sys_a.hyp'}",
                      "--hyp", f"sys_b={DATA / 'sys_b.hyp'}", "--embeddings", str(VECTORS),
                      "--threshold", "0.9"], capsys)
    assert report["pairs"]["discontinuous"]["f1"] == pytest.approx(10 / 14)


def test_the_registered_metrics_have_the_papers_settings(tmp_path):
    """Synonyms from embeddings, a stopword file or corpus, the embedding dictionary's frequent
    tokens: the registered crr/drr take every setting of ``score redundancy`` and give what it
    gives (the worked example of test_cli_embeddings_stopwords_and_per_sentence, in percent)."""
    from phenomt.core.metrics import base

    hyps = ["I ate pizza had tonight", "the cat saw the cat", "ok"]
    stop = write(tmp_path / "stop", "the\n")
    settings = {"tokenize": "bpe", "embeddings": str(VECTORS), "threshold": 0.9,
                "stopwords": str(stop)}
    drr = base.get("drr", **settings)
    # no source or reference quota to exempt anything: ("x" lines, one token each)
    assert drr.corpus_score(hyps, ["x"] * 3, ["x"] * 3).value == pytest.approx(25.0)
    assert "synonyms:cos>0.9:vectors.txt" in drr.signature()
    assert "stopwords:file:stop" in drr.signature()
    # identical tokens only: "had" no longer repeats "ate"
    assert base.get("drr", tokenize="bpe", stopwords=str(stop)).corpus_score(
        hyps, ["x"] * 3, ["x"] * 3).value == pytest.approx(12.5)
    # a corpus's top 1 (cat) and the embedding dictionary's top 2 (I, ate) as stopwords
    corpus = write(tmp_path / "train", "cat cat dog\ncat\n")
    wide = base.get("drr", tokenize="bpe", embeddings=str(VECTORS), threshold=0.9,
                    stopword_corpus=str(corpus), stopword_count=1, embedding_stopword_count=2)
    assert wide.settings.stopword_set() == {"cat", "I", "ate"}
    assert wide.corpus_score(["cat I saw I cat ate x ate"], ["x"], ["x"]).value == 0.0


@pytest.mark.parametrize(("settings", "message"), [
    ({"threshold": 0.5}, "--threshold needs --embeddings"),
    ({"embeddings": str(VECTORS)}, "--embeddings needs --threshold"),
    ({"embeddings": str(VECTORS), "threshold": 1.5}, "cosine similarity"),
    ({"stopword_corpus": "train.txt"}, "--stopword-corpus needs --stopword-count"),
    ({"stopwords": "a", "stopword_corpus": "b", "stopword_count": 1}, "exclude each other"),
    ({"embedding_stopword_count": 2}, "needs --embeddings"),
    ({"stopword_count": -1}, "must not be negative"),
    ({"tokenize": "chars"}, "unknown tokenization"),
])
def test_the_registered_metrics_refuse_inconsistent_settings(settings, message):
    from phenomt.core.metrics import base

    with pytest.raises(ValueError, match=message):
        base.get("crr", **settings)


def test_score_redundancy_and_the_systems_tables_run_the_registered_metric(tmp_path, capsys):
    """One implementation: the NAT rules' command and the given systems' tables score through
    the registered metric's settings (its signature is in their records)."""
    from phenomt.systems import scores

    hyp = write(tmp_path / "hyp", "a y a z a\n")
    ref = write(tmp_path / "ref", "a x a\n")
    src = write(tmp_path / "src", "b\n")
    report = run_cli(["score", "redundancy", "--hyp", str(hyp), "--src", str(src),
                      "--ref", str(ref)], capsys)
    assert report["settings"]["signature"] == (
        "tok:bpe|langs:de-en|stopwords:none|synonyms:identical")
    setup = scores.redundancy_setup([["a", "x", "a"]], "en", "de", stopword_count=0)
    assert setup.metric.name == "crr" and setup.settings["signature"] == (
        "tok:moses|langs:de-en|stopwords:0|synonyms:identical")
    # the same counts from both: "a" exempt once by the reference's quota, one Dr left
    assert report["discontinuous"] == setup.results([["a", "y", "a", "z", "a"]], [["b"]],
                                                    [["a", "x", "a"]])[0].discontinuous == 1
