"""The Doc-Transformer fairseq plugin: context sensitivity, the closed gate, batching of the
context, incremental decoding, and the two training steps through fairseq-train."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_fairseq

require_fairseq()  # first: fairseq needs torch, so a missing torch fails under CI too
torch = pytest.importorskip("torch")

from fairseq import options, tasks  # noqa: E402
from fairseq.data import LanguagePairDataset, data_utils  # noqa: E402
from fairseq.sequence_generator import SequenceGenerator  # noqa: E402

from phenomt.core.doccontext import context_lines  # noqa: E402
from phenomt.core.nmt import fairseq_env  # noqa: E402
from phenomt.fairseq_ext.doc_transformer import (  # noqa: E402
    MODEL_NAME,
    TASK_NAME,
    ContextPairDataset,
    is_document_parameter,
)

ROOT = Path(__file__).resolve().parents[1]
USER_DIR = ROOT / "src" / "phenomt" / "fairseq_ext"
WORDS = ["haus", "baum", "katze", "hund", "auto", "buch", "tisch", "stuhl", "fisch", "vogel"]
SIZES = ["--encoder-layers", "2", "--decoder-layers", "2",
         "--encoder-embed-dim", "16", "--decoder-embed-dim", "16",
         "--encoder-ffn-embed-dim", "32", "--decoder-ffn-embed-dim", "32",
         "--encoder-attention-heads", "2", "--decoder-attention-heads", "2"]
PRE_NORM = ["--encoder-normalize-before", "--decoder-normalize-before"]


@pytest.fixture(scope="module")
def dict_dir(tmp_path_factory) -> Path:
    """A data directory holding only the two dictionaries (enough to build models)."""
    root = tmp_path_factory.mktemp("dicts")
    (root / "dict.src.txt").write_text("".join(f"{w} 1\n" for w in WORDS))
    (root / "dict.tgt.txt").write_text("".join(f"{w.upper()} 1\n" for w in WORDS))
    return root


def build(data: Path, arch: str, *extra: str, seed: int = 0):
    """``(task, model)`` built from fairseq command-line options, in eval mode."""
    task_name = TASK_NAME if arch.startswith(MODEL_NAME) else "translation"
    parser = options.get_training_parser()
    args = options.parse_args_and_arch(parser, [
        str(data), "-s", "src", "-t", "tgt", "--task", task_name, "--arch", arch, "--cpu",
        *SIZES, *extra])
    task = tasks.setup_task(args)
    torch.manual_seed(seed)
    model = task.build_model(args)
    model.eval()
    return task, model


def tokens(dictionary, sentences: list[str], left_pad: bool = True):
    """Sentences as fairseq encodes them (words, then </s>), padded into one batch."""
    rows = [dictionary.encode_line(s, add_if_not_exist=False, append_eos=True).long()
            for s in sentences]
    return data_utils.collate_tokens(rows, dictionary.pad(), dictionary.eos(),
                                     left_pad=left_pad)


def prev_outputs(dictionary, sentences: list[str]):
    """Teacher-forcing decoder input: </s> then the words, right-padded."""
    rows = [dictionary.encode_line(s, add_if_not_exist=False, append_eos=True).long()
            for s in sentences]
    return data_utils.collate_tokens(rows, dictionary.pad(), dictionary.eos(),
                                     left_pad=False, move_eos_to_beginning=True)


SOURCES = ["haus baum katze", "hund auto buch tisch stuhl"]
TARGETS = ["HAUS BAUM KATZE", "HUND AUTO BUCH TISCH"]
CONTEXT_A = ["vogel fisch", "stuhl tisch buch auto hund baum"]
CONTEXT_B = ["katze katze katze hund", ""]


def batch(task, contexts: list[str], sources=SOURCES, targets=TARGETS) -> dict:
    src = tokens(task.source_dictionary, sources)
    return {"src_tokens": src, "src_lengths": src.ne(task.source_dictionary.pad()).sum(1),
            "prev_output_tokens": prev_outputs(task.target_dictionary, targets),
            "ctx_tokens": tokens(task.source_dictionary, contexts),
            "ctx_lengths": torch.tensor([len(c.split()) + 1 for c in contexts])}


def sentence_input(net_input: dict) -> dict:
    return {k: v for k, v in net_input.items() if not k.startswith("ctx_")}


def paired_models(data: Path, *extra: str):
    """A sentence-level Transformer and a Doc-Transformer holding its weights."""
    _, sentence = build(data, "transformer_tiny", *extra, seed=1)
    task, doc = build(data, f"{MODEL_NAME}_tiny", *extra, seed=2)
    doc.load_state_dict(sentence.state_dict())
    return task, sentence, doc


# --- the model ----------------------------------------------------------------------------

def test_changing_the_context_changes_the_output(dict_dir):
    task, model = build(dict_dir, f"{MODEL_NAME}_tiny")
    with torch.no_grad():
        a, _ = model(**batch(task, CONTEXT_A))
        again, _ = model(**batch(task, CONTEXT_A))
        b, _ = model(**batch(task, CONTEXT_B))
    assert torch.equal(a, again)
    for row in range(2):  # each sentence's logits move with its own context
        assert (a[row] - b[row]).abs().max() > 1e-3


@pytest.mark.parametrize("norm", [[], PRE_NORM], ids=["post-norm", "pre-norm"])
def test_closed_gate_gives_the_sentence_transformer(dict_dir, norm):
    task, sentence, doc = paired_models(dict_dir, *norm)
    net_input = batch(task, CONTEXT_A)
    with torch.no_grad():
        expected, _ = sentence(**sentence_input(net_input))
        doc.set_context_gate(0.0)
        closed_a, _ = doc(**net_input)
        closed_b, _ = doc(**batch(task, CONTEXT_B))
        doc.set_context_gate(None)
        gated, _ = doc(**net_input)
    assert torch.equal(closed_a, expected)
    assert torch.equal(closed_b, expected)
    assert not torch.allclose(gated, expected, atol=1e-3)  # the open gates do let context in


def _generate(model, task, net_input: dict, beam: int = 2) -> list[list]:
    generator = SequenceGenerator([model], task.target_dictionary, beam_size=beam,
                                  max_len_b=6)
    with torch.no_grad():
        hypos = generator.generate([model], {"net_input": net_input})
    return [[(h["tokens"].tolist(), round(float(h["score"]), 4)) for h in sent]
            for sent in hypos]


def test_closed_gate_beam_search_equals_the_sentence_transformer(dict_dir):
    task, sentence, doc = paired_models(dict_dir)
    doc.set_context_gate(0.0)
    net_input = batch(task, CONTEXT_A)
    del net_input["prev_output_tokens"]
    assert _generate(doc, task, net_input) == _generate(sentence, task,
                                                        sentence_input(net_input))


def test_batched_sentences_read_their_own_context(dict_dir):
    """Left padding of context and source leaves every row's result unchanged."""
    task, model = build(dict_dir, f"{MODEL_NAME}_tiny")
    with torch.no_grad():
        both, _ = model(**batch(task, CONTEXT_A))
        for row in range(2):
            alone, _ = model(**batch(task, [CONTEXT_A[row]], [SOURCES[row]], [TARGETS[row]]))
            length = alone.size(1)
            assert torch.allclose(both[row, :length], alone[0], atol=1e-5)
    net_input = batch(task, CONTEXT_A)
    del net_input["prev_output_tokens"]
    single = [_generate(model, task, {k: v[row:row + 1] for k, v in net_input.items()})[0]
              for row in range(2)]
    assert _generate(model, task, net_input) == single


def test_incremental_decoding_and_reordering_match_the_full_forward(dict_dir):
    task, model = build(dict_dir, f"{MODEL_NAME}_tiny")
    # equally long targets: no padding inside the decoder input
    net_input = batch(task, CONTEXT_A, targets=["HAUS BAUM KATZE VOGEL", TARGETS[1]])
    prev = net_input["prev_output_tokens"]
    keep = torch.tensor([1])
    with torch.no_grad():
        full, _ = model(**net_input)
        encoder_out = model.encoder(net_input["src_tokens"], net_input["src_lengths"],
                                    ctx_tokens=net_input["ctx_tokens"])
        state: dict = {}
        for t in range(prev.size(1)):
            if t == 2:  # beam search drops a finished sentence: batch and caches shrink
                model.decoder.reorder_incremental_state_scripting(state, keep)
                encoder_out = model.encoder.reorder_encoder_out(encoder_out, keep)
                prev, full = prev.index_select(0, keep), full.index_select(0, keep)
            step, _ = model.decoder(prev[:, :t + 1], encoder_out=encoder_out,
                                    incremental_state=state)
            assert torch.allclose(step[:, -1], full[:, t], atol=1e-5), t


def test_document_parameters_are_the_added_modules(dict_dir):
    _, sentence = build(dict_dir, "transformer_tiny")
    _, doc = build(dict_dir, f"{MODEL_NAME}_tiny", "--doc-freeze-sentence-params")
    names = set(doc.state_dict())
    document = {n for n in names if is_document_parameter(n)}
    assert names - document == set(sentence.state_dict())
    assert {n.split(".context_attention.")[0] for n in document
            if ".context_attention." in n} == {
        f"{side}.layers.{i}" for side in ("encoder", "decoder") for i in range(2)}
    assert any(n.startswith("encoder.context_encoder.layers.0.") for n in document)
    assert sum(n.endswith("gate.proj.weight") for n in document) == 4
    for name, param in doc.named_parameters():
        assert param.requires_grad == is_document_parameter(name), name
    assert set(doc.document_parameter_names()) == {
        n for n, _ in doc.named_parameters() if is_document_parameter(n)}


def test_context_encoder_layers_option(dict_dir):
    _, model = build(dict_dir, f"{MODEL_NAME}_tiny", "--context-encoder-layers", "3")
    assert len(model.encoder.context_encoder.layers) == 3
    _, base = build(dict_dir, MODEL_NAME)
    assert len(base.encoder.context_encoder.layers) == 2  # defaults to the encoder's depth


def test_bad_uses_are_rejected(dict_dir):
    task, model = build(dict_dir, f"{MODEL_NAME}_tiny")
    with pytest.raises(ValueError, match=TASK_NAME):
        model(**sentence_input(batch(task, CONTEXT_A)))
    partial = model.state_dict()
    del partial["encoder.layers.0.context_attention.gate.proj.bias"]
    with pytest.raises(RuntimeError, match="Missing key"):
        model.load_state_dict(partial)  # only a checkpoint without any document tensor is
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        model.set_context_gate(1.5)
    with pytest.raises(ValueError, match="cross-self-attention"):
        build(dict_dir, f"{MODEL_NAME}_tiny", "--cross-self-attention")


def test_collater_keeps_each_context_with_its_sentence(dict_dir):
    task, _ = build(dict_dir, f"{MODEL_NAME}_tiny")
    d = task.source_dictionary
    sources = ["haus", "baum katze hund", "auto buch"]
    contexts = ["", "vogel fisch stuhl tisch", "hund"]
    encode = [d.encode_line(s, add_if_not_exist=False).long() for s in sources]
    pairs = LanguagePairDataset(encode, torch.tensor([len(t) for t in encode]), d,
                                encode, torch.tensor([len(t) for t in encode]), d)
    context = [d.encode_line(c, add_if_not_exist=False).long() for c in contexts]
    dataset = ContextPairDataset(pairs, context, max_context_tokens=3)
    sample = dataset.collater([dataset[i] for i in range(3)])
    ids = sample["id"].tolist()
    assert ids == [1, 2, 0]  # the pair collater sorts by source length
    ctx = sample["net_input"]["ctx_tokens"]
    for row, i in enumerate(ids):
        kept = [t for t in ctx[row].tolist() if t != d.pad()]
        expected = context[i].tolist()[-3:]  # longer contexts keep their last tokens
        assert kept == expected
        assert sample["net_input"]["ctx_lengths"][row] == len(expected)
    assert ctx[2, 0] == d.pad()  # left-padded like the source
    with pytest.raises(ValueError, match="context lines"):
        ContextPairDataset(pairs, context[:2], 10)


# --- both training steps and decoding through fairseq's command line -----------------------

def _script(name: str) -> str:
    local = Path(sys.executable).with_name(name)
    return str(local) if local.exists() else name


def _run(cmd: list[str], log: Path) -> str:
    result = subprocess.run(cmd, env=fairseq_env(), capture_output=True, text=True,
                            check=False, timeout=300)
    log.write_text(result.stdout + result.stderr)
    assert result.returncode == 0, f"{cmd[0]} failed, see {log}:\n{result.stderr[-3000:]}"
    return result.stdout + result.stderr


def _toy_documents(split: str, documents: int, rng: random.Random):
    sources, doc_ids = [], []
    for d in range(documents):
        for _ in range(rng.randint(2, 5)):
            sources.append(" ".join(rng.sample(WORDS, rng.randint(2, 5))))
            doc_ids.append(f"{split}-{d}")
    return sources, doc_ids


TRAIN = ["-s", "src", "-t", "tgt", "--optimizer", "adam", "--lr", "0.001", "--max-tokens",
         "200", "--max-update", "4", "--cpu", "--seed", "1", "--no-epoch-checkpoints",
         "--log-format", "simple", "--log-interval", "1", "--required-batch-size-multiple", "1",
         *SIZES]


@pytest.fixture(scope="module")
def two_steps(tmp_path_factory) -> dict[str, Path]:
    """A toy document corpus with its context side, binarized, and both training steps."""
    root = tmp_path_factory.mktemp("doc")
    rng = random.Random(0)
    raw = root / "raw"
    raw.mkdir()
    for split, documents in (("train", 12), ("valid", 3), ("test", 3)):
        sources, doc_ids = _toy_documents(split, documents, rng)
        (raw / f"{split}.src").write_text("".join(f"{s}\n" for s in sources))
        (raw / f"{split}.tgt").write_text("".join(f"{s.upper()}\n" for s in sources))
        (raw / f"{split}.ctx").write_text("".join(
            f"{c}\n" for c in context_lines(sources, doc_ids)))
    data = root / "bin"
    prefixes = ["--trainpref", str(raw / "train"), "--validpref", str(raw / "valid"),
                "--testpref", str(raw / "test"), "--destdir", str(data), "--workers", "1"]
    _run([_script("fairseq-preprocess"), "-s", "src", "-t", "tgt", *prefixes],
         root / "preprocess.log")
    _run([_script("fairseq-preprocess"), "--only-source", "-s", "ctx",
          "--srcdict", str(data / "dict.src.txt"), *prefixes], root / "preprocess_ctx.log")
    step1, step2 = root / "step1", root / "step2"
    _run([_script("fairseq-train"), str(data), "--task", "translation",
          "--arch", "transformer_tiny", "--save-dir", str(step1), *TRAIN],
         root / "step1.log")
    _run([_script("fairseq-train"), str(data), "--user-dir", str(USER_DIR),
          "--task", TASK_NAME, "--arch", f"{MODEL_NAME}_tiny", "--doc-freeze-sentence-params",
          "--finetune-from-model", str(step1 / "checkpoint_last.pt"),
          "--save-interval-updates", "1", "--keep-interval-updates", "10",
          "--save-dir", str(step2), *TRAIN], root / "step2.log")
    return {"root": root, "data": data, "step1": step1, "step2": step2,
            "test_lines": raw / "test.src"}


def _weights(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=False)["model"]


@pytest.mark.fairseq
def test_step_two_trains_only_the_document_parameters(two_steps):
    log = (two_steps["root"] / "step2.log").read_text()
    assert "document-level tensors keep their initial values" in log
    assert "num_updates 4" in log or "num_updates=4" in log
    step1 = _weights(two_steps["step1"] / "checkpoint_last.pt")
    after_one = _weights(two_steps["step2"] / "checkpoint_1_1.pt")
    last = _weights(two_steps["step2"] / "checkpoint_last.pt")
    document = {n for n in last if is_document_parameter(n)}
    assert document and set(last) - document == set(step1)
    for name in step1:  # every sentence-level tensor bit-identical to step 1's
        assert torch.equal(last[name], step1[name]), name
        assert torch.equal(after_one[name], step1[name]), name
    unchanged = [n for n in document if torch.equal(after_one[n], last[n])]
    assert not unchanged, f"document-level tensors not updated: {unchanged}"


@pytest.mark.fairseq
def test_fairseq_generate_decodes_with_the_context(two_steps, tmp_path):
    out = _run([_script("fairseq-generate"), str(two_steps["data"]), "-s", "src", "-t", "tgt",
                "--user-dir", str(USER_DIR), "--task", TASK_NAME,
                "--path", str(two_steps["step2"] / "checkpoint_last.pt"),
                "--gen-subset", "test", "--beam", "2", "--batch-size", "4", "--cpu",
                "--max-len-b", "8", "--required-batch-size-multiple", "1"],
               tmp_path / "generate.log")
    ids = sorted(int(line.split("\t")[0][2:]) for line in out.splitlines()
                 if line.startswith("H-"))
    lines = two_steps["test_lines"].read_text().splitlines()
    assert ids == list(range(len(lines)))
