"""Paths, options and checks of the NAT stages (phenomt.plan.nat) on the default config."""

import copy
import math

import pytest

from phenomt.nat.recipes import NAT_MODELS, parse_nat_system
from phenomt.plan import Plan, load_config, validate_config
from tests.conftest import ROOT

TEACHER = "transformer.de-en"
NAT = f"results/nat/{TEACHER}"


@pytest.fixture
def config():
    return load_config(ROOT / "config" / "config.yaml")


@pytest.fixture
def plan(config):
    return Plan(config)


def with_nat(config, **nat):
    changed = copy.deepcopy(config)
    changed["nat"].update(nat)
    return Plan(validate_config(changed))


def test_default_config_runs_every_model_on_both_data(plan):
    plan.check()
    assert plan.nat.teachers == [TEACHER]
    assert plan.nat.nat_models == list(NAT_MODELS)
    assert len(plan.nat.systems()) == 10 and "glat_oaxe.distilled" in plan.nat.systems()
    tables = plan.nat.tables()
    for name in ("nat_table5", "nat_table10", "nat_speed"):
        assert f"results/tables/{name}.md" in tables and f"results/tables/{name}.csv" in tables
    assert not any("agreement" in t for t in tables)  # no annotations configured
    assert set(plan.nat.tables()) <= set(plan.tables())


def test_system_names():
    assert parse_nat_system("cmlm_oaxe.distilled") == ("cmlm_oaxe", "distilled")
    assert parse_nat_system("ar") == ("ar", "raw")
    for bad in ("cmlm", "cmlm.kd", "lstm.raw"):
        with pytest.raises(ValueError, match="not a NAT system"):
            parse_nat_system(bad)


def test_data_locations(plan):
    assert plan.nat.data_bin(TEACHER, "raw") == f"results/models/{TEACHER}/bin"
    assert plan.nat.system_data_bin(TEACHER, "dat.distilled") == f"{NAT}/bin-distilled"
    assert plan.nat.checkpoint(TEACHER, "ar") == f"results/models/{TEACHER}/model.pt"
    assert plan.nat.checkpoint(TEACHER, "glat.raw") == f"{NAT}/glat.raw/model.pt"
    assert plan.nat.valid_reference(TEACHER) == \
        f"results/models/{TEACHER}/data/newstest2020.de-en.bpe.tgt"
    assert plan.nat.speed_json(TEACHER, "ar") == f"{NAT}/speed/ar.json"


def test_the_ar_row_reuses_the_teachers_translations(plan):
    corpus = "newstest2013.de-en"
    assert plan.nat.hyp(TEACHER, "ar", corpus, "bpe") == \
        f"results/models/{TEACHER}/hyp/{corpus}.bpe"
    assert plan.nat.hyp(TEACHER, "dat.raw", corpus, "txt") == f"{NAT}/dat.raw/hyp/{corpus}.txt"
    with pytest.raises(ValueError, match="kind"):
        plan.nat.hyp(TEACHER, "ar", corpus, "tok")


def test_train_options_layer_recipe_training_and_model_overrides(plan):
    cmlm = plan.nat.train_options(TEACHER, "cmlm.raw")
    assert cmlm["arch"] == "cmlm_transformer" and cmlm["noise"] == "random_mask"
    assert cmlm["max_update"] == plan.config["nat"]["training"]["max_update"]  # nat.training
    assert cmlm["save_interval_updates"] == plan.config["nat"]["training"]["save_interval_updates"]
    dat = plan.nat.train_options(TEACHER, "dat.distilled")
    assert dat["max_update"] == plan.config["nat"]["model_overrides"]["dat"]["max_update"]
    assert dat["user_dir"].endswith("fairseq_ext") and dat["dat_upsample_scale"] == 8  # recipe
    assert dat["max_tokens"] == plan.config["nat"]["model_overrides"]["dat"].get("max_tokens",
                                                                              2048)
    oaxe = plan.nat.train_options(TEACHER, "cmlm_oaxe.distilled")
    assert oaxe["criterion"] == "phenomt_oaxe"
    assert oaxe["finetune_from_model"] == f"{NAT}/cmlm.distilled/model.pt"  # same data
    assert plan.nat.base_checkpoints(TEACHER, "glat_oaxe.raw") == [f"{NAT}/glat.raw/model.pt"]
    assert plan.nat.base_checkpoints(TEACHER, "glat.raw") == []
    assert plan.nat.base_checkpoints(TEACHER, "ar") == []


def test_paper_scale_update_freq_follows_an_overridden_token_budget(config):
    plan = with_nat(config, scale="paper", training={"max_tokens": 4096},
                    resources={"gpu": 2}, model_overrides={})
    options = plan.nat.train_options(TEACHER, "cmlm.raw")
    assert options["update_freq"] == math.ceil(480_000 / (4096 * 2)) == 59
    fixed = with_nat(config, scale="paper", training={"max_tokens": 4096, "update_freq": 3},
                     model_overrides={})
    assert fixed.nat.train_options(TEACHER, "cmlm.raw")["update_freq"] == 3


def test_training_uses_every_gpu_and_decoding_one(config):
    plan = with_nat(config, resources={"gpu": 8, "mem_mb": 1000},
                    model_resources={"dat": {"mem_mb": 2000}})
    assert plan.nat.resources("cmlm.raw") == {"gpu": 8, "mem_mb": 1000, "runtime": 240,
                                               "threads": 1}
    assert plan.nat.resources("dat.raw")["mem_mb"] == 2000
    assert plan.nat.resources("dat.raw", decoding=True)["gpu"] == 1
    assert plan.nat.resources("ar", decoding=True)["gpu"] == 1
    assert Plan(config).nat.resources("ar", decoding=True)["gpu"] == 0


def test_decode_options(plan):
    ar = plan.nat.decode_options(TEACHER, "ar")
    assert ar == plan.models.decode_options(TEACHER) and ar["beam"] == 1  # smoke: greedy
    cmlm = plan.nat.decode_options(TEACHER, "cmlm.raw")
    assert cmlm["iter_decode_max_iter"] == 0 and cmlm["iter_decode_with_beam"] == 5
    assert cmlm["batch_size"] == plan.config["nat"]["decode"]["batch_size"]
    assert plan.nat.decode_options(TEACHER, "glat.raw")["iter_decode_with_beam"] == 1
    assert "greedy" in plan.nat.decode_options(TEACHER, "dat.raw")["model_overrides"]
    # the teacher's decoding with nat.distill over it (greedy with a length cap by default)
    distill = plan.nat.distill_options(TEACHER)
    assert distill == {**plan.models.decode_options(TEACHER), **plan.config["nat"]["distill"]}
    assert distill["beam"] == 1 and distill["max_len_a"] == 1.2


def test_redundancy_settings_follow_the_target_language(config):
    config = copy.deepcopy(config)
    config["models"]["transformer.en-zh"] = {
        **config["models"]["transformer.zh-en"], "src": "en", "tgt": "zh"}
    plan = with_nat(config, teacher=[TEACHER, "transformer.en-zh"])
    plan.check()
    english = plan.nat.redundancy_options(TEACHER)
    assert english["stopword_count"] == 10
    assert english["stopword_corpus"] == f"results/models/{TEACHER}/data/train.bpe.tgt"
    assert english["embeddings"] == f"results/models/{TEACHER}/model.pt"
    assert english["embeddings_dict"] == f"results/models/{TEACHER}/bin/dict.tgt.txt"
    assert plan.nat.redundancy_options("transformer.en-zh")["stopword_count"] == 3
    # the dictionary's stopwords by the paper's rule (Appendix B.3): 3 for Chinese, else 10
    assert plan.nat.section["redundancy"]["embedding_stopword_count"] == "paper"
    assert plan.nat.redundancy_options("transformer.en-zh")["embedding_stopword_count"] == 3
    assert english["embedding_stopword_count"] == 10
    assert "--embedding-stopword-count 3" in plan.nat.redundancy_args("transformer.en-zh")
    args = plan.nat.redundancy_args("transformer.en-zh")
    assert "--stopword-count 3" in args and "--threshold 0.8" in args


def test_results_tables_pair_bleu_and_redundancy_files(plan):
    scores = plan.nat.table_scores()
    # the AR row, then every model on raw and on distilled data (both tables hold both)
    assert len(scores) == 1 + 2 * len(NAT_MODELS)
    bleu, redundancy = scores[0]
    assert bleu == f"{NAT}/ar/scores/newstest2013.de-en.bleu.json"
    assert redundancy == f"{NAT}/ar/scores/newstest2013.de-en.redundancy.json"
    assert sum(".distilled/" in b for b, _ in scores) == len(NAT_MODELS)
    assert sum(".raw/" in b for b, _ in scores) == len(NAT_MODELS)
    assert plan.nat.table_selections()[0] == f"{NAT}/cmlm.raw/average.json"
    assert plan.nat.bleu_meta(TEACHER, "dat.raw", "newstest2013.de-en").split() == [
        f"teacher={TEACHER}", "system=dat.raw", "model=dat", "data=raw",
        "testset=newstest2013.de-en", "direction=de-en"]


def test_one_data_condition_still_gives_both_results_tables(config):
    plan = with_nat(config, data=["raw"])
    assert plan.nat.result_tables() == ["5", "10"]
    assert plan.nat.speed_systems(TEACHER) == ["ar", *(f"{m}.raw" for m in NAT_MODELS)]
    assert not any(".distilled/" in b for b, _ in plan.nat.table_scores())


def test_speed_settings(config, plan):
    assert plan.nat.speed_data() == "distilled"
    # the default teacher decodes greedily: no second AR row
    assert plan.nat.speed_systems(TEACHER)[0] == "ar"
    assert len(plan.nat.speed_systems(TEACHER)) == 6
    assert plan.nat.speed_corpus(TEACHER) == "newstest2013.de-en"
    sentences = config["nat"]["speed"]["sentences"]
    assert f"first {sentences} sentences" in plan.nat.speed_notes()[0]
    assert "AR: the teacher's greedy search" in plan.nat.speed_notes()[0]
    config["defaults"]["decode"]["beam"] = 4
    beam = Plan(config)
    assert "AR: the teacher's beam search, beam 4" in beam.nat.speed_notes()[0]
    # a beam-search teacher is also timed greedily, with its own checkpoint
    assert beam.nat.speed_systems(TEACHER)[:2] == ["ar", "ar_greedy"]
    assert beam.nat.decode_options(TEACHER, "ar_greedy")["beam"] == 1
    assert beam.nat.checkpoint(TEACHER, "ar_greedy") == beam.nat.checkpoint(TEACHER, "ar")
    assert beam.nat.model_name("ar_greedy") == "ar_greedy"


def test_scale_notes_state_updates_and_size(config, plan):
    """The notes carry the config's own numbers: a shared value, per-model overrides and
    fine-tuning updates for the +OaXE rows."""
    changed = with_nat(config, training={"max_update": 30},
                       model_overrides={"dat": {"max_update": 7},
                                        "cmlm_oaxe": {"max_update": 11}},
                       average=3)
    notes = " ".join(changed.nat.scale_notes())
    assert "CMLM 30 updates" in notes and "DAT 7 updates" in notes
    assert "CMLM+OaXE 11 fine-tuning updates" in notes
    assert "GLAT+OaXE 30 fine-tuning updates" in notes
    assert "2+2 layers, 128 dimensions" in notes and "best 3" in notes
    assert f"best {config['nat']['average']}" in " ".join(plan.nat.scale_notes())


def test_scale_notes_of_the_paper_recipe(config):
    # +OaXE is bounded by epochs at paper scale (Appendix B.1), with a checkpoint each; the
    # note says so instead of an update count, and that the paper ensembles its checkpoints.
    notes = " ".join(with_nat(config, scale="paper", training={}, model_overrides={},
                              resources={"gpu": 8}).nat.scale_notes())
    assert "CMLM+OaXE 10 epochs of fine-tuning from the selected base model, a checkpoint " \
        "every epoch" in notes
    assert "CMLM 300000 updates, a checkpoint every 10000;" in notes
    assert "None" not in notes
    assert "(interval, epoch, last, best by loss)" in notes and "ensembles" in notes
    assert "up to 480000 tokens per update" in notes  # 8 GPUs x 7,500 tokens x 8 steps


@pytest.mark.parametrize("change, message", [
    ({"models": ["cmlm_oaxe"]}, "fine-tuned from 'cmlm'"),
    ({"teacher": "transformer.xx"}, "not declared"),
    ({"teacher": [TEACHER, TEACHER]}, "same direction"),
    ({"data": ["raw"], "speed": {"data": "distilled"}}, "speed.data"),
    ({"speed": {"corpus": "newstest2020.de-en"}}, "not a test set"),
    ({"annotations": {"file": "a.tsv", "hyp": {"s": "s.txt"}, "teacher": "nope"}},
     "undeclared teacher"),
])
def test_check_catches_bad_nat_sections(config, change, message):
    with pytest.raises(ValueError, match=message):
        with_nat(config, **change).check()


def test_no_nat_section_means_no_tables(config):
    config = copy.deepcopy(config)
    del config["nat"]
    plan = Plan(config)
    plan.check()
    assert plan.nat.tables() == [] and plan.nat.scale_notes() == []


def test_agreement_inputs_and_arguments(config):
    plan = with_nat(config, annotations={
        "file": "ann.tsv", "vectors": "vec.txt", "src": "src.txt",
        "hyp": {"cmlm": "cmlm.txt", "dat": "dat.txt"}})
    assert "results/tables/nat_agreement.md" in plan.nat.tables()
    files = plan.nat.agreement_inputs()
    assert files == {"annotations": "ann.tsv", "hyps": ["cmlm.txt", "dat.txt"],
                     "src": "src.txt", "embeddings": "vec.txt"}
    args = plan.nat.agreement_args()
    assert "--hyp cmlm=cmlm.txt --hyp dat=dat.txt" in args and "--threshold 0.8" in args
    assert "--stopword-count" not in args  # stopwords come only with a teacher
    assert plan.nat.agreement_file_args(files) == "--src src.txt --embeddings vec.txt"
    with_teacher = with_nat(config, annotations={
        "file": "ann.tsv", "teacher": TEACHER, "hyp": {"cmlm": "cmlm.txt"}})
    files = with_teacher.nat.agreement_inputs()
    assert files["dicts"] == f"results/models/{TEACHER}/bin"
    assert with_teacher.nat.agreement_file_args(files).endswith(
        f"--embeddings-dict results/models/{TEACHER}/bin/dict.tgt.txt")
    assert "--stopword-count 10" in with_teacher.nat.agreement_args()


def test_schema_accepts_the_nat_section_and_rejects_unknown_models(config):
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    schema = str(ROOT / "workflow" / "schemas" / "config.schema.yaml")
    validate(copy.deepcopy(config), schema)
    bad = copy.deepcopy(config)
    bad["nat"]["models"] = ["cmlm", "levenshtein"]
    with pytest.raises(WorkflowError):
        validate(bad, schema)
    bad = copy.deepcopy(config)
    bad["nat"]["average"] = 0
    with pytest.raises(WorkflowError):
        validate(bad, schema)


def test_the_schema_lists_the_nat_models_of_the_recipes():
    """One list of NAT models: the schema's enum and default are the recipes' list."""
    import yaml

    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert schema["$defs"]["nat_model"]["enum"] == list(NAT_MODELS)
    assert schema["properties"]["nat"]["properties"]["models"]["default"] == list(NAT_MODELS)
