"""Language codes and the language of a file's lines, checked before any work starts.

Codes are checked against ISO 639 with ``langcodes``; the language of a file is guessed on a
sample of its lines with ``py3langid`` (its model ships with the package, no download). A
guess is evidence, not proof: short lines, names and numbers are often misread, so a file is
refused only when the guess is unambiguous (:data:`REFUSE_SHARE` of the sampled lines in one
other language and at most :data:`STRAY_SHARE` in the expected one), and warned about when
the expected language is not the majority.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

#: Lines sampled from a file (evenly spaced, so the same file gives the same sample).
SAMPLE = 200
#: Fewer usable lines than this give no verdict: too little evidence either way.
MIN_LINES = 10
#: A line needs this many non-space characters to be guessed (shorter ones are too noisy).
MIN_CHARS = 15
#: Refused when one other language has this share of the guessed lines...
REFUSE_SHARE = 0.8
#: ...and the expected language at most this share.
STRAY_SHARE = 0.1
#: Warned about when the expected language has less than this share.
WARN_SHARE = 0.5


def iso639(code: str) -> str:
    """``code`` as its shortest ISO 639 form (``deu`` -> ``de``); ValueError when it is
    not a language code of ISO 639 (``xx``, ``en-US``, ``english``)."""
    import langcodes

    text = code.strip()
    if not text or not text.isascii() or not text.isalpha() or not 2 <= len(text) <= 3:
        raise ValueError(f"{code!r} is not an ISO 639 language code (two or three letters, "
                         "e.g. de, en, zh)")
    try:
        language = langcodes.Language.get(text.lower())
    except (ValueError, LookupError):
        language = None
    if language is None or not language.is_valid() or _special(str(language.language)):
        raise ValueError(f"{code!r} is not an ISO 639 language code (e.g. de, en, zh)")
    return str(language.language)


def _special(code: str) -> bool:
    """ISO 639's codes for no particular language: undetermined, multiple, uncoded, no
    linguistic content, and the private-use range qaa-qtz."""
    return code in ("und", "mul", "mis", "zxx", "None") or "qaa" <= code <= "qtz"


@dataclass(frozen=True)
class Guess:
    """The languages guessed for a sample of a file's lines."""

    expected: str
    counts: Counter
    supported: bool

    @property
    def lines(self) -> int:
        return sum(self.counts.values())

    def share(self, lang: str) -> float:
        return self.counts[lang] / self.lines if self.lines else 0.0

    @property
    def top(self) -> str | None:
        return self.counts.most_common(1)[0][0] if self.counts else None

    @property
    def judged(self) -> bool:
        """Whether there is enough evidence for a verdict."""
        return self.supported and self.lines >= MIN_LINES

    @property
    def wrong(self) -> bool:
        """Unambiguously another language than the expected one."""
        top = self.top
        return (self.judged and top != self.expected and self.share(top) >= REFUSE_SHARE
                and self.share(self.expected) <= STRAY_SHARE)

    @property
    def doubtful(self) -> bool:
        """The expected language is not the majority (a warning, not a refusal)."""
        return self.judged and self.share(self.expected) < WARN_SHARE

    def evidence(self) -> str:
        """``34 of 40 sampled lines look en, 2 de``."""
        parts = [f"{n} {lang}" for lang, n in self.counts.most_common(3)]
        return f"of {self.lines} sampled lines, {', '.join(parts)}"


@lru_cache(maxsize=1)
def _languages() -> frozenset[str]:
    """The languages the identifier knows (its module-level ranking, the same in every
    release of py3langid)."""
    import py3langid

    return frozenset(lang for lang, _ in py3langid.rank("a"))


def supported(lang: str) -> bool:
    """Whether the language identifier knows ``lang``."""
    return lang in _languages()


def guess(lines: Sequence[str], expected: str, sample: int = SAMPLE) -> Guess:
    """Guess the language of up to ``sample`` evenly spaced lines of at least
    :data:`MIN_CHARS` non-space characters."""
    usable = [ln for ln in lines if len("".join(ln.split())) >= MIN_CHARS]
    if len(usable) > sample:
        step = len(usable) / sample
        usable = [usable[int(i * step)] for i in range(sample)]
    if not supported(expected):
        return Guess(expected, Counter(), False)
    # Only the first 1,000 characters: a pathological line must not cost seconds here.
    return Guess(expected, Counter(classify([ln[:1000] for ln in usable])), True)


def classify(lines: Sequence[str]) -> list[str]:
    """py3langid's language of each line: its ``classify`` of every line, the model's one
    matrix product made for all lines at once (the argmax of the same scores, in less than
    half the time: ``evaluate`` waits for this before its run starts)."""
    import numpy as np
    from py3langid import langid

    if not lines:
        return []
    if langid.IDENTIFIER is None:
        langid.load_model()
    model = langid.IDENTIFIER
    features = np.stack([model.instance2fv(line) for line in lines])
    best = (features @ model.nb_ptc + model.nb_pc).argmax(axis=1)
    return [model.nb_classes[index] for index in best]
