import json

import pytest

from phenomt.core.io import InputError
from phenomt.core.metrics.bleu import corpus_bleu, default_tokenizer, score_files
from phenomt.core.stats import corpus_stats
from phenomt.core.tables import bleu_table, model_card, stats_table, write_table


def test_bleu_perfect_and_signature():
    result = corpus_bleu(["The cat sat on the mat."], ["The cat sat on the mat."])
    assert result["bleu"] == 100.0
    assert "tok:13a" in result["signature"] and "nrefs:1" in result["signature"]


def test_bleu_hand_computed():
    # hyp "a b c d" vs ref "a b c e": precisions 3/4, 2/3, 1/2 and 0/1 for 4-grams, which
    # sacreBLEU's default 'exp' smoothing turns into 1/(2*1) = 1/2. BP = 1.
    # BLEU = (0.75 * 2/3 * 0.5 * 0.5) ** (1/4) = 0.125 ** 0.25 = 0.5946
    result = corpus_bleu(["a b c d"], ["a b c e"], tokenize="none")
    assert result["precisions"] == [75.0, pytest.approx(66.67), 50.0, 50.0]
    assert result["bleu"] == pytest.approx(59.46, abs=0.01)
    # hyp == ref[:4] of a 5-word ref: all precisions 100, BP = exp(1 - 5/4)
    result = corpus_bleu(["a b c d"], ["a b c d e"], tokenize="none")
    assert result["bp"] == pytest.approx(0.7788, abs=1e-4)
    assert result["bleu"] == pytest.approx(77.88, abs=0.01)


def test_default_tokenizers():
    assert default_tokenizer("en") == "13a"
    assert default_tokenizer("zh") == "zh"


def test_score_files_line_mismatch(tmp_path):
    (tmp_path / "h").write_text("a\nb\n")
    (tmp_path / "r").write_text("a\n")
    with pytest.raises(InputError, match="differ in length"):
        score_files(tmp_path / "h", tmp_path / "r", "13a", False)


def test_corpus_stats(tmp_path):
    (tmp_path / "x.de").write_text("ein Haus .\nzwei\n")
    (tmp_path / "x.en").write_text("a house .\ntwo\n")
    assert corpus_stats([tmp_path / "x.de", tmp_path / "x.en"], ["de", "en"]) == {
        "sentences": 2, "tokens_de": 4, "tokens_en": 4}


def _dump(path, obj):
    path.write_text(json.dumps(obj))
    return path


def test_tables(tmp_path):
    stats = _dump(tmp_path / "s.json", {"label": "IWSLT14 train", "split": "train",
                                        "langs": ["de", "en"], "sentences": 2,
                                        "tokens_de": 4, "tokens_en": 5,
                                        "paper": {"sentences": 160239, "source": "a paper"}})
    frame, notes = stats_table([stats])
    assert frame.iloc[0]["paper sentences"] == 160239
    assert any("a paper" in n for n in notes)
    write_table(frame, tmp_path / "t.md", tmp_path / "t.csv", "Stats", notes)
    md = (tmp_path / "t.md").read_text()
    assert "| IWSLT14 train" in md and "160239" in md and "—" in md
    assert (tmp_path / "t.csv").read_text().splitlines()[0].startswith("corpus,pair,split")

    score = _dump(tmp_path / "b.json", {"model": "m", "direction": "de-en", "testset": "nt13",
                                        "sentences": 3, "bleu": 12.345, "signature": "sig"})
    spec = {"src": "de", "tgt": "en", "train": ["a"], "valid": "v", "seed": 1,
            "bpe": {"merges": 100}, "architecture": {"arch": "transformer",
                                                     "encoder_layers": 2},
            "training": {"max_update": 50}, "decode": {"beam": 5}}
    card = _dump(tmp_path / "c.json", model_card("m", spec, {"output_pairs": 10,
                                                              "duplicates": 1, "leaks": 2}))
    frame, notes = bleu_table([score], [card])
    assert frame.iloc[0]["BLEU"] == "12.35"
    assert "10 sentence pairs" in notes[0] and "50 updates" in notes[0]


def test_bad_json_names_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  oops\n}")
    with pytest.raises(InputError, match=r"bad\.json:2"):
        stats_table([bad])
