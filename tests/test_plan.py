import pytest

from phenomt.core.nmt import fairseq_options
from phenomt.plan import Plan, load_config, validate_config
from phenomt.plan.args import shell_args
from phenomt.plan.data import ordinal
from tests.conftest import ROOT


def test_fairseq_options():
    assert fairseq_options({"max_update": 50, "share_all_embeddings": True, "cpu": False,
                            "adam_betas": "(0.9,0.98)", "x": None}) == [
        "--adam-betas", "(0.9,0.98)", "--max-update", "50", "--share-all-embeddings"]


def test_shell_args_quotes():
    assert shell_args([("--a", "x y"), ("--b", None), ("--c", True), ("--d", [1, 2])]) == \
        "--a 'x y' --c --d 1 2"


@pytest.fixture
def plan():
    return Plan(load_config(ROOT / "config" / "config.yaml"))


def test_default_config_is_consistent(plan):
    plan.check()
    model = plan.models.settings("transformer.de-en")
    assert model["training"]["max_update"] > 0
    assert model["architecture"]["arch"] == "transformer"
    assert "newstest2013.de-en" in model["test"]
    assert not any(c.startswith("books") for c in model["train"])  # Books stays out
    assert plan.models.bpe_merges("transformer.zh-en") == 6000  # override
    assert plan.models.bpe_min_frequency("transformer.zh-en") == 2  # default kept


def test_paths(plan):
    assert plan.models.bpe_input("transformer.de-en", "train", "src") == \
        "results/models/transformer.de-en/data/train.tok.src"
    assert plan.models.bpe_input("transformer.de-en", "newstest2013.de-en", "tgt") == \
        "results/data/tok/newstest2013.de-en.en"
    assert plan.models.bleu_tokenizer("transformer.zh-en") == "13a"
    assert "results/tables/bleu.md" in plan.tables()
    assert "results/data/raw/newstest2020.zh-en.docids" in plan.targets()


def test_check_catches_bad_references(plan):
    import copy

    config = copy.deepcopy(plan.config)
    config["models"] = {"m": {"src": "de", "tgt": "en", "train": ["newstest2017.zh-en"],
                              "valid": "newstest2020.de-en", "test": ["newstest2013.de-en"]}}
    with pytest.raises(ValueError, match="not \\['de', 'en'\\]"):
        Plan(validate_config(config)).check()
    config["models"]["m"]["train"] = ["nope"]
    with pytest.raises(KeyError, match="not declared"):
        Plan(config).check()


def test_ldd_sets_follow_the_source_language(plan):
    from phenomt.ldd.extract import LEXICAL_BINS as EXTRACTION_BINS
    from phenomt.plan.ldd import LEXICAL_BINS

    de_sets, en_sets = plan.ldd.sets("de-en"), plan.ldd.sets("en-de")
    assert not any(s.startswith("preposition-stranding") for s in de_sets)
    assert "preposition-stranding.ge1" in en_sets
    assert de_sets[-1] == "reorder.ge5" and len(de_sets) == 2 * 10 + 1
    assert [b.label for b in EXTRACTION_BINS] == LEXICAL_BINS
    assert plan.ldd.set_key("news", "en-de", "particle.ge1") == "news/en-de/particle/ge1"


def test_locality_run_options():
    plan = Plan(load_config(ROOT / "config" / "findings.yaml"))  # 7 runs x 3 seeds
    runs = plan.locality.runs()
    assert "perposemb.learned.transformer.s3" in runs and len(runs) == 21
    perposemb = plan.locality.train_options("perposemb.learned.transformer.s1")
    assert perposemb["arch"] == "transformer_permuted_positions_tiny"
    assert perposemb["user_dir"].endswith("fairseq_ext") and perposemb["encoder_learned_pos"]
    sinusoidal = plan.locality.train_options("regular.sinusoidal.transformer.s1")
    assert sinusoidal["arch"] == "transformer_tiny" and "encoder_learned_pos" not in sinusoidal
    assert plan.locality.train_options("permuted.none.lstm.s1")["arch"] == "lstm"


def test_ldd_check_catches_wrong_direction(plan):
    import copy

    config = copy.deepcopy(plan.config)
    config["ldd"]["directions"]["de-en"]["models"] = ["transformer.en-de"]
    with pytest.raises(ValueError, match="does not translate de-en"):
        Plan(config).check()


def test_multi_bleu_setting_scores_tokenized_text(plan):
    import copy

    config = copy.deepcopy(plan.config)
    default = Plan(config).ldd.set_inputs("transformer.de-en", "news", "particle.ge1")
    assert default["hyp"].endswith("hyp/newstest2013.de-en.txt")
    assert default["ref"] == "results/data/raw/newstest2013.de-en.en"
    assert default["ids"] == "results/ldd/sets/news/de-en/particle.ge1.ids"
    config["ldd"]["tokenize"] = "none"
    tokenized = Plan(config).ldd.set_inputs("transformer.de-en", "news", "baseline.all")
    assert tokenized["hyp"].endswith("hyp-tok/newstest2013.de-en.txt")
    assert tokenized["ref"] == "results/data/tok/newstest2013.de-en.en"
    assert "ids" not in tokenized


def test_document_models_build_on_the_sentence_model(plan):
    docs = plan.documents
    assert docs.sentence == "transformer.zh-en"
    assert docs.systems() == ["sent-transformer", "doc-transformer", "concat"]
    assert set(docs.testsets()) == {"lexcons.test", "doc2doc.test", "newstest2020.zh-en"}
    step2 = docs.train_options("doc-transformer")
    # step 2: the sentence model's sizes, its weights, only the document parameters trained
    assert step2["arch"] == "doc_transformer" and step2["task"] == "translation_doc"
    assert step2["encoder_embed_dim"] == 128 and step2["doc_freeze_sentence_params"] is True
    assert step2["finetune_from_model"] == plan.models.checkpoint("transformer.zh-en")
    # their own settings over the sentence model's
    own = plan.config["lexcons"]["models"]
    assert step2["max_update"] == own["doc_transformer"]["training"]["max_update"]
    concat = docs.train_options("concat")
    assert concat["arch"] == "transformer" and "finetune_from_model" not in concat
    assert concat["max_tokens"] == own["concat"]["training"]["max_tokens"] != \
        plan.models.settings("transformer.zh-en")["training"]["max_tokens"]
    # the Doc-Transformer reuses the sentence model's subwords and dictionary
    assert "--dict-dir results/models/transformer.zh-en/bin" in docs.binarize_args(
        "doc-transformer")
    assert docs.pair_inputs("doc-transformer", "train")[0] == \
        "results/models/transformer.zh-en/data/train.bpe.src"
    assert "--joined-dictionary" in docs.binarize_args("concat")
    assert docs.generate_args("concat") == "--concat-separator '<brk>'"
    assert docs.part_docids("train") == "results/models/transformer.zh-en/data/train.docids"


def test_lexcons_sets_are_the_released_part_or_converted(plan):
    lex = plan.lexcons
    assert lex.released_set() == "lexcons.test"
    assert lex.set_args("lexcons.test").startswith("subset --testset resources/trees/lexcons")
    assert lex.set_args("doc2doc.test").startswith("convert --src results/data/raw/")
    # one aligner: the whole released set and the converted sets (not the released part again)
    assert lex.align_testsets() == ["resources/trees/lexcons", "results/lexcons/sets/doc2doc.test",
                                    "results/lexcons/sets/newstest2020.zh-en"]
    assert lex.score_hyp("doc2doc.test", "reference") == "results/data/raw/doc2doc.test.en"
    assert "--n-sent resources/downloads/doc2doc.n_sent" in lex.tcp_args("concat")


def test_document_models_need_document_ids():
    config = load_config(ROOT / "config" / "config.yaml")
    config["corpora"]["pdc.sample"]["docids"] = None
    with pytest.raises(ValueError, match="need document ids for \\['pdc.sample'\\]"):
        Plan(config).check()
    config = load_config(ROOT / "config" / "config.yaml")
    config["corpora"]["doc2doc.test"]["limit"] = 300
    with pytest.raises(ValueError, match="lexcons.tcp: .* whole documents"):
        Plan(config).check()


def test_a_system_may_not_take_a_challenge_set_table_column_name():
    # the challenge-set tables have a column per system beside "sentences", "distance", ...:
    # such a name would overwrite one of them
    config = load_config(ROOT / "config" / "config.yaml")
    outputs = config["systems"]["testsets"]["newstest2017.en-de"]["outputs"]
    outputs["distance"] = outputs.pop("KIT")
    with pytest.raises(ValueError, match="newstest2017.en-de: 'distance' cannot name a system"):
        Plan(config).check()


def test_ordinals_and_document_samples_in_words():
    assert [ordinal(n) for n in (1, 2, 3, 4, 10, 11, 12, 13, 21, 102, 111)] == [
        "1st", "2nd", "3rd", "4th", "10th", "11th", "12th", "13th", "21st", "102nd", "111th"]
    config = load_config(ROOT / "config" / "config.yaml")
    config["corpora"]["doc2doc.test"].update(document_step=10, documents=None)
    data = Plan(config).data
    assert data.document_sample("doc2doc.test", "148") == "every 10th of its 148 documents"
    config["corpora"]["doc2doc.test"].update(document_step=None, documents=None)
    assert Plan(config).data.document_sample("doc2doc.test", "148") == "all 148 documents"
    config["corpora"]["doc2doc.test"].update(document_step=3, documents=7)
    assert Plan(config).data.document_sample("doc2doc.test", "148") == \
        "the first 7 of every 3rd of its 148 documents"


def test_tcp_of_a_document_sample_reads_the_sampled_ids():
    config = load_config(ROOT / "config" / "config.yaml")
    config["corpora"]["doc2doc.test"].update(document_step=None, documents=None)
    whole = Plan(config)
    whole.check()
    assert "--docids" not in whole.lexcons.tcp_args("concat")
    config["corpora"]["doc2doc.test"]["document_step"] = 10
    sampled = Plan(config)
    sampled.check()
    assert "--docids results/data/raw/doc2doc.test.docids" in sampled.lexcons.tcp_args("concat")
    assert "results/data/raw/doc2doc.test.docids" in sampled.lexcons.tcp_inputs("concat")


def test_findings_config_trains_on_multi30k_with_validation_bleu():
    plan = Plan(load_config(ROOT / "config" / "findings.yaml"))
    assert plan.models.names == ["transformer.de-en"]
    assert plan.models.train_corpora("transformer.de-en") == ["multi30k.train"]
    assert plan.models.valid("transformer.de-en") == "multi30k.val"
    options = plan.models.train_options("transformer.de-en")
    assert options["eval_bleu"] and options["best_checkpoint_metric"] == "bleu"
    assert plan.models.learning_curves() == [
        f"{plan.out}/figures/learning_curve.transformer.de-en.{ext}" for ext in ("png", "svg")]
    # the default config's models train without validation BLEU: no curve
    assert Plan(load_config(ROOT / "config" / "config.yaml")).models.learning_curves() == []


def test_training_runs_are_every_training_with_its_rule_paths():
    """The training table lists the models, NAT systems, locality runs and document models,
    each with the model file and benchmark its training rule writes."""
    import re

    from tests.conftest import TINY_CONFIG

    plan = Plan(load_config(TINY_CONFIG))
    runs = {name: (model, bench) for name, model, bench in plan.training_runs()}
    assert {"doc-transformer", "concat"} <= set(runs)
    assert any(n.startswith("locality/") for n in runs) and any("/glat." in n for n in runs)
    rules = "".join(p.read_text(encoding="utf-8")
                    for p in (ROOT / "workflow" / "rules").glob("*.smk"))
    for step in ("train", "nat_train", "locality_train"):
        assert re.search(rf'benchmark:\s+PLAN\.benchmark\("{step}", ', rules), step
    assert runs["concat"] == (plan.documents.checkpoint("concat"),
                              plan.benchmark("train", "concat"))


def test_figures_of_smoke_scale_models_say_so_in_their_title():
    from tests.conftest import TINY_CONFIG

    assert "smoke scale" in Plan(load_config(TINY_CONFIG)).figure_title("BLEU")
    findings = Plan(load_config(ROOT / "config" / "findings.yaml"))
    assert findings.config["scale"] == "findings" and findings.figure_title("BLEU") == "BLEU"
    for paper in (ROOT / "config" / "papers").glob("*.yaml"):
        assert load_config(paper)["scale"] == "paper", paper.name


def test_challenge_set_sources_are_parsed_and_nothing_else():
    plan = Plan(load_config(ROOT / "config" / "config.yaml"))
    corpus = plan.ldd.corpora[0]
    sources = {d.split("-")[0] for d in plan.ldd.directions}
    assert sources and all(plan.ldd.is_parsed(corpus, lang) for lang in sources)
    assert not plan.ldd.is_parsed(corpus, "zh")
    assert not plan.ldd.is_parsed("no-such-corpus", next(iter(sources)))
