"""index.stamp: what a cached verdict on a run folder depends on."""

from vitcore.store import index
from vitcore.store.validate import TEMP_PREFIX


def test_a_write_in_progress_does_not_change_the_stamp(tmp_path, monkeypatch):
    monkeypatch.setattr(index, "RACY_NS", 0)  # the files were just written: no racy-tick guard here
    (tmp_path / "summary.json").write_text("{}")
    (tmp_path / "history.csv").write_text("epoch\n")
    before = index.stamp(tmp_path)
    (tmp_path / f"{TEMP_PREFIX}predictions.npy").write_bytes(b"half a write")  # what save_predictions leaves
    assert index.stamp(tmp_path) == before is not None
    (tmp_path / "predictions.npy").write_bytes(b"a real file")
    assert index.stamp(tmp_path) != before
