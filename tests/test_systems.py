"""Scoring given system outputs: validation, sacreBLEU intervals and tests, CRR/DRR, MQM."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from phenomt.cli import build_parser
from phenomt.core.io import InputError
from phenomt.core.metrics import ltcr
from phenomt.systems import mqm, outputs, scores, tables
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "systems"
REF = DATA / "ref.en"


def run(*argv: str) -> int:
    args = build_parser(["phenomt.systems.cli"]).parse_args([str(a) for a in argv])
    return int(args.handler(args) or 0)


# --------------------------------------------------------------------------- validation

def test_wrong_line_count_names_file_and_line(tmp_path):
    with pytest.raises(InputError) as err:
        outputs.read_output(DATA / "hyp_short.en", REF)
    assert err.value.path == str(DATA / "hyp_short.en") and err.value.line == 5
    assert "hyp_short.en:5:" in str(err.value) and "6" in str(err.value)
    longer = tmp_path / "long.en"
    longer.write_text(REF.read_text(encoding="utf-8") + "extra line\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"long\.en:7: .*line 7 has no counterpart"):
        outputs.read_output(longer, REF)


@pytest.mark.parametrize("content, line, words", [
    (b"one\r\ntwo\r\n", 1, "carriage return"),
    (b"one\ntwo\rthree\rfour\n", 2, "carriage return"),
    (b"one\ntwo \xff\xfe\nthree\n", 2, "invalid UTF-8"),
    (b"\xef\xbb\xbfone\ntwo\n", 1, "byte-order mark"),
])
def test_bad_bytes_name_file_and_line(tmp_path, content, line, words):
    path = tmp_path / "bad.en"
    path.write_bytes(content)
    with pytest.raises(InputError, match=words) as err:
        outputs.read_output(path, expected_lines=3)
    assert err.value.line == line and str(err.value).startswith(f"{path}:{line}:")


def test_empty_lines_are_counted_reported_and_scored(capsys):
    output = outputs.read_output(DATA / "hyp_empty.en", REF)
    assert output.empty == (2, 5)
    assert output.lines[1] == "" and len(output.lines) == 6
    assert "2 empty line(s)" in capsys.readouterr().err
    record = scores.score_record(testset="toy", system="empty", hyp=DATA / "hyp_empty.en",
                                 ref=REF, target_lang="en", samples=50)
    assert record["empty_lines"] == 2 and record["empty_line_numbers"] == [2, 5]
    main = record["subsets"]["all"]
    assert main["sentences"] == 6 and main["empty_lines"] == 2
    # Scored as empty hypotheses: the same BLEU as sacreBLEU gives with "" in those places.
    from sacrebleu.metrics import BLEU

    lines = DATA.joinpath("hyp_empty.en").read_text(encoding="utf-8").splitlines()
    refs = REF.read_text(encoding="utf-8").splitlines()
    expected = BLEU().corpus_score(lines, [refs])
    assert main["bleu"]["score"] == pytest.approx(expected.score)


def test_mask_values_and_length_are_checked():
    assert outputs.read_mask(DATA / "mask.txt", 6) == [True, False, True, True, False, True]
    with pytest.raises(InputError, match=r"mask_bad\.txt:3: .*0 or 1"):
        outputs.read_mask(DATA / "mask_bad.txt", 6)
    with pytest.raises(InputError, match=r"mask\.txt:6: "):
        outputs.read_mask(DATA / "mask.txt", 5)


def test_masked_subset_is_the_main_result():
    record = scores.score_record(testset="toy", system="empty", hyp=DATA / "hyp_empty.en",
                                 ref=REF, target_lang="en", mask=DATA / "mask.txt",
                                 samples=50)
    assert record["main"] == "official" and list(record["subsets"]) == ["official", "all"]
    assert record["subsets"]["official"]["sentences"] == 4
    assert record["subsets"]["official"]["empty_lines"] == 0
    assert record["subsets"]["all"]["empty_lines"] == 2


# --------------------------------------------------------------------------- sacreBLEU tests

WORDS = ["time", "market", "river", "light", "table", "garden", "window", "summer", "letter",
         "music", "bridge", "mountain", "doctor", "village", "morning"]


def _corpus(n: int = 40) -> list[str]:
    return [" ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 9)).capitalize() + " ."
            for i in range(1, n + 1)]


def _damage(line: str, keep: int) -> str:
    """Keep the first ``keep`` words and replace the rest by one repeated word."""
    words = line.split()
    return " ".join(words[:keep] + ["thing"] * (len(words) - keep))


@pytest.mark.parametrize("test", ["bs", "ar"])
def test_identical_systems_are_not_significant(test):
    refs = _corpus()
    hyps = [_damage(line, 5) for line in refs]
    result = scores.significance(hyps, refs, list(hyps), test=test, samples=200, seed=7)
    for entry in result.values():
        assert entry["p_value"] == 1.0 and entry["significant"] is False
        assert entry["difference"] == 0.0


def test_a_test_set_too_small_to_resample_gets_no_bootstrap_test():
    # one sentence: every resample is that sentence, the centred spread is all zeros and the
    # bootstrap p would be 1/(B+1) however small the difference; below ten sentences the
    # difference is reported and not tested, as for a challenge set or bucket that small
    refs = ["the cat sat on the mat today"]
    result = scores.significance(["a cat sat on a mat today"], refs, refs, samples=1000,
                                 seed=12345, metrics=("bleu",))["bleu"]
    assert result["p_value"] is None and result["significant"] is None
    assert result["difference"] < 0 and "fewer than 10" in result["untested"]
    refs = _corpus(9)
    result = scores.significance([_damage(r, 3) for r in refs], refs, refs, samples=200,
                                 seed=7, metrics=("bleu",))["bleu"]
    assert result["p_value"] is None and result["untested"].startswith("9 sentence")
    # the permutation test is valid for few sentences: it still tests
    tested = scores.significance([_damage(r, 3) for r in refs], refs, refs, test="ar",
                                 samples=200, seed=7, metrics=("bleu",))["bleu"]
    assert tested["p_value"] is not None and "untested" not in tested
    refs = _corpus(10)
    assert scores.significance([_damage(r, 3) for r in refs], refs, refs, samples=200,
                               seed=7, metrics=("bleu",))["bleu"]["p_value"] < 0.05


@pytest.mark.parametrize("test", ["bs", "ar"])
def test_a_strictly_better_system_is_significant(test):
    refs = _corpus()
    better = [_damage(line, 7) for line in refs]
    worse = [_damage(line, 3) for line in refs]
    result = scores.significance(better, refs, worse, test=test, samples=200, seed=7)
    for entry in result.values():
        assert entry["difference"] > 0
        assert entry["p_value"] < 0.05 and entry["significant"] is True
        assert entry["ci_low"] <= entry["score"] <= entry["ci_high"]
        assert entry["ci_low"] > entry["baseline_score"]


@pytest.mark.parametrize("test", ["bs", "ar"])
@pytest.mark.parametrize("masked", [False, True])
def test_the_baseline_records_statistics_give_the_same_record(tmp_path, test, masked):
    """A score job given the baseline's own record takes its kept statistics (the main
    subset's) instead of scoring the baseline again, and writes the same record; a record
    of another file or another system is refused."""
    refs = _corpus(24)  # enough for a test in the masked subset too (16 lines)
    mask = tmp_path / "mask.txt"
    mask.write_text("1\n0\n1\n1\n0\n1\n" * 4, encoding="utf-8")
    ref = tmp_path / "ref.en"
    ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
    base, hyp = tmp_path / "base.en", tmp_path / "hyp.en"
    base.write_text("\n".join(_damage(x, 3) for x in refs) + "\n", encoding="utf-8")
    hyp.write_text("\n".join(_damage(x, 6) for x in refs) + "\n", encoding="utf-8")
    common = dict(testset="toy", ref=ref, target_lang="en", baseline="base", test=test,
                  samples=60, seed=3, metrics=("bleu", "chrf", "ter"),
                  mask=mask if masked else None)
    own = scores.score_record(system="base", hyp=base, **common)
    plain = scores.score_record(system="hyp", hyp=hyp, baseline_hyp=base, **common)
    taken = scores.score_record(system="hyp", hyp=hyp, baseline_hyp=base,
                                baseline_record=own, **common)
    assert taken == plain and plain["subsets"][plain["main"]]["bleu"]["p_value"] is not None
    # the kept rows are what the test uses: the baseline's rows swapped for the system's own
    # make the main subset's difference zero
    mine = json.loads(json.dumps(own))
    main = own["main"]
    for key in ("bleu", "chrf", "ter"):
        mine["subsets"][main][key]["statistics"] = plain["subsets"][main][key]["statistics"]
    swapped = scores.score_record(system="hyp", hyp=hyp, baseline_hyp=base,
                                  baseline_record=mine, **common)
    assert all(swapped["subsets"][main][k]["difference"] == 0 for k in ("bleu", "chrf", "ter"))
    with pytest.raises(ValueError, match="not base's record of .*base.en .* but hyp's"):
        scores.score_record(system="hyp", hyp=hyp, baseline_hyp=base, baseline_record=plain,
                            **common)
    with pytest.raises(ValueError, match="against elsewhere.en"):
        scores.score_record(system="hyp", hyp=hyp, baseline_hyp=base,
                            baseline_record={**own, "reference": "elsewhere.en"}, **common)


def test_the_job_servers_reference_steps_give_the_score_jobs_record(tmp_path, monkeypatch):
    """The job server's warm-up extracts the reference's n-grams for the sacreBLEU metrics
    the score jobs make, a few lines a step; a score job finds them (its record the same as
    with nothing extracted), and a reference it cannot read is left to the jobs."""
    from phenomt.core.metrics import base

    refs = _corpus(6)
    ref, hyp = tmp_path / "ref.de", tmp_path / "hyp.de"
    ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
    hyp.write_text("\n".join(_damage(x, 3) for x in refs) + "\n", encoding="utf-8")
    common = dict(testset="toy", system="hyp", hyp=hyp, ref=ref, target_lang="de",
                  samples=60, seed=3, metrics=("bleu", "chrf", "ter"))
    monkeypatch.setattr(base, "_REFERENCE_INFO", {})
    plain = scores.score_record(**common)
    monkeypatch.setattr(base, "_REFERENCE_INFO", {})
    step, steps = scores.reference_steps(ref, "de", ["bleu", "crr", "chrf"], lines=4), 0
    while step is not None:
        step, steps = step(), steps + 1
    # the start (reading the file), two steps of 4 lines for BLEU, two for chrF, the end
    assert steps == 6
    made = scores.registered_metrics("13a", ["bleu", "chrf"], ("und", "de"))
    assert {key[:2] for key in base._REFERENCE_INFO} == {
        (type(m).__name__, m.signature()) for m in made.values()}
    assert all(len(info) == 6 for _lines, info in base._REFERENCE_INFO.values())
    assert scores.score_record(**common) == plain
    crlf = tmp_path / "crlf.de"
    crlf.write_bytes(b"a\r\n")
    monkeypatch.setattr(base, "_REFERENCE_INFO", {})
    for bad in (crlf, tmp_path / "missing.de"):
        assert scores.reference_steps(bad, "de")() is None
    assert scores.reference_steps(ref, "de", ["crr"])() is None
    assert base._REFERENCE_INFO == {}


def test_interval_seed_and_signature():
    refs = _corpus()
    hyps = [_damage(line, 4 + i % 4) for i, line in enumerate(refs)]
    first = scores.significance(hyps, refs, samples=300, seed=11)
    again = scores.significance(hyps, refs, samples=300, seed=11)
    other = scores.significance(hyps, refs, samples=300, seed=12)
    assert first == again
    # another seed draws other resamples (this corpus has four kinds of sentence, so one bound
    # of the percentile interval may coincide)
    assert [first["bleu"][k] for k in ("ci_low", "ci_high")] != \
        [other["bleu"][k] for k in ("ci_low", "ci_high")]
    for entry in first.values():
        assert entry["ci_low"] < entry["score"] < entry["ci_high"]
        assert entry["p_value"] is None
    assert first["bleu"]["signature"] == "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|" \
        f"version:{__import__('sacrebleu').__version__}"
    assert first["bleu"]["test_signature"].endswith("|test:bs|bs:300|ci:percentile|seed:11")
    assert first["chrf"]["signature"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:0")
    with pytest.raises(ValueError, match="seed"):
        scores.significance(hyps, refs, seed=0)


def test_ter_from_the_registry_by_hand():
    # one substitution in three reference words, and one of four: 2 edits / 7 words
    hyps, refs = ["a b c", "the cat sat down"], ["a b d", "the cat sat up"]
    result = scores.significance(hyps, refs, ["a b d", "x y z w"], samples=100, seed=3,
                                 metrics=("ter", "bleu"))
    assert list(result) == ["ter", "bleu"]
    assert result["ter"]["score"] == pytest.approx(100 * 2 / 7)
    assert result["ter"]["baseline_score"] == pytest.approx(100 * 4 / 7)
    assert result["ter"]["signature"].startswith("nrefs:1|case:lc|tok:tercom")
    with pytest.raises(ValueError, match="crr reads the source sentences"):
        scores.significance(hyps, refs, metrics=("crr",))
    with pytest.raises(ValueError, match="distinct names among bleu, chrf, comet, crr, drr"):
        scores.significance(hyps, refs, metrics=("meteor",))


def test_any_registered_metric_reaches_the_systems_record():
    """RIBES, CRR and DRR by naming them: the registry's number, an interval in its range, the
    paired test (CRR/DRR read the source)."""
    from phenomt.core.metrics.base import get

    refs = _corpus(30)
    hyps = [_damage(line, 5) + " thing thing" for line in refs]
    base = [_damage(line, 3) for line in refs]
    srcs = [f"Quelle {i} ." for i in range(len(refs))]
    found = scores.significance(hyps, refs, base, samples=100, seed=2, sources=srcs,
                                metrics=("ribes", "crr", "drr"), langs=("de", "en"))
    for key in ("ribes", "crr", "drr"):
        metric = get(key, **({"source_lang": "de", "target_lang": "en"}
                             if key != "ribes" else {}))
        assert found[key]["score"] == pytest.approx(
            metric.score(metric.statistics(hyps, refs, srcs).sum(axis=0)))
        low, high = metric.bounds
        assert low <= found[key]["ci_low"] <= found[key]["ci_high"] <= (high or 1e9)
        assert found[key]["p_value"] is not None
    assert found["crr"]["score"] > 0  # "thing thing" repeats at every line's end


def test_schema_lists_the_registered_sacrebleu_metrics():
    import yaml

    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml")
                            .read_text(encoding="utf-8"))
    metrics = schema["properties"]["systems"]["properties"]["metrics"]
    assert metrics["items"]["enum"] == scores.metric_keys()
    assert set(metrics["default"]) == set(scores.METRIC_KEYS)


def _score_good_and_empty(tmp_path, *options: str) -> Path:
    """`systems score` of a good output (the reference with one word changed) and of the
    empty-lines output, the baseline; returns the good output's file."""
    hyp = tmp_path / "good.en"
    hyp.write_text(REF.read_text(encoding="utf-8").replace("moon", "sun"), encoding="utf-8")
    for name, path in (("good", hyp), ("empty", DATA / "hyp_empty.en")):
        assert run("systems", "score", "--testset", "toy", "--system", name, "--hyp", path,
                   "--ref", REF, "--target-lang", "en", "--baseline", "empty",
                   "--baseline-hyp", DATA / "hyp_empty.en", "--samples", "100", *options,
                   "--output", tmp_path / f"{name}.json") == 0
    return hyp


def test_ter_goes_through_the_command_into_the_systems_table(tmp_path):
    import sacrebleu

    hyp = _score_good_and_empty(tmp_path, "--metrics", "bleu", "ter")
    record = json.loads((tmp_path / "good.json").read_text(encoding="utf-8"))
    assert record["metrics"] == ["bleu", "ter"] and "chrf" not in record["subsets"]["all"]
    lines = hyp.read_text(encoding="utf-8").splitlines()
    refs = REF.read_text(encoding="utf-8").splitlines()
    assert record["subsets"]["all"]["ter"]["score"] == pytest.approx(
        sacrebleu.corpus_ter(lines, [refs]).score)
    assert run("table", "systems-bleu", "--scores", tmp_path / "good.json",
               tmp_path / "empty.json", "--md", tmp_path / "b.md", "--csv", tmp_path / "b.csv") == 0
    header = (tmp_path / "b.csv").read_text(encoding="utf-8").splitlines()[0]
    assert "TER [95% CI]" in header and "ΔTER" in header and "chrF" not in header
    md = (tmp_path / "b.md").read_text(encoding="utf-8")
    assert "Lower is better for TER" in md and "TER signature `nrefs:1|case:lc|tok:tercom" in md


# --------------------------------------------------------------------------- CRR and DRR

def test_redundancy_record_states_its_settings():
    record = scores.redundancy_record(testset="toy", system="empty", hyp=DATA / "hyp_empty.en",
                                      src=DATA / "src.de", ref=REF, source_lang="de",
                                      target_lang="en", samples=200, seed=3)
    settings = record["settings"]
    refs = [line.split() for line in REF.read_text(encoding="utf-8").splitlines()]
    from collections import Counter

    counts = Counter(t for line in refs for t in line)
    tenth = sorted(counts.values(), reverse=True)[9]
    assert settings["stopword_count"] == 10 and len(settings["stopwords"]) == 10
    assert all(counts[t] >= tenth for t in settings["stopwords"])
    assert settings["level"] == "word" and settings["redundant"] == "identical tokens"
    assert settings["case"] == "kept" and "sacremoses" in settings["target_tokenizer"]
    main = record["subsets"]["all"]
    # "the the" is continuous; "apples apples" continuous; nothing else is repeated.
    assert main["continuous"] == 2 and main["discontinuous"] == 0
    assert main["crr"] == pytest.approx(2 / main["denominator"])
    low, high = main["crr_ci"]
    assert low <= main["crr"] <= high
    assert record["empty_lines"] == 2


def test_test_set_tokens_written_once_give_the_same_record(tmp_path):
    kwargs = dict(testset="toy", system="empty", hyp=DATA / "hyp_empty.en", src=DATA / "src.de",
                  ref=REF, source_lang="de", target_lang="en", samples=200, seed=3)
    assert run("systems", "tokenize", "--src", DATA / "src.de", "--ref", REF, "--source-lang",
               "de", "--target-lang", "en", "--src-out", tmp_path / "s.tok",
               "--ref-out", tmp_path / "r.tok") == 0
    tokens = [str(tmp_path / "s.tok"), str(tmp_path / "r.tok")]
    assert scores.redundancy_record(**kwargs, tokens=tokens) == scores.redundancy_record(
        **kwargs)
    (tmp_path / "r.tok").write_text("one line\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"r.tok.*has 1 lines but"):
        scores.redundancy_record(**kwargs, tokens=tokens)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_corpus_tokenizer_gives_the_systems_word_tokens(tmp_path, lang):
    """The CRR/DRR jobs of a test set read its corpus's tokenized files (`text tokenize`, run
    for the statistics): they hold the tokens `systems tokenize` would write, line for line."""
    from phenomt.core import text

    lines = (["He's a good-looking dude, isn't he? ", "", "   ", "“Quotes” & <tags> -- 3.5%",
              "Tab\tseparated  words\u00a0here."] if lang == "en" else
             ["我们 明天 见。", "", "他说：“好的”", "2024年北京的天气很好"])
    (tmp_path / "in.txt").write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    args = build_parser(["phenomt.core.text"]).parse_args(
        ["text", "tokenize", "--lang", lang, "--input", str(tmp_path / "in.txt"),
         "--output", str(tmp_path / "tok.txt")])
    assert args.handler(args) == 0
    scores.write_tokens(lines, lang, tmp_path / "words.txt")
    ours = scores.read_tokens(tmp_path / "tok.txt", len(lines), tmp_path / "in.txt")
    assert ours == scores.read_tokens(tmp_path / "words.txt", len(lines), tmp_path / "in.txt")
    assert ours == text.word_tokens(lines, lang)
    assert [n for n, tokens in enumerate(ours) if not tokens] == [
        n for n, line in enumerate(lines) if not line.strip()]


def test_chinese_stopwords_are_three():
    setup = scores.redundancy_setup([["我们", "的", "的", "了", "是", "是", "是"]], "zh", "en")
    assert setup.settings["stopword_count"] == 3
    # 是 3, 的 2, then a tie of 了 and 我们 goes to the smaller string.
    assert setup.stopwords == {"是", "的", "了"}
    assert scores.word_tokens(["我们看到了星星。"], "zh")[0][0] == "我们"


def test_paired_redundancy_test():
    from phenomt.core.metrics.redundancy import sentence_redundancy

    clean = [sentence_redundancy(f"w{i} x{i} y{i} z{i}".split()) for i in range(30)]
    repeated = [sentence_redundancy(f"w{i} w{i} y{i} y{i}".split()) for i in range(30)]
    same = scores.paired_redundancy_test(clean, clean, samples=200, trials=200, seed=5)
    assert same["crr"]["difference"] == 0 and same["crr"]["p_bootstrap"] == 1.0
    assert same["crr"]["significant"] is False
    differ = scores.paired_redundancy_test(repeated, clean, samples=200, trials=200, seed=5)
    assert differ["crr"]["difference"] == pytest.approx(2 / 3)
    assert differ["crr"]["significant"] and differ["crr"]["p_randomization"] < 0.05
    assert differ == scores.paired_redundancy_test(repeated, clean, samples=200, trials=200,
                                                   seed=5)


def two_outputs(folder: Path) -> tuple[list[str], Path, Path]:
    """The reference's lines and two outputs of it in ``folder``: ``a.en`` repeats each
    line's first word at its end (redundant), ``b.en`` is the reference itself."""
    refs = REF.read_text(encoding="utf-8").splitlines()
    hyp_a, hyp_b = folder / "a.en", folder / "b.en"
    hyp_a.write_text("".join(f"{r} {r.split()[0] if r.split() else 'x'}\n" for r in refs),
                     encoding="utf-8")
    hyp_b.write_text("".join(f"{r}\n" for r in refs), encoding="utf-8")
    return refs, hyp_a, hyp_b


@pytest.mark.parametrize("masked", [False, True])
def test_the_comparison_of_two_records_is_the_comparison_of_their_outputs(tmp_path, masked):
    """`redundancy-test --records`: the two systems' CRR/DRR records give the comparison the
    outputs give; records of other files or other settings are refused."""
    refs, hyp_a, hyp_b = two_outputs(tmp_path)
    common = dict(testset="toy", src=DATA / "src.de", ref=REF, source_lang="de",
                  target_lang="en", samples=50, seed=3,
                  mask=DATA / "mask.txt" if masked else None)
    own = {name: scores.redundancy_record(system=name, hyp=hyp, **common)
           for name, hyp in (("a", hyp_a), ("b", hyp_b))}
    assert len(own["a"]["statistics"]["rows"]) == len(refs)
    pair = dict(system_a="a", hyp_a=hyp_a, system_b="b", hyp_b=hyp_b, trials=50, **common)
    counted = scores.redundancy_comparison(**pair)
    assert scores.redundancy_comparison(**pair, records=(own["a"], own["b"])) == counted
    with pytest.raises(ValueError, match="a: the record given is b's of"):
        scores.redundancy_comparison(**pair, records=(own["b"], own["a"]))
    with pytest.raises(ValueError, match="against .*src.de and elsewhere.en"):
        scores.redundancy_comparison(**pair, records=({**own["a"], "reference": "elsewhere.en"},
                                                      own["b"]))
    with pytest.raises(ValueError, match="counted with other settings"):
        scores.redundancy_comparison(**{**pair, "stopword_count": 3},
                                     records=(own["a"], own["b"]))


# --------------------------------------------------------------------------- MQM

def test_mqm_rates_and_correlation_by_hand():
    rows = mqm.read_mqm(DATA / "mqm.tsv")
    rates = mqm.category_rates(rows)
    addition = {s: r["categories"]["Accuracy/Addition"]["rate"] for s, r in rates.items()}
    assert addition == {"A": 0.0, "B": 0.5, "C": 1.0, "D": 1.5, "ref": 0.0}
    assert rates["D"]["categories"]["Accuracy/Addition"]["segments_with_error"] == 2
    assert rates["D"]["categories"]["Fluency/Inconsistency"]["rate"] == 0.5
    # Metric ranks A1 B3 C2 D4 against rate ranks 1 2 3 4: sum d^2 = 2, rho = 1 - 12/60 = 0.8.
    # Exact p over the 4! = 24 pairings: |rho| >= 0.8 iff sum d^2 <= 2 or >= 18: the identity,
    # its 3 adjacent swaps, and their 4 reversals: 8/24 = 1/3 (the t-approximation says 0.2).
    metric = {"A": 1.0, "B": 3.0, "C": 2.0, "D": 4.0}
    result = mqm.rank_correlation(metric, {s: addition[s] for s in "ABCD"})
    assert result["n"] == 4 and result["weak"] is True
    assert result["rho"] == pytest.approx(0.8) and result["p"] == pytest.approx(1 / 3)
    assert result["p_method"] == "exact permutation"
    found = mqm.correlations(rates, {"drr": metric})
    terminology = next(c for c in found if c["category"].startswith("Terminology"))
    assert terminology["rho"] is None and terminology["reason"] == "constant rate"
    # The table's family: Addition p 1/3 and Fluency (rates 0, 0, 0, 0.5: ranks 2 2 2 4
    # against 1 3 2 4, r = 3 / sqrt(15) = 0.7746; only the metric rank paired with D moves r,
    # |r| that large iff it is 4 or 1: p = 2/4); Holm: 2 x 1/3 = 2/3, then max(2/3, 1 x 1/2)
    # = 2/3; the untested Terminology stays out.
    by_category = {c["category"].split("/")[0]: c for c in found}
    assert by_category["Fluency"]["rho"] == pytest.approx(3 / 15 ** 0.5)
    assert by_category["Fluency"]["p"] == pytest.approx(0.5)
    assert by_category["Accuracy"]["p_holm"] == pytest.approx(2 / 3)
    assert by_category["Fluency"]["p_holm"] == pytest.approx(2 / 3)
    assert by_category["Terminology"]["p_holm"] is None


@pytest.mark.parametrize(("n", "p"), [(3, 2 / 6), (4, 2 / 24)])
def test_mqm_perfect_rank_correlation_has_the_exact_permutation_p(n, p):
    """rho = 1 from n systems: of the n! pairings only the identity and its reversal reach
    |rho| = 1, so the two-sided p is 2/n!, not the t-approximation's 0."""
    metric = {s: 0.1 * (i + 1) for i, s in enumerate("abcd"[:n])}
    rate = {s: float(i + 1) for i, s in enumerate("abcd"[:n])}
    result = mqm.rank_correlation(metric, rate)
    assert result["rho"] == pytest.approx(1.0) and result["p"] == pytest.approx(p)
    assert result["p_method"] == "exact permutation"
    # 0 would stay 0 under Holm; 2/n! of one test is adjusted like any other p
    found = mqm.correlations({s: {"categories": {"c": {"rate": r, "errors": 1}}}
                              for s, r in rate.items()}, {"m": metric}, ["c"])
    assert found[0]["p_holm"] == pytest.approx(p)


def test_mqm_tied_rates_count_every_pairing_with_as_large_a_rho():
    """Ties: rates 0, 0, 1 (average ranks 1.5 1.5 3) against metric ranks 1 2 3 give
    rho = 0.866; a pairing's rho depends only on the metric rank put beside the 1: 3 gives
    +0.866, 1 gives -0.866, 2 gives 0, so two-sided p = 4/6."""
    result = mqm.rank_correlation({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 0.0, "b": 0.0, "c": 1.0})
    assert result["rho"] == pytest.approx(3 ** 0.5 / 2) and result["p"] == pytest.approx(2 / 3)


def test_mqm_many_systems_get_a_seeded_monte_carlo_p():
    """Above EXACT_UP_TO systems p is a Monte Carlo permutation estimate: the same on every
    run, within its sampling error of the exact value, and named so in the record. With
    rho = 1 from 10 systems the exact p is 2/10! (about 5.5e-7), so only the estimate's own
    floor, 1/(resamples + 1), is left."""
    n = mqm.EXACT_UP_TO + 1
    metric = {f"s{i:02d}": float(i) for i in range(n)}
    first = mqm.rank_correlation(metric, {s: 2.0 * v for s, v in metric.items()})
    again = mqm.rank_correlation(metric, {s: 2.0 * v for s, v in metric.items()})
    assert first == again and first["p_method"] == "monte carlo permutation"
    assert first["p"] == pytest.approx(1 / (mqm.MONTE_CARLO_RESAMPLES + 1))
    assert "Monte Carlo" in mqm.p_method(n) and f"{n} systems" in mqm.p_method(n)
    assert mqm.p_method(3) == "exact permutation p over the 6 orderings of the 3 systems"


def test_mqm_record_names_its_p():
    record = mqm.mqm_summary(mqm.read_mqm(DATA / "mqm.tsv"), "mqm.tsv",
                             metrics={"drr": {"A": 1.0, "B": 3.0, "C": 2.0, "D": 4.0}})
    assert record["p_method"] == (
        "two-sided permutation p of Spearman's ρ (share of orderings with |ρ| at least the "
        "observed), over the annotated systems only: n = 4: exact permutation p over the 24 "
        "orderings of the 4 systems.")
    assert mqm.mqm_summary(mqm.read_mqm(DATA / "mqm.tsv"), "mqm.tsv")["p_method"] is None


def test_mqm_bad_rows_name_the_line():
    with pytest.raises(InputError, match=r"mqm_bad\.tsv:2: expected 9"):
        mqm.read_mqm(DATA / "mqm_bad.tsv")


def test_mqm_outputs_strip_marks_and_order_segments(tmp_path):
    recovered = outputs.mqm_outputs(mqm.read_mqm(DATA / "mqm.tsv"), DATA / "mqm.tsv")
    assert [seg for _, _, seg in recovered.segments] == [10, 12]
    assert recovered.documents == ["talk.1", "talk.2"]
    assert recovered.outputs["D"] == ["We indeed saw the stars in the sky.",
                                      "The light tells us a lot."]
    assert recovered.source == ["我们看到了星星。", "光告诉我们很多。"]
    manifest = outputs.write_mqm_outputs(recovered, tmp_path, "zh", "en", "toy")
    assert manifest["references"] == ["ref"] and manifest["segments"] == 2
    assert (tmp_path / "C.en").read_text(encoding="utf-8") == (
        "We really saw the stars.\nLight tells us a lot of things.\n")
    assert (tmp_path / "_docs.txt").read_text(encoding="utf-8") == "talk.1\ntalk.2\n"


def test_mqm_disagreeing_copies_are_refused(tmp_path):
    text = (DATA / "mqm.tsv").read_text(encoding="utf-8")
    bad = tmp_path / "mqm.tsv"
    bad.write_text(text.replace("saw the stars <v>in the sky</v>.", "saw stars <v>up</v>."),
                   encoding="utf-8")
    with pytest.raises(InputError, match=r"mqm\.tsv:9: segment 10: D's output differs from "
                                         r"line 8"):
        outputs.mqm_outputs(mqm.read_mqm(bad), bad)


# --------------------------------------------------------------------------- CLI and tables

def test_commands_write_records_and_tables(tmp_path):
    hyp = _score_good_and_empty(tmp_path, "--origin", "hand-made", "--licence", "CC0")
    for name, path in (("good", hyp), ("empty", DATA / "hyp_empty.en")):
        assert run("systems", "redundancy", "--testset", "toy", "--system", name, "--hyp", path,
                   "--src", DATA / "src.de", "--ref", REF, "--source-lang", "de",
                   "--target-lang", "en", "--samples", "100",
                   "--tokens-out", tmp_path / f"{name}.tokens",
                   "--output", tmp_path / f"{name}.red.json") == 0
    # the output's word tokens, one line each (an empty line has none)
    from phenomt.core.text import word_tokens

    lines = hyp.read_text(encoding="utf-8").splitlines()
    assert (tmp_path / "good.tokens").read_text(encoding="utf-8").splitlines() == [
        " ".join(words) for words in word_tokens(lines, "en")]
    assert run("systems", "redundancy-test", "--testset", "toy", "--a", f"good={hyp}",
               "--b", f"empty={DATA / 'hyp_empty.en'}", "--src", DATA / "src.de", "--ref", REF,
               "--source-lang", "de", "--target-lang", "en", "--samples", "100",
               "--trials", "100", "--output", tmp_path / "cmp.json") == 0
    base = json.loads((tmp_path / "empty.json").read_text(encoding="utf-8"))
    assert base["is_baseline"] and base["subsets"]["all"]["bleu"]["p_value"] is None
    assert run("table", "systems-bleu", "--scores", tmp_path / "good.json",
               tmp_path / "empty.json", "--md", tmp_path / "b.md", "--csv", tmp_path / "b.csv") == 0
    md = (tmp_path / "b.md").read_text(encoding="utf-8")
    assert "hand-made" in md and "CC0" in md and "tok:13a" in md and "6 sentences" in md
    assert run("table", "systems-redundancy", "--records", tmp_path / "good.red.json",
               tmp_path / "empty.red.json", "--comparisons", tmp_path / "cmp.json",
               "--md", tmp_path / "r.md", "--csv", tmp_path / "r.csv") == 0
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "vs empty" in md and "10 most frequent" in md
    # The table's paired tests are one family: with p 0.01 (CRR), 0.04 (DRR) and 0.03
    # (CRR+DRR), Holm gives 3 x 0.01 = 0.03, then 2 x 0.03 = 0.06, then max(0.06, 0.04):
    # DRR's raw p under 0.05 gets no star.
    comparison = json.loads((tmp_path / "cmp.json").read_text(encoding="utf-8"))
    for measure, p in (("crr", 0.01), ("drr", 0.04), ("redundancy", 0.03)):
        comparison["subsets"]["all"][measure]["p_bootstrap"] = p
    (tmp_path / "cmp.json").write_text(json.dumps(comparison), encoding="utf-8")
    assert run("table", "systems-redundancy", "--records", tmp_path / "good.red.json",
               tmp_path / "empty.red.json", "--comparisons", tmp_path / "cmp.json",
               "--md", tmp_path / "r.md", "--csv", tmp_path / "r.csv") == 0
    with open(tmp_path / "r.csv", newline="", encoding="utf-8") as handle:
        cell = next(r for r in csv.DictReader(handle) if r["system"] == "good")["paired test"]
    assert re.findall(r"Δ(\S+) \S+ \[[^]]*\] (p=\S+ Holm [0-9.]+(?: \*)?)", cell) == [
        ("CRR", "p=0.0100, Holm 0.0300 *"), ("DRR", "p=0.0400, Holm 0.0600"),
        ("CRR+DRR", "p=0.0300, Holm 0.0600")]
    assert "adjusted over the table's 3 paired tests" in (tmp_path / "r.md").read_text("utf-8")
    assert run("systems", "mqm", "--annotations", DATA / "mqm.tsv", "--records",
               tmp_path / "good.red.json", "--metric", "drr",
               "--output", tmp_path / "mqm.json") == 0
    assert run("table", "systems-mqm", "--mqm", tmp_path / "mqm.json", "--testset",
               "wmt21-ted.zh-en", "--md", tmp_path / "m.md", "--csv", tmp_path / "m.csv") == 0
    md = (tmp_path / "m.md").read_text(encoding="utf-8")
    assert "google/wmt-mqm-human-evaluation" in md and "fewer than 3 systems" in md


def test_catalogue_covers_the_sysout_readme():
    catalogue = tables.load_catalogue()
    assert ("newstest2021.de-en", "VolcTrans-GLAT") in catalogue
    assert catalogue["newstest2021.de-en", "VolcTrans-GLAT"]["kind"] == "non-autoregressive"
    info = tables.system_info(catalogue, "wmt21-ted.en-de", "Nemo")
    assert info["licence"].startswith("Apache-2.0")
    assert tables.system_info(catalogue, "mine", "x")["licence"] == "unknown"


# --------------------------------------------------------------------------- real mirror

def _readme_rows(readme: Path) -> list[dict]:
    rows = []
    for line in readme.read_text(encoding="utf-8").splitlines():
        if not re.match(r"\| newstest20\d\d \|", line):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        testset, pair, system, _, lines, bleu = cells[:6]
        match = re.fullmatch(r"([\d.]+)(?: \(official(?: 1948)?: ([\d.]+)\))?", bleu)
        assert match, line
        rows.append({"testset": f"{testset}.{pair}", "system": system, "lines": int(lines),
                     "bleu": float(match.group(1)),
                     "official": None if match.group(2) is None else float(match.group(2))})
    return rows


def test_sysout_bleu_matches_its_readme(mirror):
    from sacrebleu.metrics import BLEU

    sysout = mirror / "sysout"
    if not sysout.is_dir():
        pytest.skip("the mirror has no sysout folder")
    rows = _readme_rows(sysout / "README.md")
    assert len(rows) == 26
    catalogue = tables.load_catalogue()
    references = {
        "newstest2021.zh-en": mirror / "wmt" / "zh-en" / "newstest2021.en",
        "newstest2021.de-en": sysout / "newstest2021.de-en" / "_testset" / "newstest2021.en",
        "newstest2021.en-de": sysout / "newstest2021.en-de" / "_testset" / "newstest2021.de",
        "newstest2017.en-de": mirror / "wmt" / "en-de" / "newstest2017.de",
    }
    mask = outputs.read_mask(sysout / "newstest2021.zh-en" / "_official-newstest-mask.txt",
                             2791)
    assert sum(mask) == 1948
    texts = {name: outputs.read_text(path) for name, path in references.items()}
    # One metric per reference: sacreBLEU then processes each reference once.
    metrics = {name: BLEU(references=[refs]) for name, refs in texts.items()}
    official_metric = BLEU(references=[outputs.apply_mask(texts["newstest2021.zh-en"], mask)])
    measured = {}
    for row in rows:
        tgt = row["testset"].rsplit("-", 1)[1]
        path = sysout / row["testset"] / f"{row['system']}.{tgt}"
        output = outputs.read_output(path, expected_lines=len(texts[row["testset"]]))
        assert len(output.lines) == row["lines"] and not output.empty
        score = metrics[row["testset"]].corpus_score(output.lines, None).score
        measured[row["testset"], row["system"]] = score
        assert abs(score - row["bleu"]) <= 0.05, (row, score)
        if row["official"] is not None:
            official = official_metric.corpus_score(outputs.apply_mask(output.lines, mask),
                                                    None).score
            assert abs(official - row["official"]) <= 0.05, (row, official)
        entry = catalogue[row["testset"], row["system"]]
        assert float(entry["readme_bleu"]) == row["bleu"] and int(entry["lines"]) == row["lines"]
    assert measured["newstest2017.en-de", "uedin-nmt"] == pytest.approx(28.3, abs=0.05)


def _ltcr_record(path: Path, rows: list[list[int]]) -> str:
    """A `score ltcr` record of two documents with the given per-document counts."""
    judged, consistent = sum(r[0] for r in rows), sum(r[1] for r in rows)
    path.write_text(json.dumps({
        "l_all": consistent / judged, "pairs_all": judged + 1, "judged_all": judged,
        "unjudged_all": 1, "documents": len(rows), "sentences": 5, "stemmer": "porter",
        "intervals": {"level": 0.95, "samples": 200, "seed": 1, "l_all": [0.1, 0.9]},
        "statistics": {"unit": "document", "columns": list(ltcr.STATISTICS_COLUMNS),
                       "rows": [[*r, 0, 0] for r in rows]}}), encoding="utf-8")
    return str(path)


def test_ltcr_table_with_the_paired_test_and_the_calibration_row(tmp_path):
    import csv

    # A: 0 of 2 and 1 of 2 consistent; B: 1 of 2 and 2 of 2. Every resample of the two
    # documents gives B - A = 0.5 (tests/test_ltcr.py works it by hand): the interval is
    # [+50, +50] points and p = 1 / (99 + 1).
    a = _ltcr_record(tmp_path / "a.json", [[2, 0], [2, 1]])
    b = _ltcr_record(tmp_path / "b.json", [[2, 1], [2, 2]])
    ref = _ltcr_record(tmp_path / "r.json", [[2, 2], [2, 2]])
    md, out = tmp_path / "t.md", tmp_path / "t.csv"
    assert run("table", "systems-ltcr", "--records", f"t.zh-en/reference={ref}",
               f"t.zh-en/A={a}", f"t.zh-en/B={b}", "--baseline", "t.zh-en=A",
               "--samples", "99", "--seed", "3", "--note", "aligner: the test set",
               "--md", md, "--csv", out) == 0
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["system"] for r in rows] == ["A (baseline)", "B", "reference (calibration)"]
    # the records' made-up interval [0.1, 0.9] misses the reference's L-All of 1: marked ‡
    assert [r["L-All % [95% CI]"] for r in rows] == ["25.00 [10.00, 90.00]",
                                                     "75.00 [10.00, 90.00]",
                                                     "100.00 [10.00, 90.00] ‡"]
    # the one paired test of the table: a family of one, Holm = p
    assert rows[1]["paired test"] == "vs A: ΔL-All +50.00 [+50.00, +50.00] p=0.0100, Holm 0.0100 *"
    assert not rows[0]["paired test"] and not rows[2]["paired test"]
    assert (rows[1]["pairs"], rows[1]["judged"], rows[1]["unjudged"]) == ("5", "4", "1")
    text = md.read_text(encoding="utf-8")
    assert "aligner: the test set" in text and "not against 100%" in text
    assert ("‡ Interval does not contain the score: at least 97.5% of the 200 resampled scores "
            "lie below it (a skewed bootstrap distribution): t.zh-en reference (calibration) "
            "L-All.") in text
    other = _ltcr_record(tmp_path / "o.json", [[2, 1]])
    with pytest.raises(InputError, match=r"o\.json: has 1 documents, the baseline's"):
        run("table", "systems-ltcr", "--records", f"t/A={a}", f"t/O={other}",
            "--baseline", "t=A", "--md", md, "--csv", out)
    with pytest.raises(SystemExit):  # a baseline without a record
        run("table", "systems-ltcr", "--records", f"t/A={a}", "--baseline", "t=Z",
            "--md", md, "--csv", out)
