# Locality-bias experiment (LDD paper, Table 1): the sentences of the most common length,
# trained as REGULAR, PERMUTED, REVERSED and PERPOSEMB, word level (no BPE) so that the
# permutation acts on words.


rule locality_prepare:
    input:
        src=lambda w: PLAN.locality.source("src"),
        tgt=lambda w: PLAN.locality.source("tgt"),
    output:
        multiext(
            f"{OUT}/locality/data/{{setting}}/",
            "train.src",
            "train.tgt",
            "valid.src",
            "valid.tgt",
            "test.src",
            "test.tgt",
            "locality.json",
        ),
    params:
        out_dir=lambda w, output: os.path.dirname(output[0]),
        settings=lambda w: PLAN.locality.prepare_args(),
    log:
        f"{OUT}/logs/locality_prepare/{{setting}}.log",
    conda:
        ENV
    shell:
        "phenomt locality prepare --src {input.src:q} --tgt {input.tgt:q} --src-lang src"
        " --tgt-lang tgt --setting {wildcards.setting:q} {params.settings}"
        " --out-dir {params.out_dir:q} > {log:q} 2>&1"


use rule binarize as locality_binarize with:
    input:
        train=f"{OUT}/locality/data/{{setting}}/train.src",
        valid=f"{OUT}/locality/data/{{setting}}/valid.src",
        test=f"{OUT}/locality/data/{{setting}}/test.src",
    output:
        directory(f"{OUT}/locality/bin/{{setting}}"),
    params:
        args=lambda w: PLAN.locality.binarize_args(w.setting),
    threads: 1
    log:
        f"{OUT}/logs/locality_binarize/{{setting}}.log",
    benchmark:
        f"{OUT}/benchmarks/locality_binarize/{{setting}}.tsv"


rule locality_train:
    input:
        data=lambda w: PLAN.locality.bin_dir(PLAN.locality.setting(w.run)),
        info=lambda w: f"{PLAN.locality.data_dir(PLAN.locality.setting(w.run))}/locality.json",
    output:
        PLAN.locality.trained("{run}"),
    params:
        options=lambda w: PLAN.locality.train_options_json(w.run),
        seed=lambda w: PLAN.locality.seed(w.run),
        save_dir=lambda w, output: f"{os.path.dirname(output[0])}/checkpoints",
    resources:
        mem_mb=lambda w: PLAN.locality.resource("mem_mb"),
        runtime=lambda w: PLAN.locality.resource("runtime"),
        gpu=lambda w: PLAN.locality.resource("gpu"),
    log:
        f"{OUT}/logs/locality_train/{{run}}.log",
    benchmark:
        PLAN.benchmark("locality_train", "{run}")
    conda:
        ENV
    shell:
        "phenomt nmt train --data-bin {input.data:q} --save-dir {params.save_dir:q}"
        " --output {output:q} --options {params.options:q} --seed {params.seed:q}"
        " --extra-args-file {input.info:q} --log {log:q}"


rule locality_generate:
    input:
        data=lambda w: PLAN.locality.bin_dir(PLAN.locality.setting(w.run)),
        model=PLAN.locality.trained("{run}"),
        source=lambda w: f"{PLAN.locality.data_dir(PLAN.locality.setting(w.run))}/test.src",
    output:
        f"{OUT}/locality/hyp/{{run}}.txt",
    params:
        tgt=lambda w: PLAN.locality.tgt_lang,
        options=lambda w: PLAN.locality.decode_options_json(w.run),
    resources:
        gpu=lambda w: PLAN.locality.resource("gpu"),
    log:
        f"{OUT}/logs/locality_generate/{{run}}.log",
    conda:
        ENV
    shell:
        "phenomt nmt generate --data-bin {input.data:q} --model {input.model:q}"
        " --source {input.source:q} --output {output:q} --tgt-lang {params.tgt:q}"
        " --options {params.options:q} --log {log:q}"


rule locality_reference:
    input:
        f"{OUT}/locality/data/regular/test.tgt",
    output:
        f"{OUT}/locality/reference.txt",
    params:
        tgt=lambda w: PLAN.locality.tgt_lang,
    log:
        f"{OUT}/logs/locality_reference.log",
    conda:
        ENV
    shell:
        "phenomt text detokenize --lang {params.tgt:q} --input {input:q} --output {output:q}"
        " > {log:q} 2>&1"


rule locality_score:
    input:
        hyp=f"{OUT}/locality/hyp/{{run}}.txt",
        ref=f"{OUT}/locality/reference.txt",
    output:
        f"{OUT}/locality/scores/{{run}}.json",
    params:
        meta=lambda w: PLAN.locality.meta(w.run),
        samples=PLAN.models.samples_args(),
    log:
        f"{OUT}/logs/locality_score/{{run}}.log",
    conda:
        ENV
    shell:
        "phenomt score bleu --hyp {input.hyp:q} --ref {input.ref:q} --meta {params.meta}"
        " {params.samples} --output {output:q} > {log:q} 2>&1"


rule table_locality:
    localrule: True
    input:
        scores=PLAN.locality.scores(),
        info=f"{OUT}/locality/data/regular/locality.json",
    output:
        **PLAN.table_files("ldd_table1"),
    params:
        note=lambda w: PLAN.locality.scale_note(),
    log:
        f"{OUT}/logs/tables/ldd_table1.log",
    conda:
        ENV
    shell:
        "phenomt table locality --scores {input.scores:q} --info {input.info:q}"
        " --note {params.note:q} --md {output.md:q} --csv {output.csv:q} > {log:q} 2>&1"


# The paper's claims (Section 3.2, Table 1), paired over seeds and over sentences (clustered
# by source sentence), Holm-adjusted, with equivalence tests of the no-change claims; the
# scale and the LSTM's encoder come from the config (no verdicts at smoke scale).
rule table_locality_claims:
    localrule: True
    input:
        PLAN.locality.scores(),
    output:
        **PLAN.table_files("ldd_locality_claims"),
    params:
        resampling=PLAN.models.claims_args(),
        settings=lambda w: PLAN.locality.claims_args(),
        note=lambda w: PLAN.locality.scale_note(),
    log:
        f"{OUT}/logs/tables/ldd_locality_claims.log",
    conda:
        ENV
    shell:
        "phenomt table locality-claims --scores {input:q} {params.resampling}"
        " {params.settings} --note {params.note:q} --md {output.md:q} --csv {output.csv:q} > {log:q} 2>&1"
