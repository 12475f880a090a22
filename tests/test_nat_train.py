"""Each NAT model trains for a few updates with fairseq-train on CPU and decodes the test set.

The corpus is tiny and built here (fairseq-preprocess into a temporary folder); the models
are the demo recipes of ``phenomt.nat.recipes`` shrunk further by ``TINY_TRAIN``.
"""

import re

import pytest

from tests.conftest import require_fairseq

require_fairseq()  # first: fairseq needs torch, so a missing torch fails under CI too
pytest.importorskip("torch")

from tests.nat_helpers import build_data_bin, generate, train  # noqa: E402

pytestmark = pytest.mark.fairseq

_UPDATES = re.compile(r"num_updates (\d+)")


def _updates(log: str) -> int:
    return max(int(n) for n in _UPDATES.findall(log))


@pytest.fixture(scope="module")
def data_bin(tmp_path_factory):
    return build_data_bin(tmp_path_factory.mktemp("nat_data"))


@pytest.fixture(scope="module")
def cmlm(data_bin, tmp_path_factory):
    checkpoint, log, _ = train("cmlm", data_bin, tmp_path_factory.mktemp("cmlm"))
    return checkpoint, log


@pytest.fixture(scope="module")
def glat(data_bin, tmp_path_factory):
    checkpoint, log, _ = train("glat", data_bin, tmp_path_factory.mktemp("glat"))
    return checkpoint, log


@pytest.fixture(scope="module")
def dat(data_bin, tmp_path_factory):
    checkpoint, log, _ = train("dat", data_bin, tmp_path_factory.mktemp("dat"))
    return checkpoint, log


def _check_hypotheses(hypotheses: list[str]) -> None:
    # parse_hypotheses already failed if a sentence had no H- line; after 3 updates the
    # output itself may well be empty.
    assert len(hypotheses) == 8 and all(isinstance(h, str) for h in hypotheses)


def test_cmlm_trains_and_decodes(data_bin, cmlm):
    checkpoint, log = cmlm
    assert _updates(log) == 3
    hypotheses, _ = generate("cmlm", data_bin, checkpoint)
    _check_hypotheses(hypotheses)


def test_glat_trains_and_decodes(data_bin, glat):
    checkpoint, log = glat
    assert _updates(log) == 3
    hypotheses, _ = generate("glat", data_bin, checkpoint)
    _check_hypotheses(hypotheses)


def test_cmlm_oaxe_fine_tunes_the_cmlm_checkpoint(data_bin, cmlm, tmp_path):
    checkpoint, log, _ = train("cmlm_oaxe", data_bin, tmp_path / "cmlm_oaxe",
                               checkpoint=cmlm[0])
    assert str(cmlm[0]) in log and "oaxe_kept" in log
    assert _updates(log) == 3  # the update count restarts for the fine-tuning
    hypotheses, _ = generate("cmlm_oaxe", data_bin, checkpoint)
    _check_hypotheses(hypotheses)


def test_glat_oaxe_fine_tunes_the_glat_checkpoint(data_bin, glat, tmp_path):
    checkpoint, log, _ = train("glat_oaxe", data_bin, tmp_path / "glat_oaxe",
                               checkpoint=glat[0])
    assert str(glat[0]) in log and "oaxe_kept" in log
    hypotheses, _ = generate("glat_oaxe", data_bin, checkpoint)
    _check_hypotheses(hypotheses)


def test_dat_trains_and_decodes_greedy_and_lookahead(data_bin, dat):
    checkpoint, log = dat
    assert _updates(log) == 3
    greedy, _ = generate("dat", data_bin, checkpoint)
    _check_hypotheses(greedy)
    overrides = '{"dat_decode_strategy": "lookahead"}'
    lookahead, _ = generate("dat", data_bin, checkpoint, model_overrides=overrides)
    _check_hypotheses(lookahead)


@pytest.mark.filterwarnings("ignore:Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
def test_dat_strategy_override_reaches_the_model(dat):
    """What fairseq-generate does with --model-overrides, done in-process."""
    import ast

    from fairseq import checkpoint_utils

    import phenomt.fairseq_ext  # noqa: F401  (registers the plugins)
    from phenomt.nat.recipes import generate_options

    for strategy in ("greedy", "lookahead"):
        overrides = ast.literal_eval(generate_options("dat")["model_overrides"])
        overrides["dat_decode_strategy"] = strategy
        models, _ = checkpoint_utils.load_model_ensemble([str(dat[0])],
                                                          arg_overrides=overrides)
        assert models[0].args.dat_decode_strategy == strategy
