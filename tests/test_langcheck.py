"""The language check of input files (phenomt.core.langcheck)."""

from __future__ import annotations

import py3langid
import pytest

from phenomt.core import langcheck

LINES = {
    "en": ["The committee will publish its report on the new railway line next week.",
           "She said that nobody had told her about the meeting in the town hall."],
    "de": ["Der Ausschuss wird seinen Bericht über die neue Bahnstrecke nächste Woche "
           "veröffentlichen.",
           "Sie sagte, dass ihr niemand von der Versammlung im Rathaus erzählt habe."],
    "fr": ["Le comité publiera son rapport sur la nouvelle ligne de chemin de fer la semaine "
           "prochaine.",
           "Elle a dit que personne ne lui avait parlé de la réunion à la mairie."],
}


def test_the_batched_classifier_gives_py3langids_own_verdict_line_by_line():
    lines = [line for group in LINES.values() for line in group] + ["12 345", "ok"]
    assert langcheck.classify(lines) == [py3langid.classify(line)[0] for line in lines]
    assert langcheck.classify(lines[:6]) == ["en", "en", "de", "de", "fr", "fr"]
    assert langcheck.classify([]) == []


def test_a_file_in_another_language_is_wrong_and_the_expected_one_is_not():
    german = LINES["de"] * 10
    assert langcheck.guess(german, "de").counts == {"de": 20}
    found = langcheck.guess(german, "en")
    assert found.judged and found.wrong and found.top == "de"
    assert found.evidence() == "of 20 sampled lines, 20 de"
    assert not langcheck.guess(german, "de").wrong


@pytest.mark.parametrize("lines, judged", [(LINES["en"] * 4, False),   # 8 lines: too few
                                           (["short line"] * 50, False),  # under 15 chars
                                           (LINES["en"] * 5, True)])
def test_a_verdict_needs_ten_lines_of_fifteen_characters(lines, judged):
    assert langcheck.guess(lines, "en").judged is judged


def test_a_sample_is_evenly_spaced_and_capped():
    lines = LINES["en"] * 150 + LINES["de"] * 150  # 300 English lines, then 300 German
    found = langcheck.guess(lines, "en", sample=100)
    assert found.lines == 100 and found.counts == {"en": 50, "de": 50}
    assert found.doubtful is False and found.wrong is False
