"""The non-autoregressive wing (Wang et al.): recipes of the NAT models (``recipes``) and the
checkpoint averaging, speed measurement and tables (``tables``). The models themselves are
fairseq plugins in ``phenomt.fairseq_ext``; the redundancy metric is in ``core.metrics``."""
