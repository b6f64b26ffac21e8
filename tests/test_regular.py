"""vitcore.data.regular: the one way a file vitcore reads is opened (the data set's files, a run's files)."""

import os

import pytest

from vitcore.data.regular import Refused, open_regular


def _refused(path, limit=100, follow=True) -> Refused:
    with pytest.raises(Refused) as caught, open_regular(path, limit, follow):
        pass
    return caught.value


def test_a_regular_file_is_opened_and_closed(tmp_path):
    (tmp_path / "f").write_bytes(b"abc")
    with open_regular(tmp_path / "f", 3) as handle:
        assert os.read(handle, 10) == b"abc"
    with pytest.raises(OSError):
        os.fstat(handle)  # closed on exit


def test_special_files_links_and_large_files_are_refused_without_waiting(tmp_path):
    os.mkfifo(tmp_path / "fifo")  # opened blocking, this would wait for a writer forever
    assert _refused(tmp_path / "fifo").kind == "special"
    assert _refused(tmp_path).kind == "special"  # a folder
    (tmp_path / "big").write_bytes(b"x" * 101)
    big = _refused(tmp_path / "big")
    assert (big.kind, big.size) == ("size", 101)
    assert big.words("{reason}", "special", "{size} bytes") == "101 bytes"
    os.symlink(tmp_path / "big", tmp_path / "link")
    assert _refused(tmp_path / "link", 1000, follow=False).kind == "unreadable"
    with open_regular(tmp_path / "link", 1000) as handle:  # followed unless told not to
        assert len(os.read(handle, 1000)) == 101
    missing = _refused(tmp_path / "missing")
    assert missing.kind == "unreadable" and "No such file" in missing.words("{reason}", "", "")
