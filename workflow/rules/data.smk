# Data stage: mirror or download, safe extraction, validation and cleaning.
from phenomt.core.fetch import MIRROR_ENV

# The mirror only says where a file's bytes come from; a download is checked against its
# sha256 (a param), so another mirror holding the same files must rerun nothing. It reaches
# the fetch jobs as $PHENOMT_MIRROR, set here to the mirror this run resolved and inherited
# by every job (the job server's too: a job's client sends its environment), not as a
# param: params are a rerun trigger, the environment is not, and the shell command's text
# (the code trigger) does not hold it. Only a file no checksum verifies keeps its mirror's
# path as a param ("identity", see DataPlan.fetch_identity).
if MIRROR is None:
    os.environ.pop(MIRROR_ENV, None)
else:
    os.environ[MIRROR_ENV] = str(MIRROR)


rule fetch:
    localrule: True
    output:
        f"{RES}/downloads/{{download}}",
    params:
        args=lambda w: PLAN.data.fetch_args(w.download),
        identity=lambda w: PLAN.data.fetch_identity(w.download, MIRROR),
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
        args=lambda w: PLAN.data.fetch_tree_args(w.download),
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
