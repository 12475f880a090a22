# Scoring the challenge sets: each model translates the full corpus once and a set's score
# selects its sentences by id. Beam search treats sentences independently, so this equals
# translating the set itself, up to floating-point effects of batching.


rule ldd_score:
    input:
        unpack(lambda w: PLAN.ldd_set_inputs(w.model, w.lcorpus, w.setname)),
    output:
        f"{OUT}/ldd/scores/{{model}}/{{lcorpus}}/{{setname}}.json",
    params:
        direction=lambda w: PLAN.ldd_model_direction(w.model),
        phenomenon=lambda w: w.setname.split(".")[0],
        bin=lambda w: w.setname.split(".")[1],
        ids=lambda w, input: f"--ids {input.ids}" if "ids" in input.keys() else "",
        tokenize=lambda w: PLAN.ldd.get("tokenize", "13a"),
    log:
        f"{OUT}/logs/ldd_score/{{model}}.{{lcorpus}}.{{setname}}.log",
    conda:
        ENV
    shell:
        "phenomt ldd score --model {wildcards.model} --corpus {wildcards.lcorpus}"
        " --direction {params.direction} --phenomenon {params.phenomenon} --bin {params.bin}"
        " --hyp {input.hyp} --ref {input.ref} {params.ids} --tokenize {params.tokenize}"
        " --output {output} > {log} 2>&1"


rule ldd_control:
    input:
        unpack(lambda w: PLAN.ldd_set_inputs(w.model, w.lcorpus, w.setname)),
    output:
        f"{OUT}/ldd/control/{{model}}/{{lcorpus}}/{{setname}}.json",
    params:
        direction=lambda w: PLAN.ldd_model_direction(w.model),
        phenomenon=lambda w: w.setname.split(".")[0],
        bin=lambda w: w.setname.split(".")[1],
        draws=PLAN.ldd.get("control", {}).get("draws", 100),
        seed=PLAN.ldd.get("control", {}).get("seed", 1),
        tokenize=lambda w: PLAN.ldd.get("tokenize", "13a"),
    log:
        f"{OUT}/logs/ldd_control/{{model}}.{{lcorpus}}.{{setname}}.log",
    benchmark:
        f"{OUT}/benchmarks/ldd_control/{{model}}.{{lcorpus}}.{{setname}}.tsv"
    conda:
        ENV
    shell:
        "phenomt ldd control --model {wildcards.model} --corpus {wildcards.lcorpus}"
        " --direction {params.direction} --phenomenon {params.phenomenon} --bin {params.bin}"
        " --hyp {input.hyp} --ref {input.ref} --src {input.src_tok} --ids {input.ids}"
        " --draws {params.draws} --seed {params.seed} --tokenize {params.tokenize}"
        " --output {output} > {log} 2>&1"


rule tokenize_hypotheses:
    input:
        f"{OUT}/models/{{model}}/hyp/{{part}}.txt",
    output:
        f"{OUT}/models/{{model}}/hyp-tok/{{part}}.txt",
    params:
        lang=lambda w: PLAN.models[w.model]["tgt"],
    log:
        f"{OUT}/logs/tokenize_hypotheses/{{model}}.{{part}}.log",
    conda:
        ENV
    shell:
        "phenomt text tokenize --lang {params.lang} --input {input} --output {output}"
        " > {log} 2>&1"
