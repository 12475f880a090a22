# Lexical translation consistency (Lei et al., LREC-COLING 2024) on the released Zh->En test
# set: one aligner (trained on the released set, the converted LTCR sets and extra data) for
# every hypothesis, Tables 1-3 with the reference scored as a hypothesis (the calibration of
# LTCR's alignment noise).


rule lexcons_align_train:
    input:
        testset=lambda w: PLAN.lexcons.align_testsets(),
        extra=lambda w: PLAN.lexcons.align_extra_inputs(),
    output:
        f"{OUT}/lexcons/align/settings.json",
    params:
        model_dir=lambda w, output: os.path.dirname(output[0]),
        extra=lambda w: PLAN.lexcons.align_extra_args(),
    log:
        f"{OUT}/logs/lexcons/align_train.log",
    benchmark:
        f"{OUT}/benchmarks/lexcons/align_train.tsv"
    conda:
        ENV
    shell:
        "phenomt lexcons align-train --testset {input.testset:q} --model-dir {params.model_dir:q}"
        " {params.extra} > {log:q} 2>&1"


rule lexcons_tables:
    input:
        testset=lambda w: PLAN.lexcons.testset_dir(),
        model=f"{OUT}/lexcons/align/settings.json",
    output:
        tables=PLAN.lexcons.table_files(),
        stats=f"{OUT}/lexcons/stats.json",
    params:
        model_dir=lambda w, input: os.path.dirname(input.model),
        prefix=lambda w, output: output.tables[0].removesuffix("1.md"),
        settings=lambda w: PLAN.lexcons.stemmer_args(),
    log:
        f"{OUT}/logs/lexcons/tables.log",
    benchmark:
        f"{OUT}/benchmarks/lexcons/tables.tsv"
    conda:
        ENV
    shell:
        "phenomt lexcons tables --testset {input.testset:q} --align-model {params.model_dir:q}"
        " {params.settings} --table-prefix {params.prefix:q} --stats {output.stats:q}"
        " > {log:q} 2>&1"


# Figure 3 for the hypothesis at hand: the reference scored as a hypothesis (calibration).
rule lexcons_figure3:
    localrule: True
    input:
        f"{OUT}/lexcons/stats.json",
    output:
        png=report(
            PLAN.lexcons.figure("figure3", "png"),
            caption="../report/lexcons_figure3.rst",
            category=PLAN.report.category("lexcons"),
            subcategory="Figures",
            labels={"figure": "LTCR against sample size (paper: Figure 3)"},
        ),
        svg=PLAN.lexcons.figure("figure3", "svg"),
    log:
        f"{OUT}/logs/lexcons/figure3.log",
    conda:
        ENV
    shell:
        "phenomt lexcons figure3 --record {input:q} --key reference_calibration"
        " --title 'Reference as hypothesis: LTCR against sample size'"
        " --output {output:q} > {log:q} 2>&1"


# LTCR of the same calibration by the sentence distance of a pair (the bins of Table 5).
rule lexcons_figure_distance:
    localrule: True
    input:
        f"{OUT}/lexcons/stats.json",
    output:
        png=report(
            PLAN.lexcons.figure("distance", "png"),
            caption="../report/lexcons_distance.rst",
            category=PLAN.report.category("lexcons"),
            subcategory="Figures",
            labels={"figure": "LTCR by sentence distance (paper: Table 5)"},
        ),
        svg=PLAN.lexcons.figure("distance", "svg"),
    log:
        f"{OUT}/logs/lexcons/figure_distance.log",
    conda:
        ENV
    shell:
        "phenomt lexcons figure-distance --record {input:q} --key reference_calibration"
        " --title 'Reference as hypothesis: LTCR by sentence distance'"
        " --output {output:q} > {log:q} 2>&1"


# --- LTCR of the sentence and document models (Tables 4-6, further sets, TCP) -------------


# A test corpus in the released layout: a part of the released set (with its chains), or
# another document-level corpus converted from its text and document ids (L-All only).
rule lexcons_set:
    input:
        lambda w: PLAN.lexcons.set_inputs(w.corpus),
    output:
        directory(f"{OUT}/lexcons/sets/{{corpus}}"),
    params:
        args=lambda w: PLAN.lexcons.set_args(w.corpus),
    log:
        f"{OUT}/logs/lexcons/set.{{corpus}}.log",
    conda:
        ENV
    shell:
        "phenomt lexcons {params.args} --output {output:q} > {log:q} 2>&1"


rule lexcons_score:
    input:
        testset=f"{OUT}/lexcons/sets/{{corpus}}",
        hyp=lambda w: PLAN.lexcons.score_hyp(w.corpus, w.docsys),
        model=f"{OUT}/lexcons/align/settings.json",
    output:
        f"{OUT}/lexcons/scores/{{corpus}}/{{docsys}}.json",
    params:
        model_dir=lambda w, input: os.path.dirname(input.model),
        settings=lambda w: PLAN.lexcons.metric_args(),
    log:
        f"{OUT}/logs/lexcons/score.{{corpus}}.{{docsys}}.log",
    benchmark:
        f"{OUT}/benchmarks/lexcons/score.{{corpus}}.{{docsys}}.tsv"
    conda:
        ENV
    shell:
        "phenomt score ltcr --testset {input.testset:q} --hyp {input.hyp:q}"
        " --align-model {params.model_dir:q} {params.settings} --output {output:q} > {log:q} 2>&1"


rule lexcons_tcp:
    input:
        lambda w: PLAN.lexcons.tcp_inputs(w.docsys),
    output:
        f"{OUT}/lexcons/tcp/{{docsys}}.json",
    params:
        args=lambda w: PLAN.lexcons.tcp_args(w.docsys),
    log:
        f"{OUT}/logs/lexcons/tcp.{{docsys}}.log",
    conda:
        ENV
    shell:
        "phenomt score tcp {params.args} --output {output:q} > {log:q} 2>&1"


rule lexcons_model_tables:
    localrule: True
    input:
        PLAN.lexcons.model_table_inputs(),
    output:
        PLAN.lexcons.model_table_files(),
    params:
        args=PLAN.lexcons.model_table_args(),
        prefix=lambda w, output: output[0].removesuffix("4.md"),
    log:
        f"{OUT}/logs/lexcons/model_tables.log",
    conda:
        ENV
    shell:
        "phenomt lexcons model-tables {params.args} --table-prefix {params.prefix:q}"
        " > {log:q} 2>&1"


rule lexcons_sets_table:
    localrule: True
    input:
        PLAN.lexcons.sets_table_inputs(),
    output:
        **PLAN.table_files("lexcons_sets"),
    params:
        args=PLAN.lexcons.sets_table_args(),
    log:
        f"{OUT}/logs/lexcons/sets_table.log",
    conda:
        ENV
    shell:
        "phenomt lexcons sets-table {params.args} --output-md {output.md:q}"
        " --output-csv {output.csv:q} > {log:q} 2>&1"
