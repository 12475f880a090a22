import gzip
import json

import pytest

from phenomt.core.corpus import (
    CleanPolicy,
    assemble_train,
    clean_pairs,
    moses_unescape,
    prepare_corpus,
    prepare_docids,
    read_corpus,
    read_docids,
    read_iwslt_tags,
    read_tmx,
    read_xml_seg,
    strip_controls,
)
from phenomt.core.io import InputError, read_lines


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_mismatched_line_counts_name_both_files(tmp_path):
    de = _write(tmp_path / "c.de", "a\nb\nc\n")
    en = _write(tmp_path / "c.en", "a\nb\n")
    with pytest.raises(InputError) as err:
        read_corpus("plain", {"de": de, "en": en}, ["de", "en"])
    assert "c.de: 3 lines" in str(err.value) and "c.en: 2 lines" in str(err.value)


def test_bad_utf8_in_corpus_names_line(tmp_path):
    de = tmp_path / "c.de"
    de.write_bytes(b"ok\n\xc3\x28\n")
    en = _write(tmp_path / "c.en", "ok\nok\n")
    with pytest.raises(InputError, match=r"c\.de:2: invalid UTF-8"):
        read_corpus("plain", {"de": de, "en": en}, ["de", "en"])


def test_empty_corpus_gives_empty_outputs(tmp_path):
    de, en = _write(tmp_path / "e.de", ""), _write(tmp_path / "e.en", "")
    outs = {"de": tmp_path / "o.de", "en": tmp_path / "o.en"}
    report = prepare_corpus("plain", {"de": de, "en": en}, ["de", "en"], outs,
                            tmp_path / "r.json", CleanPolicy())
    assert report.input_pairs == report.output_pairs == 0
    assert outs["de"].read_text() == "" and outs["en"].read_text() == ""


def test_strip_controls():
    assert strip_controls("a\tb\x00c\x1b ") == "a bc"
    assert strip_controls("  plain  ") == "plain"
    assert strip_controls("zero\u200dwidth joiner kept") == "zero\u200dwidth joiner kept"


def test_clean_policy_drop_and_keep_counts():
    cols = [["ok", "", "one two three", "x\x07"], ["ok", "leer", "eins", "y"]]
    out, report = clean_pairs(cols, CleanPolicy(empty="drop", long="drop", max_tokens=2))
    assert out == [["ok", "x"], ["ok", "y"]]
    assert (report.empty, report.long, report.dropped) == (1, 1, 2)
    assert report.control_chars_stripped == 1
    assert report.kept_lines == [1, 4]
    out, report = clean_pairs(cols, CleanPolicy(empty="keep", long="keep", max_tokens=2))
    assert out[0] == ["ok", "", "one two three", "x"]
    assert report.dropped == 0 and report.empty == 1 and report.long == 1


def test_prepare_one_side_matches_both_sides(tmp_path):
    de = _write(tmp_path / "c.de", "eins\n\nzwei\n")
    en = _write(tmp_path / "c.en", "one\nempty\ntwo\n")
    files = {"de": de, "en": en}
    prepare_corpus("plain", files, ["de", "en"], {"en": tmp_path / "only.en"},
                   tmp_path / "r.json", CleanPolicy())
    assert read_lines(tmp_path / "only.en") == ["one", "two"]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["empty"] == 1 and report["output_pairs"] == 2


def test_books_tsv_is_unescaped(tmp_path):
    path = tmp_path / "books.tsv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write("7\tEr sagte &quot; ja &quot; &amp; ging .\tHe didn &apos;t go .\n")
    de, en = read_corpus("tsv", {"de": path, "en": path}, ["de", "en"],
                         columns={"de": 1, "en": 2}, moses_escaped=True)
    assert de == ['Er sagte " ja " & ging .']
    assert en == ["He didn 't go ."]
    assert moses_unescape("&amp;apos;") == "&apos;"  # one pass, no double unescaping


def test_tsv_short_row_names_line(tmp_path):
    path = _write(tmp_path / "x.tsv", "1\ta\tb\n2\tonly\n")
    with pytest.raises(InputError, match=r"x\.tsv:2: expected at least 3"):
        read_corpus("tsv", {"de": path, "en": path}, ["de", "en"], columns={"de": 1, "en": 2})


def test_tsv_empty_lines_are_empty_pairs_that_end_documents(tmp_path):
    path = _write(tmp_path / "nc.tsv", "a\tA\nb\tB\n\nc\tC\n")
    cols = read_corpus("tsv", {"de": path, "en": path}, ["de", "en"], columns={"de": 0, "en": 1})
    assert cols == [["a", "b", "", "c"], ["A", "B", "", "C"]]
    out = tmp_path / "ids"
    prepare_docids("tsv", {"de": path, "en": path}, ["de", "en"], CleanPolicy(empty="drop"),
                   ("blank_lines", path), out, columns={"de": 0, "en": 1})
    assert read_lines(out) == ["doc00001", "doc00001", "doc00002"]


def test_iwslt_formats(tmp_path):
    tags = _write(tmp_path / "train.tags.de-en.de",
                  "<url>http://x</url>\n<talkid>1</talkid>\n<title>Ein Titel</title>\n"
                  "Satz eins.\n<keywords>a</keywords>\nSatz zwei.\n")
    assert read_iwslt_tags(tags) == ["Ein Titel", "Satz eins.", "Satz zwei."]
    xml = _write(tmp_path / "dev.xml", '<doc docid="1">\n<seg id="1"> Hallo &amp; tschüss </seg>\n'
                 '<seg id="2">Zwei</seg>\n</doc>\n')
    assert read_xml_seg(xml) == ["Hallo & tschüss", "Zwei"]


def test_tmx(tmp_path):
    path = _write(tmp_path / "a.tmx", """<?xml version="1.0"?>
<tmx><body>
<tu><tuv xml:lang="en"><seg>Hello</seg></tuv><tuv xml:lang="de"><seg>Hallo</seg></tuv></tu>
<tu><tuv xml:lang="en"><seg>only English</seg></tuv></tu>
<tu><tuv xml:lang="de-DE"><seg>Welt</seg></tuv><tuv xml:lang="en-GB"><seg>World</seg></tuv></tu>
</body></tmx>
""")
    assert read_tmx(path, ["de", "en"]) == [["Hallo", "Welt"], ["Hello", "World"]]


def test_docids(tmp_path):
    details = _write(tmp_path / "d.tsv", "1\tnt\tzh-en\tdocA\t1\n2\tnt\tzh-en\tdocA\t2\n"
                                         "3\tnt\tzh-en\tdocB\t1\n")
    assert read_docids("wmt_details", details) == ["docA", "docA", "docB"]
    nsent = _write(tmp_path / "n_sent", "2\n1\n")
    assert read_docids("n_sent", nsent) == ["doc00001", "doc00001", "doc00002"]
    bad = _write(tmp_path / "bad", "2\nx\n")
    with pytest.raises(InputError, match=r"bad:2"):
        read_docids("n_sent", bad)
    lines = _write(tmp_path / "ids.txt", "talk.2\ntalk.2 \ntalk.5\n")
    assert read_docids("lines", lines) == ["talk.2", "talk.2", "talk.5"]
    gap = _write(tmp_path / "gap.txt", "talk.2\n\ntalk.5\n")
    with pytest.raises(InputError, match=r"gap.txt:2: empty document id"):
        read_docids("lines", gap)


def test_blank_lines_separate_documents_and_are_dropped_as_empty_pairs(tmp_path):
    # documents: [a, b] [c] [d]; the doubled blank line closes one document only
    zh = _write(tmp_path / "p.zh", "甲\n乙\n\n丙\n\n\n丁\n")
    en = _write(tmp_path / "p.en", "a\nb\n\nc\n\n\nd\n")
    assert read_docids("blank_lines", zh) == [
        "doc00001", "doc00001", "doc00001", "doc00002", "doc00002", "doc00003", "doc00003"]
    out = tmp_path / "ids"
    prepare_docids("plain", {"zh": zh, "en": en}, ["zh", "en"], CleanPolicy(empty="drop"),
                   ("blank_lines", zh), out)
    assert read_lines(out) == ["doc00001", "doc00001", "doc00002", "doc00003"]


def test_docids_follow_cleaning_and_count_check(tmp_path):
    zh = _write(tmp_path / "c.zh", "一\n\n三\n")
    en = _write(tmp_path / "c.en", "one\n\nthree\n")
    details = _write(tmp_path / "d.tsv", "1\tn\tp\tA\t1\n2\tn\tp\tA\t2\n3\tn\tp\tB\t1\n")
    files = {"zh": zh, "en": en}
    out = tmp_path / "ids"
    prepare_docids("plain", files, ["zh", "en"], CleanPolicy(empty="drop"),
                   ("wmt_details", details), out)
    assert read_lines(out) == ["A", "B"]
    short = _write(tmp_path / "short.tsv", "1\tn\tp\tA\t1\n")
    with pytest.raises(InputError, match="1 document ids for 3 segments"):
        prepare_docids("plain", files, ["zh", "en"], CleanPolicy(),
                       ("wmt_details", short), out)


def test_assemble_dedup_and_leak_check(tmp_path):
    a_de = _write(tmp_path / "a.de", "Hallo .\nHallo .\nGeheim\nNeu\n")
    a_en = _write(tmp_path / "a.en", "Hello .\nHello .\nsecret\nnew\n")
    t_de = _write(tmp_path / "t.de", "geheim\n")
    t_en = _write(tmp_path / "t.en", "Something else\n")
    out = [tmp_path / "train.src", tmp_path / "train.tgt"]
    stats = assemble_train([[a_de, a_en]], [[t_de, t_en]], out)
    assert stats == {"input_pairs": 4, "duplicates": 1, "leaks": 1, "output_pairs": 2}
    assert read_lines(out[0]) == ["Hallo .", "Neu"]
    assert read_lines(out[1]) == ["Hello .", "new"]


def _layout(root, documents):
    """A released-layout folder: one ``zh ||| en`` file per document."""
    for n, pairs in enumerate(documents, start=1):
        for layer in ("zh2en_raw", "zh2en_token"):
            text = "".join(f"{zh} ||| {en}\n" for zh, en in pairs)
            (root / layer).mkdir(parents=True, exist_ok=True)
            _write(root / layer / f"test-{n}.txt", text)
    return root


def test_released_layout_corpus_reads_documents_in_numeric_order(tmp_path):
    docs = [[(f"源{n}", f"src {n}")] for n in range(1, 11)]
    docs[0].append(("第二句", "second"))
    root = _layout(tmp_path / "set", docs)
    zh, en = read_corpus("released_layout", {"zh": root, "en": root}, ["zh", "en"])
    # test-10 comes after test-9, not after test-1
    assert zh[:3] == ["源1", "第二句", "源2"] and zh[-1] == "源10"
    assert en[:2] == ["src 1", "second"]
    ids = read_docids("released_layout", root)
    assert ids[:3] == ["test-1", "test-1", "test-2"] and ids[-1] == "test-10"


def test_documents_keeps_whole_documents_and_their_ids(tmp_path):
    # documents [a b] [c] [d e]: the first two documents are three lines
    zh = _write(tmp_path / "c.zh", "a\nb\nc\nd\ne\n")
    en = _write(tmp_path / "c.en", "A\nB\nC\nD\nE\n")
    nsent = _write(tmp_path / "n_sent", "2\n1\n2\n")
    files = {"zh": zh, "en": en}
    outputs = {"zh": tmp_path / "o.zh", "en": tmp_path / "o.en"}
    prepare_corpus("plain", files, ["zh", "en"], outputs, tmp_path / "r.json", CleanPolicy(),
                   docids=("n_sent", nsent), documents=2)
    assert read_lines(outputs["en"]) == ["A", "B", "C"]
    prepare_docids("plain", files, ["zh", "en"], CleanPolicy(), ("n_sent", nsent),
                   tmp_path / "ids", documents=2)
    assert read_lines(tmp_path / "ids") == ["doc00001", "doc00001", "doc00002"]
    with pytest.raises(InputError, match="has 3 documents, 4 were asked for"):
        prepare_corpus("plain", files, ["zh", "en"], outputs, tmp_path / "r.json",
                       CleanPolicy(), docids=("n_sent", nsent), documents=4)
    with pytest.raises(ValueError, match="need the corpus's document ids"):
        prepare_corpus("plain", files, ["zh", "en"], outputs, tmp_path / "r.json",
                       CleanPolicy(), documents=1)


def test_document_step_keeps_every_nth_whole_document(tmp_path):
    # documents [a b] [c] [d e] [f]: step 2 keeps the 1st and 3rd, [a b] [d e]
    zh = _write(tmp_path / "c.zh", "a\nb\nc\nd\ne\nf\n")
    en = _write(tmp_path / "c.en", "A\nB\nC\nD\nE\nF\n")
    nsent = _write(tmp_path / "n_sent", "2\n1\n2\n1\n")
    files = {"zh": zh, "en": en}
    outputs = {"zh": tmp_path / "o.zh", "en": tmp_path / "o.en"}
    prepare_corpus("plain", files, ["zh", "en"], outputs, tmp_path / "r.json", CleanPolicy(),
                   docids=("n_sent", nsent), document_step=2)
    assert read_lines(outputs["en"]) == ["A", "B", "D", "E"]
    prepare_docids("plain", files, ["zh", "en"], CleanPolicy(), ("n_sent", nsent),
                   tmp_path / "ids", document_step=2)
    assert read_lines(tmp_path / "ids") == ["doc00001", "doc00001", "doc00003", "doc00003"]
    # the step first, then the first N of what it kept
    prepare_corpus("plain", files, ["zh", "en"], outputs, tmp_path / "r.json", CleanPolicy(),
                   docids=("n_sent", nsent), document_step=3, documents=2)
    assert read_lines(outputs["zh"]) == ["a", "b", "f"]
    with pytest.raises(InputError, match="has 4 documents, so 2 at step 2; 3 were asked"):
        prepare_corpus("plain", files, ["zh", "en"], outputs, tmp_path / "r.json",
                       CleanPolicy(), docids=("n_sent", nsent), document_step=2, documents=3)


def test_assemble_writes_the_document_ids_of_the_kept_pairs(tmp_path):
    # corpus 0: [Hallo Hallo(dup)] [Geheim(leak) Neu]; corpus 1: [Eins]
    a_de = _write(tmp_path / "a.de", "Hallo .\nHallo .\nGeheim\nNeu\n")
    a_en = _write(tmp_path / "a.en", "Hello .\nHello .\nsecret\nnew\n")
    a_ids = _write(tmp_path / "a.ids", "d1\nd1\nd2\nd2\n")
    b_de = _write(tmp_path / "b.de", "Eins\n")
    b_en = _write(tmp_path / "b.en", "One\n")
    b_ids = _write(tmp_path / "b.ids", "d1\n")
    t_de = _write(tmp_path / "t.de", "geheim\n")
    t_en = _write(tmp_path / "t.en", "Something else\n")
    ids = tmp_path / "train.docids"
    stats = assemble_train([[a_de, a_en], [b_de, b_en]], [[t_de, t_en]], [],
                           [a_ids, b_ids], ids)
    assert stats["output_pairs"] == 3 and stats["duplicates"] == 1 and stats["leaks"] == 1
    # documents of different corpora stay apart although both are called d1
    assert read_lines(ids) == ["0:d1", "0:d2", "1:d1"]
    short = _write(tmp_path / "short.ids", "d1\n")
    with pytest.raises(InputError, match="1 document ids for 4 lines"):
        assemble_train([[a_de, a_en]], [], [], [short], ids)
