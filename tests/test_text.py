from pathlib import Path

import pytest

from phenomt.core.bpe import apply_bpe, learn_joint_bpe, remove_bpe
from phenomt.core.io import InputError
from phenomt.core.text import apply_casing, detokenize, learn_truecaser, postprocess, tokenize


def test_moses_tokenization_german():
    assert tokenize("Es kostet 3,5 Mio. Euro – oder?", "de") == "Es kostet 3,5 Mio. Euro - oder ?"


def test_tokenization_splits_dashes_and_keeps_apostrophes_unescaped():
    assert tokenize("a well-known isn't", "en") == "a well @-@ known isn 't"


def test_chinese_segmentation_with_jieba():
    tokens = tokenize("中国经济增长。", "zh").split()
    assert "".join(tokens) == "中国经济增长。"
    assert tokens[-1] == "。"
    assert len(tokens) >= 3


def test_detokenize_inverts_tokenize():
    text = 'He said: "It isn\'t a well-known fact (yet)."'
    assert detokenize(tokenize(text, "en"), "en") == text
    assert detokenize("中国 经济", "zh") == "中国经济"


def test_lowercase_and_truecase(tmp_path):
    assert list(apply_casing(["Ab C"], "lower")) == ["ab c"]
    model = tmp_path / "tc.model"
    # "house" is seen lowercase mid-sentence more often than capitalised.
    learn_truecaser(["The house is red .", "a house , the house", "My House"], model)
    assert list(apply_casing(["House is big"], "truecase", model)) == ["house is big"]
    with pytest.raises(InputError, match="truecasing model not found"):
        list(apply_casing(["x"], "truecase", tmp_path / "missing"))
    with pytest.raises(ValueError, match="unknown casing"):
        list(apply_casing(["x"], "upper"))


def test_truecaser_model_appears_whole_or_not_at_all(tmp_path, monkeypatch):
    from sacremoses import MosesTruecaser

    model = tmp_path / "tc.model"
    model.write_text("old\n", encoding="utf-8")

    def killed(self, filename):
        Path(filename).write_text("half", encoding="utf-8")
        raise KeyboardInterrupt

    monkeypatch.setattr(MosesTruecaser, "save_model", killed)
    with pytest.raises(KeyboardInterrupt):
        learn_truecaser(["a house"], model)
    assert model.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tc.model"]


def test_postprocess_detruecases_and_detokenizes():
    assert list(postprocess(["the cat , the dog ."], "en", "truecase")) == ["The cat, the dog."]


def test_bpe_learn_apply_and_remove(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("lower lowest newer newest\n" * 5 + "low new\n" * 5)
    codes = tmp_path / "codes"
    learn_joint_bpe([train], codes, merges=10, min_frequency=2)
    merges = codes.read_text().splitlines()
    assert merges[0].startswith("#version")
    assert len(merges) == 11
    segmented = list(apply_bpe(["lowest newest unseenword"], codes))[0]
    assert "@@ " in segmented
    assert remove_bpe(segmented) == "lowest newest unseenword"
    assert remove_bpe("a b@@ c@@ d e") == "a bcd e"


def test_bpe_missing_codes(tmp_path):
    with pytest.raises(InputError, match="BPE codes file not found"):
        list(apply_bpe(["x"], tmp_path / "none"))
