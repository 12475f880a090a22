"""Permutations of token positions, in one-line notation: ``out[σ(i)] = in[i]``.

Pure Python on purpose: both the locality experiment and the fairseq plugin that permutes
positional embeddings use it, and the plugin must not pull in pandas or a wing.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence


def validate_permutation(perm: Sequence[int], length: int | None = None) -> tuple[int, ...]:
    """Check that ``perm`` is a permutation of 0..n-1 (and n == ``length`` if given)."""
    try:
        # operator.index accepts Python and NumPy integers but not floats; bools are refused
        # separately because they are ints to Python.
        if any(isinstance(v, bool) for v in perm):
            raise TypeError
        values = tuple(operator.index(v) for v in perm)
    except TypeError:
        raise ValueError(f"a permutation holds integers, got {list(perm)!r}") from None
    if sorted(values) != list(range(len(values))):
        raise ValueError(f"not a permutation of 0..{len(values) - 1}: {list(values)}")
    if length is not None and len(values) != length:
        raise ValueError(f"the permutation has {len(values)} elements, the sentences {length} "
                         f"tokens")
    return values


def parse_permutation(text: str) -> tuple[int, ...]:
    """Parse ``"11,5,9,..."`` or ``"11 5 9 ..."`` (brackets allowed) and validate it."""
    cleaned = text.strip().strip("()[]").replace(",", " ")
    try:
        values = [int(item) for item in cleaned.split()]
    except ValueError:
        raise ValueError(f"a permutation is a list of integers, got {text!r}") from None
    if not values:
        raise ValueError("empty permutation")
    return validate_permutation(values)


def format_permutation(perm: Sequence[int]) -> str:
    """Comma-separated, as fairseq's ``--position-permutation`` takes it."""
    return ",".join(str(v) for v in perm)


def inverse_permutation(perm: Sequence[int]) -> tuple[int, ...]:
    """σ⁻¹, with σ⁻¹(σ(i)) = i."""
    values = validate_permutation(perm)
    inverse = [0] * len(values)
    for i, target in enumerate(values):
        inverse[target] = i
    return tuple(inverse)


def permute_tokens(tokens: Sequence[str], perm: Sequence[int]) -> list[str]:
    """Move the token at position i to position σ(i) (``out[σ(i)] = in[i]``)."""
    if len(tokens) != len(perm):
        raise ValueError(f"{len(tokens)} tokens but a permutation of {len(perm)}")
    out = [""] * len(tokens)
    for i, token in enumerate(tokens):
        out[perm[i]] = token
    return out
