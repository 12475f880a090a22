import gzip

import pytest

from phenomt.core.io import (
    InputError,
    atomic_write,
    count_lines,
    iter_lines,
    read_lines,
    write_lines,
)


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError), atomic_write(target) as out:
        out.write("half")
        raise RuntimeError("killed")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_replaces_old_content(tmp_path):
    target = tmp_path / "out.txt"
    write_lines(target, ["old"])
    write_lines(target, ["a", "b"])
    assert target.read_text() == "a\nb\n"


def test_atomic_write_refuses_a_folder_and_an_unwritable_place(tmp_path):
    with pytest.raises(IsADirectoryError, match=r"is a folder; give a file name") as err:
        write_lines(tmp_path, ["x"])
    assert err.value.filename == str(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(NotADirectoryError, match=r"cannot be written") as err:
        write_lines(blocker / "out.txt", ["x"])
    assert err.value.filename == str(blocker / "out.txt")
    assert blocker.read_text() == "x"


def test_cli_reports_unopenable_files_in_one_line(tmp_path, capsys):
    from phenomt.cli import run

    (tmp_path / "h").write_text("a b\n", encoding="utf-8")
    assert run(["score", "bleu", "--hyp", str(tmp_path / "h"), "--ref", str(tmp_path / "h"),
                "--output", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("phenomt: error: ") and "is a folder" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_turns_an_os_error_with_a_file_name_into_one_line(monkeypatch, capsys):
    import argparse

    from phenomt import cli

    def handler(args):
        raise PermissionError(13, "Permission denied", "locked.txt")

    parser = argparse.ArgumentParser()
    parser.set_defaults(handler=handler)
    monkeypatch.setattr(cli, "build_parser", lambda modules: parser)
    assert cli.run([]) == 2
    assert capsys.readouterr().err == "phenomt: error: locked.txt: Permission denied\n"

    def bug(args):
        raise OSError("no file involved")

    parser.set_defaults(handler=bug)
    with pytest.raises(OSError, match="no file involved"):  # a fault, shown in full
        cli.run([])


def test_invalid_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good\nalso good\nbad \xff byte\n")
    with pytest.raises(InputError) as err:
        read_lines(path)
    assert err.value.line == 3
    assert str(err.value).startswith(f"{path}:3: invalid UTF-8")


def test_gzip_and_crlf(tmp_path):
    path = tmp_path / "x.gz"
    with gzip.open(path, "wb") as out:
        out.write("ä\r\nb\n".encode())
    assert list(iter_lines(path)) == ["ä", "b"]
    assert count_lines(path) == 2


def test_empty_and_missing_file(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("")
    assert read_lines(empty) == []
    with pytest.raises(InputError, match="file not found"):
        read_lines(tmp_path / "missing")


def test_run_lock_refuses_a_second_holder_and_dies_with_its_process(tmp_path):
    import subprocess
    import sys
    import time

    from phenomt.core.io import RunLockedError, hold_run_lock

    code = ("import sys, time; from phenomt.core.io import hold_run_lock; "
            f"hold_run_lock({str(tmp_path)!r}); print('locked', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunLockedError, match=rf"pid {holder.pid}"):
            hold_run_lock(tmp_path)
    finally:
        holder.kill()  # SIGKILL: no clean-up runs in the holder
        holder.wait()
    deadline = time.monotonic() + 10
    while True:  # the kernel drops the lock with the process
        try:
            assert hold_run_lock(tmp_path).name == ".phenomt.lock"
            break
        except RunLockedError:
            assert time.monotonic() < deadline
            time.sleep(0.1)


def test_json_records_put_each_list_of_numbers_on_one_line(tmp_path):
    """Indented and key-sorted as json writes them, except that a list of numbers (a
    sentence's statistics) takes one line; the same values read back."""
    import json
    import math

    from phenomt.core.io import write_json

    record = {"rows": [[1, 2.5], [3, 4]], "ci": (0.5, 1.0), "nan": [math.nan], "flags": [True],
              "mixed": [1, "a"], "none": [], "nested": [{"b": [1], "a": "x\u0000y"}]}
    write_json(tmp_path / "r.json", record)
    text = (tmp_path / "r.json").read_text("utf-8")
    assert text == """{
  "ci": [0.5, 1.0],
  "flags": [
    true
  ],
  "mixed": [
    1,
    "a"
  ],
  "nan": [NaN],
  "nested": [
    {
      "a": "x\\u0000y",
      "b": [1]
    }
  ],
  "none": [],
  "rows": [
    [1, 2.5],
    [3, 4]
  ]
}
"""
    back = json.loads(text)
    assert back["rows"] == [[1, 2.5], [3, 4]] and math.isnan(back["nan"][0])
    assert back["nested"] == [{"a": "x\u0000y", "b": [1]}]
