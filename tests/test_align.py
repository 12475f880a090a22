"""Tests for phenomt.core.align: fast_align training, saved models, Pharaoh output, symmetrisation,
the length limit, sharding and the CLI."""

from __future__ import annotations

import argparse
import logging
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from phenomt.core import align
from phenomt.core.cliargs import CommandTree
from phenomt.core.io import InputError, read_lines, write_lines
from phenomt.core.linelimit import MAX_TOKENS

DATA = Path(__file__).parent / "data" / "align"
LIMIT = 1024  # thot's own limit


def points(line: str) -> set[tuple[int, int]]:
    return {(int(i), int(j)) for i, j in (p.split("-") for p in line.split())}


def synthetic_pairs(n: int = 400, vocab: int = 500, seed: int = 0) -> list[tuple[str, str]]:
    """Word-for-word translations, the target led by an extra word: source i ↔ target i+1."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        ids = [rng.randrange(vocab) for _ in range(rng.randint(4, 12))]
        pairs.append((" ".join(f"s{k}" for k in ids), " ".join(["the"] + [f"t{k}" for k in ids])))
    return pairs


def write_corpus(directory: Path, pairs: list[tuple[str, str]], name: str) -> tuple[Path, Path]:
    src, tgt = directory / f"{name}.src", directory / f"{name}.tgt"
    write_lines(src, [s for s, _ in pairs])
    write_lines(tgt, [t for _, t in pairs])
    return src, tgt


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(model dir, source file, target file) of models trained on the synthetic corpus."""
    base = tmp_path_factory.mktemp("synthetic")
    src, tgt = write_corpus(base, synthetic_pairs(), "train")
    align.train_models([(src, tgt)], base / "model")
    return base / "model", src, tgt


@pytest.fixture(scope="module")
def newstest(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> tuple[Path, Path, Path]:
    """(model dir, source file, target file) for 300 real De-En pairs of the offline mirror."""
    newstest = mirror / "wmt" / "de-en" / "newstest2013"
    de, en = newstest.with_suffix(".de"), newstest.with_suffix(".en")
    base = tmp_path_factory.mktemp("newstest")
    pairs = list(zip(read_lines(de)[:300], read_lines(en)[:300], strict=True))
    src, tgt = write_corpus(base, pairs, "news")
    align.train_models([(src, tgt)], base / "model")
    return base / "model", src, tgt


# -- small helpers -----------------------------------------------------------------------------


def test_split_tokens_on_whitespace():
    assert align.split_tokens("  a b\tc  ") == ["a", "b", "c"]
    assert align.split_tokens("") == []


def test_thot_reserved_words_are_ordinary_words(tmp_path):
    assert align._thot_tokens(["NULL", "a", "NULL~", "<UNUSED_WORD>"]) == [
        "NULL~", "a", "NULL~~", "<UNUSED_WORD>~"]
    src, tgt = write_corpus(tmp_path, [("NULL UNKNOWN_WORD a", "NULL b"), ("a", "b")], "c")
    settings = align.train_models([(src, tgt)], tmp_path / "m")
    # thot's 3 reserved entries plus the corpus words
    assert settings["forward"]["src_vocab_size"] == 3 + 3
    assert settings["forward"]["trg_vocab_size"] == 3 + 2
    result = align.align_sentences(tmp_path / "m", [["NULL", "UNKNOWN_WORD", "a"]], [["NULL", "b"]])
    assert result.forward[0] and result.gdfa[0]


def test_shard_bounds_are_contiguous_and_cover_everything():
    assert align.shard_bounds(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert align.shard_bounds(2, 5) == [(0, 1), (1, 2)]
    assert align.shard_bounds(0, 4) == [(0, 0)]
    with pytest.raises(ValueError):
        align.shard_bounds(5, 0)


# -- grow-diag-final-and -----------------------------------------------------------------------


def test_gdfa_hand_worked_case():
    # 5 source x 5 target words. Forward: one source per target; reverse: one target per source.
    forward = {(0, 0), (1, 1), (1, 2), (4, 3), (2, 4)}
    reverse = {(0, 0), (1, 2), (2, 4), (4, 4)}
    # Intersection: (0,0) (1,2) (2,4). Union adds candidates (1,1) (4,3) (4,4).
    # grow-diag: (1,1) has target 1 unaligned and neighbours (1,2) and, diagonally, (0,0): added.
    #   (4,3) and (4,4) have no aligned neighbour ((2,4) is two rows away): not added.
    # final-and, forward first: (4,3) has source 4 and target 3 both unaligned: added.
    #   Then reverse: (4,4) has source 4 aligned now: not added.
    expected = [(0, 0), (1, 1), (1, 2), (2, 4), (4, 3)]
    assert align.grow_diag_final_and(forward, reverse, 5, 5) == expected


def test_gdfa_visits_candidate_points_in_index_order():
    # Growing visits candidate points in (i, j) order, as fast_align's atools does, so a point
    # can take a word before a neighbour that comes later in that order.
    forward = {(4, 0), (4, 1), (4, 2)}
    reverse = {(0, 1), (1, 2), (2, 1), (3, 1), (4, 0)}
    # Intersection (4,0). Pass 1: (3,1) diagonal to (4,0) is added, which aligns target 1, so
    # (4,1) now links two aligned words and is refused; (4,2), diagonal to (3,1), is added.
    # Passes 2-4 add (2,1), then (1,2), then (0,1), each next to the previous one.
    expected = [(0, 1), (1, 2), (2, 1), (3, 1), (4, 0), (4, 2)]
    assert align.grow_diag_final_and(forward, reverse, 5, 3) == expected


def test_gdfa_rejects_points_outside_the_matrix():
    with pytest.raises(ValueError, match="outside"):
        align.grow_diag_final_and([(0, 3)], [], 2, 3)


# -- training, saving, loading -----------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_openmp_threads_controls_thot_training():
    # libgomp keeps its worker threads after a parallel region, so the thread count after
    # training shows how many threads thot used. A fresh interpreter starts without any.
    code = """
import os
from thot.alignment import FastAlignModel
from phenomt.core.align import openmp_threads
for n in (1, 2):
    model = FastAlignModel()
    for k in range(50):
        model.add_sentence_pair([f"s{k}", "a"], [f"t{k}", "b"])
    with openmp_threads(n):
        model.start_training()
        model.train()
    print(len(os.listdir("/proc/self/task")))
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["1", "2"]


def test_settings_record_training(synthetic):
    model_dir, src, tgt = synthetic
    settings = align.read_settings(model_dir)
    assert settings["iterations"] == align.DEFAULT_ITERATIONS
    assert settings["corpora"] == [{"src": str(src), "tgt": str(tgt), "lines": 400}]
    assert settings["max_sentence_length"] == MAX_TOKENS < LIMIT
    for direction in ("forward", "reverse"):
        facts = settings[direction]
        assert facts["variational_bayes"] is True
        assert facts["alpha"] == pytest.approx(0.01)
        assert facts["fast_align_p0"] == pytest.approx(0.08)
        assert facts["final_diagonal_tension"] != 4.0  # the initial tension was optimised
        assert all((model_dir / name).is_file() for name in facts["files"])


def test_word_for_word_corpus_is_aligned_in_all_three_outputs(synthetic):
    model_dir, src, tgt = synthetic
    src_sents, tgt_sents = align.read_parallel(src, tgt)
    result = align.align_sentences(model_dir, src_sents[:50], tgt_sents[:50])
    for s, fwd, rev, gdfa in zip(src_sents, result.forward, result.reverse, result.gdfa,
                                 strict=False):
        diagonal = {(i, i + 1) for i in range(len(s))}
        # Reverse points are written source-target too, hence (i, i+1) rather than (i+1, i).
        assert diagonal <= points(fwd)
        assert diagonal == points(rev)
        assert diagonal <= points(gdfa)


def test_loaded_models_align_like_the_trained_ones(synthetic):
    from thot.alignment import FastAlignModel

    model_dir, src, tgt = synthetic
    src_sents, tgt_sents = align.read_parallel(src, tgt)
    in_memory = FastAlignModel()
    for s, t in zip(src_sents, tgt_sents, strict=True):
        in_memory.add_sentence_pair(s, t)
    with align.openmp_threads(1):
        in_memory.start_training()
        for _ in range(align.DEFAULT_ITERATIONS):
            in_memory.train()
        in_memory.end_training()
    loaded = align.Aligner(model_dir).forward
    expected = [m.to_list() for _, m in in_memory.get_best_alignments(src_sents, tgt_sents)]
    assert [m.to_list() for _, m in loaded.get_best_alignments(src_sents, tgt_sents)] == expected


def test_training_and_aligning_are_byte_identical_on_rerun(tmp_path, synthetic):
    _, src, tgt = synthetic
    outputs = []
    for run in ("a", "b"):
        align.train_models([(src, tgt)], tmp_path / run / "model")
        outs = [tmp_path / run / name for name in ("fwd", "rev", "gdfa")]
        align.align_files(tmp_path / run / "model", src, tgt, *outs)
        files = sorted((tmp_path / run / "model").iterdir()) + outs
        outputs.append([(f.name, f.read_bytes()) for f in files])
    assert len(outputs[0]) == 2 * 14 + 1 + 3
    assert outputs[0] == outputs[1]


def test_thread_limit_reaches_every_loaded_openmp_runtime():
    # torch brings its own libgomp; thot's OpenMP calls may bind to it, and then a limit set on
    # thot's bundled copy alone would leave training multi-threaded (and not byte-identical).
    pytest.importorskip("torch")
    libraries = align._openmp_libraries()
    names = [lib._name for lib in libraries]
    assert any("sil_thot" in n for n in names) and any("torch" in n for n in names)
    with align.openmp_threads(1):
        assert [lib.omp_get_max_threads() for lib in libraries] == [1] * len(libraries)


def test_extra_corpora_are_trained_on(tmp_path):
    small = [(DATA / "tiny.de", DATA / "tiny.en")]
    settings = align.train_models([*small, (DATA / "extra.de", DATA / "extra.en")], tmp_path / "m")
    assert settings["training_pairs"] == 16
    assert [c["lines"] for c in settings["corpora"]] == [10, 6]
    alone = align.train_models(small, tmp_path / "alone")
    # The extra corpus brings words the corpus to align lacks ("sieht", "nicht", ...).
    assert settings["forward"]["src_vocab_size"] > alone["forward"]["src_vocab_size"]


def test_unequal_line_counts_name_both_files(tmp_path):
    src, tgt = tmp_path / "a.de", tmp_path / "a.en"
    write_lines(src, ["a b", "c"])
    write_lines(tgt, ["x"])
    with pytest.raises(InputError) as err:
        align.train_models([(src, tgt)], tmp_path / "m")
    assert str(src) in str(err.value) and str(tgt) in str(err.value)
    assert not (tmp_path / "m").exists()


def test_unequal_line_counts_when_aligning(tmp_path, synthetic):
    model_dir, _, _ = synthetic
    src, tgt = tmp_path / "a.de", tmp_path / "a.en"
    write_lines(src, ["s1"])
    write_lines(tgt, ["t1", "t2"])
    with pytest.raises(InputError, match="equal line counts") as err:
        align.align_files(model_dir, src, tgt, *(tmp_path / n for n in ("f", "r", "g")))
    assert str(src) in str(err.value) and str(tgt) in str(err.value)
    assert not (tmp_path / "f").exists()


def test_missing_model_file_is_a_clear_error(tmp_path):
    align.train_models([(DATA / "tiny.de", DATA / "tiny.en")], tmp_path / "m")
    (tmp_path / "m" / "trg_src.tvcb").unlink()
    with pytest.raises(InputError, match="missing model file") as err:
        align.Aligner(tmp_path / "m")
    assert "trg_src.tvcb" in str(err.value)


def test_missing_settings_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="no trained models"):
        align.align_sentences(tmp_path, [["a"]], [["b"]])


# -- the length limit --------------------------------------------------------------------------


def test_thot_leaves_pairs_over_1024_tokens_unaligned(synthetic):
    model = align.Aligner(synthetic[0]).forward
    assert model.max_sentence_length == LIMIT

    def aligned_points(n: int) -> int:
        src = [f"s{k % 500}" for k in range(n)]
        tgt = [f"t{k % 500}" for k in range(n)]
        _, matrix = model.get_best_alignment(src, tgt)
        return sum(1 for i in matrix.to_list() if i)

    assert aligned_points(LIMIT) > LIMIT // 2
    assert aligned_points(LIMIT + 1) == 0  # silently: no error, every word to NULL


def test_too_long_pairs_are_empty_counted_and_logged(synthetic, caplog):
    # the limit is the parse's, MAX_TOKENS, below thot's 1,024: a pair of exactly MAX_TOKENS
    # tokens is aligned, one more token on either side keeps it out
    short_src, short_tgt = ["s1", "s2"], ["the", "t1", "t2"]
    long_src = [f"s{k % 500}" for k in range(MAX_TOKENS + 1)]
    long_tgt = [f"t{k % 500}" for k in range(MAX_TOKENS + 1)]
    src = [short_src, long_src, short_src, short_src, long_src[:MAX_TOKENS], []]
    tgt = [short_tgt, short_tgt, short_tgt, long_tgt, long_tgt[:MAX_TOKENS], short_tgt]
    with caplog.at_level(logging.WARNING, logger="phenomt.core.align"):
        result = align.align_sentences(synthetic[0], src, tgt)
    assert result.too_long_lines == (2, 4)
    assert result.too_long == 2
    for lines in (result.forward, result.reverse, result.gdfa):
        assert [bool(line) for line in lines] == [True, False, True, False, True, False]
    assert "2 of 6 sentence pairs" in caplog.text and "lines 2, 4" in caplog.text


class _SpyModel:
    """A fast_align model that records the length of every pair it is asked to align."""

    def __init__(self, model):
        self.model, self.lengths = model, []

    @property
    def max_sentence_length(self):
        return self.model.max_sentence_length

    def get_best_alignments(self, src, tgt):
        self.lengths += [(len(s), len(t)) for s, t in zip(src, tgt, strict=True)]
        return self.model.get_best_alignments(src, tgt)


def test_a_1mb_line_never_reaches_the_aligner(synthetic, tmp_path):
    """A 1 MB line (500,000 tokens) gives no links and an empty line in all three outputs,
    without thot ever seeing it; the lines around it keep their places and links."""
    model_dir, src, tgt = synthetic
    sources = read_lines(src)[:3]
    targets = read_lines(tgt)[:3]
    huge = "a " * 500_000
    aligner = align.Aligner(model_dir)
    aligner.forward, aligner.reverse = _SpyModel(aligner.forward), _SpyModel(aligner.reverse)
    result = aligner.align([s.split() for s in [sources[0], huge, sources[2]]],
                           [t.split() for t in [targets[0], targets[1], targets[2]]])
    assert result.too_long_lines == (2,)
    for lines in (result.forward, result.reverse, result.gdfa):
        assert lines[1] == "" and lines[0] and lines[2]
    seen = aligner.forward.lengths + aligner.reverse.lengths
    assert seen and max(max(pair) for pair in seen) <= MAX_TOKENS
    # and the same through the files: a target over the limit keeps its pair out as well
    s_path, t_path = tmp_path / "x.src", tmp_path / "x.tgt"
    write_lines(s_path, [sources[0], huge.strip(), sources[2], sources[1]])
    write_lines(t_path, [targets[0], targets[1], targets[2], huge.strip()])
    out = [tmp_path / f"x.{kind}" for kind in ("forward", "reverse", "gdfa")]
    found = align.align_files(model_dir, s_path, t_path, *out)
    assert found.too_long_lines == (2, 4)
    for path in out:
        lines = read_lines(path)
        assert len(lines) == 4 and [bool(line) for line in lines] == [True, False, True, False]


def test_pairs_over_the_limit_are_not_trained_on(tmp_path):
    pairs = synthetic_pairs(50)
    pairs.insert(3, (" ".join(["s1"] * (MAX_TOKENS + 1)), "the t1"))
    src, tgt = write_corpus(tmp_path, pairs, "train")
    settings = align.train_models([(src, tgt)], tmp_path / "model", iterations=1)
    assert (settings["training_pairs"], settings["skipped_pairs"]) == (50, 1)


# -- sharding ----------------------------------------------------------------------------------


def test_sharded_alignment_equals_unsharded(tmp_path, newstest):
    model_dir, src, tgt = newstest
    src_sents, tgt_sents = align.read_parallel(src, tgt)
    # A too-long pair in the second shard checks that positions are shifted correctly.
    src_sents[200] = ["x"] * (LIMIT + 1)
    single = align.align_sentences(model_dir, src_sents, tgt_sents, jobs=1)
    assert single.too_long_lines == (201,)
    assert align.align_sentences(model_dir, src_sents, tgt_sents, jobs=2) == single
    assert align.align_sentences(model_dir, src_sents, tgt_sents, jobs=3) == single


def test_real_alignments_are_consistent(newstest):
    model_dir, src, tgt = newstest
    src_sents, tgt_sents = align.read_parallel(src, tgt)
    result = align.align_sentences(model_dir, src_sents, tgt_sents)
    same_word_links = same_word_pairs = 0
    for s, t, fwd, rev, gdfa in zip(src_sents, tgt_sents, result.forward, result.reverse,
                                    result.gdfa, strict=True):
        f, r, g = points(fwd), points(rev), points(gdfa)
        assert all(i < len(s) and j < len(t) for i, j in f | r)
        assert f & r <= g <= f | r
        assert sorted(g) == align.grow_diag_final_and(f, r, len(s), len(t))
        assert fwd.split() == [f"{i}-{j}" for i, j in sorted(f)]  # sorted Pharaoh
        # Words spelt alike once on each side (names, numbers) are mostly linked; many are
        # singletons in 300 training pairs, so not all. A shifted or transposed output would
        # link almost none.
        for word in set(s) & set(t):
            if s.count(word) == 1 and t.count(word) == 1 and len(word) > 3:
                same_word_pairs += 1
                same_word_links += (s.index(word), t.index(word)) in g
    assert same_word_pairs > 50
    assert same_word_links / same_word_pairs > 0.5


# -- command line ------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="phenomt")
    align.register_cli(CommandTree(parser))
    return parser


def run(*argv: str | Path) -> int:
    args = build_parser().parse_args([str(a) for a in argv])
    return args.handler(args)


def test_cli_train_and_apply(tmp_path):
    model_dir = tmp_path / "model"
    assert run("align", "train", "--src", DATA / "tiny.de", "--tgt", DATA / "tiny.en",
               "--extra-src", DATA / "extra.de", "--extra-tgt", DATA / "extra.en",
               "--model-dir", model_dir, "--iterations", "3") == 0
    settings = align.read_settings(model_dir)
    assert settings["iterations"] == 3 and len(settings["corpora"]) == 2

    outs = [tmp_path / name for name in ("fwd.al", "rev.al", "gdfa.al")]
    assert run("align", "apply", "--model-dir", model_dir, "--src", DATA / "tiny.de",
               "--tgt", DATA / "tiny.en", "--out-forward", outs[0], "--out-reverse", outs[1],
               "--out-gdfa", outs[2], "--jobs", "2") == 0
    src_sents, tgt_sents = align.read_parallel(DATA / "tiny.de", DATA / "tiny.en")
    expected = align.align_sentences(model_dir, src_sents, tgt_sents)
    assert [read_lines(o) for o in outs] == [expected.forward, expected.reverse, expected.gdfa]
    assert all(len(read_lines(o)) == 10 for o in outs)


def test_cli_rejects_unmatched_extra_corpora(tmp_path, capsys):
    with pytest.raises(SystemExit):
        run("align", "train", "--src", DATA / "tiny.de", "--tgt", DATA / "tiny.en",
            "--extra-src", DATA / "extra.de", "--model-dir", tmp_path / "m")
    assert "--extra-tgt" in capsys.readouterr().err


def test_cli_apply_without_models_raises_input_error(tmp_path):
    with pytest.raises(InputError, match="no trained models"):
        run("align", "apply", "--model-dir", tmp_path, "--src", DATA / "tiny.de",
            "--tgt", DATA / "tiny.en", "--out-forward", tmp_path / "f",
            "--out-reverse", tmp_path / "r", "--out-gdfa", tmp_path / "g")


# -- the cache of trained models -------------------------------------------------------------


def _model_bytes(model_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(model_dir.iterdir())}


def test_cached_models_are_the_bytes_a_training_writes(tmp_path, monkeypatch):
    first = write_corpus(tmp_path, synthetic_pairs(60, 80, seed=1), "first")
    cache = tmp_path / "cache"
    settings, reused = align.train_or_reuse([first], tmp_path / "a", 2, cache)
    assert reused is None
    [entry] = cache.iterdir()
    assert entry.name == align.cache_key([first], 2)
    # the same bytes under other names: copied, nothing trained, and settings.json names the
    # files of this call, as a training of them would
    (tmp_path / "copy").mkdir()
    copy = write_corpus(tmp_path / "copy", synthetic_pairs(60, 80, seed=1), "renamed")
    monkeypatch.setattr(align, "_fit", lambda *a: pytest.fail("trained although cached"))
    again, reused = align.train_or_reuse([copy], tmp_path / "b", 2, cache)
    assert reused == entry
    monkeypatch.undo()
    align.train_models([copy], tmp_path / "fresh", 2)
    assert _model_bytes(tmp_path / "b") == _model_bytes(tmp_path / "fresh")
    assert again["corpora"] == [{"src": str(copy[0]), "tgt": str(copy[1]), "lines": 60}]
    assert {k: v for k, v in again.items() if k != "corpora"} == \
        {k: v for k, v in settings.items() if k != "corpora"}
    # the copied models align as the trained ones
    sents = align.read_parallel(*copy)
    assert align.align_sentences(tmp_path / "b", *sents) == \
        align.align_sentences(tmp_path / "a", *sents)


def test_the_cache_key_follows_content_order_and_settings(tmp_path):
    a = write_corpus(tmp_path, synthetic_pairs(20, 30, seed=2), "a")
    b = write_corpus(tmp_path, synthetic_pairs(20, 30, seed=3), "b")
    key = align.cache_key([a], 5)
    assert align.cache_key([a], 5) == key
    assert len({key, align.cache_key([a], 4), align.cache_key([b], 5),
                align.cache_key([a, b], 5), align.cache_key([b, a], 5),
                align.cache_key([(a[1], a[0])], 5)}) == 6


def test_a_damaged_cache_entry_is_trained_again_and_replaced(tmp_path, caplog):
    corpus = write_corpus(tmp_path, synthetic_pairs(40, 50, seed=4), "c")
    cache = tmp_path / "cache"
    align.train_or_reuse([corpus], tmp_path / "a", 2, cache)
    [entry] = cache.iterdir()
    lexicon = next(entry.glob("*.fa_lexnd"))
    whole = lexicon.read_bytes()
    lexicon.write_bytes(whole[:-8])
    _, reused = align.train_or_reuse([corpus], tmp_path / "b", 2, cache)
    assert reused is None and "unusable" in caplog.text
    assert _model_bytes(tmp_path / "b") == _model_bytes(tmp_path / "a")
    # the training took the damaged entry's place
    assert lexicon.read_bytes() == whole
    assert align.train_or_reuse([corpus], tmp_path / "c", 2, cache)[1] == entry


def test_an_unwritable_align_cache_only_warns(tmp_path, caplog):
    corpus = write_corpus(tmp_path, synthetic_pairs(30, 40, seed=5), "d")
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    settings, reused = align.train_or_reuse([corpus], tmp_path / "m", 2, blocked / "align")
    assert reused is None and settings == align.read_settings(tmp_path / "m")
    assert "could not keep the aligner models in the cache" in caplog.text


def test_cli_train_goes_through_the_cache_named_by_the_environment(tmp_path, monkeypatch,
                                                                  capsys):
    monkeypatch.setenv("PHENOMT_CACHE", str(tmp_path / "cache"))
    args = ["align", "train", "--src", DATA / "tiny.de", "--tgt", DATA / "tiny.en",
            "--iterations", "2", "--model-dir"]
    assert run(*args, tmp_path / "first") == 0
    assert "from the cache" not in capsys.readouterr().err
    assert len(list((tmp_path / "cache" / "align").iterdir())) == 1
    assert run(*args, tmp_path / "second") == 0
    assert "from the cache" in capsys.readouterr().err
    assert _model_bytes(tmp_path / "second") == _model_bytes(tmp_path / "first")


def test_a_cache_folder_appears_whole_and_the_first_one_kept_stays(tmp_path):
    from phenomt.core import cache

    files = []
    for name, text in (("a.txt", "one\n"), ("b.txt", "two\n")):
        files.append(tmp_path / name)
        files[-1].write_text(text, encoding="utf-8")
    entry = tmp_path / "cache" / "key"
    assert cache.keep_folder(files, entry) is True
    assert sorted(p.name for p in entry.iterdir()) == ["a.txt", "b.txt"]
    files[0].write_text("changed\n", encoding="utf-8")
    assert cache.keep_folder(files, entry) is False  # another run kept it first
    assert (entry / "a.txt").read_text(encoding="utf-8") == "one\n"
    # no partial folder is left beside the entry, whichever way it went
    assert [p.name for p in entry.parent.iterdir()] == ["key"]
    with pytest.raises(OSError):
        cache.keep_folder([tmp_path / "missing.txt"], tmp_path / "cache" / "other")
    assert [p.name for p in entry.parent.iterdir()] == ["key"]
