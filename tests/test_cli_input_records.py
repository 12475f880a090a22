"""JSON records given on the command line: a file that is not UTF-8, not JSON, not an object
or a record of another command gives a one-line error naming the file (status 2), never a
traceback; a valid ``systems analyse --words-only`` record is drawn and shown as far as it
goes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phenomt.cli import run
from tests.conftest import error_of

BAD_BYTES = b'{"a": "\xff"}\n'


def outcome(capsys, *argv: object) -> tuple[int, str]:
    """``phenomt argv`` through :func:`phenomt.cli.run`: its status and stderr."""
    try:
        status = run([str(a) for a in argv])
    except SystemExit as stop:  # argparse
        status = stop.code
    return status, capsys.readouterr().err


def dump(path: Path, record: object) -> Path:
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- load_json

def _bad_json_commands(tmp_path: Path, bad: Path) -> dict[str, list[object]]:
    text = tmp_path / "t.txt"
    text.write_text("a b\nc d\n", encoding="utf-8")
    md, csv = tmp_path / "o.md", tmp_path / "o.csv"
    csv.write_text("a,b\n1,2\n", encoding="utf-8")
    md.write_text("# T\n", encoding="utf-8")
    texts = ["--hyp", f"s={text}", "--ref", text, "--src", text]
    return {
        "table latex": ["table", "latex", "--table", bad, "--output", tmp_path / "o.tex"],
        "table ldd-bleu": ["table", "ldd-bleu", "--scores", bad, "--md", md, "--csv", csv],
        "figure-distance": ["lexcons", "figure-distance", "--record", bad,
                            "--output", tmp_path / "o.png"],
        "report table": ["report", "table", "--csv", csv, "--md", md, "--sentences", bad,
                         "--output", tmp_path / "o.html"],
        "systems sentences": ["systems", "sentences", "--testset", "t", *texts,
                              "--analysis", bad, "--output", tmp_path / "s.json"],
        "systems score": ["systems", "score", "--testset", "t", "--system", "s",
                          "--hyp", text, "--ref", text, "--target-lang", "en",
                          "--baseline", "b", "--baseline-hyp", text,
                          "--baseline-record", bad, "--output", tmp_path / "sc.json"],
    }


@pytest.mark.parametrize("command", ["table latex", "table ldd-bleu", "figure-distance",
                                     "report table", "systems sentences", "systems score"])
def test_a_file_that_is_not_utf8_is_named_with_its_line(tmp_path, capsys, command):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"{\n" + BAD_BYTES)
    err = error_of(capsys, *_bad_json_commands(tmp_path, bad)[command])
    assert f"{bad}:2: not UTF-8 text (byte 0xff" in err


def test_invalid_json_is_named_with_its_line_and_column(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "a": 1,\n}\n', encoding="utf-8")
    err = error_of(capsys, "table", "latex", "--table", bad, "--output", tmp_path / "o.tex")
    assert f"{bad}:3: invalid JSON: " in err and "(column 1)" in err


@pytest.mark.parametrize("text, kind", [("[1, 2]", "an array"), ('"x"', "a string"),
                                        ("3", "a number"), ("null", "null")])
def test_a_top_level_that_is_no_object_is_refused(tmp_path, capsys, text, kind):
    path = tmp_path / "list.json"
    path.write_text(text, encoding="utf-8")
    err = error_of(capsys, "lexcons", "figure3", "--record", path,
                   "--output", tmp_path / "f.png")
    assert f"{path}: expected a JSON object at the top level, not {kind}" in err


def test_a_keyed_entry_that_is_no_object_is_refused(tmp_path, capsys):
    path = dump(tmp_path / "stats.json", {"calibration": [1, 2]})
    err = error_of(capsys, "lexcons", "figure3", "--record", path, "--key", "calibration",
                   "--output", tmp_path / "f.png")
    assert f"{path}: 'calibration' is not an LTCR record" in err


# --------------------------------------------------------------------------- record kinds

#: A `phenomt score bleu` record without meta: the record of another table.
BLEU = {"metric": "bleu", "score": 10.0, "signature": "nrefs:1|tok:13a", "sentences": 2,
        "ci": None, "meta": {}}


def _table(tmp_path: Path) -> list[object]:
    return ["--md", tmp_path / "t.md", "--csv", tmp_path / "t.csv"]


def test_table_bleu_refuses_a_model_card_of_another_kind(tmp_path, capsys):
    score = dump(tmp_path / "s.json", {**BLEU, "meta": {"model": "m", "direction": "de-en",
                                                         "testset": "t"}})
    card = dump(tmp_path / "card.json", BLEU)
    err = error_of(capsys, "table", "bleu", "--scores", score, "--models", card,
                   *_table(tmp_path))
    assert (f"{card}: --models expects a 'phenomt table model-card' record; this has no "
            "'model', 'direction'") in err
    err = error_of(capsys, "table", "bleu", "--scores", card, "--models", card,
                   *_table(tmp_path))
    assert f"{card}: --scores expects a 'phenomt score bleu' record; this has no 'model'" in err
    assert "in its 'meta'" in err


def test_table_stats_refuses_a_record_of_another_kind(tmp_path, capsys):
    path = dump(tmp_path / "s.json", BLEU)
    err = error_of(capsys, "table", "stats", "--stats", path, *_table(tmp_path))
    assert f"{path}: --stats expects a 'phenomt corpus stats' record; this has no 'label'" in err
    path = dump(path, {"label": "x", "split": "test", "langs": ["de", "en"], "sentences": 1,
                       "tokens_de": 3})
    err = error_of(capsys, "table", "stats", "--stats", path, *_table(tmp_path))
    assert f"{path}: --stats expects a 'phenomt corpus stats' record; this has no " \
           "'tokens_en'" in err
    path = dump(path, {"label": "x", "split": "test", "langs": "de-en", "sentences": 1})
    assert f"{path}: 'langs' is 'de-en', not a pair of languages" in error_of(
        capsys, "table", "stats", "--stats", path, *_table(tmp_path))


SPEC = {"src": "de", "tgt": "en", "train": ["a"], "valid": "v", "seed": 1,
        "bpe": {"merges": 100}, "architecture": {"arch": "transformer"},
        "training": {"max_update": 50}, "decode": {"beam": 5}}


def test_model_card_refuses_a_bad_spec_and_an_assembly_report_of_another_kind(tmp_path,
                                                                              capsys):
    good = dump(tmp_path / "a.json", {"output_pairs": 10, "duplicates": 1, "leaks": 2})
    card = ["table", "model-card", "--name", "m", "--output", tmp_path / "c.json"]
    err = error_of(capsys, *card, "--spec", "{bad", "--assemble", good)
    assert "argument --spec: invalid JSON (" in err and "'{bad'" in err
    err = error_of(capsys, *card, "--spec", json.dumps({**SPEC, "bpe": {}}),
                   "--assemble", good)
    assert "argument --spec: the model's settings have no 'merges' in 'bpe'" in err
    err = error_of(capsys, *card, "--spec", "[]", "--assemble", good)
    assert "argument --spec: expected a JSON object" in err
    other = dump(tmp_path / "other.json", BLEU)
    err = error_of(capsys, *card, "--spec", json.dumps(SPEC), "--assemble", other)
    assert f"{other}: --assemble expects a 'phenomt corpus assemble' record" in err
    assert run([str(a) for a in [*card, "--spec", json.dumps(SPEC), "--assemble", good]]) == 0


def test_table_training_refuses_a_model_description_of_another_kind(tmp_path, capsys):
    model = tmp_path / "model.pt"
    model.write_bytes(b"")
    info = dump(tmp_path / "model.json", BLEU)
    bench = tmp_path / "bench.tsv"
    bench.write_text("s\tmax_rss\tcpu_time\n10\t100\t9\n", encoding="utf-8")
    err = error_of(capsys, "table", "training", "--run", f"m={model}={bench}",
                   *_table(tmp_path))
    assert f"{info}: --run expects a 'phenomt nmt train' record; this has no 'validation'" in err


def _nat_pair(tmp_path: Path, name: str, bleu: dict | None = None,
              redundancy: dict | None = None) -> str:
    meta = {"teacher": "t", "system": name, "model": "cmlm", "data": "raw", "testset": "nt",
            "direction": "de-en"}
    b = dump(tmp_path / f"{name}.bleu.json", bleu or {**BLEU, "meta": meta})
    r = dump(tmp_path / f"{name}.red.json",
             redundancy or {"crr": 0.1, "drr": 0.0, "sentences": 2})
    return f"{b}={r}"


def test_nat_results_refuses_records_of_another_kind(tmp_path, capsys):
    command = ["table", "nat-results", "--table", "10", *_table(tmp_path)]
    pair = _nat_pair(tmp_path, "a", redundancy=BLEU)
    err = error_of(capsys, *command, "--scores", pair)
    assert (f"{tmp_path / 'a.red.json'}: --scores expects a 'phenomt score redundancy' "
            "record; this has no 'crr', 'drr'") in err
    pair = _nat_pair(tmp_path, "b", bleu=BLEU)
    err = error_of(capsys, *command, "--scores", pair)
    assert f"{tmp_path / 'b.bleu.json'}: --scores expects a 'phenomt score bleu --meta' " \
           "record; this has no 'teacher', 'system'" in err
    card = dump(tmp_path / "card.json", BLEU)
    err = error_of(capsys, *command, "--scores", _nat_pair(tmp_path, "c"), "--cards", card)
    assert f"{card}: --cards expects a 'phenomt table model-card' record" in err
    err = error_of(capsys, *command, "--scores", _nat_pair(tmp_path, "c"),
                   "--selections", card)
    assert f"{card}: --selections expects a 'phenomt nat average' record" in err


def test_nat_speed_and_agreement_refuse_records_of_another_kind(tmp_path, capsys):
    other = dump(tmp_path / "other.json", BLEU)
    err = error_of(capsys, "table", "nat-speed", "--speeds", other, *_table(tmp_path))
    assert f"{other}: --speeds expects a 'phenomt nat speed' record; this has no 'teacher'" \
        in err
    speed = dump(tmp_path / "speed.json", {"teacher": "t", "model": "ar", "data": "raw",
                                           "direction": "de-en",
                                           "measurements": [{"batch_size": 1}]})
    err = error_of(capsys, "table", "nat-speed", "--speeds", speed, *_table(tmp_path))
    assert f"{speed}: --speeds expects a 'phenomt nat speed' record; this has no " \
           "'sentences'" in err and "in its 'measurements'" in err
    err = error_of(capsys, "table", "nat-agreement", "--report", other, *_table(tmp_path))
    assert (f"{other}: --report expects a 'phenomt score redundancy-agreement' record; this "
            "has no 'pairs', 'tokens', 'systems'") in err


def test_nat_claims_refuses_records_of_another_kind(tmp_path, capsys):
    pair = _nat_pair(tmp_path, "a", redundancy=BLEU)
    err = error_of(capsys, "table", "nat-claims", "--scores", pair, *_table(tmp_path))
    assert f"{tmp_path / 'a.red.json'}: --scores expects a 'phenomt score redundancy'" in err
    pair = _nat_pair(tmp_path, "b", bleu=BLEU)
    err = error_of(capsys, "table", "nat-claims", "--scores", pair, *_table(tmp_path))
    assert f"{tmp_path / 'b.bleu.json'}: --scores expects a 'phenomt score bleu --meta' " \
           "record; this has no 'direction', 'testset', 'system' in its 'meta'" in err


LTCR = {"documents": 2, "sentences": 5, "l_all": 0.5, "intervals": {"l_all": [0.2, 0.8]},
        "pairs_all": 4, "unjudged_all": 0}


def test_lexcons_sets_table_refuses_records_of_another_kind(tmp_path, capsys):
    other = dump(tmp_path / "other.json", BLEU)
    ltcr = dump(tmp_path / "ltcr.json", LTCR)
    command = ["lexcons", "sets-table", "--output-md", tmp_path / "t.md",
               "--output-csv", tmp_path / "t.csv"]
    err = error_of(capsys, *command, "--ltcr", f"news/sys={other}")
    assert f"{other}: --ltcr expects a 'phenomt score ltcr' record; this has no 'documents'" \
        in err
    bad = dump(tmp_path / "bad.json", {**LTCR, "intervals": {}})
    err = error_of(capsys, *command, "--ltcr", f"news/sys={bad}")
    assert f"{bad}: --ltcr expects a 'phenomt score ltcr' record; this has no 'l_all' in " \
           "its 'intervals'" in err
    err = error_of(capsys, *command, "--ltcr", f"news/sys={ltcr}", "--tcp", f"sys={other}",
                   "--tcp-set", "news")
    assert f"{other}: --tcp expects a 'phenomt score tcp' record; this has no 'tcp'" in err
    tcp = dump(tmp_path / "tcp.json", {"tcp": 0.5, "tense": {"documents": 1},
                                       "conjunction": {}, "pronoun": {"documents": 1}})
    err = error_of(capsys, *command, "--ltcr", f"news/sys={ltcr}", "--tcp", f"sys={tcp}",
                   "--tcp-set", "news")
    assert f"{tcp}: --tcp expects a 'phenomt score tcp' record; this has no 'documents' in " \
           "its 'conjunction'" in err


def test_systems_figure_ldd_refuses_records_of_another_kind(tmp_path, capsys):
    other = dump(tmp_path / "other.json", BLEU)
    command = ["systems", "figure-ldd", "--output", tmp_path / "f.png", "--records"]
    err = error_of(capsys, *command, other)
    assert (f"{other}: --records expects a 'phenomt systems ldd-score' record; this has no "
            "'testset', 'system', 'sets'") in err
    bad = dump(tmp_path / "bad.json", {"testset": "t", "system": "s",
                                       "sets": {"particle.ge1": {"difference": 1.0}}})
    err = error_of(capsys, *command, bad)
    assert f"{bad}: --records expects a 'phenomt systems ldd-score' record; this has no " \
           "'sentences' in its 'sets.particle.ge1'" in err


# --------------------------------------------------------------------------- words-only

@pytest.fixture(scope="module")
def words_only(tmp_path_factory) -> tuple[Path, Path, Path]:
    """A ``systems analyse --words-only`` record of 40 toy sentences (its ``length`` and
    ``examples`` null), with the reference and the two outputs."""
    from phenomt.core.io import write_json
    from phenomt.systems import analysis
    from tests.test_analysis import _test_set

    root = tmp_path_factory.mktemp("words_only")
    refs, hyps = _test_set(40)
    hyps = {"bad": hyps["bad"], "good": hyps["good"]}
    record = analysis.analysis_record(
        testset="toy", hypotheses=hyps, references=refs, sources=refs, baseline="bad",
        target_lang="en", tokenize="13a",
        frequencies=analysis.corpus_frequencies(["the cat sees today"] * 20, "13a", "toy"),
        samples=50, seed=1, words_only=True)
    assert record["length"] is None and record["examples"] is None
    path = root / "pair.json"
    write_json(path, record)
    for name, lines in {"ref": refs, **hyps}.items():
        (root / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, root / "ref.txt", root


def test_figure_buckets_draws_a_words_only_record_and_notes_the_length_panel(
        words_only, tmp_path, monkeypatch, capsys):
    from phenomt.systems import figures

    path, _, _ = words_only
    drawn = []
    original = figures.draw_buckets
    monkeypatch.setattr(figures, "draw_buckets",
                        lambda *a, **k: drawn.append(original(*a, **k)) or drawn[-1])
    status, err = outcome(capsys, "systems", "figure-buckets", "--record", path,
                          "--output", tmp_path / "b.svg")
    assert status == 0, err
    assert (tmp_path / "b.svg").stat().st_size > 0
    (fig,) = drawn
    assert [ax.get_title() for ax in fig.axes] == [
        "word F by word frequency (count in the training corpus)"]
    notes = " ".join(" ".join(t.get_text().split()) for t in fig.texts)
    assert "BLEU by length is not in this record (a --words-only record" in notes


def test_sentences_shows_a_words_only_record_without_its_length_and_example_groups(
        words_only, tmp_path, capsys):
    path, ref, root = words_only
    output = tmp_path / "s.json"
    status, err = outcome(capsys, "systems", "sentences", "--testset", "toy",
                          "--hyp", f"bad={root / 'bad.txt'}", f"good={root / 'good.txt'}",
                          "--ref", ref, "--src", ref, "--analysis", path, "--output", output)
    assert status == 0, err
    assert "note: the analysis record has no length buckets or example lines" in err
    record = json.loads(output.read_text(encoding="utf-8"))
    kinds = {key.split(":", 1)[0] for key in record["groups"]}
    assert kinds == {"frequency"}
    assert record["notes"] == [
        "the analysis record has no length buckets or example lines (a --words-only record: "
        "`systems analysis-merge` adds them); their groups are left out"]


def test_analysis_tables_of_a_words_only_record_say_where_the_tables_come_from(
        words_only, tmp_path, capsys):
    path, _, _ = words_only
    err = error_of(capsys, "table", "systems-analysis", "--record", path, "--kind", "buckets",
                   "--md", tmp_path / "b.md", "--csv", tmp_path / "b.csv")
    assert f"{path}: a record of one pair's words" in err and "analysis-merge" in err
    assert not (tmp_path / "b.md").exists()


# --------------------------------------------------------------------------- options

@pytest.mark.parametrize("command", ["score", "score-sets", "control"])
def test_ldd_tokenize_is_one_of_sacrebleus_tokenizers(tmp_path, capsys, command):
    text = tmp_path / "t.txt"
    text.write_text("a b\n", encoding="utf-8")
    extra = {"score": ["--phenomenon", "baseline"], "score-sets": [],
             "control": ["--phenomenon", "particle", "--src", text, "--ids", text]}[command]
    err = error_of(capsys, "ldd", command, "--model", "m", "--corpus", "news",
                   "--direction", "de-en", *extra, "--hyp", text, "--ref", text,
                   "--tokenize", "bogus", "--output", tmp_path / "o.json")
    assert "argument --tokenize: invalid choice: 'bogus'" in err and "'13a'" in err


def test_sets_table_names_an_ltcr_key_without_its_set(tmp_path, capsys):
    record = dump(tmp_path / "l.json", {"l_all": 0.5})
    err = error_of(capsys, "lexcons", "sets-table", "--ltcr", f"nosystem={record}",
                   "--output-md", tmp_path / "t.md", "--output-csv", tmp_path / "t.csv")
    assert "--ltcr: expected SET/SYSTEM=FILE, got 'nosystem'" in err


def test_model_tables_refuse_a_hypothesis_without_its_ltcr_record(tmp_path, capsys):
    from phenomt.lexcons.results import LTCR_KEYS

    record = dump(tmp_path / "l.json", dict.fromkeys(LTCR_KEYS))
    ref = tmp_path / "ref.en"
    ref.write_text("a b\n", encoding="utf-8")
    err = error_of(capsys, "lexcons", "model-tables", "--ltcr", f"sent={record}",
                   "--hyp", f"doc={ref}", "--ref", ref, "--scale", "s", "--testset-note", "t",
                   "--table-prefix", tmp_path / "t")
    assert "--hyp: no --ltcr record for 'doc' (records: sent)" in err
    assert list(tmp_path.glob("t*")) == []
