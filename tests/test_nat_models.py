"""The GLAT and DAT fairseq models in-process, on tiny untrained instances."""

import pytest

from tests.conftest import require_fairseq

require_fairseq()  # first: fairseq needs torch, so a missing torch fails under CI too
torch = pytest.importorskip("torch")

from tests.nat_helpers import build_model, encode  # noqa: E402

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
