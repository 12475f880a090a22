import hashlib
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from phenomt.core.fetch import extract, fetch, fetch_tree, find_mirror, read_manifest
from phenomt.core.io import InputError
from tests.conftest import ROOT


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_mirror_lookup_order(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.delenv("PHENOMT_MIRROR", raising=False)
    assert find_mirror(None, project) is None
    (tmp_path / "shared" / "data").mkdir(parents=True)
    assert find_mirror(None, project) == (tmp_path / "shared" / "data").resolve()
    env_mirror = tmp_path / "env"
    env_mirror.mkdir()
    monkeypatch.setenv("PHENOMT_MIRROR", str(env_mirror))
    assert find_mirror(None, project) == env_mirror.resolve()
    configured = tmp_path / "conf"
    configured.mkdir()
    assert find_mirror(str(configured), project) == configured.resolve()
    with pytest.raises(InputError, match="not a directory"):
        find_mirror(str(tmp_path / "nope"), project)


def test_fetch_links_mirror_file_and_checks_sha(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "wmt").mkdir(parents=True)
    data = b"Hallo Welt\n"
    (mirror / "wmt" / "a.de").write_bytes(data)
    dest = tmp_path / "dl" / "a.de"
    assert fetch(dest, "https://example.invalid/a.de", _sha(data), "wmt/a.de", mirror) == "mirror"
    assert dest.is_symlink() and dest.read_bytes() == data
    with pytest.raises(InputError, match="sha256 mismatch"):
        fetch(tmp_path / "b", None, "0" * 64, "wmt/a.de", mirror)


def test_an_absolute_mirror_path_is_a_local_file_with_or_without_a_mirror(tmp_path):
    mine = tmp_path / "mine.de"
    mine.write_bytes(b"Hallo\n")
    for mirror in (None, tmp_path / "elsewhere"):
        dest = tmp_path / "dl" / f"{mirror is None}.de"
        assert fetch(dest, None, None, str(mine), mirror) == "mirror"
        assert dest.is_symlink() and dest.read_bytes() == b"Hallo\n"
    with pytest.raises(InputError, match="absent.de: no such file"):
        fetch(tmp_path / "x", None, None, str(tmp_path / "absent.de"), None)


def test_fetch_without_mirror_or_url_fails_clearly(tmp_path):
    with pytest.raises(InputError, match="no upstream URL is known"):
        fetch(tmp_path / "x", None, None, "missing/file", tmp_path)


def _tar_with(tmp_path, name: str, kind=tarfile.REGTYPE, linkname: str = ""):
    path = tmp_path / "a.tgz"
    with tarfile.open(path, "w:gz") as tf:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.linkname = linkname
        payload = b"x\n"
        info.size = len(payload) if kind == tarfile.REGTYPE else 0
        tf.addfile(info, io.BytesIO(payload) if kind == tarfile.REGTYPE else None)
    return path


def test_extract_plain_tar(tmp_path):
    archive = _tar_with(tmp_path, "de-en/train.de")
    names = extract(archive, tmp_path / "out")
    assert names == ["de-en/train.de"]
    assert (tmp_path / "out" / "de-en" / "train.de").read_text() == "x\n"


@pytest.mark.parametrize("name", ["../escape.txt", "/etc/evil", "a/../../evil"])
def test_extract_rejects_escaping_tar_member(tmp_path, name):
    archive = _tar_with(tmp_path, name)
    with pytest.raises(InputError, match="escapes its folder"):
        extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "escape.txt").exists()


def test_extract_rejects_symlink_member(tmp_path):
    archive = _tar_with(tmp_path, "link", tarfile.SYMTYPE, "/etc/passwd")
    with pytest.raises(InputError, match="not a plain file"):
        extract(archive, tmp_path / "out")


def test_extract_rejects_escaping_zip_member(tmp_path):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("../evil.txt", "x")
    with pytest.raises(InputError, match="escapes its folder"):
        extract(path, tmp_path / "out")


def test_extract_rejects_non_archive(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text("hello")
    with pytest.raises(InputError, match="not a tar or zip"):
        extract(path, tmp_path / "out")


NL = b"\n"


def _tree_mirror(tmp_path: Path) -> tuple[Path, Path]:
    """A mirror folder ``set/`` with two files (one renamed there) and its manifest."""
    mirror = tmp_path / "mirror"
    (mirror / "set" / "res").mkdir(parents=True)
    (mirror / "set" / "res" / "test-1.txt").write_text("a\n")
    (mirror / "set" / "UPSTREAM-README.md").write_text("readme\n")
    manifest = tmp_path / "manifest.tsv"
    manifest.write_text(
        "# comment\n"
        f"{_sha(b'readme' + NL)}\tREADME.md\tUPSTREAM-README.md\n"
        f"{_sha(b'a' + NL)}\tres/test-1.txt\n")
    return mirror, manifest


def test_fetch_tree_links_every_listed_file_under_its_upstream_name(tmp_path):
    mirror, manifest = _tree_mirror(tmp_path)
    counts = fetch_tree(tmp_path / "out", manifest, None, "set", mirror)
    assert counts == {"mirror": 2, "download": 0}
    assert (tmp_path / "out" / "README.md").read_text() == "readme\n"
    assert (tmp_path / "out" / "res" / "test-1.txt").read_text() == "a\n"


def test_fetch_tree_mismatch_names_the_file_and_leaves_no_folder(tmp_path):
    mirror, manifest = _tree_mirror(tmp_path)
    (mirror / "set" / "res" / "test-1.txt").write_text("changed\n")
    with pytest.raises(InputError, match=r"test-1.txt.*sha256 mismatch: expected [0-9a-f]{64}, "
                                          r"got [0-9a-f]{64}"):
        fetch_tree(tmp_path / "out", manifest, None, "set", mirror)
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob(".out*"))


def test_fetch_tree_without_mirror_or_url_fails_cleanly(tmp_path):
    _, manifest = _tree_mirror(tmp_path)
    with pytest.raises(InputError, match="no upstream URL is known"):
        fetch_tree(tmp_path / "out", manifest, None, "set", None)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("line, message", [
    ("abc\tx.txt", "not a sha256"),
    ("0" * 64, "expected 'sha256<TAB>path"),
    ("0" * 64 + "\t../x", "not a relative path"),
])
def test_bad_manifest_lines_name_file_and_line(tmp_path, line, message):
    manifest = tmp_path / "m.tsv"
    manifest.write_text("# header\n" + line + "\n")
    with pytest.raises(InputError, match=message) as err:
        read_manifest(manifest)
    assert f"{manifest}:2" in str(err.value)


def test_the_lexcons_manifest_lists_the_released_files():
    rows = read_manifest(ROOT / "src" / "phenomt" / "plan" / "manifests" / "lexcons.tsv")
    assert len(rows) == 931
    assert sum(1 for _, path, _ in rows if path.startswith("zh2en_token/")) == 310


class _BrokenStream(io.BytesIO):
    """A download that delivers some bytes, then loses the connection."""

    def read(self, size: int = -1) -> bytes:
        if self.tell() >= 4:
            raise ConnectionResetError("connection lost")
        return super().read(2)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def test_an_interrupted_download_leaves_no_file(tmp_path, monkeypatch):
    import urllib.request

    monkeypatch.setattr(urllib.request, "urlopen",
                        lambda url, timeout: _BrokenStream(b"0123456789"))
    dest = tmp_path / "downloads" / "corpus.gz"
    with pytest.raises(InputError, match=r"corpus.gz: cannot be fetched from "
                                         r"https://example.org/corpus.gz \(connection lost\) "
                                         r"and no mirror is configured; give a mirror \("):
        fetch(dest, "https://example.org/corpus.gz", _sha(b"0123456789"))
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []  # no temporary file left behind either


def test_a_download_with_the_wrong_sha256_is_removed(tmp_path, monkeypatch):
    import urllib.request

    monkeypatch.setattr(urllib.request, "urlopen",
                        lambda url, timeout: io.BytesIO(b"tampered"))
    dest = tmp_path / "corpus.gz"
    with pytest.raises(InputError, match="sha256 mismatch"):
        fetch(dest, "https://example.org/corpus.gz", _sha(b"original"))
    assert not dest.exists()


def test_the_fetch_command_reads_the_mirror_from_the_environment(tmp_path, monkeypatch):
    """The workflow gives its fetch jobs the mirror as $PHENOMT_MIRROR, not as an argument
    (a param, which a rerun would follow): the command links the file from there, and
    checks it against its sha256 all the same."""
    from phenomt.cli import run

    mirror = tmp_path / "mirror"
    (mirror / "sub").mkdir(parents=True)
    data = b"hello\n"
    (mirror / "sub" / "f.txt").write_bytes(data)
    good = hashlib.sha256(data).hexdigest()
    monkeypatch.setenv("PHENOMT_MIRROR", str(mirror))
    out = tmp_path / "dl" / "f"
    assert run(["data", "fetch", "--output", str(out), "--sha256", good,
                "--mirror-path", "sub/f.txt"]) == 0
    assert out.is_symlink() and out.read_bytes() == data
    assert run(["data", "fetch", "--output", str(tmp_path / "dl" / "g"), "--sha256", "0" * 64,
                "--mirror-path", "sub/f.txt"]) == 2  # verified whatever the mirror
    monkeypatch.delenv("PHENOMT_MIRROR")
    assert run(["data", "fetch", "--output", str(tmp_path / "dl" / "h"),
                "--mirror-path", "sub/f.txt"]) == 2  # no mirror: nothing to link


def test_the_fetch_params_follow_content_not_the_mirror():
    """What the fetch rule's params hold (its rerun trigger): no mirror where a checksum
    verifies the file or the config names a local file; the mirror's file where nothing
    verifies it."""
    from phenomt.plan import Plan, load_config

    plan = Plan(load_config(ROOT / ".test" / "config" / "tiny.yaml"), str(ROOT))
    downloads = plan.config["downloads"]
    verified = next(d for d, s in downloads.items() if s["sha256"] and s["mirror"])
    unverified = next(d for d, s in downloads.items()
                      if not s["sha256"] and not s["manifest"] and s["mirror"])
    for download in downloads:
        assert "--mirror " not in plan.data.fetch_args(download)
    assert plan.data.fetch_identity(verified, "/m/one") == ""
    assert plan.data.fetch_identity(verified, "/m/two") == ""
    assert plan.data.fetch_identity(unverified, "/m/one") == \
        f"/m/one/{downloads[unverified]['mirror']}"
