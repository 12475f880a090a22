"""The figures drawn from the finished tables and the HTML table views of the report, on small
hand-made tables: what is drawn is counted on the returned matplotlib Figure, not in pixels."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from phenomt.cli import main


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


# --------------------------------------------------------------------------- shared helpers

def test_scores_parse_plain_numbers_intervals_and_dashes():
    from phenomt.core.figures import Score, parse_number, parse_score

    assert parse_score("12.5 [11.00, 13.25]") == Score(12.5, 11.0, 13.25)
    assert parse_score("35.84 [30.86, 40.02] Δ+0.79") == Score(35.84, 30.86, 40.02)
    assert parse_score("7") == Score(7.0) and not Score(7.0).has_interval
    assert parse_score("") is None and parse_score("—") is None
    assert parse_number("2.31x") == 2.31 and parse_number("nan") is None


def test_figures_are_byte_identical_for_the_same_table(tmp_path):
    from phenomt.core.figures import save_figure
    from phenomt.ldd.figures import draw_distance

    rows = [{"model": "m", "corpus": "books", "phenomenon": "particle", "BLEU All": "20",
             "BLEU ≥1": "18"}]
    for name in ("a", "b"):
        save_figure(draw_distance(rows), [tmp_path / f"{name}.png", tmp_path / f"{name}.svg"])
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    assert b"<dc:date>" not in (tmp_path / "a.svg").read_bytes()


def test_a_figure_is_cropped_as_savefigs_tight_box_crops_it(tmp_path):
    """The box is laid out once for both formats (measured on the PNG's renderer); the PNG
    is the bytes savefig's own ``bbox_inches="tight"`` writes, the SVG cuts nothing off that
    box and adds at most a point or two of margin (its own renderer measures text at 72 dpi)."""
    import re

    from phenomt.core.figures import close_figure, save_figure
    from phenomt.ldd.figures import draw_distance

    fig = draw_distance(TABLE5)
    save_figure(fig, [tmp_path / "a.png", tmp_path / "a.svg"])
    fig.savefig(tmp_path / "t.png", format="png", metadata={"Software": None},
                bbox_inches="tight")
    fig.savefig(tmp_path / "t.svg", format="svg", metadata={"Date": None}, bbox_inches="tight")
    close_figure(fig)
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "t.png").read_bytes()

    def size(name: str) -> tuple[float, float]:
        head = (tmp_path / name).read_text("utf-8")[:1000]
        width, height = re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', head).groups()
        return float(width), float(height)

    for ours, tight in zip(size("a.svg"), size("t.svg"), strict=True):
        assert tight <= ours <= tight * 1.02


def test_a_figure_path_must_name_its_format(tmp_path):
    from phenomt.core.figures import close_figure, save_figure
    from phenomt.core.io import InputError
    from phenomt.ldd.figures import draw_distance

    fig = draw_distance([{"phenomenon": "particle", "BLEU All": "1"}])
    with pytest.raises(InputError, match="figure.pdf"):
        save_figure(fig, [tmp_path / "figure.pdf"])
    close_figure(fig)


# --------------------------------------------------------------------------- LDD

TABLE5 = [
    {"model": "t.de-en", "corpus": "books", "direction": "de-en", "scoring": "sacrebleu",
     "phenomenon": p, "BLEU All": "20.0", "paper BLEU All (Transformer)": "30",
     "BLEU ≥1": "19.0", "BLEU ≥2": b2, "BLEU ≥3": "17.5", "Spearman ρ": "-1.000"}
    for p, b2 in (("particle", "18.0"), ("reflexive", ""))
] + [{"model": "t.de-en", "corpus": "news", "direction": "de-en", "scoring": "sacrebleu",
      "phenomenon": "particle", "BLEU All": "9", "paper BLEU All (Transformer)": "",
      "BLEU ≥1": "8", "BLEU ≥2": "7", "BLEU ≥3": "—", "Spearman ρ": ""}]


def test_bleu_by_distance_has_a_panel_per_corpus_and_a_line_per_phenomenon(tmp_path):
    from phenomt.ldd.figures import distance_bins, draw_distance

    assert distance_bins(list(TABLE5[0])) == ["BLEU All", "BLEU ≥1", "BLEU ≥2", "BLEU ≥3"]
    fig = draw_distance(TABLE5)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [len(ax.lines) for ax in visible] == [2, 1]
    assert [t.get_text() for t in visible[0].get_xticklabels()] == ["All", "≥1", "≥2", "≥3"]
    assert "books" in visible[0].get_title() and "news" in visible[1].get_title()
    table = write_csv(tmp_path / "ldd_table5.csv", TABLE5)
    out = tmp_path / "distance.png"
    assert main(["ldd", "figure-distance", "--table", str(table), "--where", "corpus=books",
                 "--output", str(out)]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")


def test_bleu_by_distance_names_the_table_without_bin_columns(tmp_path):
    table = write_csv(tmp_path / "other.csv", [{"phenomenon": "particle", "BLEU": "1"}])
    assert main(["ldd", "figure-distance", "--table", str(table),
                 "--output", str(tmp_path / "x.png")]) == 2


TABLE4 = [
    {"model": m, "corpus": "books", "direction": "de-en", "phenomenon": p, "bin": b,
     "distance": d, "BLEU": bleu, "baseline BLEU": "25.0"}
    for m in ("a", "b")
    for p, b, d, bleu in (("particle", "ge1", "≥1", "20.0"), ("particle", "ge2", "≥2", "19"),
                          ("reorder", "ge5", "≥5", "18.5"))
]


def test_sets_against_baseline_from_table4_has_a_panel_per_system():
    from phenomt.ldd.figures import draw_sets_vs_baseline, set_bars

    bars = set_bars(TABLE4, "t4.csv", system_column="model",
                    set_columns=["corpus", "phenomenon", "distance"], value="BLEU",
                    baseline_column="baseline BLEU")
    assert bars[0].label == "books · particle · ≥1" and bars[0].baseline.value == 25.0
    fig = draw_sets_vs_baseline(bars)
    assert [ax.get_title() for ax in fig.axes] == ["a", "b"]
    assert [len(ax.patches) for ax in fig.axes] == [6, 6]  # a set bar and a baseline bar each
    assert not any(ax.collections for ax in fig.axes)  # no intervals in Table 4
    # the grey bars are the full test set, not a baseline system
    assert [[t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes] == [
        ["challenge set", "full test set"]] * 2


def test_sets_against_baseline_reads_systems_as_columns_with_intervals(tmp_path):
    from phenomt.ldd.figures import draw_sets_vs_baseline, set_bars, wide_to_long

    wide = [
        {"corpus": "news", "set": "baseline", "sys1": "30.0 [29.0, 31.0]", "sys2": "28"},
        {"corpus": "news", "set": "particle ≥1", "sys1": "25.5 [24.0, 27.0]", "sys2": "20"},
        {"corpus": "books", "set": "baseline", "sys1": "10 [9, 11]", "sys2": "9"},
        {"corpus": "books", "set": "particle ≥1", "sys1": "8 [7, 9]", "sys2": ""},
    ]
    rows = wide_to_long(wide, ["corpus", "set"])
    bars = set_bars(rows, "wide.csv", system_column="system", set_columns=["corpus", "set"],
                    value="BLEU", baseline_set="baseline", match=["corpus"])
    assert [(b.system, b.label) for b in bars] == [
        ("sys1", "news · particle ≥1"), ("sys2", "news · particle ≥1"),
        ("sys1", "books · particle ≥1"), ("sys2", "books · particle ≥1")]
    assert bars[2].baseline.value == 10 and bars[2].score.low == 7
    fig = draw_sets_vs_baseline(bars)
    sys1, sys2 = fig.axes
    assert len(sys1.patches) == 4 and len(sys2.patches) == 3  # sys2 has no books score
    assert sys1.collections  # error bars of the intervals
    table = write_csv(tmp_path / "wide.csv", wide)
    out = tmp_path / "sets.svg"
    assert main(["ldd", "figure-sets", "--table", str(table), "--sets", "corpus", "set",
                 "--systems-as-columns", "--baseline-set", "baseline", "--match", "corpus",
                 "--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8").lstrip().startswith("<?xml")


def test_sets_against_baseline_command_filters_table4(tmp_path, capsys):
    table = write_csv(tmp_path / "ldd_table4.csv", TABLE4)
    assert main(["ldd", "figure-sets", "--table", str(table), "--baseline-column",
                 "baseline BLEU", "--where", "bin=ge1,ge5",
                 "--output", str(tmp_path / "sets.png")]) == 0
    assert "4 sets" in capsys.readouterr().out  # two per model: ≥2 is left out
    assert main(["ldd", "figure-sets", "--table", str(table), "--value", "chrF",
                 "--output", str(tmp_path / "x.png")]) == 2  # no such column


# --------------------------------------------------------------------------- NAT

TABLE10 = [
    {"pair": "de-en", "test set": "newstest2013", "system": s, "data": d, "sentences": "60",
     "CRR (%)": crr, "paper CRR (%)": paper, "DRR (%)": "1.5", "paper DRR (%)": ""}
    for s, d, crr, paper in (("AR teacher", "raw", "0.5", ""), ("CMLM", "raw", "12.0", "9.1"),
                             ("CMLM", "distilled", "6.0", "4.2"), ("GLAT", "raw", "—", ""))
]


def test_redundancy_draws_raw_and_distilled_bars_and_the_paper_as_markers(tmp_path):
    from phenomt.nat.figures import draw_redundancy

    fig = draw_redundancy(TABLE10)
    crr, drr = fig.axes
    assert len(crr.patches) == 3 and len(drr.patches) == 4  # GLAT has no CRR
    assert [len(line.get_xdata()) for line in crr.lines] == [1, 1]  # paper raw, distilled
    assert not drr.lines
    assert [t.get_text() for t in crr.get_xticklabels()] == ["AR teacher", "CMLM", "GLAT"]
    table = write_csv(tmp_path / "nat_table10.csv", TABLE10)
    assert main(["nat", "figure-redundancy", "--table", str(table),
                 "--output", str(tmp_path / "r.png")]) == 0
    assert main(["nat", "figure-redundancy", "--table", str(table), "--metrics", "BLEU",
                 "--output", str(tmp_path / "r.png")]) == 2


def test_speedup_draws_a_bar_per_nat_system_and_batch_size(tmp_path):
    from phenomt.nat.figures import draw_speedup

    rows = [{"pair": "de-en", "system": s, "data": d, "batch size": b, "speed-up vs AR": v}
            for s, d, b, v in (("AR teacher", "raw", "1", "1.00x"), ("AR teacher", "raw", "64",
                                                                      "1.00x"),
                               ("CMLM", "raw", "1", "3.50x"), ("CMLM", "raw", "64", "2.00x"),
                               ("GLAT", "distilled", "1", "4.25x"),
                               ("GLAT", "distilled", "64", ""))]
    fig = draw_speedup(rows)
    (ax,) = fig.axes
    assert len(ax.patches) == 3
    assert [t.get_text() for t in ax.get_xticklabels()] == ["CMLM (raw)", "GLAT (distilled)"]
    assert ax.lines[0].get_ydata()[0] == 1.0  # the AR line
    table = write_csv(tmp_path / "nat_speed.csv", rows[:2])
    assert main(["nat", "figure-speedup", "--table", str(table),
                 "--output", str(tmp_path / "s.png")]) == 2  # no NAT system


# --------------------------------------------------------------------------- lexical consistency

def test_ltcr_by_distance_draws_both_subsets(tmp_path):
    from phenomt.lexcons.figures import draw_distance

    by_distance = {b: {"all": {"ltcr": 0.5 + i / 20}, "anno": {"ltcr": None if b == "0"
                                                               else 0.8}}
                   for i, b in enumerate(["0", "1", "2", "3", "4", "ge5"])}
    fig = draw_distance(by_distance, "t")
    (ax,) = fig.axes
    assert [len(line.get_xdata()) for line in ax.lines] == [6, 5]
    assert ax.get_xticklabels()[-1].get_text() == "≥5"
    record = tmp_path / "stats.json"
    record.write_text(json.dumps({"reference_calibration": {"by_distance": by_distance}}))
    out = tmp_path / "d.png"
    assert main(["lexcons", "figure-distance", "--record", str(record), "--key",
                 "reference_calibration", "--output", str(out)]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")
    assert main(["lexcons", "figure-distance", "--record", str(record),
                 "--output", str(out)]) == 2  # no by_distance at the top level


# --------------------------------------------------------------------------- report views

def test_a_table_view_keeps_title_rows_and_notes(tmp_path):
    import pandas as pd

    from phenomt.core.tables import write_table

    frame = pd.DataFrame([{"set": "a<b", "BLEU": "12.50", "paper BLEU": None}])
    md, csv_path = tmp_path / "t.md", tmp_path / "t.csv"
    write_table(frame, md, csv_path, "Table 4: sets", ["Signature: `nrefs:1`"])
    out = tmp_path / "t.html"
    assert main(["report", "table", "--csv", str(csv_path), "--md", str(md),
                 "--output", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "<h1>Table 4: sets</h1>" in page and "a&lt;b" in page
    assert '<td class="num">12.50</td>' in page and '<td class="paper">—</td>' in page
    assert "<li>Signature: <code>nrefs:1</code></li>" in page
    md.write_text("no title\n", encoding="utf-8")
    assert main(["report", "table", "--csv", str(csv_path), "--md", str(md),
                 "--output", str(out)]) == 2


def test_the_plan_puts_figures_in_the_targets_and_tables_in_categories():
    from phenomt.plan import Plan, load_config
    from phenomt.plan.report import paper_of
    from tests.conftest import TINY_CONFIG

    plan = Plan(load_config(TINY_CONFIG))
    targets = plan.targets()
    for figure in ("ldd_distance", "ldd_sets", "nat_redundancy", "nat_speedup"):
        assert f"results/figures/{figure}.png" in targets
    views = plan.report.views()
    assert "results/report/ldd/ldd_table4.html" in views
    assert "results/report/data/corpus_stats.html" in views
    assert not any("validation_sheet" in v for v in views)
    assert set(views) <= set(plan.report.inputs())
    assert [paper_of(n) for n in ("nat_speed", "bleu", "systems_bleu", "lexcons_table3")] == [
        "nat", "data", "systems", "lexcons"]
    assert plan.report.paper_table("ldd_reorder_grid.news.de-en") == \
        "Sections 4.1-4.2 (reordering sets)"
    for paper in ("data", "ldd", "nat", "lexcons", "systems"):
        assert plan.report.scale(paper).endswith(".")
    assert "transformer.de-en (de-en): transformer 2+2 layers" in plan.report.scale("ldd")


def test_a_title_goes_above_every_panel_and_none_is_added_when_empty():
    from phenomt.core.figures import add_title, close_figure, pyplot

    fig, _ = pyplot().subplots(1, 2)
    assert add_title(fig, "") is fig and fig._suptitle is None
    add_title(fig, "BLEU (smoke scale: the models barely trained; not a finding)")
    assert fig._suptitle.get_text().endswith("not a finding)")
    close_figure(fig)
