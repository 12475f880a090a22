"""Figures of given systems, drawn from hand-made tables and records."""

from __future__ import annotations

import csv

import pytest

from phenomt.core.figures import close_figure
from phenomt.core.io import InputError
from phenomt.systems import figures

COLUMNS = ["test set", "lines", "system", "kind", figures.REDUNDANCY_COLUMN]


def _table(tmp_path, rows):
    path = tmp_path / "systems_redundancy.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    return path


def test_redundancy_panels_per_test_set_sorted_and_coloured_by_kind(tmp_path):
    from phenomt.core.figures import read_table

    path = _table(tmp_path, [
        ["nt21.de-en", "all", "GLAT", "non-autoregressive", "1.14 [0.98, 1.30]"],
        ["nt21.de-en", "all", "AT", "autoregressive", "1.15 [0.98, 1.29]"],
        ["nt21.de-en", "all", "Other", "", "0.90 [0.80, 1.00]"],
        ["nt21.zh-en", "official", "A", "", "2.00 [1.50, 2.50]"],
        ["nt21.zh-en", "all", "A", "", "9.99 [9.00, 11.0]"],  # secondary subset: not drawn
    ])
    fig = figures.draw_redundancy(read_table(path), path)
    first, second = fig.axes[:2]
    assert first.get_title() == "nt21.de-en" and second.get_title() == "nt21.zh-en"
    # sorted by the score, lowest at the bottom
    assert [t.get_text() for t in first.get_yticklabels()] == ["Other", "GLAT", "AT"]
    widths = [round(p.get_width(), 2) for p in first.patches]
    assert widths == [0.90, 1.14, 1.15]
    assert first.patches[1].get_facecolor() != first.patches[2].get_facecolor()
    assert [round(p.get_width(), 2) for p in second.patches] == [2.00]
    close_figure(fig)


def test_redundancy_refuses_a_table_without_its_columns(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("test set,system\nt,s\n", encoding="utf-8")
    from phenomt.core.figures import read_table

    with pytest.raises(InputError, match="x.csv"):
        figures.draw_redundancy(read_table(path), path)


def test_mqm_one_panel_per_metric_and_category_with_rho_and_n():
    from phenomt.systems.mqm import correlations

    rates = {s: {"segments": 10, "categories": {
        "Fluency/Inconsistency": {"rate": r1}, "Terminology/Inconsistent": {"rate": r2}}}
        for s, r1, r2 in (("a", 0.1, 0.3), ("b", 0.2, 0.2), ("c", 0.3, 0.1))}
    for system in rates.values():
        for entry in system["categories"].values():
            entry["errors"] = 5
    metrics = {"drr": {"a": 1.0, "b": 2.0, "c": 3.0}, "bleu": {"a": 30.0, "b": 20.0, "c": 10.0}}
    record = {"systems": rates, "metrics": metrics,
              "correlations": correlations(rates, metrics, list(
                  rates["a"]["categories"]), weak_below=3)}
    fig = figures.draw_mqm(record)
    assert len(fig.axes) == 4
    titles = sorted(ax.get_title() for ax in fig.axes)
    # drr rises with fluency errors (+1) and falls with terminology (-1); bleu the opposite
    assert titles == ["ρ = +1.00, n = 3", "ρ = +1.00, n = 3", "ρ = -1.00, n = 3",
                      "ρ = -1.00, n = 3"]
    assert all(len(ax.collections[0].get_offsets()) == 3 for ax in fig.axes)
    close_figure(fig)
    with pytest.raises(InputError, match="no metric"):
        figures.draw_mqm({"correlations": []})


def test_commands_write_png_and_svg(tmp_path):
    from phenomt.cli import main

    path = _table(tmp_path, [["t", "all", "s", "", "1.0 [0.5, 1.5]"]])
    out = [str(tmp_path / "r.png"), str(tmp_path / "r.svg")]
    assert main(["systems", "figure-redundancy", "--table", str(path), "--output", *out]) == 0
    first = (tmp_path / "r.svg").read_bytes()
    assert main(["systems", "figure-redundancy", "--table", str(path), "--output", *out]) == 0
    assert (tmp_path / "r.svg").read_bytes() == first  # byte-stable


def _toy_record() -> dict:
    """An analysis of 40 toy sentences ("bad" the baseline, "good" and "same")."""
    from phenomt.systems import analysis
    from tests.test_analysis import _test_set

    refs, hyps = _test_set(40)
    return analysis.analysis_record(
        testset="toy", hypotheses=hyps, references=refs, sources=refs, baseline="bad",
        target_lang="en", tokenize="13a",
        frequencies=analysis.corpus_frequencies(["the cat sees today"] * 20, "13a", "toy"),
        samples=100, seed=1)


def test_buckets_draw_each_systems_difference_with_a_zero_line():
    record = _toy_record()
    fig = figures.draw_buckets(record)
    try:
        top, bottom = fig.axes[:2]
        assert "count in the training corpus" in top.get_title()
        assert [t.get_text() for t in fig.legends[0].get_texts()] == ["good", "same"]
        # the zero line, and "good" 100 points above the baseline in the unseen bucket
        assert any(list(line.get_ydata()) == [0.0, 0.0] for line in top.get_lines())
        good = top.containers[0]
        assert max(good.lines[0].get_ydata()) == pytest.approx(100.0)
    finally:
        close_figure(fig)
    with pytest.raises(InputError, match="no system besides the baseline"):
        figures.draw_buckets({**record, "systems": ["bad"]}, "r.json")
    assert len(fig.axes) == 2  # no parse: no POS panel


def test_an_interval_that_misses_its_value_is_drawn_from_the_value_to_its_far_end():
    # A perfect system's bucket BLEU: the point 100.00000000000004, its resamples'
    # 99.99999999999994 (sacreBLEU's sums against numpy's); and a skewed interval.
    record = _toy_record()
    cells = [bucket["systems"]["good"] for bucket in record["length"]["buckets"]]
    cell = next(c for c in cells if c["difference"] is not None)
    cell["difference"], cell["difference_ci"] = -100.00000000000004, [-99.99999999999994] * 2
    fig = figures.draw_buckets(record)
    try:
        bars = fig.axes[1].containers[0]
        lows, highs = (line.get_ydata() for line in bars.lines[1])
        assert -100.00000000000004 in lows and -99.99999999999994 in highs
    finally:
        close_figure(fig)
    from phenomt.core.figures import error_lengths

    assert error_lengths(5.0, 6.0, 9.0) == (0.0, 4.0)  # skewed: from the value to 9
    assert error_lengths(5.0, 4.0, 7.5) == (1.0, 2.5)


def test_buckets_draw_a_pos_panel_when_the_record_has_pos_buckets():
    from phenomt.core.conllu import parse_conllu
    from phenomt.systems import analysis
    from tests.test_analysis import CONLLU

    # the hand parse's two sentences five times over (lines 3k + 1, 3k + 2; 3k + 3 unparsed):
    # NOUN and ADP in 10 sentences; VERB ("sat") and DET ("the": "zum" counts as ADP) in 5
    copies = 5
    parse = "".join(CONLLU.replace("# sent_id = 2", f"# sent_id = {3 * k + 2}")
                    .replace("# sent_id = 1\n", f"# sent_id = {3 * k + 1}\n")
                    for k in range(copies))
    refs = ["zum Haus", "The cats sat on the mat.", "A dog."] * copies
    hyps = {"base": ["zum Hause", "The cat sat on a mat.", "A dog."] * copies,
            "good": list(refs)}
    record = analysis.analysis_record(
        testset="toy", hypotheses=hyps, references=refs, sources=refs, baseline="base",
        target_lang="en", tokenize="13a", samples=50,
        frequencies=analysis.corpus_frequencies(refs, "13a", "toy"),
        reference_parse=parse_conllu(parse))
    sizes = {b["bucket"]: b["sentences"] for b in record["pos"]["buckets"]}
    assert sizes == {"NOUN": 10, "VERB": 5, "DET": 5, "ADP": 10}
    fig = figures.draw_buckets(record)
    try:
        assert len(fig.axes) == 3
        pos = fig.axes[2]
        assert "part of speech" in pos.get_title()
        # VERB's and DET's 5 sentences: named under the panels, not drawn
        assert [t.get_text() for t in pos.get_xticklabels()] == ["NOUN", "ADP"]
        note = " ".join(t.get_text() for t in fig.texts)
        assert "fewer than 10 sentences, not drawn" in note and "POS VERB (5), POS DET (5)" in note
        assert "filled: Holm-adjusted p < 0.05" in fig._suptitle.get_text()
    finally:
        close_figure(fig)


def test_buckets_fill_the_differences_the_holm_adjusted_test_finds():
    record = _toy_record()
    cells = {b["bucket"]: b["systems"] for b in record["frequency"]["buckets"]}
    assert cells["<1"]["good"]["p_adjusted"] < 0.05  # 100 points over 40 sentences
    assert cells["<1"]["same"]["p_adjusted"] == 1.0
    fig = figures.draw_buckets(record)
    try:
        top = fig.axes[0]
        # one filled marker: "good" in the unseen bucket; every marker is drawn hollow first
        filled = {line.get_gid(): list(line.get_ydata()) for line in top.get_lines()
                  if (line.get_gid() or "").startswith("significant")}
        assert filled == {"significant good": [pytest.approx(100.0)], "significant same": []}
        assert not [t for t in fig.texts if "not drawn" in t.get_text()]  # none too small
    finally:
        close_figure(fig)


def _ldd_record(system: str, sets: dict) -> dict:
    return {"testset": "toy", "system": system, "sets": {
        name: (None if diff is None else {
            "sentences": 40, "difference": diff, "difference_ci": [diff - 1.0, diff + 1.0],
            "below": diff < -2, "above": False}) for name, diff in sets.items()}}


def test_challenge_sets_one_panel_per_set_with_paired_differences():
    records = [_ldd_record("A", {"reorder.ge5": -3.0, "particle.ge1": 0.5}),
               _ldd_record("B", {"reorder.ge5": -0.5, "particle.ge1": None})]
    fig = figures.draw_challenge_sets(records, {"A": "rule-based", "B": None})
    try:
        panels = [ax for ax in fig.axes if ax.get_visible()]
        assert [ax.get_title() for ax in panels] == ["reorder.ge5 (40 sentences)",
                                                     "particle.ge1 (40 sentences)"]
        reorder = panels[0]
        points = [c.lines[0] for c in reorder.containers]
        assert [list(p.get_xdata()) for p in points] == [[-3.0], [-0.5]]
        # A's set is significantly below: filled; B's is not: hollow; kinds coloured apart
        assert points[0].get_markerfacecolor() != (1.0, 1.0, 1.0, 1.0)
        assert points[1].get_markerfacecolor() == "white"
        assert points[0].get_color() != points[1].get_color()
        assert any(list(line.get_xdata()) == [0.0, 0.0] for line in reorder.get_lines())
        assert len(panels[1].containers) == 1  # no point for B's missing set
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert legend == ["rule-based", "kind not stated"]
    finally:
        close_figure(fig)
    with pytest.raises(InputError, match="no challenge-set record"):
        figures.draw_challenge_sets([], {}, "x")


def test_challenge_sets_too_small_for_a_verdict_are_named_not_drawn():
    def small(system: str) -> dict:
        record = _ldd_record(system, {"particle.all": -3.0, "particle.ge3": -8.0})
        record["sets"]["particle.ge3"].update(sentences=2, below=None, above=None)
        record["sets"]["reflexive.ge3"] = {"sentences": 0, "difference": None,
                                           "difference_ci": None, "below": None}
        return record

    fig = figures.draw_challenge_sets([small("A"), small("B")], {})
    try:
        panels = [ax for ax in fig.axes if ax.get_visible()]
        assert [ax.get_title() for ax in panels] == ["particle.all (40 sentences)"]
        notes = [" ".join(t.get_text().split()) for t in fig.texts][1:]  # after the title
        assert notes == ["Too few sentences for a verdict, not drawn: particle.ge3 (2), "
                         "reflexive.ge3 (0)"]
    finally:
        close_figure(fig)
    # no set with a verdict: the figure is the note alone
    only_small = small("A")
    del only_small["sets"]["particle.all"]
    fig = figures.draw_challenge_sets([only_small], {})
    try:
        assert not [ax for ax in fig.axes if ax.get_visible()]
        assert "particle.ge3 (2), reflexive.ge3 (0)" in " ".join(
            fig.texts[-1].get_text().split())
    finally:
        close_figure(fig)


def test_challenge_set_figure_keeps_its_texts_apart_with_one_panel_and_a_long_name():
    # one panel is the narrowest figure: its title, the note and a 64-character system name
    # must stay inside it and off each other and the panel
    long_name = "A" * 62 + "_b"
    sets = {"reorder.ge5": -3.0, **{f"particle.ge{k}": None for k in range(4)},
            **{f"reflexive.ge{k}": None for k in range(4)}}
    records = []
    for system in (long_name, "KIT", "x"):
        record = _ldd_record(system, sets)
        for name in sets:
            if name != "reorder.ge5":
                record["sets"][name] = {"sentences": 1, "difference": None,
                                        "difference_ci": None, "below": None}
        records.append(record)
    fig = figures.draw_challenge_sets(records, {})
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        page = fig.bbox
        panel = next(ax for ax in fig.axes if ax.get_visible())
        texts = [*fig.texts, panel.title, *panel.get_yticklabels(),
                 panel.xaxis.label]
        boxes = [t.get_window_extent(renderer) for t in texts if t.get_text()]
        for box in boxes:
            assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1, box
            assert page.y0 - 1 <= box.y0 and box.y1 <= page.y1 + 1, box
        # the title is the figure's first text, the note its last
        title, note = (fig.texts[0].get_window_extent(renderer),
                       fig.texts[-1].get_window_extent(renderer))
        assert fig.texts[0] is fig._suptitle and fig.texts[-1].get_text().startswith("Too few")
        assert not title.overlaps(panel.title.get_window_extent(renderer))
        assert not note.overlaps(panel.get_tightbbox(renderer))
        assert not title.overlaps(fig.legends[0].get_window_extent(renderer))
    finally:
        close_figure(fig)
