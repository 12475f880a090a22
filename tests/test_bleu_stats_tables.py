import json
from pathlib import Path

import pytest
import yaml

from phenomt.core import papers
from phenomt.core.io import InputError
from phenomt.core.metrics.base import get, score_files
from phenomt.core.metrics.bleu import default_tokenizer
from phenomt.core.stats import THESIS, THESIS_CORPORA, corpus_stats, thesis_sizes
from phenomt.core.tables import bleu_table, model_card, stats_table, write_table


def test_bleu_perfect_and_signature():
    result = get("bleu").summary(["The cat sat on the mat."], ["The cat sat on the mat."])
    assert result["bleu"] == 100.0
    assert "tok:13a" in result["signature"] and "nrefs:1" in result["signature"]


def test_bleu_hand_computed():
    # hyp "a b c d" vs ref "a b c e": precisions 3/4, 2/3, 1/2 and 0/1 for 4-grams, which
    # sacreBLEU's default 'exp' smoothing turns into 1/(2*1) = 1/2. BP = 1.
    # BLEU = (0.75 * 2/3 * 0.5 * 0.5) ** (1/4) = 0.125 ** 0.25 = 0.5946
    result = get("bleu", tokenize="none").summary(["a b c d"], ["a b c e"])
    assert result["precisions"] == [75.0, pytest.approx(66.67), 50.0, 50.0]
    assert result["bleu"] == pytest.approx(59.46, abs=0.01)
    # hyp == ref[:4] of a 5-word ref: all precisions 100, BP = exp(1 - 5/4)
    result = get("bleu", tokenize="none").summary(["a b c d"], ["a b c d e"])
    assert result["bp"] == pytest.approx(0.7788, abs=1e-4)
    assert result["bleu"] == pytest.approx(77.88, abs=0.01)


def test_default_tokenizers():
    assert default_tokenizer("en") == "13a"
    assert default_tokenizer("zh") == "zh"


def test_score_files_line_mismatch(tmp_path):
    (tmp_path / "h").write_text("a\nb\n")
    (tmp_path / "r").write_text("a\n")
    with pytest.raises(InputError, match=r"h:2: has 2 lines but .*r has 1: line 2 has no"):
        score_files(get("bleu"), tmp_path / "h", tmp_path / "r")


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

    score = _dump(tmp_path / "b.json", {"metric": "bleu", "score": 12.345, "signature": "sig",
                                        "sentences": 3, "ci": None,
                                        "meta": {"model": "m", "direction": "de-en",
                                                 "testset": "nt13"}})
    spec = {"src": "de", "tgt": "en", "train": ["a"], "valid": "v", "seed": 1,
            "bpe": {"merges": 100}, "architecture": {"arch": "transformer",
                                                     "encoder_layers": 2},
            "training": {"max_update": 50}, "decode": {"beam": 5}}
    card = _dump(tmp_path / "c.json", model_card("m", spec, {"output_pairs": 10,
                                                              "duplicates": 1, "leaks": 2}))
    frame, notes = bleu_table([score], [card])
    assert frame.iloc[0]["BLEU"] == "12.35"
    assert "10 sentence pairs" in notes[0] and "50 updates" in notes[0]


def _stats(path, label, split, sentences, tokens_de, tokens_en, langs=("de", "en")):
    return _dump(path, {"label": label, "split": split, "langs": list(langs),
                        "sentences": sentences, f"tokens_{langs[0]}": tokens_de,
                        f"tokens_{langs[1]}": tokens_en, "paper": None})


def test_stats_table_shows_the_thesis_beside_ours(tmp_path):
    test = _stats(tmp_path / "iwslt14.test.json", "IWSLT14 test (fairseq recipe)", "test",
                  6750, 125000, 130000)
    tst2013 = _stats(tmp_path / "iwslt14.TED.tst2013.json", "IWSLT14 TED.tst2013", "test",
                     993, 19000, 20000)
    europarl = _stats(tmp_path / "europarl.v9.json", "Europarl v9", "train", 1800000, 4, 5)
    other = _stats(tmp_path / "newstest2020.zh-en.json", "WMT newstest2020 zh-en", "test",
                   2000, 60000, 70000, langs=("zh", "en"))
    frame, notes = stats_table([test, tst2013, europarl, other])
    rows = {r["corpus"]: r for r in frame.to_dict("records")}
    # Thesis Table 3.1: TED.dev2010 887 + TEDx.dev2012 1,165 + TED.tst2010 1,565 +
    # TED.tst2011 1,433 + TED.tst2012 1,700 = 6,750 sentences; tokens De 19,1k + 20,8k +
    # 30,3k + 26,3k + 29,2k = 125,700, En 20,1k + 21,6k + 32,0k + 26,9k + 30,7k = 131,300.
    fairseq = rows["IWSLT14 test (fairseq recipe)"]
    assert fairseq["paper sentences"] == 6750 == fairseq["sentences"]
    assert (fairseq["paper tokens (src)"], fairseq["paper tokens (tgt)"]) == (125700, 131300)
    # TED.tst2013: 993 sentences, 19,7k De and 20,9k En tokens.
    assert rows["IWSLT14 TED.tst2013"]["paper sentences"] == 993
    assert rows["IWSLT14 TED.tst2013"]["paper tokens (src)"] == 19700
    # Table 3.2: Europarl 1,8M sentences, 48,1M De and 50,5M En tokens.
    assert rows["Europarl v9"]["paper sentences"] == 1800000
    assert rows["Europarl v9"]["paper tokens (tgt)"] == 50500000
    # The thesis has no Chinese corpus: empty cells.
    assert rows["WMT newstest2020 zh-en"]["paper sentences"] is None
    assert rows["WMT newstest2020 zh-en"]["paper tokens (src)"] is None
    assert any("IWSLT14 test (fairseq recipe): the thesis cells are the sum of Table 3.1 "
               "ted.dev2010 + tedx.dev2012 + ted.tst2010 + ted.tst2011 + ted.tst2012" in n
               for n in notes)
    assert any("Table 3.2" in n for n in notes) and any("not directly comparable" in n
                                                         for n in notes)
    write_table(frame, tmp_path / "t.md", tmp_path / "t.csv", "Stats", notes)
    assert "| 6750 " in (tmp_path / "t.md").read_text()


def test_thesis_mapping_names_our_corpora_and_the_thesis_rows():
    config = Path(__file__).parent.parent / "config"
    ours = set()
    for name in ("config.yaml", "papers/iwslt14.yaml", "papers/wmt19.yaml"):
        ours |= set(yaml.safe_load((config / name).read_text(encoding="utf-8"))["corpora"])
    for corpus, (table, rows) in THESIS_CORPORA.items():
        assert corpus in ours, corpus
        for row in rows:
            assert papers.lookup(THESIS, table, row, "sentences") is not None, row
    assert thesis_sizes("iwslt14.train", ["de", "en"]) == {
        "sentences": 172000, "tokens_de": 3240000, "tokens_en": 3460000}
    assert thesis_sizes("books.de-en", ["de", "en"]) == {}


def test_bad_json_names_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  oops\n}")
    with pytest.raises(InputError, match=r"bad\.json:2"):
        stats_table([bad])
