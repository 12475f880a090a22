# Model stage: fairseq binarization and training (resumes from checkpoint_last.pt).


rule binarize:
    input:
        train_src=f"{OUT}/models/{{model}}/data/train.bpe.src",
        train_tgt=f"{OUT}/models/{{model}}/data/train.bpe.tgt",
        valid_src=lambda w: PLAN.bpe_file(w.model, PLAN.models[w.model]["valid"], "src"),
        valid_tgt=lambda w: PLAN.bpe_file(w.model, PLAN.models[w.model]["valid"], "tgt"),
    output:
        directory(f"{OUT}/models/{{model}}/bin"),
    params:
        train=lambda w, input: input.train_src.removesuffix(".src"),
        valid=lambda w, input: input.valid_src.removesuffix(".src"),
    threads: 2
    log:
        f"{OUT}/logs/binarize/{{model}}.log",
    benchmark:
        f"{OUT}/benchmarks/binarize/{{model}}.tsv"
    conda:
        ENV
    shell:
        "fairseq-preprocess --source-lang src --target-lang tgt --joined-dictionary"
        " --trainpref {params.train} --validpref {params.valid} --destdir {output}"
        " --workers {threads} > {log} 2>&1"


rule binarize_test:
    input:
        src=f"{OUT}/models/{{model}}/data/{{part}}.bpe.src",
        tgt=f"{OUT}/models/{{model}}/data/{{part}}.bpe.tgt",
        dicts=f"{OUT}/models/{{model}}/bin",
    output:
        directory(f"{OUT}/models/{{model}}/bin-test/{{part}}"),
    params:
        prefix=lambda w, input: input.src.removesuffix(".src"),
    log:
        f"{OUT}/logs/binarize_test/{{model}}.{{part}}.log",
    conda:
        ENV
    shell:
        "fairseq-preprocess --source-lang src --target-lang tgt"
        " --srcdict {input.dicts}/dict.src.txt --tgtdict {input.dicts}/dict.tgt.txt"
        " --testpref {params.prefix} --destdir {output} --workers 1 > {log} 2>&1"


rule train:
    input:
        f"{OUT}/models/{{model}}/bin",
    output:
        f"{OUT}/models/{{model}}/model.pt",
    params:
        options=lambda w: json.dumps(
            {**PLAN.model(w.model)["architecture"], **PLAN.model(w.model)["training"]}
        ),
        seed=lambda w: PLAN.model(w.model)["seed"],
        save_dir=lambda w, output: f"{os.path.dirname(output[0])}/checkpoints",
    threads: lambda w: PLAN.model(w.model)["resources"].get("threads", 1)
    resources:
        mem_mb=lambda w: PLAN.model(w.model)["resources"].get("mem_mb", 4000),
        runtime=lambda w: PLAN.model(w.model)["resources"].get("runtime", 120),
        gpu=lambda w: PLAN.model(w.model)["resources"].get("gpu", 0),
    log:
        f"{OUT}/logs/train/{{model}}.log",
    benchmark:
        f"{OUT}/benchmarks/train/{{model}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nmt train --data-bin {input} --save-dir {params.save_dir} --output {output}"
        " --options {params.options:q} --seed {params.seed} --log {log}"


rule model_card:
    input:
        assemble=f"{OUT}/models/{{model}}/data/assemble.json",
        model=f"{OUT}/models/{{model}}/model.pt",
    output:
        f"{OUT}/models/{{model}}/card.json",
    params:
        spec=lambda w: json.dumps(PLAN.model(w.model)),
    log:
        f"{OUT}/logs/model_card/{{model}}.log",
    conda:
        ENV
    shell:
        "phenomt table model-card --name {wildcards.model} --spec {params.spec:q}"
        " --assemble {input.assemble} --output {output} > {log} 2>&1"
