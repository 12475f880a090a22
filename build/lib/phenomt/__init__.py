"""phenomt: phenomenon-level evaluation of machine translation."""

__version__ = "0.1.0"
