# Tables: Markdown and CSV under results/tables/.


rule table_corpus_stats:
    localrule: True
    input:
        PLAN.data.all_stats(),
    output:
        **PLAN.table_files("corpus_stats"),
    log:
        f"{OUT}/logs/tables/corpus_stats.log",
    conda:
        ENV
    shell:
        "phenomt table stats --stats {input:q} --md {output.md:q} --csv {output.csv:q}"
        " > {log:q} 2>&1"


rule table_bleu:
    localrule: True
    input:
        scores=PLAN.models.all_bleu(),
        cards=PLAN.models.cards(),
    output:
        **PLAN.table_files("bleu"),
    params:
        notes=PLAN.models.note_args(),
    log:
        f"{OUT}/logs/tables/bleu.log",
    conda:
        ENV
    shell:
        "phenomt table bleu --scores {input.scores:q} --models {input.cards:q} {params.notes}"
        " --md {output.md:q} --csv {output.csv:q} > {log:q} 2>&1"


rule table_ldd_sizes:
    localrule: True
    input:
        ids=PLAN.ldd.all_set_ids(),
        corpora=PLAN.ldd.corpus_sources(),
    output:
        md2=PLAN.table("ldd_table2", "md"),
        csv2=PLAN.table("ldd_table2", "csv"),
        md3=PLAN.table("ldd_table3", "md"),
        csv3=PLAN.table("ldd_table3", "csv"),
        # the JSON exports the table command writes beside each CSV
        json2=PLAN.table("ldd_table2", "json"),
        json3=PLAN.table("ldd_table3", "json"),
    params:
        reorder=PLAN.ldd.set_assignments("reorder", ".ids"),
        lexical=PLAN.ldd.set_assignments("lexical", ".ids"),
        corpora=PLAN.ldd.corpus_source_args(),
        notes=PLAN.ldd.note_args(),
    log:
        f"{OUT}/logs/tables/ldd_sizes.log",
    conda:
        ENV
    shell:
        "(phenomt table ldd-sizes --ids {params.reorder} --corpus {params.corpora}"
        " {params.notes} --md {output.md2:q} --csv {output.csv2:q} &&"
        " phenomt table ldd-sizes --ids {params.lexical} --corpus {params.corpora}"
        " {params.notes} --md {output.md3:q} --csv {output.csv3:q}) > {log:q} 2>&1"


rule table_ldd_scores:
    localrule: True
    input:
        scores=PLAN.ldd.all_scores(),
        cards=PLAN.ldd.scoring_cards(),
    output:
        **PLAN.table_files("ldd_table{num}"),
    wildcard_constraints:
        num="[456]",
    params:
        kind=lambda w: PLAN.ldd.score_table_kind(w.num),
        notes=PLAN.ldd.note_args(),
    log:
        f"{OUT}/logs/tables/ldd_table{{num}}.log",
    conda:
        ENV
    shell:
        "phenomt table ldd-{params.kind:q} --scores {input.scores:q} --models {input.cards:q}"
        " {params.notes} --md {output.md:q} --csv {output.csv:q} > {log:q} 2>&1"


rule table_ldd_control:
    localrule: True
    input:
        controls=PLAN.ldd.all_controls(),
        cards=PLAN.ldd.scoring_cards(),
    output:
        **PLAN.table_files("ldd_control"),
    params:
        notes=PLAN.ldd.note_args(),
    log:
        f"{OUT}/logs/tables/ldd_control.log",
    conda:
        ENV
    shell:
        "phenomt table ldd-control --controls {input.controls:q} --models {input.cards:q}"
        " {params.notes} --md {output.md:q} --csv {output.csv:q} > {log:q} 2>&1"


rule table_ldd_validation:
    localrule: True
    input:
        PLAN.ldd.filled_sheet,
    output:
        **PLAN.table_files("ldd_validation"),
    log:
        f"{OUT}/logs/tables/ldd_validation.log",
    conda:
        ENV
    shell:
        "phenomt ldd sheet-import --sheet {input:q} --md {output.md:q} --csv {output.csv:q}"
        " > {log:q} 2>&1"


# LDD figures, drawn from the tables above and shown in the HTML report.
rule ldd_figure_distance:
    localrule: True
    input:
        PLAN.table("ldd_table5", "csv"),
    output:
        png=report(
            PLAN.ldd.figure("distance", "png"),
            caption="../report/ldd_distance.rst",
            category=PLAN.report.category("ldd"),
            subcategory="Figures",
            labels={"figure": "BLEU by dependency distance (paper: Table 5)"},
        ),
        svg=PLAN.ldd.figure("distance", "svg"),
    params:
        scale=lambda w: PLAN.report.scale("ldd"),
        title=PLAN.figure_title("BLEU by dependency distance"),
    log:
        f"{OUT}/logs/figures/ldd_distance.log",
    conda:
        ENV
    shell:
        "phenomt ldd figure-distance --table {input:q} --title {params.title:q}"
        " --output {output:q} > {log:q} 2>&1"


rule ldd_figure_sets:
    localrule: True
    input:
        PLAN.table("ldd_table4", "csv"),
    output:
        png=report(
            PLAN.ldd.figure("sets", "png"),
            caption="../report/ldd_sets.rst",
            category=PLAN.report.category("ldd"),
            subcategory="Figures",
            labels={"figure": "Challenge sets against the full test set (paper: Table 4)"},
        ),
        svg=PLAN.ldd.figure("sets", "svg"),
    params:
        scale=lambda w: PLAN.report.scale("ldd"),
        layout=lambda w: PLAN.ldd.sets_figure_args(),
        title=PLAN.figure_title("Challenge sets against the full test set"),
    log:
        f"{OUT}/logs/figures/ldd_sets.log",
    conda:
        ENV
    shell:
        "phenomt ldd figure-sets --table {input:q} {params.layout} --title {params.title:q}"
        " --output {output:q} > {log:q} 2>&1"


# A table as LaTeX (config `latex: true`), from its JSON export.
rule table_latex:
    localrule: True
    input:
        PLAN.latex_input(),
    output:
        PLAN.latex_output(),
    wildcard_constraints:
        table="[^/]+",
    log:
        f"{OUT}/logs/tables/{{table}}.latex.log",
    conda:
        ENV
    shell:
        "phenomt table latex --table {input:q} --output {output:q} > {log:q} 2>&1"
