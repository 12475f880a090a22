# UD parsing with UDPipe 1: scatter the tokenized source, parse shards, gather. The same rules
# only tag (`kind` tags: the part of speech without the parser, two thirds of the time) a side
# that nothing needs parsed: a reference whose words the POS buckets count.


rule parse_scatter:
    input:
        lambda w: PLAN.ldd.parse_input(w.lcorpus, w.lang),
    output:
        temp(
            expand(
                f"{OUT}/ldd/{{{{kind}}}}/shards/{{{{lcorpus}}}}.{{{{lang}}}}.{{shard}}.txt",
                shard=range(PLAN.ldd.parse_shards),
            )
        ),
    wildcard_constraints:
        kind="parse|tags",
    # The LDD sets' preparation (parse, align, extract: priority 3) goes before the systems'
    # jobs: UDPipe's shards are a run's longest jobs, and with the parses and aligner cached
    # the chain takes seconds and then lets the challenge-set scores start with the others.
    priority: 3
    log:
        f"{OUT}/logs/{{kind}}_scatter/{{lcorpus}}.{{lang}}.log",
    conda:
        ENV
    shell:
        "phenomt parse scatter --input {input:q} --outputs {output:q} > {log:q} 2>&1"


rule parse_shard:
    input:
        text=f"{OUT}/ldd/{{kind}}/shards/{{lcorpus}}.{{lang}}.{{shard}}.txt",
        model=lambda w: PLAN.ldd.udpipe_model(w.lang),
    output:
        temp(f"{OUT}/ldd/{{kind}}/shards/{{lcorpus}}.{{lang}}.{{shard}}.conllu"),
    wildcard_constraints:
        kind="parse|tags",
    params:
        args=lambda w: PLAN.ldd.parse_args(w.kind),
    priority: 3
    log:
        f"{OUT}/logs/{{kind}}/{{lcorpus}}.{{lang}}.{{shard}}.log",
    benchmark:
        f"{OUT}/benchmarks/{{kind}}/{{lcorpus}}.{{lang}}.{{shard}}.tsv"
    conda:
        ENV
    shell:
        "phenomt parse run --model {input.model:q} --input {input.text:q} --output {output:q}"
        " {params.args} > {log:q} 2>&1"


rule parse_gather:
    input:
        expand(
            f"{OUT}/ldd/{{{{kind}}}}/shards/{{{{lcorpus}}}}.{{{{lang}}}}.{{shard}}.conllu",
            shard=range(PLAN.ldd.parse_shards),
        ),
    output:
        f"{OUT}/ldd/{{kind}}/{{lcorpus}}.{{lang}}.conllu",
    wildcard_constraints:
        kind="parse|tags",
    priority: 3
    log:
        f"{OUT}/logs/{{kind}}_gather/{{lcorpus}}.{{lang}}.log",
    conda:
        ENV
    shell:
        "phenomt parse gather --inputs {input:q} --output {output:q} > {log:q} 2>&1"


rule udpipe_train:
    """Train a UDPipe model from CoNLL-U treebanks: `snakemake <outdir>/udpipe/<name>.udpipe`.

    Treebanks come from `ldd.udpipe_training.<name>` in the config (download ids).
    """
    input:
        lambda w: PLAN.ldd.udpipe_treebanks(w.name),
    output:
        f"{OUT}/udpipe/{{name}}.udpipe",
    params:
        iterations=lambda w: PLAN.ldd.udpipe_iterations(w.name),
    log:
        f"{OUT}/logs/udpipe_train/{{name}}.log",
    benchmark:
        f"{OUT}/benchmarks/udpipe_train/{{name}}.tsv"
    conda:
        ENV
    shell:
        "phenomt parse train --treebank {input:q} --output {output:q}"
        " --iterations {params.iterations:q} > {log:q} 2>&1"
