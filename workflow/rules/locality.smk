# Locality-bias experiment (LDD paper, Table 1): the sentences of the most common length,
# trained as REGULAR, PERMUTED, REVERSED and PERPOSEMB, word level (no BPE) so that the
# permutation acts on words.


rule locality_prepare:
    input:
        src=PLAN.locality_source("src"),
        tgt=PLAN.locality_source("tgt"),
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
        length=PLAN.locality.get("length", "auto"),
        n_test=PLAN.locality.get("n_test", 1000),
        n_valid=PLAN.locality.get("n_valid", 500),
        seed=PLAN.locality.get("split_seed", 1),
    log:
        f"{OUT}/logs/locality_prepare/{{setting}}.log",
    conda:
        ENV
    shell:
        "phenomt locality prepare --src {input.src} --tgt {input.tgt} --src-lang src"
        " --tgt-lang tgt --setting {wildcards.setting} --length {params.length}"
        " --n-test {params.n_test} --n-valid {params.n_valid} --seed {params.seed}"
        " --out-dir {params.out_dir} > {log} 2>&1"


rule locality_binarize:
    input:
        train=f"{OUT}/locality/data/{{setting}}/train.src",
        valid=f"{OUT}/locality/data/{{setting}}/valid.src",
        test=f"{OUT}/locality/data/{{setting}}/test.src",
    output:
        directory(f"{OUT}/locality/bin/{{setting}}"),
    params:
        train=lambda w, input: input.train.removesuffix(".src"),
        valid=lambda w, input: input.valid.removesuffix(".src"),
        test=lambda w, input: input.test.removesuffix(".src"),
    log:
        f"{OUT}/logs/locality_binarize/{{setting}}.log",
    conda:
        ENV
    shell:
        "fairseq-preprocess --source-lang src --target-lang tgt --trainpref {params.train}"
        " --validpref {params.valid} --testpref {params.test} --destdir {output}"
        " --workers 1 > {log} 2>&1"


rule locality_train:
    input:
        data=lambda w: f"{OUT}/locality/bin/{PLAN.parse_locality_run(w.run)['setting']}",
        info=lambda w: (
            f"{OUT}/locality/data/{PLAN.parse_locality_run(w.run)['setting']}/locality.json"
        ),
    output:
        f"{OUT}/locality/models/{{run}}/model.pt",
    params:
        options=lambda w: json.dumps(PLAN.locality_train_options(w.run)),
        seed=lambda w: PLAN.parse_locality_run(w.run)["seed"],
        save_dir=lambda w, output: f"{os.path.dirname(output[0])}/checkpoints",
    resources:
        mem_mb=PLAN.locality.get("resources", {}).get("mem_mb", 4000),
        runtime=PLAN.locality.get("resources", {}).get("runtime", 60),
        gpu=PLAN.locality.get("resources", {}).get("gpu", 0),
    log:
        f"{OUT}/logs/locality_train/{{run}}.log",
    benchmark:
        f"{OUT}/benchmarks/locality_train/{{run}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nmt train --data-bin {input.data} --save-dir {params.save_dir}"
        " --output {output} --options {params.options:q} --seed {params.seed}"
        " --extra-args-file {input.info} --log {log}"


rule locality_generate:
    input:
        data=lambda w: f"{OUT}/locality/bin/{PLAN.parse_locality_run(w.run)['setting']}",
        model=f"{OUT}/locality/models/{{run}}/model.pt",
        source=lambda w: (
            f"{OUT}/locality/data/{PLAN.parse_locality_run(w.run)['setting']}/test.src"
        ),
    output:
        f"{OUT}/locality/hyp/{{run}}.txt",
    params:
        tgt=lambda w: PLAN.models[PLAN.locality["model"]]["tgt"],
        options=lambda w: json.dumps(PLAN.locality_decode_options(w.run)),
    resources:
        gpu=PLAN.locality.get("resources", {}).get("gpu", 0),
    log:
        f"{OUT}/logs/locality_generate/{{run}}.log",
    conda:
        ENV
    shell:
        "phenomt nmt generate --data-bin {input.data} --model {input.model}"
        " --source {input.source} --output {output} --tgt-lang {params.tgt}"
        " --options {params.options:q} --log {log}"


rule locality_reference:
    input:
        f"{OUT}/locality/data/regular/test.tgt",
    output:
        f"{OUT}/locality/reference.txt",
    params:
        tgt=lambda w: PLAN.models[PLAN.locality["model"]]["tgt"],
    log:
        f"{OUT}/logs/locality_reference.log",
    conda:
        ENV
    shell:
        "phenomt text detokenize --lang {params.tgt} --input {input} --output {output}"
        " > {log} 2>&1"


rule locality_score:
    input:
        hyp=f"{OUT}/locality/hyp/{{run}}.txt",
        ref=f"{OUT}/locality/reference.txt",
    output:
        f"{OUT}/locality/scores/{{run}}.json",
    params:
        meta=lambda w: " ".join(
            f"{k}={v}" for k, v in PLAN.parse_locality_run(w.run).items()
        ),
    log:
        f"{OUT}/logs/locality_score/{{run}}.log",
    conda:
        ENV
    shell:
        "phenomt score bleu --hyp {input.hyp} --ref {input.ref} --meta {params.meta}"
        " --output {output} > {log} 2>&1"


rule table_locality:
    input:
        scores=[f"{OUT}/locality/scores/{r}.json" for r in PLAN.locality_runs()],
        info=f"{OUT}/locality/data/regular/locality.json",
    output:
        md=f"{OUT}/tables/ldd_table1.md",
        csv=f"{OUT}/tables/ldd_table1.csv",
    params:
        note=lambda w: (
            f"Scale: {PLAN.locality.get('training', {}).get('max_update')} updates per run,"
            f" architectures {PLAN.locality.get('transformer', {}).get('arch')}"
            f" / {PLAN.locality.get('lstm', {}).get('arch', 'lstm')}, seeds"
            f" {PLAN.locality.get('seeds', [1])}."
        ),
    log:
        f"{OUT}/logs/tables/ldd_table1.log",
    conda:
        ENV
    shell:
        "phenomt table locality --scores {input.scores} --info {input.info}"
        " --note {params.note:q} --md {output.md} --csv {output.csv} > {log} 2>&1"
