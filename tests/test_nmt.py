import subprocess
import sys

import pytest

from phenomt.cli import main
from phenomt.core import nmt
from phenomt.core.io import InputError
from phenomt.core.nmt import (
    device_options,
    fairseq_env,
    gpu_available,
    is_text_layout,
    parse_hypotheses,
    train_command,
    write_text_layout,
)
from tests.conftest import require_fairseq


def test_parse_hypotheses_orders_by_id_and_keeps_empty():
    lines = ["S-1\tb", "H-1\t-0.3\tsecond hyp", "D-1\t-0.3\tsecond hyp", "P-1\t-0.1 -0.2",
             "H-0\t-0.5\tfirst", "H-2\t-1.0\t", "garbage"]
    assert parse_hypotheses(lines, 3) == ["first", "second hyp", ""]


def test_parse_hypotheses_missing_id():
    with pytest.raises(RuntimeError, match="2 of 3 hypotheses; first missing id 1"):
        parse_hypotheses(["H-0\t0\ta", "H-2\t0\tc"], 3)


def test_train_command_resumes_and_pins_seed():
    cmd = train_command("bin", "ckpt", {"arch": "transformer", "max_update": 50, "cpu": True}, 7)
    assert cmd[1] == "bin"
    joined = " ".join(cmd)
    assert "--restore-file checkpoint_last.pt" in joined
    assert "--seed 7" in joined and "--cpu" in joined and "--save-dir ckpt" in joined
    assert "--required-batch-size-multiple 1" in joined  # else the longest batch is dropped
    assert "--cpu" not in train_command("bin", "ckpt", {"cpu": False}, 1)


def test_device_options_pin_the_device_and_drop_half_precision_on_the_cpu(monkeypatch):
    monkeypatch.setattr(nmt, "gpu_available", lambda: False)
    assert device_options({"fp16": True, "lr": 1}) == {"cpu": True, "lr": 1}
    monkeypatch.setattr(nmt, "gpu_available", lambda: True)
    assert device_options({"fp16": True}) == {"cpu": False, "fp16": True}
    # a pinned device wins over what is visible
    assert device_options({"cpu": True, "bf16": True}) == {"cpu": True}
    monkeypatch.setattr(nmt, "gpu_available", lambda: False)
    assert device_options({"cpu": False, "fp16": True}) == {"cpu": False, "fp16": True}


def test_fairseq_env():
    env = fairseq_env()
    assert env["OMP_NUM_THREADS"] == "1"
    assert env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] == "1"


def test_parse_speed():
    from phenomt.core.nmt import parse_speed

    log = ("INFO | fairseq_cli.generate | Translated 1,000 sentences (25,000 tokens) in 4.0s "
           "(250.00 sentences/s, 6250.00 tokens/s)\n")
    speed = parse_speed(log)
    assert speed["sentences"] == 1000 and speed["tokens"] == 25000
    assert speed["sentences_per_second"] == 250.0 and speed["latency_ms"] == 4.0
    with pytest.raises(RuntimeError, match="no 'Translated"):
        parse_speed("nothing")


def test_average_checkpoints(tmp_path):
    torch = pytest.importorskip("torch")
    from phenomt.core.nmt import average_checkpoints

    for i, value in enumerate([1.0, 3.0]):
        torch.save({"model": {"w": torch.full((2,), value), "steps": torch.tensor(i + 5)},
                    "cfg": {"seed": 1}}, tmp_path / f"c{i}.pt")
    assert average_checkpoints([tmp_path / "c0.pt", tmp_path / "c1.pt"], tmp_path / "avg.pt") == 2
    avg = torch.load(tmp_path / "avg.pt", weights_only=False)
    assert avg["model"]["w"].tolist() == [2.0, 2.0]  # (1 + 3) / 2
    assert int(avg["model"]["steps"]) == 5  # integer buffers from the first checkpoint
    assert avg["cfg"] == {"seed": 1}


def test_binarize_writes_the_folder_whole_and_reuses_its_dictionaries(tmp_path):
    require_fairseq()
    from phenomt.core.nmt import preprocess

    for part in ("train", "valid", "test"):
        (tmp_path / f"{part}.src").write_text("a b c\nb c\n", encoding="utf-8")
        (tmp_path / f"{part}.tgt").write_text("x y\ny z\n", encoding="utf-8")
    model_bin = tmp_path / "bin"
    preprocess(str(model_bin), trainpref=str(tmp_path / "train"),
               validpref=str(tmp_path / "valid"), joined_dictionary=True)
    assert (model_bin / "dict.src.txt").read_text() == (model_bin / "dict.tgt.txt").read_text()
    test_bin = tmp_path / "bin-test"
    preprocess(str(test_bin), testpref=str(tmp_path / "test"), dict_dir=str(model_bin))
    assert (test_bin / "test.src-tgt.src.bin").stat().st_size > 0
    assert not list(tmp_path.glob(".*.partial"))
    with pytest.raises(RuntimeError):  # a failing run leaves neither folder nor partial
        preprocess(str(tmp_path / "broken"), testpref=str(tmp_path / "missing"),
                   dict_dir=str(model_bin))
    assert not (tmp_path / "broken").exists() and not list(tmp_path.glob(".*.partial"))


def test_gpu_available_needs_no_torch_without_gpu_devices(tmp_path):
    """Without a GPU device file the answer is no, and torch (seconds per job) stays unloaded."""
    (tmp_path / "null").touch()
    (tmp_path / "nvidiactl").touch()  # the control device alone shows no GPU
    code = ("import sys; from pathlib import Path; from phenomt.core.nmt import gpu_available; "
            f"print(gpu_available(Path({str(tmp_path)!r})), 'torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("device", ["nvidia0", "kfd", "dxg"])
def test_gpu_available_asks_torch_when_a_gpu_device_exists(tmp_path, monkeypatch, device):
    torch = pytest.importorskip("torch")
    (tmp_path / device).touch()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert gpu_available(tmp_path) is True
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_available(tmp_path) is False


def _text_pair(tmp_path, src_lines, tgt_lines, ctx_lines=None):
    (tmp_path / "dicts").mkdir()
    for side in ("src", "tgt"):
        (tmp_path / "dicts" / f"dict.{side}.txt").write_text(f"{side}word 3\n", encoding="utf-8")
    (tmp_path / "t.src").write_text("".join(f"{s}\n" for s in src_lines), encoding="utf-8")
    (tmp_path / "t.tgt").write_text("".join(f"{s}\n" for s in tgt_lines), encoding="utf-8")
    if ctx_lines is not None:
        (tmp_path / "c.ctx").write_text("".join(f"{s}\n" for s in ctx_lines), encoding="utf-8")
    return str(tmp_path / "t"), str(tmp_path / "dicts")


def test_text_layout_uses_fairseq_names_and_the_model_dictionaries(tmp_path):
    prefix, dicts = _text_pair(tmp_path, ["a b", "c"], ["x", "y z"], ctx_lines=["", "a b"])
    dest = tmp_path / "bin-test"
    assert write_text_layout(str(dest), prefix, dicts, str(tmp_path / "c")) == 2
    assert sorted(p.name for p in dest.iterdir()) == [
        "dict.ctx.txt", "dict.src.txt", "dict.tgt.txt",
        "test.ctx-None.ctx", "test.src-tgt.src", "test.src-tgt.tgt"]
    assert (dest / "test.src-tgt.tgt").read_text(encoding="utf-8") == "x\ny z\n"
    # the context side is encoded with the source dictionary
    assert (dest / "dict.ctx.txt").read_bytes() == (dest / "dict.src.txt").read_bytes()
    assert is_text_layout(dest)
    assert not is_text_layout(tmp_path / "dicts")


def test_text_layout_refuses_sides_of_different_lengths(tmp_path):
    prefix, dicts = _text_pair(tmp_path, ["a", "b", "c"], ["x", "y"])
    with pytest.raises(InputError, match=r"t\.src has 3, .*t\.tgt has 2"):
        write_text_layout(str(tmp_path / "out"), prefix, dicts)
    assert not (tmp_path / "out").exists()


def test_text_layout_is_for_a_test_split_only(tmp_path, capsys):
    prefix, dicts = _text_pair(tmp_path, ["a"], ["x"])
    out = str(tmp_path / "out")
    assert main(["nmt", "binarize", "--text", "--trainpref", prefix, "--testpref", prefix,
                 "--dict-dir", dicts, "--destdir", out]) == 2
    assert "only a test split" in capsys.readouterr().err
    assert main(["nmt", "binarize", "--text", "--testpref", prefix, "--destdir", out]) == 2
    assert "--dict-dir" in capsys.readouterr().err
    assert main(["nmt", "binarize", "--text", "--testpref", prefix, "--dict-dir", dicts,
                 "--destdir", out]) == 0
    assert is_text_layout(out)
