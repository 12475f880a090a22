# Given system outputs (`systems` in the config): sacreBLEU and chrF with intervals and paired
# significance against the baseline, word-level CRR/DRR with sentence-bootstrap intervals and
# paired tests between named systems. One job per system and metric: adding a system runs
# only its own jobs and the tables.


rule systems_score:
    input:
        hyp=lambda w: PLAN.systems.hyp(w.testset, w.sysname),
        src=lambda w: PLAN.systems.source(w.testset),
        ref=lambda w: PLAN.systems.reference(w.testset),
        baseline=lambda w: PLAN.systems.baseline_inputs(w.testset, w.sysname),
        mask=lambda w: PLAN.systems.mask(w.testset),
        metric_inputs=lambda w: PLAN.systems.score_inputs(w.testset),
    output:
        f"{OUT}/systems/{{testset}}/{{sysname}}.bleu.json",
    wildcard_constraints:
        testset="[^/]+",
        sysname="[^/]+",
    # first of a system's jobs: the longest chains wait for it (the challenge sets, whose job
    # reads its statistics, then their figure; the analysis's merge)
    priority: 2
    params:
        identity=lambda w: PLAN.systems.identity_args(w.testset, w.sysname),
        settings=lambda w: PLAN.systems.score_args(w.testset, w.sysname),
        mask=lambda w: PLAN.systems.mask_args(w.testset),
    log:
        f"{OUT}/logs/systems_score/{{testset}}.{{sysname}}.log",
    benchmark:
        f"{OUT}/benchmarks/systems_score/{{testset}}.{{sysname}}.tsv"
    conda:
        ENV
    shell:
        "phenomt systems score {params.identity} --hyp {input.hyp:q} --ref {input.ref:q}"
        " --src {input.src:q}"
        " {params.settings} {params.mask} --output {output:q} > {log:q} 2>&1"


# The word tokens of a test set on a pretokenized corpus, once for the CRR/DRR jobs of all its
# systems (other test sets use the corpus's tokenized files: PLAN.systems.tokens).
rule systems_tokenize:
    input:
        src=lambda w: PLAN.systems.source(w.testset),
        ref=lambda w: PLAN.systems.reference(w.testset),
    output:
        f"{OUT}/systems/{{testset}}/tokens.src",
        f"{OUT}/systems/{{testset}}/tokens.ref",
    wildcard_constraints:
        testset="[^/]+",
    params:
        args=lambda w: PLAN.systems.tokenize_args(w.testset),
    log:
        f"{OUT}/logs/systems_tokenize/{{testset}}.log",
    conda:
        ENV
    shell:
        "phenomt systems tokenize {params.args} > {log:q} 2>&1"


rule systems_redundancy:
    input:
        hyp=lambda w: PLAN.systems.hyp(w.testset, w.sysname),
        src=lambda w: PLAN.systems.source(w.testset),
        ref=lambda w: PLAN.systems.reference(w.testset),
        tokens=lambda w: PLAN.systems.tokens(w.testset),
        mask=lambda w: PLAN.systems.mask(w.testset),
    output:
        record=f"{OUT}/systems/{{testset}}/{{sysname}}.redundancy.json",
        tokens=f"{OUT}/systems/{{testset}}/{{sysname}}.tokens",
    wildcard_constraints:
        testset="[^/]+",
        sysname="[^/]+",
    params:
        identity=lambda w: PLAN.systems.identity_args(w.testset, w.sysname),
        settings=lambda w: PLAN.systems.redundancy_args(w.testset),
        mask=lambda w: PLAN.systems.mask_args(w.testset),
    log:
        f"{OUT}/logs/systems_redundancy/{{testset}}.{{sysname}}.log",
    benchmark:
        f"{OUT}/benchmarks/systems_redundancy/{{testset}}.{{sysname}}.tsv"
    conda:
        ENV
    shell:
        "phenomt systems redundancy {params.identity} --hyp {input.hyp:q} {params.settings}"
        " {params.mask} --tokens-out {output.tokens:q} --output {output.record:q}"
        " > {log:q} 2>&1"


rule systems_compare:
    input:
        a=lambda w: PLAN.systems.hyp(w.testset, w.a),
        b=lambda w: PLAN.systems.hyp(w.testset, w.b),
        records=lambda w: [
            PLAN.systems.redundancy_json(w.testset, w.a),
            PLAN.systems.redundancy_json(w.testset, w.b),
        ],
        src=lambda w: PLAN.systems.source(w.testset),
        ref=lambda w: PLAN.systems.reference(w.testset),
        tokens=lambda w: PLAN.systems.tokens(w.testset),
        mask=lambda w: PLAN.systems.mask(w.testset),
    output:
        f"{OUT}/systems/{{testset}}/compare.{{a}}.{{b}}.json",
    wildcard_constraints:
        testset="[^/]+",
        a="[^/.]+",
        b="[^/.]+",
    params:
        pair=lambda w: PLAN.systems.comparison_args(w.testset, w.a, w.b),
        settings=lambda w: PLAN.systems.redundancy_args(w.testset),
        mask=lambda w: PLAN.systems.mask_args(w.testset),
    log:
        f"{OUT}/logs/systems_compare/{{testset}}.{{a}}.{{b}}.log",
    conda:
        ENV
    shell:
        "phenomt systems redundancy-test --testset {wildcards.testset:q} {params.pair}"
        " {params.settings} {params.mask} --output {output:q} > {log:q} 2>&1"


rule table_systems_bleu:
    localrule: True
    input:
        PLAN.systems.all_bleu(),
    output:
        **PLAN.table_files("systems_bleu"),
    log:
        f"{OUT}/logs/tables/systems_bleu.log",
    conda:
        ENV
    shell:
        "phenomt table systems-bleu --scores {input:q} --md {output.md:q} --csv {output.csv:q}"
        " > {log:q} 2>&1"


rule table_systems_redundancy:
    localrule: True
    input:
        records=PLAN.systems.all_redundancy(),
        comparisons=PLAN.systems.all_comparisons(),
    output:
        **PLAN.table_files("systems_redundancy"),
    log:
        f"{OUT}/logs/tables/systems_redundancy.log",
    conda:
        ENV
    shell:
        "phenomt table systems-redundancy --records {input.records:q}"
        " --comparisons {input.comparisons:q} --md {output.md:q} --csv {output.csv:q}"
        " > {log:q} 2>&1"


# LDD challenge sets of a test set (`ldd: true`), extracted by the LDD stages (parse.smk,
# align.smk, challenge.smk) from its source and reference, scored for every system: one job
# per system reads its output once and scores the full test set and every set.
rule systems_ldd_score:
    input:
        hyp=lambda w: PLAN.systems.hyp(w.testset, w.sysname),
        ref=lambda w: PLAN.systems.reference(w.testset),
        sets=lambda w: PLAN.systems.ldd_set_files(w.testset),
        src=lambda w: PLAN.systems.ldd_source_inputs(w.testset),
        metric_inputs=lambda w: PLAN.systems.ldd_metric_inputs(),
        scores=lambda w: PLAN.systems.bleu_json(w.testset, w.sysname),
    output:
        f"{OUT}/systems/{{testset}}/{{sysname}}.ldd.json",
    wildcard_constraints:
        testset="[^/]+",
        sysname="[^/]+",
    priority: 1
    params:
        identity=lambda w: PLAN.systems.identity_args(w.testset, w.sysname),
        target=lambda w: PLAN.systems.target_lang_args(w.testset),
        sets=lambda w: PLAN.systems.ldd_set_args(w.testset),
        settings=lambda w: PLAN.systems.ldd_score_args(),
        source=lambda w: PLAN.systems.ldd_source_args(w.testset),
    log:
        f"{OUT}/logs/systems_ldd_score/{{testset}}.{{sysname}}.log",
    benchmark:
        f"{OUT}/benchmarks/systems_ldd_score/{{testset}}.{{sysname}}.tsv"
    conda:
        ENV
    shell:
        "phenomt systems ldd-score {params.identity} --hyp {input.hyp:q} --ref {input.ref:q}"
        " {params.target} {params.sets} {params.settings} {params.source}"
        " --scores {input.scores:q} --output {output:q} > {log:q} 2>&1"


# compare-mt's analyses: each system against the baseline in a job of its own (adding a
# system analyses that system only), then merged into the test set's record.
rule systems_analysis_pair:
    input:
        lambda w: PLAN.systems.analysis_pair_inputs(w.testset, w.sysname),
    output:
        f"{OUT}/systems/{{testset}}/{{sysname}}.analysis.json",
    wildcard_constraints:
        testset="[^/]+",
        sysname="[^/]+",
    priority: 1
    params:
        args=lambda w: PLAN.systems.analysis_pair_args(w.testset, w.sysname),
    log:
        f"{OUT}/logs/systems_analysis/{{testset}}.{{sysname}}.log",
    benchmark:
        f"{OUT}/benchmarks/systems_analysis/{{testset}}.{{sysname}}.tsv"
    conda:
        ENV
    shell:
        "phenomt systems analyse {params.args} --output {output:q} > {log:q} 2>&1"


rule systems_analysis:
    localrule: True
    input:
        lambda w: PLAN.systems.analysis_inputs(w.testset),
    output:
        f"{OUT}/systems/{{testset}}/analysis.json",
    wildcard_constraints:
        testset="[^/]+",
    params:
        args=lambda w: PLAN.systems.analysis_args(w.testset),
    log:
        f"{OUT}/logs/systems_analysis/{{testset}}.log",
    conda:
        ENV
    shell:
        "phenomt systems analysis-merge {params.args} --output {output:q} > {log:q} 2>&1"


# The sentences behind a test set's challenge-set, bucket, example and LTCR cells, which the
# report's table views open on a click.
rule systems_sentences:
    input:
        lambda w: PLAN.systems.sentences_inputs(w.testset),
    output:
        f"{OUT}/systems/{{testset}}/sentences.json",
    wildcard_constraints:
        testset="[^/]+",
    params:
        args=lambda w: PLAN.systems.sentences_args(w.testset),
    log:
        f"{OUT}/logs/systems_sentences/{{testset}}.log",
    conda:
        ENV
    shell:
        "phenomt systems sentences {params.args} --output {output:q} > {log:q} 2>&1"


# The buckets, n-gram and example tables of a test set, in one job (one process start).
rule table_systems_analysis:
    localrule: True
    input:
        lambda w: PLAN.systems.analysis_json(w.testset),
    output:
        **PLAN.systems.analysis_table_outputs(),
    wildcard_constraints:
        testset="[^/]+",
    params:
        args=lambda w: PLAN.systems.analysis_tables_args(w.testset),
    log:
        f"{OUT}/logs/tables/systems_analysis.{{testset}}.log",
    conda:
        ENV
    shell:
        "phenomt table systems-analysis --record {input:q} {params.args} > {log:q} 2>&1"


# A test set's challenge-set tables in one job: Tables 4 to 6, and with `systems.ldd_metrics`
# the sets under those metrics (BLEU's resamples).
rule table_systems_ldd:
    localrule: True
    input:
        records=lambda w: PLAN.systems.ldd_records(w.testset),
        # their note on the aligner's training data is read from the aligner's own record
        aligner=lambda w: PLAN.systems.ldd_aligner_settings(w.testset),
    output:
        **PLAN.systems.ldd_table_outputs(),
    wildcard_constraints:
        testset="[^/]+",
    params:
        args=lambda w: PLAN.systems.ldd_tables_args(w.testset),
        settings=lambda w: PLAN.systems.ldd_table_args(w.testset),
    log:
        f"{OUT}/logs/tables/systems_ldd.{{testset}}.log",
    conda:
        ENV
    shell:
        "phenomt table systems-ldd --records {input.records:q}"
        " --aligner-settings {input.aligner:q} {params.settings} {params.args}"
        " > {log:q} 2>&1"


# MQM-annotated outputs (`systems.mqm`): the outputs recovered from the annotation file, DRR
# against its reference, LTCR (Zh->En) with one aligner trained on the talks, and the MQM
# error rates beside them with Spearman's rho across systems.
rule systems_mqm_prepare:
    input:
        lambda w: PLAN.systems.mqm_annotations(w.mqmset),
    output:
        directory(f"{OUT}/systems/mqm/{{mqmset}}/outputs"),
    wildcard_constraints:
        mqmset="[^/]+",
    params:
        settings=lambda w: PLAN.systems.mqm_prepare_args(w.mqmset),
    log:
        f"{OUT}/logs/systems_mqm/{{mqmset}}.prepare.log",
    conda:
        ENV
    shell:
        "phenomt systems prepare-mqm --annotations {input:q} {params.settings} --outdir {output:q}"
        " > {log:q} 2>&1"


rule systems_mqm_redundancy:
    input:
        lambda w: PLAN.systems.mqm_outputs_dir(w.mqmset),
    output:
        f"{OUT}/systems/mqm/{{mqmset}}/{{sysname}}.redundancy.json",
    wildcard_constraints:
        mqmset="[^/]+",
        sysname="[^/]+",
    params:
        hyp=lambda w: PLAN.systems.mqm_hyp(w.mqmset, w.sysname),
        settings=lambda w: PLAN.systems.mqm_redundancy_args(w.mqmset, w.sysname),
    log:
        f"{OUT}/logs/systems_mqm/{{mqmset}}.{{sysname}}.redundancy.log",
    benchmark:
        f"{OUT}/benchmarks/systems_mqm/{{mqmset}}.{{sysname}}.redundancy.tsv"
    conda:
        ENV
    shell:
        "phenomt systems redundancy --hyp {params.hyp:q} {params.settings} --output {output:q}"
        " > {log:q} 2>&1"


# LTCR (Zh->En) of a test set with `ltcr: true` (its systems, and its reference as the
# calibration) or of an MQM set with `ltcr` (its annotated outputs): the set's source and
# reference in the released lexical-consistency layout, one aligner trained on them (and the
# set's align_extra corpora), one job per hypothesis. A set is a test set's name or
# mqm/<MQM set>; its files are under systems/<set>/.
rule systems_ltcr_layout:
    input:
        lambda w: PLAN.systems.ltcr_layout_inputs(w.ltcrset),
    output:
        directory(f"{OUT}/systems/{{ltcrset}}/testset"),
    wildcard_constraints:
        ltcrset=LTCR_SET,
    params:
        args=lambda w: PLAN.systems.ltcr_layout_args(w.ltcrset),
    log:
        f"{OUT}/logs/systems_ltcr/{{ltcrset}}.layout.log",
    conda:
        ENV
    shell:
        "phenomt lexcons convert {params.args} --output {output:q} > {log:q} 2>&1"


# The set's pairs of repeated source words, tagged once, for the registered metric ltcr of the
# systems table (systems.metrics).
rule systems_ltcr_pairs:
    input:
        lambda w: PLAN.systems.ltcr_layout_dir(w.ltcrset),
    output:
        f"{OUT}/systems/{{ltcrset}}/pairs.json",
    wildcard_constraints:
        ltcrset=LTCR_SET,
    log:
        f"{OUT}/logs/systems_ltcr/{{ltcrset}}.pairs.log",
    conda:
        ENV
    shell:
        "phenomt lexcons pairs --testset {input:q} --output {output:q} > {log:q} 2>&1"


rule systems_ltcr_align_train:
    input:
        testset=lambda w: PLAN.systems.ltcr_layout_dir(w.ltcrset),
        extra=lambda w: PLAN.systems.ltcr_align_extra_inputs(w.ltcrset),
    output:
        f"{OUT}/systems/{{ltcrset}}/align/settings.json",
    wildcard_constraints:
        ltcrset=LTCR_SET,
    params:
        model_dir=lambda w, output: os.path.dirname(output[0]),
        extra=lambda w: PLAN.systems.ltcr_align_extra_args(w.ltcrset),
    log:
        f"{OUT}/logs/systems_ltcr/{{ltcrset}}.align_train.log",
    benchmark:
        f"{OUT}/benchmarks/systems_ltcr/{{ltcrset}}.align_train.tsv"
    conda:
        ENV
    shell:
        "phenomt lexcons align-train --testset {input.testset:q} --model-dir {params.model_dir:q}"
        " {params.extra} > {log:q} 2>&1"


rule systems_ltcr:
    input:
        hyp=lambda w: PLAN.systems.ltcr_hyp_inputs(w.ltcrset, w.sysname),
        testset=lambda w: PLAN.systems.ltcr_layout_dir(w.ltcrset),
        model=lambda w: PLAN.systems.ltcr_align_model(w.ltcrset),
    output:
        f"{OUT}/systems/{{ltcrset}}/{{sysname}}.ltcr.json",
    wildcard_constraints:
        ltcrset=LTCR_SET,
        sysname="[^/]+",
    params:
        hyp=lambda w: PLAN.systems.ltcr_hyp(w.ltcrset, w.sysname),
        model_dir=lambda w, input: os.path.dirname(input.model),
        settings=lambda w: PLAN.systems.ltcr_args(),
    log:
        f"{OUT}/logs/systems_ltcr/{{ltcrset}}.{{sysname}}.log",
    benchmark:
        f"{OUT}/benchmarks/systems_ltcr/{{ltcrset}}.{{sysname}}.tsv"
    conda:
        ENV
    shell:
        "phenomt score ltcr --testset {input.testset:q} --hyp {params.hyp:q}"
        " --align-model {params.model_dir:q} {params.settings} --output {output:q} > {log:q} 2>&1"


rule table_systems_ltcr:
    localrule: True
    input:
        lambda w: PLAN.systems.all_ltcr(),
    output:
        **PLAN.table_files("systems_ltcr"),
    params:
        args=lambda w: PLAN.systems.ltcr_table_args(),
    log:
        f"{OUT}/logs/tables/systems_ltcr.log",
    conda:
        ENV
    shell:
        "phenomt table systems-ltcr {params.args} --md {output.md:q} --csv {output.csv:q}"
        " > {log:q} 2>&1"


rule systems_mqm_record:
    input:
        unpack(lambda w: PLAN.systems.mqm_metric_inputs(w.mqmset)),
        annotations=lambda w: PLAN.systems.mqm_annotations(w.mqmset),
    output:
        f"{OUT}/systems/mqm/{{mqmset}}/mqm.json",
    wildcard_constraints:
        mqmset="[^/]+",
    params:
        settings=lambda w: PLAN.systems.mqm_metric_args(w.mqmset),
        reference=lambda w: PLAN.systems.mqm_reference_args(w.mqmset),
    log:
        f"{OUT}/logs/systems_mqm/{{mqmset}}.record.log",
    conda:
        ENV
    shell:
        "phenomt systems mqm --annotations {input.annotations:q} {params.settings}"
        " {params.reference} --output {output:q} > {log:q} 2>&1"


rule table_systems_mqm:
    localrule: True
    input:
        lambda w: PLAN.systems.mqm_json(w.mqmset),
    output:
        **PLAN.table_files("systems_mqm.{mqmset}"),
    wildcard_constraints:
        mqmset="[^/]+",
    log:
        f"{OUT}/logs/tables/systems_mqm.{{mqmset}}.log",
    conda:
        ENV
    shell:
        "phenomt table systems-mqm --mqm {input:q} --testset {wildcards.mqmset:q}"
        " --md {output.md:q} --csv {output.csv:q} > {log:q} 2>&1"


# Figures of the given systems: the findings the report shows first.
rule systems_figure_redundancy:
    localrule: True
    input:
        PLAN.table("systems_redundancy", "csv"),
    output:
        png=report(
            PLAN.systems.figure("redundancy", "png"),
            caption="../report/systems_redundancy.rst",
            category=PLAN.report.category("systems"),
            subcategory="Figures",
            labels={"figure": "CRR + DRR per system"},
        ),
        svg=PLAN.systems.figure("redundancy", "svg"),
    params:
        scale=lambda w: PLAN.report.scale("systems"),
    log:
        f"{OUT}/logs/figures/systems_redundancy.log",
    conda:
        ENV
    shell:
        "phenomt systems figure-redundancy --table {input:q} --output {output:q} > {log:q} 2>&1"


rule systems_figure_ldd_sets:
    localrule: True
    input:
        lambda w: PLAN.systems.ldd_records(w.testset),
    # the longest of a run's last jobs (1 s for eight sets on 2 cores): first among them, so
    # that the tables and the smaller figures fill the other core beside it
    priority: 1
    output:
        png=report(
            PLAN.systems.figure("ldd_sets.{testset}", "png"),
            caption="../report/systems_ldd_sets.rst",
            category=PLAN.report.category("systems"),
            subcategory="Figures",
            labels=lambda w: {"figure": f"challenge sets of {w.testset}"},
        ),
        svg=PLAN.systems.figure("ldd_sets.{testset}", "svg"),
    wildcard_constraints:
        testset="[^/]+",
    params:
        scale=lambda w: PLAN.report.scale("systems"),
    log:
        f"{OUT}/logs/figures/systems_ldd_sets.{{testset}}.log",
    conda:
        ENV
    shell:
        "phenomt systems figure-ldd --records {input:q} --output {output:q} > {log:q} 2>&1"


rule systems_figure_buckets:
    localrule: True
    input:
        lambda w: PLAN.systems.analysis_json(w.testset),
    output:
        png=report(
            PLAN.systems.figure("buckets.{testset}", "png"),
            caption="../report/systems_buckets.rst",
            category=PLAN.report.category("systems"),
            subcategory="Figures",
            labels=lambda w: {"figure": f"buckets of {w.testset}"},
        ),
        svg=PLAN.systems.figure("buckets.{testset}", "svg"),
    wildcard_constraints:
        testset="[^/]+",
    params:
        scale=lambda w: PLAN.report.scale("systems"),
    log:
        f"{OUT}/logs/figures/systems_buckets.{{testset}}.log",
    conda:
        ENV
    shell:
        "phenomt systems figure-buckets --record {input:q} --output {output:q} > {log:q} 2>&1"


rule systems_figure_mqm:
    localrule: True
    input:
        lambda w: PLAN.systems.mqm_json(w.mqmset),
    output:
        png=report(
            PLAN.systems.figure("mqm.{mqmset}", "png"),
            caption="../report/systems_mqm.rst",
            category=PLAN.report.category("systems"),
            subcategory="Figures",
            labels=lambda w: {"figure": f"MQM against metrics, {w.mqmset}"},
        ),
        svg=PLAN.systems.figure("mqm.{mqmset}", "svg"),
    wildcard_constraints:
        mqmset="[^/]+",
    params:
        scale=lambda w: PLAN.systems.mqm_scale(w.mqmset),
    log:
        f"{OUT}/logs/figures/systems_mqm.{{mqmset}}.log",
    conda:
        ENV
    shell:
        "phenomt systems figure-mqm --mqm {input:q} --output {output:q} > {log:q} 2>&1"
