# Word alignment (sil-thot's fast_align) for the reordering challenge sets.


rule align_train:
    input:
        src=lambda w: PLAN.ldd.align_sides(w.direction, "src"),
        tgt=lambda w: PLAN.ldd.align_sides(w.direction, "tgt"),
    output:
        f"{OUT}/ldd/align/{{direction}}/model/settings.json",
    params:
        model_dir=lambda w, output: os.path.dirname(output[0]),
        first_src=lambda w, input: input.src[0],
        first_tgt=lambda w, input: input.tgt[0],
        extra=lambda w: PLAN.ldd.align_extra_args(w.direction),
        iterations=lambda w: PLAN.ldd.align_iterations,
    priority: 3
    log:
        f"{OUT}/logs/align_train/{{direction}}.log",
    benchmark:
        f"{OUT}/benchmarks/align_train/{{direction}}.tsv"
    conda:
        ENV
    shell:
        "phenomt align train --src {params.first_src:q} --tgt {params.first_tgt:q}"
        " {params.extra}"
        " --model-dir {params.model_dir:q} --iterations {params.iterations:q} > {log:q} 2>&1"


rule align_apply:
    input:
        model=f"{OUT}/ldd/align/{{direction}}/model/settings.json",
        src=lambda w: PLAN.ldd.source(w.lcorpus, w.direction),
        tgt=lambda w: PLAN.ldd.target(w.lcorpus, w.direction),
    output:
        forward=f"{OUT}/ldd/align/{{direction}}/{{lcorpus}}.forward",
        backward=f"{OUT}/ldd/align/{{direction}}/{{lcorpus}}.reverse",
        gdfa=f"{OUT}/ldd/align/{{direction}}/{{lcorpus}}.gdfa",
    params:
        model_dir=lambda w, input: os.path.dirname(input.model),
    # forward and reverse one after the other: applying a trained model to a test set takes
    # seconds, and a 2-thread job would wait for both cores of a 2-core machine
    threads: 1
    priority: 3
    log:
        f"{OUT}/logs/align_apply/{{direction}}.{{lcorpus}}.log",
    benchmark:
        f"{OUT}/benchmarks/align_apply/{{direction}}.{{lcorpus}}.tsv"
    conda:
        ENV
    shell:
        "phenomt align apply --model-dir {params.model_dir:q} --src {input.src:q}"
        " --tgt {input.tgt:q}"
        " --out-forward {output.forward:q} --out-reverse {output.backward:q}"
        " --out-gdfa {output.gdfa:q} --jobs {threads} > {log:q} 2>&1"
