# Non-autoregressive translation and information redundancy (Wang et al.): sequence-level
# distillation by the AR teacher, NAT training on raw and distilled data, checkpoint averaging
# by validation BLEU, single-pass decoding, BLEU/CRR/DRR, decoding speed, Tables 5 and 10.
# Paths and settings come from phenomt.plan.nat.


rule nat_distill:
    input:
        data=f"{OUT}/models/{{teacher}}/bin-test/train",
        model=f"{OUT}/models/{{teacher}}/model.pt",
        source=f"{OUT}/models/{{teacher}}/data/train.bpe.src",
    output:
        src=f"{OUT}/nat/{{teacher}}/distill/train.bpe.src",
        tgt=f"{OUT}/nat/{{teacher}}/distill/train.bpe.tgt",
        text=temp(f"{OUT}/nat/{{teacher}}/distill/train.txt"),
        raw=temp(f"{OUT}/nat/{{teacher}}/distill/train.txt.generate"),
    params:
        options=lambda w: PLAN.nat.distill_options_json(w.teacher),
        tgt=lambda w: PLAN.models.tgt(w.teacher),
        casing=lambda w: PLAN.models.casing(w.teacher),
        seed=lambda w: PLAN.models.seed(w.teacher),
    threads: 1
    # half of the NAT runs wait for it
    priority: 10
    resources:
        mem_mb=lambda w: PLAN.models.resource(w.teacher, "mem_mb"),
        runtime=lambda w: PLAN.models.resource(w.teacher, "runtime"),
        gpu=lambda w: PLAN.models.resource(w.teacher, "gpu"),
    log:
        f"{OUT}/logs/nat_distill/{{teacher}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_distill/{{teacher}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nmt generate --data-bin {input.data:q} --model {input.model:q}"
        " --source {input.source:q} --output {output.text:q} --bpe-output {output.tgt:q}"
        " --tgt-lang {params.tgt:q} --casing {params.casing:q} --options {params.options:q}"
        " --seed {params.seed:q} --log {log:q} && cp {input.source:q} {output.src:q}"


use rule binarize as nat_binarize_distilled with:
    input:
        src=f"{OUT}/nat/{{teacher}}/distill/train.bpe.src",
        tgt=f"{OUT}/nat/{{teacher}}/distill/train.bpe.tgt",
        valid_src=lambda w: PLAN.nat.valid_source(w.teacher),
        valid_tgt=lambda w: PLAN.nat.valid_reference(w.teacher),
        dicts=f"{OUT}/models/{{teacher}}/bin",
    output:
        directory(f"{OUT}/nat/{{teacher}}/bin-distilled"),
    params:
        args=lambda w: PLAN.nat.binarize_distilled_args(w.teacher),
    threads: lambda w: PLAN.models.resource(w.teacher, "threads")
    log:
        f"{OUT}/logs/nat_binarize/{{teacher}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_binarize/{{teacher}}.tsv"


rule nat_train:
    input:
        data=lambda w: PLAN.nat.system_data_bin(w.teacher, w.natsys),
        base=lambda w: PLAN.nat.base_checkpoints(w.teacher, w.natsys),
    output:
        f"{OUT}/nat/{{teacher}}/{{natsys}}/trained.pt",
    params:
        options=lambda w: PLAN.nat.train_options_json(w.teacher, w.natsys),
        seed=lambda w: PLAN.nat.seed,
        save_dir=lambda w, output: f"{os.path.dirname(output[0])}/checkpoints",
    threads: lambda w: PLAN.nat.resource(w.natsys, "threads")
    resources:
        mem_mb=lambda w: PLAN.nat.resource(w.natsys, "mem_mb"),
        runtime=lambda w: PLAN.nat.resource(w.natsys, "runtime"),
        gpu=lambda w: PLAN.nat.resource(w.natsys, "gpu"),
    log:
        f"{OUT}/logs/nat_train/{{teacher}}.{{natsys}}.log",
    benchmark:
        PLAN.benchmark("nat_train", "{teacher}.{natsys}")
    conda:
        ENV
    shell:
        "phenomt nmt train --data-bin {input.data:q} --save-dir {params.save_dir:q}"
        " --output {output:q} --options {params.options:q} --seed {params.seed:q} --log {log:q}"


# fairseq's --eval-bleu fails with translation_lev, so the kept checkpoints are ranked by
# decoding the validation set here, and the best nat.average of them are averaged.
rule nat_average:
    input:
        trained=f"{OUT}/nat/{{teacher}}/{{natsys}}/trained.pt",
        data=lambda w: PLAN.nat.system_data_bin(w.teacher, w.natsys),
        reference=lambda w: PLAN.nat.valid_reference(w.teacher),
    output:
        model=f"{OUT}/nat/{{teacher}}/{{natsys}}/model.pt",
        ranking=f"{OUT}/nat/{{teacher}}/{{natsys}}/average.json",
    params:
        options=lambda w: PLAN.nat.decode_options_json(w.teacher, w.natsys),
        top=lambda w: PLAN.nat.average,
        checkpoints=lambda w, input: f"{os.path.dirname(input.trained)}/checkpoints",
    resources:
        mem_mb=lambda w: PLAN.nat.resource(w.natsys, "mem_mb", decoding=True),
        runtime=lambda w: PLAN.nat.resource(w.natsys, "runtime", decoding=True),
        gpu=lambda w: PLAN.nat.resource(w.natsys, "gpu", decoding=True),
    log:
        f"{OUT}/logs/nat_average/{{teacher}}.{{natsys}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_average/{{teacher}}.{{natsys}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nat average --checkpoint-dir {params.checkpoints:q} --data-bin {input.data:q}"
        " --reference {input.reference:q} --options {params.options:q} --top {params.top:q}"
        " --teacher {wildcards.teacher:q} --system {wildcards.natsys:q} --output {output.model:q}"
        " --ranking {output.ranking:q} > {log:q} 2>&1"


rule nat_generate:
    input:
        data=f"{OUT}/models/{{teacher}}/bin-test/{{corpus}}",
        model=f"{OUT}/nat/{{teacher}}/{{natsys}}/model.pt",
        source=f"{OUT}/models/{{teacher}}/data/{{corpus}}.bpe.src",
    output:
        text=f"{OUT}/nat/{{teacher}}/{{natsys}}/hyp/{{corpus}}.txt",
        bpe=f"{OUT}/nat/{{teacher}}/{{natsys}}/hyp/{{corpus}}.bpe",
        raw=temp(f"{OUT}/nat/{{teacher}}/{{natsys}}/hyp/{{corpus}}.txt.generate"),
    params:
        options=lambda w: PLAN.nat.decode_options_json(w.teacher, w.natsys),
        tgt=lambda w: PLAN.models.tgt(w.teacher),
        casing=lambda w: PLAN.models.casing(w.teacher),
        seed=lambda w: PLAN.nat.seed,
    threads: 1
    resources:
        mem_mb=lambda w: PLAN.nat.resource(w.natsys, "mem_mb", decoding=True),
        runtime=lambda w: PLAN.nat.resource(w.natsys, "runtime", decoding=True),
        gpu=lambda w: PLAN.nat.resource(w.natsys, "gpu", decoding=True),
    log:
        f"{OUT}/logs/nat_generate/{{teacher}}.{{natsys}}.{{corpus}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_generate/{{teacher}}.{{natsys}}.{{corpus}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nmt generate --data-bin {input.data:q} --model {input.model:q}"
        " --source {input.source:q} --output {output.text:q} --bpe-output {output.bpe:q}"
        " --tgt-lang {params.tgt:q} --casing {params.casing:q} --options {params.options:q}"
        " --seed {params.seed:q} --log {log:q}"


# The AR row (system "ar") scores the teacher's own test-set translations.
rule nat_score_bleu:
    input:
        hyp=lambda w: PLAN.nat.hyp(w.teacher, w.system, w.corpus, "txt"),
        ref=lambda w: PLAN.data.raw(w.corpus, PLAN.models.tgt(w.teacher)),
    output:
        f"{OUT}/nat/{{teacher}}/{{system}}/scores/{{corpus}}.bleu.json",
    params:
        bleu=lambda w: PLAN.models.bleu_args(w.teacher),
        meta=lambda w: PLAN.nat.bleu_meta(w.teacher, w.system, w.corpus),
        samples=PLAN.models.samples_args(),
    log:
        f"{OUT}/logs/nat_score_bleu/{{teacher}}.{{system}}.{{corpus}}.log",
    conda:
        ENV
    shell:
        "phenomt score bleu --hyp {input.hyp:q} --ref {input.ref:q} {params.bleu}"
        " {params.samples} --meta {params.meta} --output {output:q} > {log:q} 2>&1"


rule nat_score_redundancy:
    input:
        hyp=lambda w: PLAN.nat.hyp(w.teacher, w.system, w.corpus, "bpe"),
        src=f"{OUT}/models/{{teacher}}/data/{{corpus}}.bpe.src",
        ref=f"{OUT}/models/{{teacher}}/data/{{corpus}}.bpe.tgt",
        embeddings=f"{OUT}/models/{{teacher}}/model.pt",
        dicts=f"{OUT}/models/{{teacher}}/bin",
        stopwords=f"{OUT}/models/{{teacher}}/data/train.bpe.tgt",
    output:
        f"{OUT}/nat/{{teacher}}/{{system}}/scores/{{corpus}}.redundancy.json",
    params:
        settings=lambda w: PLAN.nat.redundancy_args(w.teacher),
        samples=PLAN.models.samples_args(),
    log:
        f"{OUT}/logs/nat_score_redundancy/{{teacher}}.{{system}}.{{corpus}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_score_redundancy/{{teacher}}.{{system}}.{{corpus}}.tsv"
    conda:
        ENV
    shell:
        "phenomt score redundancy --hyp {input.hyp:q} --src {input.src:q} --ref {input.ref:q}"
        " --embeddings {input.embeddings:q} --embeddings-dict {input.dicts:q}/dict.tgt.txt"
        " --stopword-corpus {input.stopwords:q} {params.settings} {params.samples}"
        " --output {output:q} > {log:q} 2>&1"


# Decoding speed on the first nat.speed.sentences sentences of a test set.
rule nat_speed_subset:
    input:
        src=lambda w: PLAN.nat.speed_source(w.teacher, "src"),
        tgt=lambda w: PLAN.nat.speed_source(w.teacher, "tgt"),
    output:
        src=f"{OUT}/nat/{{teacher}}/speed/test.bpe.src",
        tgt=f"{OUT}/nat/{{teacher}}/speed/test.bpe.tgt",
    params:
        sentences=lambda w: PLAN.nat.speed_sentences,
    log:
        f"{OUT}/logs/nat_speed_subset/{{teacher}}.log",
    conda:
        ENV
    shell:
        "(head -n {params.sentences:q} {input.src:q} > {output.src:q} &&"
        " head -n {params.sentences:q} {input.tgt:q} > {output.tgt:q}) 2> {log:q}"


use rule binarize as nat_speed_binarize with:
    input:
        src=f"{OUT}/nat/{{teacher}}/speed/test.bpe.src",
        tgt=f"{OUT}/nat/{{teacher}}/speed/test.bpe.tgt",
        dicts=f"{OUT}/models/{{teacher}}/bin",
    output:
        directory(f"{OUT}/nat/{{teacher}}/speed/bin"),
    params:
        args=lambda w: PLAN.nat.speed_binarize_args(w.teacher),
    threads: 1
    log:
        f"{OUT}/logs/nat_speed_binarize/{{teacher}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_speed_binarize/{{teacher}}.tsv"


# With nat.speed.exclusive, a measurement reserves every local core, so no other job of the
# pipeline runs beside it (fairseq itself still uses one thread). A cluster job has no local
# cores to reserve (and Snakemake knows no core count there): it asks for one, and the SLURM
# profile gives it a node of its own.
rule nat_speed:
    input:
        data=f"{OUT}/nat/{{teacher}}/speed/bin",
        source=f"{OUT}/nat/{{teacher}}/speed/test.bpe.src",
        model=lambda w: PLAN.nat.checkpoint(w.teacher, w.system),
    output:
        f"{OUT}/nat/{{teacher}}/speed/{{system}}.json",
    params:
        options=lambda w: PLAN.nat.decode_options_json(w.teacher, w.system),
        batch_sizes=lambda w: PLAN.nat.speed_batch_sizes(),
        model=lambda w: PLAN.nat.model_name(w.system),
        data=lambda w: PLAN.nat.data_name(w.system),
        direction=lambda w: PLAN.nat.direction(w.teacher),
    threads: lambda w: workflow.cores if PLAN.nat.speed_exclusive and workflow.local_exec else 1
    resources:
        mem_mb=lambda w: PLAN.nat.resource(w.system, "mem_mb", decoding=True),
        runtime=lambda w: PLAN.nat.resource(w.system, "runtime", decoding=True),
        gpu=lambda w: PLAN.nat.resource(w.system, "gpu", decoding=True),
    log:
        f"{OUT}/logs/nat_speed/{{teacher}}.{{system}}.log",
    benchmark:
        f"{OUT}/benchmarks/nat_speed/{{teacher}}.{{system}}.tsv"
    conda:
        ENV
    shell:
        "phenomt nat speed --data-bin {input.data:q} --source {input.source:q}"
        " --model {input.model:q} --options {params.options:q}"
        " --batch-sizes {params.batch_sizes} --teacher {wildcards.teacher:q}"
        " --system {wildcards.system:q} --model-name {params.model:q} --data {params.data:q}"
        " --direction {params.direction:q} --output {output:q} > {log:q} 2>&1"


# Tables 5 (BLEU, Redu.) and 10 (CRR, DRR), both for raw and distilled data.
rule nat_table_results:
    localrule: True
    input:
        scores=PLAN.nat.table_score_files(),
        selections=PLAN.nat.table_selections(),
        cards=PLAN.nat.teacher_cards(),
    output:
        **PLAN.table_files("nat_table{ntable}"),
    params:
        scores=lambda w: PLAN.nat.table_score_args(),
        notes=lambda w: PLAN.nat.scale_note_args(),
    log:
        f"{OUT}/logs/tables/nat_table{{ntable}}.log",
    conda:
        ENV
    shell:
        "phenomt table nat-results --table {wildcards.ntable:q} --scores {params.scores}"
        " --selections {input.selections:q} --cards {input.cards:q}"
        " {params.notes} --md {output.md:q} --csv {output.csv:q} > {log:q} 2>&1"


# The paper's claims (a)-(e), each a paired test on the scores behind Tables 5 and 10
# (Holm-adjusted per test set; no verdicts for smoke-scale models: nat.judge_claims).
rule nat_table_claims:
    localrule: True
    input:
        PLAN.nat.table_score_files(),
    output:
        **PLAN.table_files("nat_claims"),
    params:
        scores=lambda w: PLAN.nat.table_score_args(),
        resampling=PLAN.nat.claims_args(),
        notes=lambda w: PLAN.nat.scale_note_args(),
    log:
        f"{OUT}/logs/tables/nat_claims.log",
    conda:
        ENV
    shell:
        "phenomt table nat-claims --scores {params.scores} {params.resampling} {params.notes}"
        " --md {output.md:q} --csv {output.csv:q} > {log:q} 2>&1"


rule nat_table_speed:
    localrule: True
    input:
        PLAN.nat.all_speeds(),
    output:
        **PLAN.table_files("nat_speed"),
    params:
        notes=lambda w: PLAN.nat.speed_note_args(),
    log:
        f"{OUT}/logs/tables/nat_speed.log",
    conda:
        ENV
    shell:
        "phenomt table nat-speed --speeds {input:q} {params.notes} --md {output.md:q}"
        " --csv {output.csv:q} > {log:q} 2>&1"


# Agreement with human annotations (paper Tables 4 and 9), when nat.annotations is set.
rule nat_agreement:
    input:
        unpack(lambda w: PLAN.nat.agreement_inputs()),
    output:
        f"{OUT}/nat/agreement.json",
    params:
        settings=lambda w: PLAN.nat.agreement_args(),
        files=lambda w, input: PLAN.nat.agreement_file_args(
            {k: getattr(input, k) for k in input.keys() if k not in ("annotations", "hyps")}
        ),
    log:
        f"{OUT}/logs/nat_agreement.log",
    conda:
        ENV
    shell:
        "phenomt score redundancy-agreement --annotations {input.annotations:q}"
        " {params.settings} {params.files} --output {output:q} > {log:q} 2>&1"


rule nat_table_agreement:
    localrule: True
    input:
        f"{OUT}/nat/agreement.json",
    output:
        **PLAN.table_files("nat_agreement"),
    params:
        note=lambda w: PLAN.nat.agreement_note(),
    log:
        f"{OUT}/logs/tables/nat_agreement.log",
    conda:
        ENV
    shell:
        "phenomt table nat-agreement --report {input:q} --note {params.note:q}"
        " --md {output.md:q} --csv {output.csv:q} > {log:q} 2>&1"


# NAT figures, drawn from the tables above and shown in the HTML report.
rule nat_figure_redundancy:
    localrule: True
    input:
        PLAN.table("nat_table10", "csv"),
    output:
        png=report(
            PLAN.nat.figure("redundancy", "png"),
            caption="../report/nat_redundancy.rst",
            category=PLAN.report.category("nat"),
            subcategory="Figures",
            labels={"figure": "CRR and DRR, raw against distilled (paper: Table 10)"},
        ),
        svg=PLAN.nat.figure("redundancy", "svg"),
    params:
        scale=lambda w: PLAN.report.scale("nat"),
        title=PLAN.figure_title("CRR and DRR of the NAT models, raw against distilled data"),
    log:
        f"{OUT}/logs/figures/nat_redundancy.log",
    conda:
        ENV
    shell:
        "phenomt nat figure-redundancy --table {input:q} --title {params.title:q}"
        " --output {output:q} > {log:q} 2>&1"


rule nat_figure_speedup:
    localrule: True
    input:
        PLAN.table("nat_speed", "csv"),
    output:
        png=report(
            PLAN.nat.figure("speedup", "png"),
            caption="../report/nat_speedup.rst",
            category=PLAN.report.category("nat"),
            subcategory="Figures",
            labels={"figure": "Decoding speed-up over AR (no paper table)"},
        ),
        svg=PLAN.nat.figure("speedup", "svg"),
    params:
        scale=lambda w: PLAN.report.scale("nat"),
        title=PLAN.figure_title("Decoding speed-up of the NAT models over the AR teacher"),
    log:
        f"{OUT}/logs/figures/nat_speedup.log",
    conda:
        ENV
    shell:
        "phenomt nat figure-speedup --table {input:q} --title {params.title:q}"
        " --output {output:q} > {log:q} 2>&1"
