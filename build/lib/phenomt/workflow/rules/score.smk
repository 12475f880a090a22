# Scoring the challenge sets: each model translates the full corpus once and a set's score
# selects its sentences by id. Beam search treats sentences independently, so this equals
# translating the set itself, up to floating-point effects of batching.


rule ldd_score:
    input:
        unpack(lambda w: PLAN.ldd.scores_inputs(w.model, w.lcorpus)),
    output:
        f"{OUT}/ldd/scores/{{model}}/{{lcorpus}}.json",
    params:
        sets=lambda w: PLAN.ldd.scores_args(w.model, w.lcorpus),
    log:
        f"{OUT}/logs/ldd_score/{{model}}.{{lcorpus}}.log",
    conda:
        ENV
    shell:
        "phenomt ldd score-sets {params.sets} --hyp {input.hyp:q} --ref {input.ref:q}"
        " --output {output:q} > {log:q} 2>&1"


rule ldd_control:
    input:
        unpack(lambda w: PLAN.ldd.set_inputs(w.model, w.lcorpus, w.setname)),
    output:
        f"{OUT}/ldd/control/{{model}}/{{lcorpus}}/{{setname}}.json",
    params:
        set=lambda w: PLAN.ldd.set_args(w.model, w.lcorpus, w.setname),
        settings=lambda w: PLAN.ldd.control_settings(),
    log:
        f"{OUT}/logs/ldd_control/{{model}}.{{lcorpus}}.{{setname}}.log",
    benchmark:
        f"{OUT}/benchmarks/ldd_control/{{model}}.{{lcorpus}}.{{setname}}.tsv"
    conda:
        ENV
    shell:
        "phenomt ldd control {params.set} --hyp {input.hyp:q} --ref {input.ref:q}"
        " --src {input.src_tok:q} --ids {input.ids:q} {params.settings}"
        " --output {output:q} > {log:q} 2>&1"


rule tokenize_hypotheses:
    input:
        f"{OUT}/models/{{model}}/hyp/{{part}}.txt",
    output:
        f"{OUT}/models/{{model}}/hyp-tok/{{part}}.txt",
    params:
        lang=lambda w: PLAN.models.tgt(w.model),
    log:
        f"{OUT}/logs/tokenize_hypotheses/{{model}}.{{part}}.log",
    conda:
        ENV
    shell:
        "phenomt text tokenize --lang {params.lang:q} --input {input:q} --output {output:q}"
        " > {log:q} 2>&1"
