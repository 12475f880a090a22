"""The lexical-translation-consistency wing (Lei, Li, Tao & Yang, LREC-COLING 2024).

``testset`` reads the released folder layout (``zh2en_raw``, ``zh2en_token``, ``res``),
``convert`` writes other document-level corpora into it, ``pos`` tags the source tokens,
``chains`` finds repeated content words and their pairs and scores LTCR on a folder
(the metric itself is :mod:`phenomt.core.metrics.ltcr`), ``stats`` builds Tables 1–3 and
``sheet`` exports and imports annotation sheets with the inter-annotator F1.
"""
