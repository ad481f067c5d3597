"""Faults of a results folder under `clad run` are said as what they are: a damaged results.sqlite
is "damaged" (running again cannot resume from it), never "writing failed, run again"."""

from __future__ import annotations

import pytest

from runner_helpers import run_main, synthetic, write_spec


def _damage(db, where: bytes) -> None:
    """Overwrite 64 bytes of ``db`` from the last place ``where`` occurs (a value clad reads back)."""
    data = bytearray(db.read_bytes())
    at = data.rfind(where)
    assert at > 0
    data[at:at + 64] = b"\xff" * 64
    db.write_bytes(bytes(data))


@pytest.mark.parametrize("where", [b"SQLite format 3\x00", b"memory_rows", b'"fit"'])
def test_a_damaged_database_is_said_damaged_by_clad_run(tmp_path, capsys, caplog, where):
    spec = write_spec(tmp_path, datasets=[synthetic(n_train=30, n_test=20)], seeds=1)
    out = tmp_path / "o"
    rc, _, err = run_main(capsys, caplog, "run", spec, "--out", out)
    assert rc == 0
    db = out / "results.sqlite"
    if where.startswith(b"SQLite"):
        data = bytearray(db.read_bytes())  # a page in the middle of the file: its b-tree header
        data[4096:4096 + 64] = b"\xff" * 64
        db.write_bytes(bytes(data))
    else:
        _damage(db, where)
    before = db.read_bytes()
    (out / "results.json").unlink()
    rc, _, err = run_main(capsys, caplog, "run", spec, "--out", out)
    assert rc == 2, err
    assert f"{str(db)!r} is damaged" in err and "running again cannot resume from it" in err
    assert "run the same command again to resume" not in err
    assert db.read_bytes() == before  # nothing more written into it
