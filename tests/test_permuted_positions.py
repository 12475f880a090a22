"""The PERPOSEMB fairseq plugin: permuted encoder positions, padding, training and decoding.

fairseq numbers positions from padding_idx + 1 (here pad = 1, so the first token is position
2); the p-th token (0-based) of a sentence must read the row of σ(p) of the unpermuted table.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_fairseq

require_fairseq()  # first: fairseq needs torch, so a missing torch fails under CI too
torch = pytest.importorskip("torch")

from fairseq.modules import PositionalEmbedding  # noqa: E402

from phenomt.core.nmt import fairseq_env  # noqa: E402
from phenomt.fairseq_ext.permuted_positions import (  # noqa: E402
    MODEL_NAME,
    PermutedPositionalEmbedding,
)
from phenomt.ldd.locality import format_permutation, permute_tokens, prepare  # noqa: E402

PAD = 1
SIGMA = (2, 0, 3, 1)
ROOT = Path(__file__).resolve().parents[1]
USER_DIR = ROOT / "src" / "phenomt" / "fairseq_ext"


def _embeddings(learned: bool, num: int = 16, dim: int = 8):
    torch.manual_seed(0)
    inner = PositionalEmbedding(num, dim, PAD, learned=learned)
    return inner, PermutedPositionalEmbedding(inner, SIGMA, PAD)


@pytest.mark.parametrize("learned", [True, False])
def test_position_p_reads_the_embedding_of_sigma_p(learned):
    inner, permuted = _embeddings(learned)
    tokens = torch.tensor([[5, 6, 7, 8, 9, 10]])  # 6 tokens: positions 4 and 5 lie beyond σ
    plain, out = inner(tokens), permuted(tokens)
    for p in range(6):
        source = SIGMA[p] if p < len(SIGMA) else p
        assert torch.equal(out[0, p], plain[0, source])
    assert permuted.permuted_positions(tokens).tolist() == [[4, 2, 5, 3, 6, 7]]


@pytest.mark.parametrize("learned", [True, False])
def test_left_and_right_padding(learned):
    inner, permuted = _embeddings(learned)
    sentence = torch.tensor([[5, 6, 7, 8]])
    left = torch.tensor([[PAD, PAD, 5, 6, 7, 8], [5, 6, 7, 8, 9, 10]])
    right = torch.tensor([[5, 6, 7, 8, PAD, PAD]])
    assert permuted.permuted_positions(left).tolist() == [[1, 1, 4, 2, 5, 3],
                                                           [4, 2, 5, 3, 6, 7]]
    out = permuted(left)
    # Padding keeps the (zero) padding embedding, exactly as without the permutation.
    assert torch.equal(out[0, :2], inner(left)[0, :2])
    assert not out[0, :2].any()
    # The padded sentence reads the same embeddings as the unpadded one.
    assert torch.equal(out[0, 2:], permuted(sentence)[0])
    out_right = permuted(right)
    assert torch.equal(out_right[0, :4], permuted(sentence)[0])
    assert not out_right[0, 4:].any()


def test_learned_gradients_skip_padding():
    inner, permuted = _embeddings(learned=True)
    permuted(torch.tensor([[PAD, 5, 6, 7]])).sum().backward()
    grad = inner.weight.grad
    assert not grad[PAD].any()
    rows = {2 + SIGMA[p] for p in range(3)}  # tokens 0..2 read rows of σ(0..2)
    assert {i for i in range(grad.size(0)) if grad[i].any()} == rows


def test_sinusoidal_table_grows_like_fairseq():
    sigma = tuple(reversed(range(10)))
    inner = PositionalEmbedding(2, 6, PAD, learned=False)  # a 4-row table to start
    permuted = PermutedPositionalEmbedding(inner, sigma, PAD)
    out = permuted(torch.arange(5, 17).unsqueeze(0))  # 12 tokens
    table = type(inner).get_embedding(14, 6, PAD)
    expected = [table[PAD + 1 + (sigma[p] if p < 10 else p)] for p in range(12)]
    assert torch.allclose(out[0], torch.stack(expected))


@pytest.mark.parametrize("learned", [True, False])
def test_perposemb_matches_permuted_tokens(learned):
    """Encoder input of PERPOSEMB at i equals that of PERMUTED (same σ) at σ(i)."""
    inner, permuted = _embeddings(learned)
    embed_tokens = torch.nn.Embedding(12, 8, padding_idx=PAD)
    sentence = [5, 6, 7, 8]
    reordered = torch.tensor([permute_tokens(sentence, SIGMA)])
    original = torch.tensor([sentence])
    perposemb = embed_tokens(original) + permuted(original)
    regular_on_permuted = embed_tokens(reordered) + inner(reordered)
    for i, target in enumerate(SIGMA):
        assert torch.allclose(perposemb[0, i], regular_on_permuted[0, target])


def test_invalid_permutations_and_uses_are_rejected():
    inner = PositionalEmbedding(4, 8, PAD, learned=True)
    with pytest.raises(ValueError):
        PermutedPositionalEmbedding(inner, (0, 0, 1), PAD)
    with pytest.raises(ValueError, match="exceeds"):
        PermutedPositionalEmbedding(inner, tuple(range(5)), PAD)
    with pytest.raises(TypeError):
        PermutedPositionalEmbedding(torch.nn.Linear(2, 2), (1, 0), PAD)
    permuted = PermutedPositionalEmbedding(inner, (1, 0), PAD)
    with pytest.raises(ValueError, match="encoder"):
        permuted(torch.tensor([[5, 6]]), incremental_state={})


# --- fairseq end to end -------------------------------------------------------------------

LENGTH = 6


def _script(name: str) -> str:
    local = Path(sys.executable).with_name(name)
    return str(local) if local.exists() else name


def _run(cmd: list[str], log: Path) -> str:
    result = subprocess.run(cmd, env=fairseq_env(), capture_output=True, text=True,
                            check=False, timeout=180)
    log.write_text(result.stdout + result.stderr)
    assert result.returncode == 0, f"{cmd[0]} failed, see {log}:\n{result.stderr[-3000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def locality_bin(tmp_path_factory) -> tuple[Path, dict]:
    """A tiny synthetic corpus, prepared for PERPOSEMB and binarized."""
    root = tmp_path_factory.mktemp("locality")
    rng = random.Random(0)
    words = [f"w{i}" for i in range(24)]
    src, tgt = [], []
    for k in range(90):
        n = LENGTH if k % 4 else rng.randint(3, 9)
        tokens = [rng.choice(words) for _ in range(n)]
        src.append(" ".join(tokens))
        tgt.append(" ".join(t.upper() for t in reversed(tokens)))
    (root / "corpus.de").write_text("\n".join(src) + "\n", encoding="utf-8")
    (root / "corpus.en").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    info = prepare(root / "corpus.de", root / "corpus.en", root / "data", "perposemb",
                   n_test=11, n_valid=8, seed=1)
    assert info["length"] == LENGTH
    data = root / "data"
    _run([_script("fairseq-preprocess"), "--source-lang", "de", "--target-lang", "en",
          "--trainpref", str(data / "train"), "--validpref", str(data / "valid"),
          "--testpref", str(data / "test"), "--destdir", str(root / "bin"), "--workers", "1"],
         root / "preprocess.log")
    return root / "bin", info


TRAIN_OPTIONS = ["--optimizer", "adam", "--lr", "0.001", "--max-tokens", "400",
                 "--max-update", "3", "--cpu", "--seed", "1", "--no-epoch-checkpoints",
                 "--log-format", "simple", "--log-interval", "1",
                 "--required-batch-size-multiple", "1"]
# An untrained model rarely stops by itself: --max-len-b bounds decoding. fairseq 0.12 drops a
# last batch whose size is not a multiple of
# --required-batch-size-multiple (8 by default): 1 keeps every test sentence.
GENERATE_OPTIONS = ["--gen-subset", "test", "--beam", "2", "--batch-size", "8", "--cpu",
                    "--max-len-b", "12",
                    "--required-batch-size-multiple", "1"]


def _generate(data_bin: Path, checkpoint: Path, log: Path, user_dir: bool) -> list[int]:
    cmd = [_script("fairseq-generate"), str(data_bin), "--path", str(checkpoint),
           *(["--user-dir", str(USER_DIR)] if user_dir else []), *GENERATE_OPTIONS]
    out = _run(cmd, log)
    return sorted(int(line.split("\t")[0][2:]) for line in out.splitlines()
                  if line.startswith("H-"))


@pytest.mark.fairseq
def test_fairseq_trains_and_generates_with_permuted_positions(locality_bin, tmp_path):
    data_bin, info = locality_bin
    sigma = format_permutation(info["permutation"])
    save = tmp_path / "ckpt"
    _run([_script("fairseq-train"), str(data_bin), "--user-dir", str(USER_DIR),
          "--arch", f"{MODEL_NAME}_tiny", "--position-permutation", sigma,
          "--encoder-learned-pos", "--save-dir", str(save), *TRAIN_OPTIONS],
         tmp_path / "train.log")
    log = (tmp_path / "train.log").read_text()
    assert "PermutedPositionalEmbedding" in log and f"permutation={sigma}" in log
    assert "num_updates 3" in log or "num_updates=3" in log
    checkpoint = save / "checkpoint_best.pt"
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    assert state["cfg"]["model"].position_permutation == sigma
    ids = _generate(data_bin, checkpoint, tmp_path / "generate.log", user_dir=True)
    assert ids == list(range(info["counts"]["test"]))


@pytest.mark.fairseq
def test_model_builds_in_process_with_sinusoidal_positions(locality_bin):
    from fairseq import options, tasks

    data_bin, info = locality_bin
    sigma = format_permutation(info["permutation"])

    def build(extra: list[str]):
        parser = options.get_training_parser()
        args = options.parse_args_and_arch(
            parser, [str(data_bin), "--arch", f"{MODEL_NAME}_tiny", "--cpu", *extra])
        task = tasks.setup_task(args)
        return task, task.build_model(args)

    task, model = build(["--position-permutation", sigma])
    embed = model.encoder.embed_positions
    assert isinstance(embed, PermutedPositionalEmbedding)
    assert embed.permutation.tolist() == info["permutation"]
    assert type(embed.inner).__name__ == "SinusoidalPositionalEmbedding"
    assert type(model.decoder.embed_positions).__name__ == "SinusoidalPositionalEmbedding"
    model.eval()
    src = torch.tensor([[PAD, 5, 6, 7, 8, 9, 10, 2], [5, 6, 7, 8, 9, 10, 11, 2]])
    prev = torch.tensor([[2, 5, 6], [2, 7, 8]])
    logits, _ = model(src, torch.tensor([7, 8]), prev)
    assert logits.shape == (2, 3, len(task.target_dictionary))
    with pytest.raises(ValueError, match="--position-permutation"):
        build([])


@pytest.mark.fairseq
def test_fairseq_lstm_trains_and_generates(locality_bin, tmp_path):
    data_bin, info = locality_bin
    save = tmp_path / "ckpt"
    _run([_script("fairseq-train"), str(data_bin), "--arch", "lstm",
          "--encoder-embed-dim", "32", "--encoder-hidden-size", "32",
          "--decoder-embed-dim", "32", "--decoder-hidden-size", "32",
          "--decoder-out-embed-dim", "32", "--save-dir", str(save), *TRAIN_OPTIONS],
         tmp_path / "train.log")
    ids = _generate(data_bin, save / "checkpoint_best.pt", tmp_path / "generate.log",
                    user_dir=False)
    assert ids == list(range(info["counts"]["test"]))
