"""fairseq options of the NAT models (no fairseq needed)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from phenomt.core.nmt import fairseq_options
from phenomt.nat.recipes import (
    NAT_MODELS,
    SCALES,
    USER_DIR,
    base_model,
    finetune_options,
    generate_options,
    needs_user_dir,
    train_options,
    update_freq,
)


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
    assert train_options("cmlm")["task"] == "translation_lev"
    assert train_options("glat")["arch"] == "phenomt_glat"
    assert train_options("dat")["arch"] == "phenomt_dat"
    assert train_options("dat")["dat_upsample_scale"] == 8
    for model in ("glat", "dat"):
        assert train_options(model)["task"] == "phenomt_translation_nat"
        assert train_options(model)["noise"] == "full_mask"
        assert train_options(model)["criterion"] == "nat_loss"


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
