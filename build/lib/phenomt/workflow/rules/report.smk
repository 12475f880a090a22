# The HTML report (`make report`: snakemake report_inputs, then --report). Snakemake's report
# shows HTML results inline but CSV and Markdown only as downloads, so every table gets an
# HTML view (title, rows, notes) in its paper's category, captioned from the table's
# declaration (phenomt.plan.tables); the figures are marked for the report by the rules that
# draw them.


rule report_table_ldd:
    localrule: True
    input:
        **PLAN.table_files("{table}"),
        sentences=lambda w: PLAN.report.sentences(w.table),
    output:
        report(
            f"{OUT}/report/ldd/{{table}}.html",
            caption="../report/tables.rst",
            category=PLAN.report.category("ldd"),
            subcategory="Tables",
            labels=lambda w: {"table": PLAN.report.table_label(w.table)},
        ),
    wildcard_constraints:
        table="[^/]+",
    params:
        caption=lambda w: PLAN.report.caption(w.table),
        extra=lambda w: PLAN.report.sentences_args(w.table),
        scale=lambda w: PLAN.report.scale("ldd"),
    log:
        f"{OUT}/logs/report/{{table}}.log",
    conda:
        ENV
    shell:
        "phenomt report table --csv {input.csv:q} --md {input.md:q} {params.extra}"
        " --output {output:q} > {log:q} 2>&1"


use rule report_table_ldd as report_table_nat with:
    output:
        report(
            f"{OUT}/report/nat/{{table}}.html",
            caption="../report/tables.rst",
            category=PLAN.report.category("nat"),
            subcategory="Tables",
            labels=lambda w: {"table": PLAN.report.table_label(w.table)},
        ),
    params:
        caption=lambda w: PLAN.report.caption(w.table),
        extra=lambda w: PLAN.report.sentences_args(w.table),
        scale=lambda w: PLAN.report.scale("nat"),


use rule report_table_ldd as report_table_lexcons with:
    output:
        report(
            f"{OUT}/report/lexcons/{{table}}.html",
            caption="../report/tables.rst",
            category=PLAN.report.category("lexcons"),
            subcategory="Tables",
            labels=lambda w: {"table": PLAN.report.table_label(w.table)},
        ),
    params:
        caption=lambda w: PLAN.report.caption(w.table),
        extra=lambda w: PLAN.report.sentences_args(w.table),
        scale=lambda w: PLAN.report.scale("lexcons"),


use rule report_table_ldd as report_table_systems with:
    output:
        report(
            f"{OUT}/report/systems/{{table}}.html",
            caption="../report/tables.rst",
            category=PLAN.report.category("systems"),
            subcategory="Tables",
            labels=lambda w: {"table": PLAN.report.table_label(w.table)},
        ),
    params:
        caption=lambda w: PLAN.report.caption(w.table),
        extra=lambda w: PLAN.report.sentences_args(w.table),
        scale=lambda w: PLAN.report.scale("systems"),


use rule report_table_ldd as report_table_data with:
    output:
        report(
            f"{OUT}/report/data/{{table}}.html",
            caption="../report/tables.rst",
            category=PLAN.report.category("data"),
            subcategory="Tables",
            labels=lambda w: {"table": PLAN.report.table_label(w.table)},
        ),
    params:
        caption=lambda w: PLAN.report.caption(w.table),
        extra=lambda w: PLAN.report.sentences_args(w.table),
        scale=lambda w: PLAN.report.scale("data"),


# Not built by default: `make report` asks for it, then for the report of the same DAG.
rule report_inputs:
    localrule: True
    input:
        PLAN.report.inputs(),
