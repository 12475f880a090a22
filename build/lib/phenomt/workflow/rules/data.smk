# Data stage: mirror or download, safe extraction, validation and cleaning.


rule fetch:
    localrule: True
    output:
        f"{RES}/downloads/{{download}}",
    params:
        args=lambda w: PLAN.data.fetch_args(w.download, MIRROR),
    log:
        f"{OUT}/logs/fetch/{{download}}.log",
    conda:
        ENV
    shell:
        "phenomt data fetch --output {output:q} {params.args} > {log:q} 2>&1"


# A folder of many files (e.g. a released test set), each checked against the manifest.
rule fetch_tree:
    localrule: True
    input:
        lambda w: PLAN.data.manifest(w.download),
    output:
        directory(f"{RES}/trees/{{download}}"),
    params:
        args=lambda w: PLAN.data.fetch_tree_args(w.download, MIRROR),
    log:
        f"{OUT}/logs/fetch_tree/{{download}}.log",
    conda:
        ENV
    shell:
        "phenomt data fetch-tree --output {output:q} --manifest {input:q} {params.args}"
        " > {log:q} 2>&1"


rule extract_archive:
    localrule: True
    input:
        f"{RES}/downloads/{{download}}",
    output:
        directory(f"{RES}/extracted/{{download}}"),
    log:
        f"{OUT}/logs/extract/{{download}}.log",
    conda:
        ENV
    shell:
        "phenomt data unpack --archive {input:q} --output {output:q} > {log:q} 2>&1"


# Each language side is written by its own job: validation reads both sides and drops
# pairs, so the two jobs make the same (deterministic) selection.
rule prepare_corpus:
    input:
        lambda w: PLAN.data.corpus_inputs(w.corpus),
    output:
        text=f"{OUT}/data/raw/{{corpus}}.{{lang}}",
        report=f"{OUT}/data/reports/{{corpus}}.{{lang}}.json",
    params:
        args=lambda w: PLAN.data.corpus_args(w.corpus),
    log:
        f"{OUT}/logs/prepare/{{corpus}}.{{lang}}.log",
    benchmark:
        f"{OUT}/benchmarks/prepare/{{corpus}}.{{lang}}.tsv"
    conda:
        ENV
    shell:
        "phenomt corpus prepare {params.args} --side {wildcards.lang:q} --output {output.text:q}"
        " --report {output.report:q} > {log:q} 2>&1"


rule corpus_docids:
    localrule: True
    input:
        lambda w: PLAN.data.corpus_inputs(w.corpus),
    output:
        f"{OUT}/data/raw/{{corpus}}.docids",
    params:
        args=lambda w: PLAN.data.corpus_args(w.corpus),
    log:
        f"{OUT}/logs/prepare/{{corpus}}.docids.log",
    conda:
        ENV
    shell:
        "phenomt corpus docids {params.args} --output {output:q} > {log:q} 2>&1"
