import pytest

from phenomt.nmt import fairseq_env, parse_hypotheses, train_command


def test_parse_hypotheses_orders_by_id_and_keeps_empty():
    lines = ["S-1\tb", "H-1\t-0.3\tsecond hyp", "D-1\t-0.3\tsecond hyp", "P-1\t-0.1 -0.2",
             "H-0\t-0.5\tfirst", "H-2\t-1.0\t", "garbage"]
    assert parse_hypotheses(lines, 3) == ["first", "second hyp", ""]


def test_parse_hypotheses_missing_id():
    with pytest.raises(RuntimeError, match="2 of 3 hypotheses; first missing id 1"):
        parse_hypotheses(["H-0\t0\ta", "H-2\t0\tc"], 3)


def test_train_command_resumes_and_pins_seed():
    cmd = train_command("bin", "ckpt", {"arch": "transformer", "max_update": 50}, 7,
                        use_gpu=False)
    assert cmd[1] == "bin"
    joined = " ".join(cmd)
    assert "--restore-file checkpoint_last.pt" in joined
    assert "--seed 7" in joined and "--cpu" in joined and "--save-dir ckpt" in joined
    assert "--required-batch-size-multiple 1" in joined  # else the longest batch is dropped
    assert "--cpu" not in train_command("bin", "ckpt", {}, 1, use_gpu=True)


def test_fairseq_env():
    env = fairseq_env()
    assert env["OMP_NUM_THREADS"] == "1"
    assert env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] == "1"
