"""Every metric, so that any wing can score with it: BLEU and chrF through sacreBLEU
(``bleu``), RIBES (``ribes``), the continuous and discontinuous redundancy ratios
(``redundancy``)."""
