"""Tables 4-6 of the lexical-consistency paper for trained models, the released-layout
helpers they read, and the plan of the sentence- and document-level models."""

from __future__ import annotations

import pytest

from phenomt.core.io import InputError
from phenomt.core.layout import copy_documents, document_names, read_corpus
from phenomt.core.metrics.ltcr import DISTANCE_BINS
from phenomt.lexcons import results
from phenomt.lexcons.pos import CLASSES


def _counts(pairs: int, judged: int, consistent: int) -> dict:
    return {"pairs": pairs, "judged": judged, "unjudged": pairs - judged,
            "consistent": consistent, "ltcr": consistent / judged if judged else None}


def _record(noun: tuple[int, int, int], anno_noun: tuple[int, int, int]) -> dict:
    """An LTCR record whose only judged pairs are NOUN pairs at distance 0."""
    empty = {"all": _counts(0, 0, 0), "anno": _counts(0, 0, 0)}
    by_pos = {c: dict(empty) for c in CLASSES}
    by_pos["NOUN"] = {"all": _counts(*noun), "anno": _counts(*anno_noun)}
    by_distance = {b: dict(empty) for b in DISTANCE_BINS}
    by_distance["0"] = by_pos["NOUN"]
    total, anno = _counts(*noun), _counts(*anno_noun)
    return {"l_all": total["ltcr"], "l_anno": anno["ltcr"], "unjudged_all": total["unjudged"],
            "unjudged_anno": anno["unjudged"], "by_pos": by_pos, "by_distance": by_distance,
            "intervals": {"l_all": [0.25, 0.75], "l_anno": None}, "documents": 2,
            "sentences": 5, "pairs_all": noun[0]}


def test_table4_puts_ours_beside_the_paper_and_lists_the_paper_only_models():
    # 4 NOUN pairs, 4 judged, 2 consistent -> L-All 50%; annotated 2 of 2 -> L-Anno 100%
    records = {"sent-transformer": _record((4, 4, 2), (2, 2, 2))}
    frame = results.table4(records)
    noun = frame[(frame["system"] == "Sent-Transformer") & (frame["class"] == "NOUN")].iloc[0]
    assert noun["L-All (%)"] == 50.0 and noun["L-Anno (%)"] == 100.0
    assert noun["paper L-All (%)"] == pytest.approx(66.34)
    assert noun["paper L-Anno (%)"] == pytest.approx(69.10)
    verb = frame[(frame["system"] == "Sent-Transformer") & (frame["class"] == "VERB")].iloc[0]
    assert verb["L-All (%)"] is None or verb["L-All (%)"] != verb["L-All (%)"]  # no pairs
    cvae = frame[frame["system"] == "CVAE-Transformer"]
    assert len(cvae) == len(CLASSES) and cvae["L-All (%)"].isna().all()
    assert cvae[cvae["class"] == "NOUN"]["paper L-All (%)"].iloc[0] == pytest.approx(67.62)


def test_table5_rows_are_distance_bins():
    records = {"doc-transformer": _record((3, 2, 1), (1, 1, 1))}
    frame = results.table5(records)
    mine = frame[frame["system"] == "Doc-Transformer"]
    assert list(mine["distance"]) == ["0", "1", "2", "3", "4", "≥5"]
    assert mine.iloc[0]["L-All (%)"] == 50.0  # 1 consistent of 2 judged (1 unjudged)
    assert mine.iloc[5]["paper L-Anno (%)"] == pytest.approx(70.00)


def test_table6_bleu_and_intervals():
    records = {"sent-transformer": _record((4, 4, 3), (2, 2, 1))}
    frame = results.table6(records, {"sent-transformer": {"score": 12.5}})
    row = frame[frame["system"] == "Sent-Transformer"].iloc[0]
    assert row["BLEU"] == 12.5 and row["paper BLEU"] == pytest.approx(17.77)
    assert row["L-All (%)"] == 75.0 and row["L-All 95% CI"] == "[25.00, 75.00]"
    assert row["L-Anno 95% CI"] is None
    assert row["unjudged pairs (all / anno)"] == "0 / 0"


def test_sets_table_has_tcp_only_on_its_set():
    record = _record((4, 4, 2), (0, 0, 0))
    frame = results.sets_table({("doc2doc", "concat"): record, ("news", "concat"): record},
                               {"concat": {"tcp": 0.5}}, "doc2doc")
    assert list(frame["TCP (%)"].fillna(-1)) == [50.0, -1]
    assert list(frame["L-All (%)"]) == [50.0, 50.0]


def _folder(root, documents: int):
    for n in range(1, documents + 1):
        for layer in ("zh2en_raw", "zh2en_token", "res"):
            (root / layer).mkdir(parents=True, exist_ok=True)
            (root / layer / f"test-{n}.txt").write_text(f"句{n} ||| s{n}\n", encoding="utf-8")
    return root


def test_copy_documents_takes_the_first_documents_of_every_layer(tmp_path):
    root = _folder(tmp_path / "full", 12)
    assert copy_documents(root, tmp_path / "part", 10) == 10
    assert document_names(tmp_path / "part" / "res")[-1] == "test-10"
    zh, en, ids = read_corpus(tmp_path / "part")
    assert zh[-1] == "句10" and ids == [f"test-{n}" for n in range(1, 11)]
    with pytest.raises(InputError, match="has 12 documents, 13 were asked for"):
        copy_documents(root, tmp_path / "more", 13)
    assert not (tmp_path / "more").exists()  # nothing half-written


def test_copy_documents_with_a_step_keeps_every_nth_in_numeric_order(tmp_path):
    root = _folder(tmp_path / "full", 12)
    # numeric order test-1 ... test-12, every 5th: test-1, test-6, test-11, renumbered
    assert copy_documents(root, tmp_path / "step", None, 5) == 3
    assert document_names(tmp_path / "step" / "res") == ["test-1", "test-2", "test-3"]
    assert read_corpus(tmp_path / "step")[0] == ["句1", "句6", "句11"]
    assert copy_documents(root, tmp_path / "two", 2, 5) == 2
    assert read_corpus(tmp_path / "two")[0] == ["句1", "句6"]
    with pytest.raises(InputError, match="documents, so 3 at step 5; 4 were asked for"):
        copy_documents(root, tmp_path / "more", 4, 5)
