"""Learning curves read from fairseq-train logs (phenomt.core.curves)."""

import json

import pytest

from phenomt.cli import main
from phenomt.core.curves import parse_train_epochs, parse_validations

VALID = "2026-11-25 12:31:02 | INFO | valid | epoch {:03d} | valid on 'valid' subset | "
LOG = "\n".join([
    "2026-11-25 12:30:01 | INFO | train_inner | epoch 001:     50 / 132 loss=9.1",
    VALID.format(1) + "loss 8.5 | nll_loss 8.1 | bleu 2.12 | wps 406.4 | num_updates 132",
    VALID.format(2) + "loss 6.25 | bleu 8.05 | num_updates 264 | best_bleu 8.05",
    VALID.format(2) + "loss 6.0 | bleu 8.5 | num_updates 264",
    VALID.format(3) + "loss 5.5 | num_updates 396",
]) + "\n"


def test_one_record_per_epoch_the_last_launch_wins():
    records = parse_validations(LOG)
    assert [r["epoch"] for r in records] == [1, 2, 3]
    assert records[0] == {"epoch": 1, "num_updates": 132.0, "loss": 8.5, "bleu": 2.12}
    # epoch 2 was validated twice (a resumed launch): the later line counts
    assert records[1]["bleu"] == 8.5 and records[1]["loss"] == 6.0
    # no BLEU on the line (training without --eval-bleu): NaN
    assert records[2]["bleu"] != records[2]["bleu"]


def test_the_log_file_format_of_fairseq():
    # what `--log-file` holds (measured on a Multi30k run): the message without prefix, each
    # line once more per epoch because fairseq adds its file handler again
    line = ("epoch {:03d} | valid on 'valid' subset | loss {} | nll_loss 3.4 | ppl 10.68 | "
            "bleu {} | wps 1081.9 | wpb 2674.8 | bsz 169 | num_updates {}")
    text = "\n".join([line.format(1, 8.19, 2.12, 132)] + [line.format(2, 6.78, 8.05, 264)] * 2
                     + ["epoch 002 | loss 6.9 | nll_loss 6.1 | num_updates 264"])
    assert parse_validations(text) == [
        {"epoch": 1, "num_updates": 132.0, "loss": 8.19, "bleu": 2.12},
        {"epoch": 2, "num_updates": 264.0, "loss": 6.78, "bleu": 8.05}]


def test_training_summaries_per_epoch_console_and_log_file():
    # the console's line and the log file's (no prefix); progress lines (``epoch 001:``) and
    # validation lines are not summaries
    text = "\n".join([
        "2026-11-27 10:00:01 | INFO | train_inner | epoch 001:     50 / 132 loss=9.1, wps=5",
        "2026-11-27 10:00:09 | INFO | train | epoch 001 | loss 9.05 | wps 51234.5 | "
        "num_updates 33 | loss_scale 16 | train_wall 7 | gb_free 70.1 | wall 9",
        VALID.format(1) + "loss 8.5 | num_updates 33",
        "epoch 002 | loss 8.1 | wps 60000 | num_updates 66 | train_wall 6 | wall 16",
        "epoch 002 | loss 8.0 | wps 61000 | num_updates 66 | train_wall 6 | wall 16",
    ])
    first, second = parse_train_epochs(text)
    assert first == {"epoch": 1, "loss": 9.05, "wps": 51234.5, "num_updates": 33,
                     "loss_scale": 16, "train_wall": 7, "gb_free": 70.1, "wall": 9}
    assert second["epoch"] == 2 and second["loss"] == 8.0  # the later line of a repeat
    assert parse_train_epochs(LOG) == []


def test_command_writes_csv_and_figure_from_model_info(tmp_path, capsys):
    info = tmp_path / "model.json"
    info.write_text(json.dumps({"validation": parse_validations(LOG)[:2]}))
    csv, png = tmp_path / "curve.csv", tmp_path / "curve.png"
    assert main(["nmt", "learning-curve", "--model-info", str(info), "--csv", str(csv),
                 "--figure", str(png)]) == 0
    assert csv.read_text().splitlines() == ["epoch,num_updates,loss,bleu", "1,132,8.5,2.12",
                                            "2,264,6,8.5"]
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert "best BLEU 8.50 at epoch 2" in capsys.readouterr().out


def write_log(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(LOG)
    return log


def test_command_rejects_a_log_without_validation(tmp_path, capsys):
    log = tmp_path / "train.log"
    log.write_text("2026-11-25 | INFO | train_inner | epoch 001: loss=9\n")
    assert main(["nmt", "learning-curve", "--log", str(log), "--csv",
                 str(tmp_path / "c.csv")]) == 2
    assert f"{log}: no validation records" in capsys.readouterr().err
    assert not (tmp_path / "c.csv").exists()


def test_command_needs_a_log_or_model_info():
    with pytest.raises(SystemExit):
        main(["nmt", "learning-curve", "--csv", "c.csv"])


def test_csv_leaves_an_epoch_without_bleu_empty(tmp_path):
    csv = tmp_path / "curve.csv"
    assert main(["nmt", "learning-curve", "--log", str(write_log(tmp_path)), "--csv",
                 str(csv)]) == 0
    assert csv.read_text().splitlines()[-1] == "3,396,5.5,"


def test_training_table_sums_launches_and_reads_the_benchmark(tmp_path):
    from phenomt.core.tables import training_row

    model = tmp_path / "model.pt"
    model.write_bytes(b"")
    (tmp_path / "model.json").write_text(json.dumps({
        "updates": 400, "validation": parse_validations(LOG),
        "launches": [{"seconds": 3000.0, "updates_from": 0, "updates_to": 264},
                     {"seconds": 723.4, "updates_from": 264, "updates_to": 400}]}))
    bench = tmp_path / "bench.tsv"
    bench.write_text("s\th:m:s\tmax_rss\tcpu_time\n723.4\t0:12:03\t1307.04\t700.2\n")
    row = training_row("teacher", model, bench)
    # 3,000 + 723.4 s = 1:02:03; the best epoch is 2 (BLEU 8.5; epoch 3 has none)
    assert row == {"model": "teacher", "updates": "400", "epochs validated": "3",
                   "best validation BLEU": "8.50 (epoch 2)", "launches": "2",
                   "wall time": "1:02:03", "CPU time (last launch)": "0:11:40",
                   "peak memory (MB)": "1307"}
    # a model trained before launches were recorded: the benchmark's, and it says so
    (tmp_path / "model.json").write_text(json.dumps({"validation": []}))
    row = training_row("old", model, bench)
    assert row["wall time"] == "0:12:03 (last launch)" and row["updates"] is None


def test_record_launch_appends_and_skips_a_cut_line(tmp_path):
    from phenomt.core.nmt import record_launch

    path = tmp_path / "launches.jsonl"
    assert record_launch(path, 10.04, 0, 50) == [
        {"seconds": 10.0, "updates_from": 0, "updates_to": 50}]
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"seconds": 3')  # killed mid-write
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\n")
    assert [r["updates_to"] for r in record_launch(path, 5.0, 50, 80)] == [50, 80]
