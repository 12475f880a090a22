# Model stage: fairseq binarization and training (resumes from checkpoint_last.pt).


# The one binarization rule: the other stages `use` it with their own files. Binarized data
# always lives where PLAN says (PLAN.models.bin_dir and the like); `nmt binarize` writes to
# a temporary folder and renames it when done.
rule binarize:
    input:
        train_src=f"{OUT}/models/{{model}}/data/train.bpe.src",
        train_tgt=f"{OUT}/models/{{model}}/data/train.bpe.tgt",
        valid_src=lambda w: PLAN.models.bpe_file(w.model, PLAN.models.valid(w.model), "src"),
        valid_tgt=lambda w: PLAN.models.bpe_file(w.model, PLAN.models.valid(w.model), "tgt"),
    output:
        directory(f"{OUT}/models/{{model}}/bin"),
    params:
        args=lambda w: PLAN.models.binarize_args(w.model),
    # the model's threads: a fixed 2 would wait for both cores of a 2-core machine while a
    # one-thread training holds one of them
    threads: lambda w: PLAN.models.resource(w.model, "threads")
    log:
        f"{OUT}/logs/binarize/{{model}}.log",
    benchmark:
        f"{OUT}/benchmarks/binarize/{{model}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nmt binarize {params.args} --destdir {output:q} --workers {threads}"
        " > {log:q} 2>&1"


# A data part with the model's dictionaries, for decoding: test sets stay text (fairseq reads
# them with --dataset-impl raw), the training data (distillation) is binarized.
use rule binarize as binarize_test with:
    input:
        src=f"{OUT}/models/{{model}}/data/{{part}}.bpe.src",
        tgt=f"{OUT}/models/{{model}}/data/{{part}}.bpe.tgt",
        dicts=f"{OUT}/models/{{model}}/bin",
    output:
        directory(f"{OUT}/models/{{model}}/bin-test/{{part}}"),
    params:
        args=lambda w: PLAN.models.binarize_test_args(w.model, w.part),
    threads: 1
    log:
        f"{OUT}/logs/binarize_test/{{model}}.{{part}}.log",
    benchmark:
        f"{OUT}/benchmarks/binarize_test/{{model}}.{{part}}.tsv"


rule train:
    input:
        f"{OUT}/models/{{model}}/bin",
    output:
        f"{OUT}/models/{{model}}/model.pt",
    params:
        options=lambda w: PLAN.models.train_options_json(w.model),
        seed=lambda w: PLAN.models.seed(w.model),
        save_dir=lambda w, output: f"{os.path.dirname(output[0])}/checkpoints",
    threads: lambda w: PLAN.models.resource(w.model, "threads")
    # the NAT and locality chains wait for the trained models: start them first
    priority: 5
    resources:
        mem_mb=lambda w: PLAN.models.resource(w.model, "mem_mb"),
        runtime=lambda w: PLAN.models.resource(w.model, "runtime"),
        gpu=lambda w: PLAN.models.resource(w.model, "gpu"),
    log:
        f"{OUT}/logs/train/{{model}}.log",
    benchmark:
        PLAN.benchmark("train", "{model}")
    conda:
        ENV
    shell:
        "phenomt nmt train --data-bin {input:q} --save-dir {params.save_dir:q} --output {output:q}"
        " --options {params.options:q} --seed {params.seed:q} --log {log:q}"


rule model_card:
    localrule: True
    input:
        assemble=f"{OUT}/models/{{model}}/data/assemble.json",
        model=f"{OUT}/models/{{model}}/model.pt",
    output:
        f"{OUT}/models/{{model}}/card.json",
    params:
        spec=lambda w: PLAN.models.settings_json(w.model),
    log:
        f"{OUT}/logs/model_card/{{model}}.log",
    conda:
        ENV
    shell:
        "phenomt table model-card --name {wildcards.model:q} --spec {params.spec:q}"
        " --assemble {input.assemble:q} --output {output:q} > {log:q} 2>&1"


# Validation BLEU by epoch of a model trained with fairseq's --eval-bleu (every launch of a
# resumed training: `nmt train` keeps them in model.json beside the model).
rule learning_curve:
    localrule: True
    input:
        f"{OUT}/models/{{model}}/model.pt",
    output:
        csv=PLAN.table("learning_curve.{model}", "csv"),
        png=f"{OUT}/figures/learning_curve.{{model}}.png",
        svg=f"{OUT}/figures/learning_curve.{{model}}.svg",
    params:
        info=lambda w, input: os.path.splitext(input[0])[0] + ".json",
        title=lambda w: PLAN.figure_title(f"{w.model}: validation BLEU by epoch"),
    log:
        f"{OUT}/logs/learning_curve/{{model}}.log",
    conda:
        ENV
    shell:
        "phenomt nmt learning-curve --model-info {params.info:q} --csv {output.csv:q}"
        " --figure {output.png:q} {output.svg:q} --title {params.title:q} > {log:q} 2>&1"


# Updates, validation and time of every training of the run (models, NAT systems, locality).
rule table_training:
    localrule: True
    input:
        PLAN.training_files(),
    output:
        **PLAN.table_files("training"),
    params:
        runs=lambda w: PLAN.training_args(),
    log:
        f"{OUT}/logs/tables/training.log",
    conda:
        ENV
    shell:
        "phenomt table training --run {params.runs} --md {output.md:q} --csv {output.csv:q}"
        " > {log:q} 2>&1"
