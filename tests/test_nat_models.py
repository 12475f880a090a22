"""The GLAT and DAT fairseq models in-process, on tiny untrained instances."""

from pathlib import Path

import pytest

from tests.conftest import require_fairseq

require_fairseq()  # first: fairseq needs torch, so a missing torch fails under CI too
torch = pytest.importorskip("torch")

from tests.nat_helpers import build_model, encode, tiny_corpus  # noqa: E402

SOURCES = ["haus baum katze", "hund auto buch tisch stuhl"]
TARGETS = ["hauss katzes baums", "hunds autos buchs stuhls tischs"]


def _batch(task):
    src = encode(task, SOURCES)
    tgt = encode(task, TARGETS, side="tgt")
    hidden = task.inject_noise(tgt)  # full_mask: <s> <unk> .. <unk> </s>
    return src, src.ne(task.source_dictionary.pad()).sum(1), hidden, tgt


def test_glat_reveals_tokens_in_training_and_trains_on_the_hidden_rest(tmp_path):
    torch.manual_seed(0)
    model, task = build_model(tmp_path, "phenomt_glat", "--glance-ratio-start", "1.0",
                              "--glance-ratio-end", "1.0")
    src, src_lengths, hidden, tgt = _batch(task)
    unk = task.target_dictionary.unk()
    model.train()
    out = model(src, src_lengths, hidden, tgt)["word_ins"]
    # An untrained model gets (almost) everything wrong, so with ratio 1 most words show.
    assert out["mask"].sum() < hidden.eq(unk).sum()
    assert torch.equal(out["mask"] & ~hidden.eq(unk), torch.zeros_like(out["mask"]))
    model.eval()
    out = model(src, src_lengths, hidden, tgt)["word_ins"]
    assert torch.equal(out["mask"], hidden.eq(unk))  # no glancing outside training


def test_glat_ratio_follows_the_update_number(tmp_path):
    model, _ = build_model(tmp_path, "phenomt_glat", "--glance-anneal-steps", "100")
    assert model.current_glancing_ratio() == pytest.approx(0.5)
    model.set_num_updates(50)
    assert model.current_glancing_ratio() == pytest.approx(0.4)
    model.set_num_updates(1000)
    assert model.current_glancing_ratio() == pytest.approx(0.3)


def test_glat_decoder_input_mixes_copied_source_and_revealed_words(tmp_path):
    model, task = build_model(tmp_path, "phenomt_glat")
    model.eval()
    src, src_lengths, hidden, tgt = _batch(task)
    encoder_out = model.encoder(src, src_lengths=src_lengths)
    decoder = model.decoder
    copied = decoder.forward_copying_source(
        encoder_out["encoder_embedding"][0], src.ne(1), hidden.ne(1))
    revealed = hidden.clone()
    revealed[0, 2] = tgt[0, 2]
    x, _ = decoder.forward_embedding(revealed, copied)
    positions = decoder.embed_positions(revealed)
    word = decoder.embed_scale * decoder.embed_tokens(tgt[0, 2])
    assert torch.allclose(x[0, 2] - positions[0, 2], word, atol=1e-5)
    assert torch.allclose(x[0, 1] - positions[0, 1], copied[0, 1], atol=1e-5)


def test_dat_forward_gives_a_finite_loss_and_gradients(tmp_path):
    torch.manual_seed(0)
    model, task = build_model(tmp_path, "phenomt_dat", "--dat-upsample-scale", "2")
    src, src_lengths, hidden, tgt = _batch(task)
    model.train()
    outputs = model(src, src_lengths, hidden, tgt)
    loss = outputs["word_ins"]["loss"]
    assert torch.isfinite(loss) and loss > 0
    loss.backward()
    assert model.decoder.link_query.weight.grad.abs().sum() > 0
    assert "length" not in outputs  # the graph size comes from the source, not a predictor


def test_dat_graph_is_at_least_as_long_as_the_target(tmp_path):
    model, task = build_model(tmp_path, "phenomt_dat", "--dat-upsample-scale", "0.5")
    src, src_lengths, hidden, tgt = _batch(task)
    model.eval()
    loss = model(src, src_lengths, hidden, tgt)["word_ins"]["loss"]
    assert torch.isfinite(loss)


@pytest.mark.parametrize("strategy", ["greedy", "lookahead"])
def test_dat_decodes_a_path_from_bos_to_eos(tmp_path, strategy):
    from fairseq.iterative_refinement_generator import IterativeRefinementGenerator

    model, task = build_model(tmp_path, "phenomt_dat", "--dat-decode-strategy", strategy)
    model.eval()
    src, src_lengths, _, _ = _batch(task)
    generator = IterativeRefinementGenerator(task.target_dictionary, max_iter=0)
    sample = {"net_input": {"src_tokens": src, "src_lengths": src_lengths}}
    hypos = generator.generate([model], sample)
    dictionary = task.target_dictionary
    for hypo, length in zip(hypos, src_lengths.tolist(), strict=True):
        tokens = hypo[0]["tokens"].tolist()
        assert tokens[0] == dictionary.bos() and tokens[-1] == dictionary.eos()
        assert 2 <= len(tokens) <= 8 * length
        assert dictionary.pad() not in tokens


def test_glat_decoding_fills_hidden_positions_and_keeps_bos_eos(tmp_path):
    from fairseq.iterative_refinement_generator import IterativeRefinementGenerator

    model, task = build_model(tmp_path, "phenomt_glat")
    model.eval()
    src, src_lengths, _, _ = _batch(task)
    generator = IterativeRefinementGenerator(task.target_dictionary, max_iter=0)
    hypos = generator.generate([model], {"net_input": {"src_tokens": src,
                                                       "src_lengths": src_lengths}})
    dictionary = task.target_dictionary
    for hypo in hypos:
        tokens = hypo[0]["tokens"].tolist()
        assert tokens[0] == dictionary.bos() and tokens[-1] == dictionary.eos()
        assert dictionary.pad() not in tokens


@pytest.mark.parametrize("max_iter", [0, 2])
def test_cmlm_length_beam_keeps_fairseqs_choice_without_numpy(tmp_path, monkeypatch, max_iter):
    """The plugin task's length beam decodes each candidate with fairseq's own steps and keeps
    the one fairseq keeps (tokens and scores equal, single pass and iterative refinement),
    without fairseq's np.argmax over tensors, which fails for CUDA tensors."""
    from argparse import Namespace

    import numpy as np
    from fairseq.iterative_refinement_generator import IterativeRefinementGenerator

    from phenomt.fairseq_ext.nat_task import LengthBeamGenerator

    torch.manual_seed(0)
    model, task = build_model(tmp_path, "cmlm_transformer")
    model.eval()
    sources = [source for source, _ in tiny_corpus(30)]
    src = encode(task, sources)
    sample = {"net_input": {"src_tokens": src,
                            "src_lengths": src.ne(task.source_dictionary.pad()).sum(1)}}
    # An untrained model's candidates score alike; a bonus for odd lengths makes the choice a
    # real one (of five consecutive lengths, the best is then not always the middle one).
    decoder, pad = model.forward_decoder, task.target_dictionary.pad()

    def odd_lengths_score_higher(decoder_out, encoder_out, **options):
        out = decoder(decoder_out, encoder_out, **options)
        odd = out.output_tokens.ne(pad).sum(1, keepdim=True) % 2
        return out._replace(output_scores=out.output_scores + odd)

    monkeypatch.setattr(model, "forward_decoder", odd_lengths_score_higher)
    settings = {"iter_decode_with_beam": 5, "iter_decode_max_iter": max_iter,
                "iter_decode_eos_penalty": 0.0}
    theirs = IterativeRefinementGenerator(task.target_dictionary, beam_size=5, max_iter=max_iter,
                                          eos_penalty=0.0).generate([model], sample)
    ours = task.build_generator([model], Namespace(**settings))
    assert isinstance(ours, LengthBeamGenerator) and ours.beam_size == 5

    def refuse(*args, **kwargs):
        raise AssertionError("np.argmax called: it fails on CUDA tensors")

    monkeypatch.setattr(np, "argmax", refuse)
    decoded = ours.generate([model], sample)
    assert ours.beam_size == 5  # restored after decoding
    assert len(decoded) == len(theirs) == len(sources)
    for mine, fairseqs in zip(decoded, theirs, strict=True):
        assert torch.equal(mine[0]["tokens"], fairseqs[0]["tokens"])
        assert torch.equal(mine[0]["positional_scores"], fairseqs[0]["positional_scores"])
    # a real choice: the candidates are the predicted length -2 .. +2, and some sentences
    # keep another than the predicted length (what decoding without a length beam keeps)
    first = IterativeRefinementGenerator(task.target_dictionary, max_iter=max_iter,
                                         eos_penalty=0.0).generate([model], sample)
    shifts = {len(d[0]["tokens"]) - len(f[0]["tokens"]) for d, f in zip(decoded, first,
                                                                          strict=True)}
    assert shifts != {0}, shifts


@pytest.mark.parametrize("order", ["package first", "user dir first"])
def test_plugins_register_once_whichever_import_comes_first(order):
    """fairseq's --user-dir imports the plugin folder as ``fairseq_ext``; a process that has
    imported ``phenomt.fairseq_ext`` too (an in-process decoding after a test built a model)
    must not register the plugins twice, which fairseq refuses."""
    import subprocess
    import sys

    import phenomt.fairseq_ext as plugins

    folder = str(Path(plugins.__file__).parent)
    package = "import phenomt.fairseq_ext"
    user_dir = ("import argparse; from fairseq import utils; "
                f"utils.import_user_module(argparse.Namespace(user_dir={folder!r}))")
    steps = [package, user_dir] if order == "package first" else [user_dir, package]
    check = ("from fairseq.models import ARCH_MODEL_REGISTRY; "
             "assert 'phenomt_glat' in ARCH_MODEL_REGISTRY; print('registered once')")
    result = subprocess.run([sys.executable, "-c", "; ".join([*steps, check])],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "registered once" in result.stdout
