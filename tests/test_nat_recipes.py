"""fairseq options of the NAT models (no fairseq needed)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from phenomt.core.nmt import fairseq_options
from phenomt.core.papers import lookup
from phenomt.nat.recipes import (
    NAT_MODELS,
    PAPER_TOKENS_PER_UPDATE,
    SCALES,
    USER_DIR,
    base_model,
    finetune_options,
    generate_options,
    needs_user_dir,
    paper_batch,
    train_options,
    update_freq,
)

PAPER = "wang_nat"


def paper(table: str, row: str, column: str) -> float:
    """A number of Wang et al. as filed in wang_nat.tsv (transcribed from the paper text)."""
    value = lookup(PAPER, table, row, column)
    assert value is not None, (table, row, column)
    return value


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("model", NAT_MODELS)
def test_every_recipe_turns_into_fairseq_arguments(model, scale):
    options = train_options(model, scale)
    args = fairseq_options(options)
    assert args[args.index("--task") + 1] == options["task"]
    assert ("--user-dir" in args) == needs_user_dir(model)
    assert "--share-all-embeddings" in args
    for value in options.values():
        assert value is not None


def test_models_tasks_and_criteria():
    assert train_options("cmlm")["arch"] == "cmlm_transformer"
    assert train_options("cmlm")["noise"] == "random_mask"
    assert train_options("glat")["arch"] == "phenomt_glat"
    assert train_options("dat")["arch"] == "phenomt_dat"
    assert train_options("dat")["dat_upsample_scale"] == 8
    for model in ("cmlm", "glat", "dat"):
        assert train_options(model)["task"] == "phenomt_translation_nat"
        assert train_options(model)["criterion"] == "nat_loss"
    for model in ("glat", "dat"):
        assert train_options(model)["noise"] == "full_mask"


def test_oaxe_models_fine_tune_their_base_with_the_oaxe_criterion():
    assert base_model("cmlm_oaxe") == "cmlm" and base_model("glat_oaxe") == "glat"
    assert base_model("dat") is None and base_model("cmlm") is None
    options = finetune_options("glat_oaxe", "ckpt/glat.pt")
    assert options["finetune_from_model"] == "ckpt/glat.pt"
    assert options["criterion"] == "phenomt_oaxe"
    assert options["noise"] == "full_mask"
    assert options["arch"] == "phenomt_glat"
    assert 0 < options["oaxe_skip_threshold"] < 1
    assert options["glance_ratio_start"] == options["glance_ratio_end"] == 0
    assert train_options("cmlm_oaxe")["arch"] == "cmlm_transformer"
    with pytest.raises(ValueError, match="trained from scratch"):
        finetune_options("glat", "ckpt/glat.pt")


def test_paper_scale_is_transformer_base_with_about_480k_tokens_per_update():
    for model in NAT_MODELS:
        options = train_options(model, "paper")
        assert options["encoder_embed_dim"] == 512 and options["encoder_layers"] == 6
        assert options["decoder_ffn_embed_dim"] == 2048
        tokens = options["max_tokens"] * options["update_freq"]
        assert 480_000 <= tokens < 490_000
        if base_model(model) is None:
            assert options["max_update"] == 300_000
    assert train_options("glat", "paper", gpus=8)["update_freq"] == 8
    assert update_freq(4096, gpus=4) == 30
    with pytest.raises(ValueError):
        update_freq(0)


def test_demo_scale_is_small():
    options = train_options("dat", "demo")
    assert options["encoder_embed_dim"] == 128 and options["decoder_layers"] == 2
    assert "update_freq" not in options


def test_decoding_is_single_pass_with_length_beam_one_except_cmlm():
    for model in NAT_MODELS:
        options = generate_options(model)
        assert options["iter_decode_max_iter"] == 0
        assert options["iter_decode_with_beam"] == (5 if model == "cmlm" else 1)
        assert options["task"] == train_options(model)["task"]
    overrides = generate_options("dat")["model_overrides"]
    assert ast.literal_eval(overrides) == {"dat_decode_strategy": "greedy"}
    assert "model_overrides" not in generate_options("glat")


def test_unknown_names_are_rejected():
    with pytest.raises(ValueError, match="unknown NAT model"):
        train_options("levenshtein")
    with pytest.raises(ValueError, match="unknown scale"):
        train_options("cmlm", "huge")


def test_user_dir_is_the_plugin_package():
    assert Path(USER_DIR, "__init__.py").is_file()
    assert Path(USER_DIR).name == "fairseq_ext"


def test_importing_the_recipes_does_not_import_fairseq():
    code = ("import sys, phenomt.nat.recipes; "
            "print('fairseq' in sys.modules, 'torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.split() == ["False", "False"]


# ----------------------------------------------------------------------------- paper scale

@pytest.mark.parametrize("model", NAT_MODELS)
@pytest.mark.parametrize("column", ["lr", "dropout", "label_smoothing"])
def test_paper_recipe_has_table_6_hyper_parameters(model, column):
    # Table 6: CMLM 7e-4 / 0.0 / 0.1, +OaXE 5e-6 / 0.0 / 0.1, GLAT 5e-4 / 0.0 / 0.1,
    # DAT 5e-4 / 0.1 / 0.0; the +OaXE values hold for the fine-tuning run itself.
    expected = paper("Table 6", model, column)
    assert train_options(model, "paper")[column] == pytest.approx(expected, abs=1e-12)
    if base_model(model):
        options = finetune_options(model, "base.pt", "paper", gpus=8)
        assert options[column] == pytest.approx(expected, abs=1e-12)


def test_paper_dropout_is_off_except_for_dat():
    # The one deviation the common settings used to hide: dropout 0.1 for every model.
    dropout = {m: train_options(m, "paper")["dropout"] for m in NAT_MODELS}
    assert dropout == {"cmlm": 0.0, "cmlm_oaxe": 0.0, "glat": 0.0, "glat_oaxe": 0.0,
                       "dat": 0.1}
    assert train_options("cmlm", "paper")["lr"] == 0.0007


def test_paper_training_length_follows_appendix_b1():
    updates = paper("Appendix B.1", "training", "updates")  # 300K steps
    epochs = paper("Appendix B.1", "oaxe-finetuning", "epochs")  # 10
    for model in NAT_MODELS:
        options = train_options(model, "paper")
        if base_model(model) is None:
            assert options["max_update"] == updates and "max_epoch" not in options
        else:
            # Bounded by epochs alone: an inherited --max-update would cut it short.
            assert options["max_epoch"] == epochs and "max_update" not in options
            args = fairseq_options(finetune_options(model, "base.pt", "paper"))
            assert args[args.index("--max-epoch") + 1] == "10"
            assert "--max-update" not in args


def test_paper_oaxe_keeps_one_checkpoint_per_epoch():
    # Ten epoch checkpoints to take the best 5 from; no interval checkpoints in between.
    args = fairseq_options(finetune_options("glat_oaxe", "base.pt", "paper"))
    assert "--no-epoch-checkpoints" not in args
    assert "--save-interval-updates" not in args and "--keep-interval-updates" not in args
    base = fairseq_options(train_options("glat", "paper"))
    assert "--no-epoch-checkpoints" in base and "--save-interval-updates" in base


@pytest.mark.parametrize("gpus", [1, 2, 4, 8])
@pytest.mark.parametrize("model", NAT_MODELS)
def test_paper_batch_is_the_papers_480k_tokens(model, gpus):
    budget = paper("Appendix B.1", "training", "batch_size")
    assert budget == PAPER_TOKENS_PER_UPDATE
    options = train_options(model, "paper", gpus)
    tokens = options["max_tokens"] * options["update_freq"] * gpus
    # At least the budget, and over it by less than one token per batch.
    assert budget <= tokens < budget + options["update_freq"] * gpus
    cap = 2048 if model == "dat" else 8192
    assert options["max_tokens"] <= cap


def test_paper_batch_lowers_the_cap_instead_of_overshooting():
    # 8 GPUs at 8,192 tokens: 8 steps make 524,288 tokens; 7,500 a batch makes 480,000.
    assert paper_batch(8192, 8) == (7500, 8)
    assert update_freq(8192, 8) == 8
    assert paper_batch(480_000, 1) == (480_000, 1)


def test_paper_architecture_is_appendix_b1_transformer_base():
    for model in NAT_MODELS:
        options = train_options(model, "paper")
        for side in ("encoder", "decoder"):
            assert options[f"{side}_layers"] == paper("Appendix B.1", "transformer-base",
                                                      "layers")
            assert options[f"{side}_attention_heads"] == paper(
                "Appendix B.1", "transformer-base", "attention_heads")
            assert options[f"{side}_embed_dim"] == paper("Appendix B.1", "transformer-base",
                                                         "hidden")
            assert options[f"{side}_ffn_embed_dim"] == paper("Appendix B.1",
                                                             "transformer-base", "ffn")


def test_decoding_follows_appendix_b2():
    for model in NAT_MODELS:
        options = generate_options(model)
        # fairseq counts refinement steps after the first pass: 0 is one iteration.
        assert options["iter_decode_max_iter"] + 1 == paper("Appendix B.2", "decoding",
                                                            "iterations")
        row = "decoding/cmlm" if model == "cmlm" else "decoding"
        assert options["iter_decode_with_beam"] == paper("Appendix B.2", row, "length_beam")

