# Lexical translation consistency (Lei et al., LREC-COLING 2024) on the released Zh->En test
# set: one aligner trained on the test set (and extra data) for every hypothesis, Tables 1-3
# with the reference scored as a hypothesis (the calibration of LTCR's alignment noise).


rule lexcons_align_train:
    input:
        testset=lambda w: PLAN.lexcons.testset_dir(),
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
        "phenomt lexcons align-train --testset {input.testset} --model-dir {params.model_dir}"
        " {params.extra} > {log} 2>&1"


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
        "phenomt lexcons tables --testset {input.testset} --align-model {params.model_dir}"
        " {params.settings} --table-prefix {params.prefix} --stats {output.stats}"
        " > {log} 2>&1"


# Figure 3 for the hypothesis at hand: the reference scored as a hypothesis (calibration).
rule lexcons_figure3:
    input:
        f"{OUT}/lexcons/stats.json",
    output:
        PLAN.lexcons.figure_files(),
    log:
        f"{OUT}/logs/lexcons/figure3.log",
    conda:
        ENV
    shell:
        "phenomt lexcons figure3 --record {input} --key reference_calibration"
        " --title 'Reference as hypothesis: LTCR against sample size'"
        " --output {output} > {log} 2>&1"
