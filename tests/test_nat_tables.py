"""NAT tables, speed arithmetic and checkpoint selection (phenomt.nat.tables), on hand-made
score files; the last test runs fairseq on a tiny model."""

import json
from pathlib import Path

import pytest

from phenomt.cli import main
from phenomt.core.io import InputError
from phenomt.core.papers import lookup
from phenomt.nat.tables import (
    agreement_table,
    checkpoint_candidates,
    decode_speed,
    parse_score_pair,
    results_table,
    speed_table,
    teacher_notes,
    validation_bleu,
)
from tests.conftest import require_fairseq

TEACHER = "transformer.de-en"


def write_json(path: Path, record: dict) -> str:
    path.write_text(json.dumps(record), encoding="utf-8")
    return str(path)


def score_files(tmp_path: Path, system: str, model: str, data: str, bleu: float,
                crr: float | None, drr: float | None, sentences: int = 100) -> tuple[str, str]:
    """A BLEU file as `phenomt score bleu --meta` writes it and a redundancy file."""
    meta = {"teacher": TEACHER, "system": system, "model": model, "data": data,
            "testset": "newstest2013.de-en", "direction": "de-en"}
    bleu_file = write_json(tmp_path / f"{system}.bleu.json",
                           {"metric": "bleu", "score": bleu, "signature": "nrefs:1|tok:13a",
                            "sentences": sentences, "ci": None, "meta": meta})
    redundancy_file = write_json(tmp_path / f"{system}.red.json", {
        "crr": crr, "drr": drr, "sentences": sentences,
        "settings": {"level": "bpe", "threshold": 0.8, "embeddings": "model.pt",
                     "stopwords": 20}})
    return bleu_file, redundancy_file


def test_results_tables_in_the_papers_layout(tmp_path):
    # given out of order: DAT raw, AR, CMLM distilled, CMLM raw
    pairs = [score_files(tmp_path, "dat.raw", "dat", "raw", 7.5, 0.0125, 0.3),
             score_files(tmp_path, "ar", "ar", "raw", 20.04, 0.001, 0.0205),
             score_files(tmp_path, "cmlm.distilled", "cmlm", "distilled", 9.0, 0.1, 0.01),
             score_files(tmp_path, "cmlm.raw", "cmlm", "raw", 3.0, 0.516, 0.019)]
    selections = [write_json(tmp_path / "sel.json", {
        "teacher": TEACHER, "system": "cmlm.raw", "averaged": ["a.pt", "b.pt"],
        "candidates": [{}, {}, {}]})]
    # Table 10: CRR and DRR, raw and distilled, the paper's De-En numbers beside ours
    frame = results_table(pairs, selections, "10")
    assert list(zip(frame["system"], frame["data"], strict=True)) == [
        ("AR teacher", "raw"), ("CMLM", "raw"), ("CMLM", "distilled"), ("DAT", "raw")]
    cmlm = frame.iloc[1]
    assert (cmlm["CRR (%)"], cmlm["DRR (%)"]) == ("51.60", "1.90")
    assert cmlm["checkpoints averaged"] == "2 of 3"
    from phenomt.core import papers
    assert cmlm["paper CRR (%)"] == papers.entry("wang_nat", "Table 10", "de-en/raw/cmlm",
                                                  "crr").printed
    assert frame.iloc[0]["paper CRR (%)"] is None  # the paper has no AR row
    assert "BLEU" not in frame.columns and "Redu. (%)" not in frame.columns
    assert frame.iloc[3]["CRR (%)"] == "1.25" and frame.iloc[0]["DRR (%)"] == "2.05"
    assert frame.iloc[0]["checkpoints averaged"] is None  # the teacher is not averaged here
    assert set(frame["BLEU signature"]) == {"nrefs:1|tok:13a"}
    # Table 5: BLEU and Redu. = CRR + DRR (51.6 + 1.9 = 53.5 for this CMLM row)
    table5 = results_table(pairs, selections, "5")
    assert (table5.iloc[1]["BLEU"], table5.iloc[1]["Redu. (%)"]) == ("3.00", "53.50")
    assert table5.iloc[2]["paper BLEU"] == papers.entry(
        "wang_nat", "Table 5", "de-en/distilled/cmlm", "bleu").printed
    assert "CRR (%)" not in table5.columns


def test_results_table_rejects_files_of_different_outputs(tmp_path):
    bleu, _ = score_files(tmp_path, "ar", "ar", "raw", 20.0, 0.1, 0.1, sentences=100)
    _, other = score_files(tmp_path, "dat.raw", "dat", "raw", 5.0, 0.1, 0.1, sentences=99)
    with pytest.raises(InputError, match="99 sentences"):
        results_table([(bleu, other)])


def test_a_corpus_without_ratios_shows_none(tmp_path):
    pair = [score_files(tmp_path, "dat.raw", "dat", "raw", 0.0, None, None)]
    assert results_table(pair, table="10").iloc[0]["CRR (%)"] is None
    assert results_table(pair, table="5").iloc[0]["Redu. (%)"] is None


def speed_record(model: str, data: str, measurements: list[tuple[int, int, float]]) -> dict:
    """(batch size, sentences, seconds) triples → a `phenomt nat speed` record."""
    system = "ar" if model == "ar" else f"{model}.{data}"
    return {"teacher": TEACHER, "system": system, "model": model, "data": data,
            "direction": "de-en", "device": "cpu", "measurements": [
                {"batch_size": b, "sentences": n, "tokens": 10 * n, "seconds": s,
                 "sentences_per_second": n / s, "latency_ms": 1000 * s / n}
                for b, n, s in measurements]}


def test_speed_up_is_relative_to_ar_at_the_same_batch_size():
    # AR: 10 sentences in 5 s at batch 1 (2 sent/s, 500 ms), in 1.25 s at batch 10 (8/s).
    # CMLM: 0.5 s at batch 1 (20/s: 10x), 0.25 s at batch 10 (40/s: 5x).
    records = [speed_record("cmlm", "distilled", [(1, 10, 0.5), (10, 10, 0.25)]),
               speed_record("ar", "raw", [(1, 10, 5.0), (10, 10, 1.25)])]
    frame = speed_table(records)
    assert list(zip(frame["batch size"], frame["system"], strict=True)) == [
        (1, "AR teacher"), (1, "CMLM"), (10, "AR teacher"), (10, "CMLM")]
    rows = frame.set_index(["batch size", "system"])
    assert rows.loc[(1, "AR teacher"), "sentences/s"] == "2.00"
    assert rows.loc[(1, "AR teacher"), "latency (ms/sentence)"] == "500.00"
    assert rows.loc[(1, "AR teacher"), "speed-up vs AR"] == "1.00x"
    assert rows.loc[(1, "CMLM"), "latency (ms/sentence)"] == "50.00"
    assert rows.loc[(1, "CMLM"), "speed-up vs AR"] == "10.00x"
    assert rows.loc[(10, "CMLM"), "speed-up vs AR"] == "5.00x"
    assert rows.loc[(10, "AR teacher"), "seconds"] == "1.250"


def test_a_beam_search_teacher_is_also_compared_greedily():
    # AR beam 5: 2 sent/s at batch 1; AR greedy: 5 sent/s; CMLM 20 sent/s: 10x and 4x.
    beam = {**speed_record("ar", "raw", [(1, 10, 5.0)]), "beam": 5}
    greedy = {**speed_record("ar_greedy", "raw", [(1, 10, 2.0)]), "system": "ar_greedy",
              "beam": 1}
    frame = speed_table([speed_record("cmlm", "distilled", [(1, 10, 0.5)]), greedy, beam])
    rows = frame.set_index("system")
    assert list(rows.index) == ["AR teacher, beam 5", "AR teacher, greedy", "CMLM"]
    assert rows.loc["CMLM", "speed-up vs AR"] == "10.00x"
    assert rows.loc["CMLM", "speed-up vs AR greedy"] == "4.00x"
    assert rows.loc["AR teacher, greedy", "speed-up vs AR"] == "2.50x"
    # without a greedy measurement the column is left out
    assert "speed-up vs AR greedy" not in speed_table([beam]).columns


def test_speed_up_without_an_ar_measurement_is_empty():
    frame = speed_table([speed_record("dat", "raw", [(1, 4, 1.0)])])
    assert frame.iloc[0]["speed-up vs AR"] is None


def test_decode_speed_takes_the_time_from_the_printed_rate():
    line = ("2026-01-01 00:00:00 | INFO | fairseq_cli.generate | Translated 10 sentences "
            "(150 tokens) in 0.0s (400.00 sentences/s, 6000.00 tokens/s)")
    speed = decode_speed(f"other\n{line}\n")
    assert speed["sentences"] == 10 and speed["tokens"] == 150
    assert speed["sentences_per_second"] == 400.0
    assert speed["seconds"] == pytest.approx(0.025) and speed["latency_ms"] == 2.5


def test_validation_bleu_merges_subwords_first():
    output = "\n".join(["S-1\tx", "H-1\t-0.5\tthe ca@@ t sat", "S-0\tx",
                        "H-0\t-0.1\ta do@@ g ran home"])
    assert validation_bleu(output, ["a dog ran home", "the cat sat"]) == 100.0
    assert validation_bleu(output, ["a do@@ g ran home", "the ca@@ t sat"]) == 100.0
    with pytest.raises(RuntimeError, match="2 of 3 hypotheses"):
        validation_bleu(output, ["a", "b", "c"])


def test_agreement_table_stacks_tables_4_and_9():
    agree = {"precision": 0.5, "recall": 1.0, "f1": 2 / 3, "matched": 1, "automatic": 2,
             "human": 1}
    empty = {"precision": None, "recall": None, "f1": None, "matched": 0, "automatic": 0,
             "human": 0}
    report = {"pairs": {"continuous": agree, "discontinuous": empty},
              "tokens": {"continuous": agree, "discontinuous": agree},
              "systems": {"sys_a": {"human": {"crr": 0.25, "drr": 0.0},
                                    "automatic": {"crr": 0.125, "drr": None}}}}
    frame = agreement_table(report)
    assert len(frame) == 4 + 2
    first = frame.iloc[0]
    assert (first["table"], first["unit"], first["type"]) == ("4", "pairs", "continuous")
    assert (first["precision (%)"], first["recall (%)"], first["F1 (%)"]) == \
        ("50.0", "100.0", "66.7")
    assert frame.iloc[1]["precision (%)"] is None
    ratios = frame[frame["table"] == "9"].set_index("type")
    assert ratios.loc["continuous", "human (%)"] == "25.00"
    assert ratios.loc["continuous", "automatic (%)"] == "12.50"
    assert ratios.loc["discontinuous", "automatic (%)"] is None


def _agree(matched: int, automatic: int, human: int) -> dict:
    return {"precision": matched / automatic if automatic else None,
            "recall": matched / human if human else None,
            "f1": 2 * matched / (automatic + human) if automatic + human else None,
            "matched": matched, "automatic": automatic, "human": human}


def _system(counts: tuple[int, int, int], crr: float, drr: float) -> dict:
    kinds = {"continuous": _agree(*counts), "discontinuous": _agree(0, 1, 1)}
    return {"human": {"crr": crr, "drr": drr}, "automatic": {"crr": crr / 2, "drr": drr},
            "pairs": kinds, "tokens": kinds}


def test_agreement_table_has_the_papers_numbers_by_training_data():
    # Three systems on raw data (one not named <model>.<data>) and one on distilled data.
    report = {"pairs": {}, "tokens": {},  # pooled over all systems: not what the paper shows
              "systems": {"cmlm.raw": _system((1, 2, 2), 0.5, 0.02),
                          "glat.raw": _system((3, 4, 4), 0.1, 0.01),
                          "dat.distilled": _system((2, 2, 4), 0.0, 0.05),
                          "mine": _system((1, 1, 1), 0.2, 0.2)}}
    frame = agreement_table(report)
    table4 = frame[(frame["table"] == "4") & (frame["unit"] == "pairs")
                   & (frame["type"] == "continuous")].set_index("data", drop=False)
    assert list(table4["data"].fillna("?")) == ["raw", "distilled", "?"]
    # raw pools CMLM and GLAT: 4 matched of 6 automatic and 6 human
    raw = table4.loc["raw"]
    assert (raw["matched"], raw["automatic"], raw["human"]) == ("4", "6", "6")
    assert raw["precision (%)"] == raw["recall (%)"] == raw["F1 (%)"] == "66.7"
    for data in ("raw", "distilled"):
        for ours, column in (("precision (%)", "p"), ("recall (%)", "r"), ("F1 (%)", "f1")):
            paper = lookup("wang_nat", "Table 4", f"en-zh/{data}", f"continuous/{column}")
            assert float(table4.loc[data, f"paper {ours}"]) == paper
    assert table4["paper F1 (%)"].iloc[2] is None  # no data condition in the name
    # The paper does not say whether it counts pairs or tokens: the same number by both.
    tokens = frame[(frame["table"] == "4") & (frame["unit"] == "tokens")]
    assert tokens["paper F1 (%)"].tolist()[:4] == \
        frame[(frame["table"] == "4") & (frame["unit"] == "pairs")]["paper F1 (%)"].tolist()[:4]
    # Table 9: per model and data, in the paper's order (raw before distilled)
    table9 = frame[frame["table"] == "9"]
    assert table9[["system", "data"]].drop_duplicates().fillna("?").values.tolist() == [
        ["CMLM", "raw"], ["GLAT", "raw"], ["DAT", "distilled"], ["mine", "?"]]
    cmlm = table9[(table9["system"] == "CMLM") & (table9["type"] == "continuous")].iloc[0]
    assert cmlm["human (%)"] == "50.00" and cmlm["automatic (%)"] == "25.00"
    assert float(cmlm["paper human (%)"]) == lookup("wang_nat", "Table 9", "en-zh/raw/cmlm",
                                                    "crr/human")
    dat = table9[(table9["system"] == "DAT") & (table9["type"] == "discontinuous")].iloc[0]
    assert float(dat["paper automatic (%)"]) == lookup("wang_nat", "Table 9",
                                                       "en-zh/distilled/dat", "drr/automatic")
    assert table9[table9["system"] == "mine"]["paper human (%)"].isna().all()


def test_agreement_table_of_a_report_without_per_system_counts_pools_everything():
    agree = _agree(1, 2, 1)
    report = {"pairs": {"continuous": agree}, "tokens": {"continuous": agree},
              "systems": {"cmlm.raw": {"human": {"crr": 0.1, "drr": 0.0},
                                       "automatic": {"crr": 0.1, "drr": 0.0}}}}
    frame = agreement_table(report)
    table4 = frame[frame["table"] == "4"]
    assert len(table4) == 2 and table4["data"].isna().all()
    assert table4["paper precision (%)"].isna().all()
    # Table 9 still knows the system's model and data
    assert frame[frame["table"] == "9"]["paper human (%)"].notna().all()


def test_agreement_command_notes_the_paper_source(tmp_path):
    report = write_json(tmp_path / "agreement.json",
                        {"pairs": {}, "tokens": {},
                         "systems": {"glat_oaxe.distilled": _system((1, 1, 1), 0.1, 0.1)}})
    md = tmp_path / "agreement.md"
    assert main(["table", "nat-agreement", "--report", report, "--md", str(md),
                 "--csv", str(tmp_path / "agreement.csv")]) == 0
    text = md.read_text(encoding="utf-8")
    assert "paper F1 (%)" in text and "Table 4; not directly comparable" in text
    assert "WMT20 En→Zh" in text and "pairs or tokens" in text


def test_checkpoint_candidates_include_epoch_checkpoints(tmp_path):
    # The paper-scale +OaXE fine-tuning keeps checkpoint<epoch>.pt, one per epoch.
    torch = pytest.importorskip("torch")

    def save(name: str, updates: int) -> None:
        torch.save({"optimizer_history": [{"num_updates": updates}]}, tmp_path / name)

    save("checkpoint1.pt", 700)
    save("checkpoint2.pt", 1400)
    save("checkpoint10.pt", 7000)
    save("checkpoint_3_2000.pt", 2000)
    save("checkpoint_last.pt", 7000)
    save("checkpoint_best.pt", 1400)
    (tmp_path / "checkpoint_x.pt").write_bytes(b"")  # not a checkpoint name of fairseq's
    found = [(p.name, u) for p, u in checkpoint_candidates(tmp_path)]
    assert found == [("checkpoint1.pt", 700), ("checkpoint2.pt", 1400),
                     ("checkpoint_3_2000.pt", 2000), ("checkpoint10.pt", 7000)]


def _selection_with_scores(tmp_path, monkeypatch, scores: dict[str, float], top: int):
    """select_and_average over real checkpoint files, with validation BLEU per checkpoint
    (and for the average, ``"model.pt"``) given by ``scores`` instead of a decode."""
    torch = pytest.importorskip("torch")
    import phenomt.nat.tables as tables

    updates = {"checkpoint_2_250.pt": 250, "checkpoint_4_500.pt": 500,
               "checkpoint_6_750.pt": 750}
    for name, count in updates.items():
        torch.save({"optimizer_history": [{"num_updates": count}],
                    "model": {"w": torch.full((2,), float(count))}}, tmp_path / name)
    monkeypatch.setattr(tables, "generate_in_process",
                        lambda data_bin, options: tables.GenerateRun(options["path"], ""))
    monkeypatch.setattr(tables, "validation_bleu",
                        lambda output, references: scores[Path(output).name])
    reference = tmp_path / "valid.tgt"
    reference.write_text("a b\n", encoding="utf-8")
    output = tmp_path / "model.pt"
    record = tables.select_and_average(tmp_path, "bin", {}, reference, top, output)
    return record, torch.load(output, map_location="cpu", weights_only=False)["model"]["w"]


def test_an_average_that_validates_lower_is_replaced_by_the_best_checkpoint(
        tmp_path, monkeypatch):
    # 750 updates validate best (14.6); averaged with 500 (9.3) the weights give 625 and a
    # validation BLEU of 5.5 < 14.6: the 750-update checkpoint is published instead.
    scores = {"checkpoint_2_250.pt": 2.3, "checkpoint_4_500.pt": 9.3,
              "checkpoint_6_750.pt": 14.6, "model.pt": 5.5}
    record, weights = _selection_with_scores(tmp_path, monkeypatch, scores, top=2)
    assert record["averaged"] == ["checkpoint_6_750.pt", "checkpoint_4_500.pt"]
    assert record["average_bleu"] == 5.5
    assert record["published"] == "checkpoint_6_750.pt"
    assert weights.tolist() == [750.0, 750.0]
    from phenomt.nat.tables import selection_label
    assert selection_label(record) == ("best 1 of 3 (the average of 2 validated lower: "
                                       "5.50 BLEU)")


def test_an_average_at_least_as_good_as_the_best_checkpoint_is_kept(tmp_path, monkeypatch):
    scores = {"checkpoint_2_250.pt": 2.3, "checkpoint_4_500.pt": 9.3,
              "checkpoint_6_750.pt": 14.6, "model.pt": 14.6}
    record, weights = _selection_with_scores(tmp_path, monkeypatch, scores, top=2)
    assert record["published"] == "average"
    assert weights.tolist() == [625.0, 625.0]  # (750 + 500) / 2
    from phenomt.nat.tables import selection_label
    assert selection_label(record) == "2 of 3"


def test_score_pair_argument():
    assert parse_score_pair("a.json=b.json") == ("a.json", "b.json")
    with pytest.raises(Exception, match="BLEU_JSON=REDUNDANCY_JSON"):
        parse_score_pair("a.json")


def test_teacher_notes_state_the_scale(tmp_path):
    card = write_json(tmp_path / "card.json", {
        "model": TEACHER, "direction": "de-en", "train_pairs": 58227,
        "train_corpora": ["a", "b"], "architecture": "transformer (tiny)", "max_update": 800,
        "beam": 5})
    note = teacher_notes([card])[0]
    assert "58227 training pairs (a, b)" in note and "800 updates" in note


def test_table_commands_write_markdown_and_csv(tmp_path):
    pairs = [score_files(tmp_path, "ar", "ar", "raw", 20.0, 0.01, 0.02),
             score_files(tmp_path, "cmlm.raw", "cmlm", "raw", 3.0, 0.5, 0.02)]
    md, csv = tmp_path / "t10.md", tmp_path / "t10.csv"
    assert main(["table", "nat-results", "--table", "10",
                 "--scores", *(f"{b}={r}" for b, r in pairs), "--note", "Scale: tiny.",
                 "--md", str(md), "--csv", str(csv)]) == 0
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# Table 10") and "raw and distilled" in text
    assert "Scale: tiny." in text and "not directly comparable" in text
    assert "cosine similarity above 0.8" in text
    assert csv.read_text(encoding="utf-8").count("\n") == 3
    speeds = [write_json(tmp_path / f"{m}.speed.json", speed_record(m, d, [(1, 10, s)]))
              for m, d, s in (("ar", "raw", 5.0), ("dat", "distilled", 0.25))]
    md = tmp_path / "speed.md"
    assert main(["table", "nat-speed", "--speeds", *speeds, "--md", str(md),
                 "--csv", str(tmp_path / "speed.csv")]) == 0
    assert "20.00x" in md.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- with fairseq

@pytest.mark.fairseq
@pytest.mark.filterwarnings("ignore:Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
def test_checkpoints_are_ranked_averaged_and_timed(tmp_path):
    require_fairseq()
    import torch

    from phenomt.nat.recipes import generate_options
    from phenomt.nat.tables import checkpoint_candidates, measure_speed, select_and_average
    from tests.nat_helpers import build_data_bin, train

    data_bin = build_data_bin(tmp_path)
    save_dir = tmp_path / "cmlm"
    train("cmlm", data_bin, save_dir, max_update=4, save_interval_updates=1,
          keep_interval_updates=5)
    candidates = checkpoint_candidates(save_dir)
    updates = [u for _, u in candidates]
    assert updates == [1, 2, 3, 4]  # one per update count
    reference = tmp_path / "raw" / "valid.tgt"
    options = {**generate_options("cmlm"), "batch_size": 3}
    output = tmp_path / "model.pt"
    record = select_and_average(save_dir, data_bin, options, reference, 2, output)
    assert record["ranked"] and len(record["candidates"]) == len(candidates)
    bleus = [c["bleu"] for c in record["candidates"]]
    assert bleus == sorted(bleus, reverse=True)
    # As many kept as averaged: all of them, latest first, and none decoded.
    unranked = select_and_average(save_dir, data_bin, options, reference, 4,
                                  tmp_path / "all.pt")
    assert not unranked["ranked"]
    assert [c["updates"] for c in unranked["candidates"]] == [4, 3, 2, 1]
    assert [c["bleu"] for c in unranked["candidates"]] == [None] * 4
    assert len(unranked["averaged"]) == 4
    assert record["averaged"] == [c["checkpoint"] for c in record["candidates"][:2]]
    chosen = [torch.load(save_dir / name, map_location="cpu", weights_only=False)["model"]
              for name in record["averaged"]]
    published = torch.load(output, map_location="cpu", weights_only=False)["model"]
    key = "encoder.embed_tokens.weight"
    # the average was validated; it decodes unless it scored below the best checkpoint
    assert isinstance(record["average_bleu"], float)
    if record["published"] == "average":
        assert record["average_bleu"] >= record["candidates"][0]["bleu"]
        assert torch.allclose(published[key], (chosen[0][key] + chosen[1][key]) / 2)
    else:
        assert record["published"] == record["averaged"][0]
        assert torch.equal(published[key], chosen[0][key])
    speeds = measure_speed(data_bin, output, options, [1, 8], expected=8)
    assert [s["batch_size"] for s in speeds] == [1, 8]
    assert all(s["sentences"] == 8 and s["sentences_per_second"] > 0 for s in speeds)
