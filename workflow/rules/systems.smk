# Given system outputs (`systems` in the config): sacreBLEU and chrF with intervals and paired
# significance against the baseline, word-level CRR/DRR with sentence-bootstrap intervals and
# paired tests between named systems. One job per system and metric: adding a system runs
# only its own jobs and the tables.


rule systems_score:
    input:
        hyp=lambda w: PLAN.systems.hyp(w.testset, w.sysname),
        ref=lambda w: PLAN.systems.reference(w.testset),
        baseline=lambda w: PLAN.systems.baseline_inputs(w.testset, w.sysname),
        mask=lambda w: PLAN.systems.mask(w.testset),
    output:
        f"{OUT}/systems/{{testset}}/{{sysname}}.bleu.json",
    wildcard_constraints:
        testset="[^/]+",
        sysname="[^/]+",
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
        "phenomt systems score {params.identity} --hyp {input.hyp} --ref {input.ref}"
        " {params.settings} {params.mask} --output {output} > {log} 2>&1"


rule systems_redundancy:
    input:
        hyp=lambda w: PLAN.systems.hyp(w.testset, w.sysname),
        src=lambda w: PLAN.systems.source(w.testset),
        ref=lambda w: PLAN.systems.reference(w.testset),
        mask=lambda w: PLAN.systems.mask(w.testset),
    output:
        f"{OUT}/systems/{{testset}}/{{sysname}}.redundancy.json",
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
        "phenomt systems redundancy {params.identity} --hyp {input.hyp} {params.settings}"
        " {params.mask} --output {output} > {log} 2>&1"


rule systems_compare:
    input:
        a=lambda w: PLAN.systems.hyp(w.testset, w.a),
        b=lambda w: PLAN.systems.hyp(w.testset, w.b),
        src=lambda w: PLAN.systems.source(w.testset),
        ref=lambda w: PLAN.systems.reference(w.testset),
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
        "phenomt systems redundancy-test --testset {wildcards.testset} {params.pair}"
        " {params.settings} {params.mask} --output {output} > {log} 2>&1"


rule table_systems_bleu:
    input:
        PLAN.systems.all_bleu(),
    output:
        md=f"{OUT}/tables/systems_bleu.md",
        csv=f"{OUT}/tables/systems_bleu.csv",
    log:
        f"{OUT}/logs/tables/systems_bleu.log",
    conda:
        ENV
    shell:
        "phenomt table systems-bleu --scores {input} --md {output.md} --csv {output.csv}"
        " > {log} 2>&1"


rule table_systems_redundancy:
    input:
        records=PLAN.systems.all_redundancy(),
        comparisons=PLAN.systems.all_comparisons(),
    output:
        md=f"{OUT}/tables/systems_redundancy.md",
        csv=f"{OUT}/tables/systems_redundancy.csv",
    log:
        f"{OUT}/logs/tables/systems_redundancy.log",
    conda:
        ENV
    shell:
        "phenomt table systems-redundancy --records {input.records}"
        " --comparisons {input.comparisons} --md {output.md} --csv {output.csv} > {log} 2>&1"
