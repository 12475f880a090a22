"""Given systems on the LDD challenge sets of their test set, and MQM-annotated outputs beside
LTCR and DRR: hand-made cases whose answers are worked out in the comments."""

from __future__ import annotations

import csv
import json
import shlex
from pathlib import Path

import pytest
import yaml

from phenomt.cli import build_parser
from phenomt.core.io import InputError
from phenomt.core.metrics import resample
from phenomt.systems import challenge, tables
from tests.conftest import ROOT, TINY_CONFIG, run_snakemake, tiny_workdir

DATA = ROOT / "tests" / "data" / "systems"

# Six references of five tokens each, no punctuation: with 13a tokens a hypothesis line is
# either the reference itself or five words found nowhere in the references.
REFS = ["the cat sat on mats", "a dog ran far away", "birds sing in the morning",
        "we read old books today", "rain falls on green hills", "she plays the piano well"]
WRONG = "xx yy zz qq ww"


def run(*argv: object) -> int:
    args = build_parser(["phenomt.systems.cli"]).parse_args([str(a) for a in argv])
    return int(args.handler(args) or 0)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def _lines(*residues: int) -> list[int]:
    """The 1-based lines of the 30-line toy test set whose number mod 6 is in ``residues``."""
    return [n for n in range(1, 31) if n % 6 in residues]


@pytest.fixture
def toy(tmp_path: Path) -> dict:
    """A test set of 30 lines (the six references five times), two systems and four
    challenge sets (ids are 1-based lines)."""
    refs = REFS * 5
    ref = _write(tmp_path / "ref.en", refs)
    perfect = _write(tmp_path / "perfect.en", refs)
    # B gets the lines 2 and 4 (mod 6) wrong, the others right
    half = _write(tmp_path / "half.en", [WRONG if n % 6 in (2, 4) else line
                                         for n, line in enumerate(refs, start=1)])
    sets = {"particle.all": _lines(1, 2, 4, 5), "particle.ge1": _lines(2, 4),
            "reflexive.ge1": [2, 4], "reorder.ge5": _lines(1, 2, 3)}
    for name, ids in sets.items():
        _write(tmp_path / f"{name}.ids", [str(i) for i in ids])
        # a reordering set's .ref is the tokenized reference: here the same text
        _write(tmp_path / f"{name}.ref", [refs[i - 1] for i in ids])
    args = [f"{name}={tmp_path / name}" for name in sets]
    return {"dir": tmp_path, "ref": ref, "A": perfect, "B": half, "sets": args}


def _score(toy: dict, system: str) -> dict:
    out = toy["dir"] / f"{system}.ldd.json"
    assert run("systems", "ldd-score", "--testset", "toy", "--system", system, "--hyp",
               toy[system], "--ref", toy["ref"], "--target-lang", "en", "--set", *toy["sets"],
               "--samples", "200", "--seed", "3", "--output", out) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_ldd_scores_of_two_systems_by_hand(toy):
    a, b = _score(toy, "A"), _score(toy, "B")
    # A is the reference: BLEU 100 everywhere, an interval of width 0, no difference
    assert a["full"]["bleu"]["score"] == pytest.approx(100)
    for entry in a["sets"].values():
        assert entry["bleu"]["score"] == pytest.approx(100)
        assert entry["bleu"]["ci_low"] == pytest.approx(100) == entry["bleu"]["ci_high"]
        assert entry["difference"] == pytest.approx(0)
        # no verdict under 10 sentences, else not below
        assert entry["below"] is (None if entry["sentences"] < 10 else False)
    # B: every line has 5 tokens (brevity penalty 1); right lines match all their n-grams,
    # wrong lines none, so every n-gram precision is (right lines)/(lines) and BLEU is that
    # ratio: 4/6 on the full test set, 2/4 on particle.all, 0 on particle.ge1 and
    # reflexive.ge1, 2/3 on reorder.ge5.
    assert b["full"]["sentences"] == 30
    assert b["full"]["bleu"]["score"] == pytest.approx(100 * 4 / 6)
    sets = b["sets"]
    assert sets["particle.all"]["bleu"]["score"] == pytest.approx(50)
    assert sets["particle.all"]["difference"] == pytest.approx(50 - 100 * 4 / 6)
    assert sets["particle.ge1"]["bleu"]["score"] == pytest.approx(0)
    # all its 10 lines are wrong: every resample scores 0, so the interval is [0, 0] and
    # lies wholly below 66.67
    assert sets["particle.ge1"]["bleu"]["ci_high"] == pytest.approx(0)
    assert sets["particle.ge1"]["below"] is True and sets["particle.ge1"]["sentences"] == 10
    # the same for the 2 lines of reflexive.ge1, but too few sentences for a verdict
    assert sets["reflexive.ge1"]["difference"] == pytest.approx(-100 * 4 / 6)
    assert sets["reflexive.ge1"]["below"] is None and sets["reflexive.ge1"]["above"] is None
    assert sets["reorder.ge5"]["bleu"]["score"] == pytest.approx(100 * 2 / 3)
    assert sets["reorder.ge5"]["difference"] == pytest.approx(0, abs=1e-9)
    # RIBES for the reordering set and the full test set only: a sentence scores 1 when it
    # equals its reference and 0 when no word matches, so the corpus mean is 2/3 for both
    assert sets["particle.ge1"]["ribes"] is None
    assert sets["reorder.ge5"]["ribes"]["score"] == pytest.approx(2 / 3, abs=1e-4)
    assert b["full"]["ribes"]["score"] == pytest.approx(4 / 6, abs=1e-4)
    assert sets["reorder.ge5"]["ribes"]["difference"] == pytest.approx(0, abs=1e-4)
    # with intervals and tests as for BLEU: A scores 1 on every resample; B's reordering set
    # (15 lines, 5 of them 0) is no different from its full test set
    assert a["full"]["ribes"]["ci_low"] == a["full"]["ribes"]["ci_high"] == 1.0
    ribes = sets["reorder.ge5"]["ribes"]
    assert ribes["ci_low"] < 2 / 3 < ribes["ci_high"]
    assert ribes["difference_ci"][0] < 0 < ribes["difference_ci"][1]
    # one reordering set: a family of one, adjusted p = p
    assert ribes["p_value"] > 0.05 and ribes["p_adjusted"] == ribes["p_value"]
    assert ribes["below"] is False and ribes["above"] is False
    assert b["test"]["samples"] == 200 and b["schema"] == challenge.SCHEMA


def test_ribes_of_reordering_sets_tested_against_the_full_test_set_by_hand(toy):
    # two more reordering sets: the 10 lines B gets wrong (RIBES 0 against 2/3), and 3 of
    # them (too few for a test)
    for name, ids in (("reorder.ge7", _lines(2, 4)), ("reorder.ge9", [2, 4, 8])):
        _write(toy["dir"] / f"{name}.ids", [str(i) for i in ids])
        _write(toy["dir"] / f"{name}.ref", [REFS[(i - 1) % 6] for i in ids])
    toy["sets"] += [f"reorder.ge7={toy['dir'] / 'reorder.ge7'}",
                    f"reorder.ge9={toy['dir'] / 'reorder.ge9'}"]
    sets = _score(toy, "B")["sets"]
    wrong, few = sets["reorder.ge7"]["ribes"], sets["reorder.ge9"]["ribes"]
    assert wrong["score"] == 0.0 and wrong["difference"] == pytest.approx(-2 / 3, abs=1e-4)
    # every resample of its lines scores 0: the interval is [0, 0]
    assert wrong["ci_low"] == wrong["ci_high"] == 0.0
    assert wrong["below"] is True and wrong["p_adjusted"] < 0.05
    # Holm over the two sets with a test (reorder.ge5 and reorder.ge7)
    tested = [sets[n]["ribes"] for n in ("reorder.ge5", "reorder.ge7")]
    assert [t["p_adjusted"] for t in tested] == resample.holm([t["p_value"] for t in tested])
    assert few["difference"] == pytest.approx(-2 / 3, abs=1e-4)
    assert few["p_value"] is None and few["below"] is None
    records = [toy["dir"] / "B.ldd.json"]
    d = toy["dir"]
    assert run("table", "systems-ldd", "--kind", "ribes", "--records", *records,
               "--md", d / "r.md", "--csv", d / "r.csv") == 0
    with open(d / "r.csv", newline="", encoding="utf-8") as handle:
        rows = {r["set"]: r for r in csv.DictReader(handle)}
    assert rows["reorder.ge7"]["B"] == "0.0000 [0.0000, 0.0000] Δ-0.6667 ▼"
    assert rows["reorder.ge7"]["interval below"] == "1 of 1"
    assert rows["reorder.ge9"]["B"].endswith("Δ-0.6667 †")
    assert rows["reorder.ge9"]["interval below"] == "— (under 10 sentences)"
    assert "Choshen & Abend (2019), Table 6" in (d / "r.md").read_text(encoding="utf-8")


def test_ldd_tables_put_systems_in_columns(toy):
    records = [toy["dir"] / f"{s}.ldd.json" for s in ("A", "B")]
    for system in ("A", "B"):
        _score(toy, system)
    d = toy["dir"]
    for kind in ("bleu", "distance", "ribes"):
        assert run("table", "systems-ldd", "--kind", kind, "--records", *records,
                   "--min-sentences", "12", "--udpipe", "udpipe.english",
                   "--md", d / f"{kind}.md", "--csv", d / f"{kind}.csv") == 0
    with open(d / "bleu.csv", newline="", encoding="utf-8") as handle:
        rows = {r["set"]: r for r in csv.DictReader(handle)}
    # Table 4: the full test set, the lexical sets at >=1 and the reordering set
    assert list(rows) == ["full test set", "particle.ge1", "reflexive.ge1", "reorder.ge5"]
    assert rows["full test set"]["A"] == "100.00 [100.00, 100.00]"
    assert rows["particle.ge1"]["B"] == "0.00 [0.00, 0.00] Δ-66.67 ▼"
    assert rows["particle.ge1"]["below full test set"] == "1 of 2"
    assert rows["particle.ge1"]["interval below"] == "1 of 2"
    assert rows["particle.ge1"]["sentences"] == "10"
    # under 10 sentences: no verdict (†) and no interval
    assert rows["reflexive.ge1"]["B"] == "0.00 Δ-66.67 †"
    assert rows["reflexive.ge1"]["interval below"] == "— (under 10 sentences)"
    md = (d / "bleu.md").read_text(encoding="utf-8")
    assert "particle ≥1: 10" in md and "udpipe.english" in md and "small" in md
    # Table 5 with at least 12 sentences a set: particle.ge1 (10) and reflexive.ge1 (2) are
    # left out and named
    with open(d / "distance.csv", newline="", encoding="utf-8") as handle:
        rows5 = list(csv.DictReader(handle))
    assert [(r["phenomenon"], r["distance"]) for r in rows5] == [
        ("particle", "All"), ("particle", "Spearman ρ (BLEU, distance)")]
    assert rows5[0]["B"].startswith("50.00 [") and rows5[0]["sentences"] == "20"
    assert rows5[1]["B"] == "— (fewer than 3 bins)"
    distance_md = (d / "distance.md").read_text(encoding="utf-8")
    assert "Omitted as smaller: particle ≥1 (10), reflexive ≥1 (2)" in distance_md
    # its cells carry no Δ or verdict marks, so its notes explain none
    assert "▼" not in distance_md and "†" not in distance_md and "Δ" not in distance_md
    assert "▼/▲ mark sets" in md and "Δ = set − full test set" in md
    with open(d / "ribes.csv", newline="", encoding="utf-8") as handle:
        rows6 = list(csv.DictReader(handle))
    assert [r["set"] for r in rows6] == ["full test set", "reorder.ge5"]
    assert rows6[0]["A"] == "1.0000 [1.0000, 1.0000]"
    assert rows6[1]["B"].startswith("0.6667 [") and rows6[1]["B"].endswith("] Δ+0.0000")
    assert rows6[1]["below full test set"] == "0 of 2"  # Δ 0 for both
    assert rows6[1]["interval below"] == "0 of 2"
    # every column of the tables' own that a system could be named is a reserved name
    from phenomt.evaluate.checks import NAME
    from phenomt.plan.systems import RESERVED_SYSTEM_NAMES

    for kind in ("bleu", "distance", "ribes"):
        with open(d / f"{kind}.csv", newline="", encoding="utf-8") as handle:
            own = set(next(csv.reader(handle))) - {"A", "B"}
        assert {c for c in own if NAME.fullmatch(c)} <= set(RESERVED_SYSTEM_NAMES), kind


def _aligner_settings(path: Path, corpora: list[tuple[str, str, int]]) -> Path:
    """An aligner's settings.json as `phenomt align train` writes it (the fields the note
    reads: its training corpora and the pairs it trained on)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "aligner": "sil-thot FastAlignModel", "iterations": 5,
        "corpora": [{"src": s, "tgt": t, "lines": n} for s, t, n in corpora],
        "training_pairs": sum(n for _, _, n in corpora) - 1, "skipped_pairs": 1}),
        encoding="utf-8")
    return path


def test_other_metrics_on_the_sets_paired_like_bleu(toy):
    """``--metrics``: TER and CRR scored on the full test set and every set on BLEU's
    resamples. B's wrong lines share no word with any reference: TER 5 edits of 5 words, so
    100 on particle.ge1 (all 10 lines wrong) against 10 * 5 / (30 * 5) = 33.33 on the full
    test set (Δ +66.67, above: TER is lower-better, the verdict is about the score); no line
    repeats a word, so CRR is 0 everywhere."""
    src = _write(toy["dir"] / "src.de", ["x"] * 30)
    records = {}
    for system in ("A", "B"):
        out = toy["dir"] / f"{system}.ldd.json"
        assert run("systems", "ldd-score", "--testset", "toy", "--system", system, "--hyp",
                   toy[system], "--ref", toy["ref"], "--target-lang", "en", "--set",
                   *toy["sets"], "--samples", "200", "--seed", "3", "--metrics", "ter", "crr",
                   "--src", src, "--source-lang", "de", "--output", out) == 0
        records[system] = json.loads(out.read_text(encoding="utf-8"))
    a, b = records["A"], records["B"]
    assert a["full"]["metrics"]["ter"]["score"] == pytest.approx(0)
    assert b["full"]["metrics"]["ter"]["score"] == pytest.approx(100 / 3)
    ter = b["sets"]["particle.ge1"]["metrics"]["ter"]
    assert ter["score"] == pytest.approx(100) and ter["difference"] == pytest.approx(200 / 3)
    assert ter["above"] is True and ter["below"] is False and ter["p_adjusted"] < 0.05
    # too few sentences for a verdict, as for BLEU
    assert b["sets"]["reflexive.ge1"]["metrics"]["ter"]["above"] is None
    assert b["sets"]["particle.ge1"]["metrics"]["crr"]["score"] == 0
    # BLEU's own entries are unchanged by the other metrics
    assert b["sets"]["particle.ge1"]["bleu"]["score"] == pytest.approx(0)
    d = toy["dir"]
    assert run("table", "systems-ldd", "--kind", "metrics", "--records", d / "A.ldd.json",
               d / "B.ldd.json", "--md", d / "m.md", "--csv", d / "m.csv") == 0
    with open(d / "m.csv", newline="", encoding="utf-8") as handle:
        rows = [(r["set"], r["metric"], r["B"]) for r in csv.DictReader(handle)]
    full = {metric: cell for name, metric, cell in rows if name == "full test set"}
    assert full["CRR (%)"] == "0.00 [0.00, 0.00]" and full["TER"].startswith("33.33 [")
    assert ("particle.ge1", "TER", "100.00 [100.00, 100.00] Δ+66.67 ▲") in rows
    assert "Holm-adjusted together" in (d / "m.md").read_text(encoding="utf-8")


def test_the_score_records_statistics_are_used_where_they_were_computed_the_same_way(toy):
    """``--scores``: the system's score record of the same files gives the per-sentence
    statistics (the record is the same bytes as scoring the output again); a record of another
    output is not used. Shown with a record whose BLEU statistics were replaced by those of
    the perfect system A: B's challenge-set record then says A's BLEU."""
    d = toy["dir"]
    for system in ("A", "B"):
        assert run("systems", "score", "--testset", "toy", "--system", system, "--hyp",
                   toy[system], "--ref", toy["ref"], "--target-lang", "en", "--metrics",
                   "bleu", "chrf", "--samples", "200", "--seed", "3", "--output",
                   d / f"{system}.bleu.json") == 0

    def scored(name: str, *more: object) -> bytes:
        out = d / name
        assert run("systems", "ldd-score", "--testset", "toy", "--system", "B", "--hyp",
                   toy["B"], "--ref", toy["ref"], "--target-lang", "en", "--set", *toy["sets"],
                   "--samples", "200", "--seed", "3", "--metrics", "chrf", *more,
                   "--output", out) == 0
        return out.read_bytes()

    alone = scored("alone.json")
    assert scored("reused.json", "--scores", d / "B.bleu.json") == alone
    record, perfect = (json.loads((d / f"{s}.bleu.json").read_text("utf-8")) for s in "BA")
    record["subsets"]["all"]["bleu"]["statistics"] = \
        perfect["subsets"]["all"]["bleu"]["statistics"]
    (d / "doctored.json").write_text(json.dumps(record), encoding="utf-8")
    used = json.loads(scored("doctored.ldd.json", "--scores", d / "doctored.json"))
    assert used["full"]["bleu"]["score"] == pytest.approx(100)
    assert used["full"]["metrics"]["chrf"] == json.loads(alone)["full"]["metrics"]["chrf"]
    record["hypothesis"] = str(toy["A"])  # the record of another output
    (d / "other.json").write_text(json.dumps(record), encoding="utf-8")
    assert scored("other.ldd.json", "--scores", d / "other.json") == alone


def test_other_metrics_that_read_the_source_need_it(toy, capsys):
    with pytest.raises(SystemExit):
        run("systems", "ldd-score", "--testset", "toy", "--system", "A", "--hyp", toy["A"],
            "--ref", toy["ref"], "--target-lang", "en", "--set", *toy["sets"],
            "--metrics", "crr", "--output", toy["dir"] / "x.json")
    assert "crr read the source" in capsys.readouterr().err
    assert not (toy["dir"] / "x.json").exists()


def test_ldd_table_note_on_the_aligner_comes_from_its_settings(toy):
    """What the aligner was trained on is read from its settings.json: its corpora, and
    whether the test set's source is among them, never restated from the config."""
    for system in ("A", "B"):
        _score(toy, system)
    d = toy["dir"]
    records = [d / f"{s}.ldd.json" for s in ("A", "B")]
    settings = _aligner_settings(d / "align" / "de-en" / "model" / "settings.json", [
        ("results/data/tok/news.de", "results/data/tok/news.en", 3000),
        ("results/data/tok/toy.de", "results/data/tok/toy.en", 30)])

    def note(*extra: object) -> str:
        md = d / "bleu.md"
        assert run("table", "systems-ldd", "--kind", "bleu", "--records", *records,
                   "--aligner-settings", settings, *extra, "--md", md,
                   "--csv", d / "bleu.csv") == 0
        return md.read_text(encoding="utf-8")

    md = note("--alignment", "gdfa", "--aligned-source", "results/data/tok/./toy.de")
    assert f"LDD aligner of the direction ({settings.parent}, gdfa links)" in md
    assert ("trained on 3,029 sentence pairs from news.de | news.en (3,000 lines); toy.de | "
            "toy.en (30 lines); this test set is among them") in md
    assert "this test set is among them" in md
    assert "not trained on this test set" not in md
    md = note("--aligned-source", "results/data/tok/other.de")
    assert "this test set is not among them" in md and "links)" not in md
    # without the test set's source the note only lists the corpora
    assert "among them" not in note()
    bad = d / "bad" / "settings.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps({"aligner": "sil-thot FastAlignModel"}), encoding="utf-8")
    with pytest.raises(InputError, match="without its training corpora"):
        run("table", "systems-ldd", "--kind", "bleu", "--records", *records,
            "--aligner-settings", bad, "--md", d / "x.md", "--csv", d / "x.csv")


def test_ldd_distance_correlation_over_bins():
    # BLEU falls with distance for X (rho = -1) and rises for Y (rho = +1)
    def record(system: str, scores: list[float]) -> dict:
        sets = {f"reflexive.{b}": {"phenomenon": "reflexive", "bin": b, "sentences": 60,
                                   "bleu": {"score": s, "ci_low": s - 1, "ci_high": s + 1,
                                            "signature": "sig"}, "ribes": None,
                                   "difference": None, "below": None, "above": None}
                for b, s in zip(("all", "ge1", "ge2", "ge3"), scores, strict=True)}
        return {"testset": "toy", "system": system, "reference": "ref",
                "full": {"sentences": 100, "bleu": {"score": 30.0, "signature": "sig"}},
                "test": {"name": "bootstrap", "samples": 10, "seed": 1}, "sets": sets}

    frame, _ = tables.ldd_distance_table([record("X", [30, 25, 20, 10]),
                                          record("Y", [10, 20, 25, 30])], {}, 50)
    rho = frame[frame["distance"] == "Spearman ρ (BLEU, distance)"].iloc[0]
    assert rho["X"] == "-1.00 (n 4)" and rho["Y"] == "+1.00 (n 4)"


def test_ldd_set_errors_name_the_file(toy):
    d = toy["dir"]
    small = challenge.parse_set(toy["sets"][2])  # reflexive.ge1: lines 2 and 4
    # the set's reference is not the test set's: another test set's sets
    _write(d / "reflexive.ge1.ref", ["a dog ran far away", "something else"])
    with pytest.raises(InputError, match=r"reflexive\.ge1\.ref:2: differs"):
        challenge.ldd_record(testset="toy", system="A", hyp=toy["A"], ref=toy["ref"],
                             target_lang="en", sets=[small])
    _write(d / "reflexive.ge1.ids", ["2", "39"])
    with pytest.raises(InputError, match=r"reflexive\.ge1\.ids:2: sentence id 39 is outside"):
        challenge.ldd_record(testset="toy", system="A", hyp=toy["A"], ref=toy["ref"],
                             target_lang="en", sets=[small])
    with pytest.raises(ValueError, match="phenomenon.bin=PREFIX"):
        challenge.parse_set("particle=x")
    with pytest.raises(ValueError, match="bad distance bin"):
        challenge.parse_set("particle.gt1=x")
    with pytest.raises(ValueError, match="given twice"):
        challenge.ldd_record(testset="toy", system="A", hyp=toy["A"], ref=toy["ref"],
                             target_lang="en", sets=[challenge.parse_set(toy["sets"][0])] * 2)


# --------------------------------------------------------------------------- MQM sets

def test_prepare_mqm_keeps_the_named_systems(tmp_path):
    out = tmp_path / "outputs"
    assert run("systems", "prepare-mqm", "--annotations", DATA / "mqm.tsv", "--src-lang", "zh",
               "--tgt-lang", "en", "--systems", "D", "ref", "--outdir", out) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "D.en", "_docs.txt", "_manifest.json", "_segments.tsv", "_source.zh", "ref.en"]
    assert (out / "D.en").read_text(encoding="utf-8") == (
        "We indeed saw the stars in the sky.\nThe light tells us a lot.\n")
    # a second preparation replaces the folder whole
    assert run("systems", "prepare-mqm", "--annotations", DATA / "mqm.tsv", "--src-lang", "zh",
               "--tgt-lang", "en", "--systems", "A", "ref", "--outdir", out) == 0
    assert not (out / "D.en").exists() and (out / "A.en").exists()
    with pytest.raises(InputError, match=r"mqm\.tsv: no annotated system 'Z'"):
        run("systems", "prepare-mqm", "--annotations", DATA / "mqm.tsv", "--src-lang", "zh",
            "--tgt-lang", "en", "--systems", "A", "Z", "--outdir", out)


def test_mqm_record_with_ltcr_records_by_name(tmp_path):
    # LTCR records carry no system field: they are named on the command line. Metric ranks
    # A1 B3 C2 D4 against Accuracy/Addition rates 0, .5, 1, 1.5 (ranks 1-4): rho = 0.8 (see
    # test_systems.py); the reference's 0 joins as a tie with A in l_all only.
    named = []
    for system, value in {"A": 0.1, "B": 0.3, "C": 0.2, "D": 0.4}.items():
        path = tmp_path / f"{system}.ltcr.json"
        path.write_text(json.dumps({"l_all": value, "pairs_all": 10}), encoding="utf-8")
        named.append(f"{system}={path}")
    red = tmp_path / "D.red.json"
    red.write_text(json.dumps({"system": "D", "main": "all",
                               "subsets": {"all": {"drr": 0.05}}}), encoding="utf-8")
    out = tmp_path / "mqm.json"
    assert run("systems", "mqm", "--annotations", DATA / "mqm.tsv", "--records", red,
               "--named-records", *named, "--metric", "drr", "l_all", "--reference", "ref",
               "--output", out) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["reference"] == "ref"
    assert record["metrics"]["l_all"] == {"A": 0.1, "B": 0.3, "C": 0.2, "D": 0.4}
    assert record["metrics"]["drr"] == {"D": 0.05}
    addition = next(c for c in record["correlations"]
                    if c["metric"] == "l_all" and c["category"] == "Accuracy/Addition")
    assert addition["n"] == 4 and addition["rho"] == pytest.approx(0.8)
    # exact permutation p over the 4! pairings: 8 of 24 reach |rho| >= 0.8 (test_systems.py)
    assert addition["weak"] is True and addition["p"] == pytest.approx(1 / 3)
    assert run("table", "systems-mqm", "--mqm", out, "--testset", "wmt21-ted.zh-en",
               "--md", tmp_path / "m.md", "--csv", tmp_path / "m.csv") == 0
    md = (tmp_path / "m.md").read_text(encoding="utf-8")
    assert "LTCR (L-All)" in md and "weak evidence: n < 10" in md
    assert "Spearman LTCR (L-All) vs Accuracy/Addition: n = 4, ρ = +0.800, p = 0.3333" in md
    assert "Metrics take ref" in md
    assert "p: two-sided permutation p of Spearman's ρ" in md
    assert "n = 4: exact permutation p over the 24 orderings of the 4 systems" in md
    with open(tmp_path / "m.csv", newline="", encoding="utf-8") as handle:
        rows = {r["system"]: r for r in csv.DictReader(handle)}
    assert rows["ref"]["kind"] == "human translation" and rows["D"]["DRR"] == "0.0500"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"system": "C", "l_all": 0.5}), encoding="utf-8")
    with pytest.raises(InputError, match="is system 'C', given as 'A'"):
        run("systems", "mqm", "--annotations", DATA / "mqm.tsv", "--named-records",
            f"A={bad}", "--metric", "l_all", "--output", out)


# --------------------------------------------------------------------------- plan

@pytest.fixture
def config() -> dict:
    from phenomt.plan import load_config

    return load_config(ROOT / "config" / "config.yaml")


def test_plan_extracts_the_sets_of_the_test_sets(config):
    from phenomt.plan import Plan

    plan = Plan(config)
    plan.check()
    assert plan.systems.ldd_testsets == ["newstest2017.en-de", "newstest2021.de-en",
                                         "newstest2021.en-de"]
    # the LDD rules resolve the test set's challenge-set corpus to its declared corpus
    assert plan.ldd.corpus_name("newstest2021_de-en") == "newstest2021.de-en"
    assert plan.ldd.source("newstest2021_de-en", "de-en", tokenized=False) == \
        "results/data/raw/newstest2021.de-en.de"
    assert "newstest2021_de-en" not in plan.ldd.corpora  # neither scored nor tabled by LDD
    # German sources have no preposition stranding; the reordering set at the LDD distance
    assert plan.systems.ldd_sets("newstest2021.de-en") == [
        "particle.all", "particle.ge1", "particle.ge2", "particle.ge3", "reflexive.all",
        "reflexive.ge1", "reflexive.ge2", "reflexive.ge3", "reorder.ge5"]
    assert len(plan.systems.ldd_sets("newstest2017.en-de")) == 13
    files = plan.systems.ldd_set_files("newstest2017.en-de")
    assert "results/ldd/sets/newstest2017_en-de/en-de/reorder.ge5.ids" in files
    assert plan.systems.ldd_json("newstest2017.en-de", "KIT") == \
        "results/systems/newstest2017.en-de/KIT.ldd.json"
    # the tables read the note on the aligner from its settings.json, and name the test
    # set's tokenized source as `align train` got it (the aligner trains on what it aligns)
    assert plan.systems.ldd_aligner_settings("newstest2021.de-en") == \
        "results/ldd/align/de-en/model/settings.json"
    args = shlex.split(plan.systems.ldd_table_args("newstest2021.de-en"))
    source = args[args.index("--aligned-source") + 1]
    assert source == "results/data/tok/newstest2021.de-en.de"
    assert source in plan.ldd.align_sides("de-en", "src")
    tables = plan.systems.tables()
    assert "results/tables/systems_ldd_table5.newstest2017.en-de.md" in tables
    assert "results/tables/systems_mqm.wmt21-ted.zh-en.csv" in tables
    assert not any("newstest2021.zh-en" in t and "ldd" in t for t in tables)


def test_plan_scores_the_configured_metrics_on_the_sets(config, tmp_path):
    """``systems.ldd_metrics``: every ldd-score job gets them (and the source where one reads
    it), and each LDD test set gets its metrics table; none by default."""
    import copy

    from phenomt.plan import Plan, validate_config

    plan = Plan(config)
    assert plan.systems.ldd_metrics == [] and plan.systems.ldd_source_args(
        "newstest2021.de-en") == ""
    assert not any("systems_ldd_metrics" in t for t in plan.systems.tables())
    # one job makes a test set's tables: its command names each with its files, in order
    t = "newstest2021.de-en"
    stems = [f"results/tables/systems_ldd_table{n}.{t}" for n in (4, 5, 6)]
    assert shlex.split(plan.systems.ldd_tables_args(t)) == [
        "--kind", "bleu", "distance", "ribes", "--md", *(f"{s}.md" for s in stems),
        "--csv", *(f"{s}.csv" for s in stems)]
    assert plan.systems.ldd_table_outputs()["distance_json"] == (
        "results/tables/systems_ldd_table5.{testset}.json")
    assert len(plan.systems.ldd_table_outputs()) == 9
    changed = copy.deepcopy(config)
    changed["systems"]["ldd_metrics"] = ["ter", "crr"]
    plan = Plan(validate_config(changed))
    assert "--metrics ter crr" in plan.systems.ldd_score_args()
    assert shlex.split(plan.systems.ldd_tables_args(t))[:5] == [
        "--kind", "bleu", "distance", "ribes", "metrics"]
    assert shlex.split(plan.systems.ldd_tables_args(t))[-1] == (
        f"results/tables/systems_ldd_metrics.{t}.csv")
    assert plan.systems.ldd_source_inputs("newstest2021.de-en") == [
        "results/data/raw/newstest2021.de-en.de"]
    assert shlex.split(plan.systems.ldd_source_args("newstest2021.de-en")) == [
        "--src", "results/data/raw/newstest2021.de-en.de", "--source-lang", "de"]
    assert "results/tables/systems_ldd_metrics.newstest2021.de-en.csv" in plan.systems.tables()
    changed["systems"]["ldd_metrics"] = ["bleu"]
    with pytest.raises(Exception, match="bleu"):
        validate_config(copy.deepcopy(changed))
    # the workflow builds the new table from the same records
    workdir = tiny_workdir(tmp_path / "run")
    configured = yaml.safe_load(TINY_CONFIG.read_text(encoding="utf-8"))
    configured.setdefault("systems", {})["ldd_metrics"] = ["chrf"]
    (workdir / "ldd_metrics.yaml").write_text(yaml.safe_dump(configured), encoding="utf-8")
    result = run_snakemake("-n", "--configfile", str(workdir / "ldd_metrics.yaml"),
                           cwd=workdir, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # the tiny config scores its given systems on newstest2021.de-en's sets
    assert "results/tables/systems_ldd_metrics.newstest2021.de-en.md" in result.stdout


def test_plan_mqm_sets(config):
    from phenomt.plan import Plan

    plan = Plan(config)
    assert plan.systems.mqm_sets == ["wmt21-ted.zh-en", "wmt21-ted.en-de"]
    zh = "wmt21-ted.zh-en"
    assert plan.systems.mqm_reference(zh) == "results/systems/mqm/wmt21-ted.zh-en/outputs/ref.en"
    assert len(plan.systems.mqm_systems(zh)) == 15 and "ref" not in plan.systems.mqm_scored(zh)
    assert plan.systems.mqm_has_ltcr(zh) and not plan.systems.mqm_has_ltcr("wmt21-ted.en-de")
    args = plan.systems.mqm_metric_args(zh)
    assert "--metric drr l_all" in args and "refB=results/systems/mqm/" in args
    assert "--metric drr --categories" in plan.systems.mqm_metric_args("wmt21-ted.en-de")
    assert plan.systems.mqm_metric_inputs("wmt21-ted.en-de")["ltcr"] == []


@pytest.mark.parametrize("change, message", [
    (lambda c: c["systems"]["testsets"]["newstest2021.zh-en"].update(ldd=True),
     "needs a UDPipe model for 'zh'"),
    (lambda c: c["ldd"]["directions"].pop("de-en"), "needs de-en under ldd.directions"),
    (lambda c: c.pop("ldd"), "ldd needs the ldd section"),
    (lambda c: c["systems"]["mqm"]["wmt21-ted.en-de"].update(ltcr=True), "Zh->En only"),
    (lambda c: c["systems"]["mqm"]["wmt21-ted.en-de"].update(reference="refB"),
     "reference 'refB' is not one of its systems"),
    (lambda c: c["systems"]["mqm"]["wmt21-ted.zh-en"].update(annotations="nope"),
     "undeclared download 'nope'"),
    (lambda c: c["systems"]["testsets"]["newstest2021.zh-en"].update(ltcr=True),
     "ltcr needs the document ids of corpus 'newstest2021.zh-en'"),
    (lambda c: c["systems"]["testsets"]["newstest2021.de-en"].update(ltcr=True),
     "LTCR is defined for Zh->En only"),
    (lambda c: c["systems"]["testsets"]["newstest2021.zh-en"].update(
        align_extra=["newstest2017.zh-en"]), "align_extra trains the LTCR aligner"),
])
def test_plan_check_refuses_bad_systems_config(config, change, message):
    from phenomt.plan import Plan

    change(config)
    with pytest.raises(ValueError, match=message):
        Plan(config).check()


def test_ldd_table_refuses_mixed_records(toy):
    a = toy["dir"] / "A.ldd.json"
    _score(toy, "A")
    record = json.loads(a.read_text(encoding="utf-8"))
    other = toy["dir"] / "other.ldd.json"
    other.write_text(json.dumps({**record, "testset": "elsewhere", "system": "O"}),
                     encoding="utf-8")
    with pytest.raises(InputError, match=r"other\.ldd\.json: is for test set 'elsewhere'"):
        run("table", "systems-ldd", "--kind", "bleu", "--records", a, other,
            "--md", toy["dir"] / "t.md", "--csv", toy["dir"] / "t.csv")
    with pytest.raises(InputError, match="a second record of system 'A'"):
        run("table", "systems-ldd", "--kind", "bleu", "--records", a, a,
            "--md", toy["dir"] / "t.md", "--csv", toy["dir"] / "t.csv")
    plain = toy["dir"] / "plain.json"
    plain.write_text(json.dumps({"system": "A"}), encoding="utf-8")
    with pytest.raises(InputError, match=r"plain\.json: not a phenomt\.systems\.ldd/1 record"):
        run("table", "systems-ldd", "--kind", "bleu", "--records", plain,
            "--md", toy["dir"] / "t.md", "--csv", toy["dir"] / "t.csv")
