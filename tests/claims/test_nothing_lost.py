"""Nothing lost: clad never writes through a symbolic link at its lock's path, and never changes a
SQLite database it did not create (a table named ``runs`` of someone else's included)."""

import hashlib
import os
import sqlite3

import pytest

from clad.engine.benchmark import run_spec
from clad.engine.folder import FolderInUse, FolderLock
from clad.errors import DataError
from clad.results.store import ResultStore

from tests.runner_helpers import run_main, small_spec, write_spec


def _digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.mark.parametrize("fresh", [False, True])
def test_a_lock_that_is_a_symbolic_link_is_refused_and_nothing_is_written_through_it(
    tmp_path, fresh
):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    out = tmp_path / "o"
    out.mkdir()
    (out / ".clad.lock").symlink_to(notes)
    with pytest.raises(FolderInUse, match="symbolic link"):
        run_spec(small_spec(), out, fresh=fresh)
    assert notes.read_text() == "my notes\n"
    assert os.path.islink(out / ".clad.lock") and not (out / "results.sqlite").exists()


def test_a_dangling_link_at_the_lock_creates_nothing_where_it_points(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / ".clad.lock").symlink_to(tmp_path / "elsewhere.txt")
    with pytest.raises(FolderInUse, match="symbolic link"):
        FolderLock(out, "a").acquire()
    assert not (tmp_path / "elsewhere.txt").exists()


def test_a_lock_path_that_is_a_folder_is_a_clear_error(tmp_path, capsys, caplog):
    out = tmp_path / "o"
    (out / ".clad.lock").mkdir(parents=True)
    rc, _, err = run_main(capsys, caplog, "run", write_spec(tmp_path, **small_spec()), "--out", out)
    assert rc == 2 and "is a folder" in err and "Traceback" not in err


def _foreign(path, tables):
    con = sqlite3.connect(path)
    for sql in tables:
        con.execute(sql)
    con.execute("INSERT INTO runs VALUES ('mine', 1)") if any("runs" in t for t in tables) else None
    con.commit()
    con.close()


@pytest.mark.parametrize(
    "tables",
    [
        ["CREATE TABLE runs (name TEXT, laps INTEGER)"],
        [
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
            "CREATE TABLE runs (name TEXT, laps INTEGER)",
        ],
    ],
)
def test_a_foreign_database_with_a_runs_table_is_refused_and_left_byte_for_byte(tmp_path, tables):
    out = tmp_path / "o"
    out.mkdir()
    db = out / "results.sqlite"
    _foreign(db, tables)
    before = _digest(db)
    with pytest.raises(DataError, match="did not create"):
        ResultStore(db)
    with pytest.raises(DataError, match="did not create"):
        run_spec(small_spec(), out)
    assert _digest(db) == before
    assert sorted(os.listdir(out)) == ["results.sqlite"]


def test_a_database_clad_is_creating_is_still_accepted(tmp_path):
    """The other side: the first tables of clad's schema, no row yet, are a database another clad
    process is creating at this moment."""
    from clad.results.store import SCHEMA

    db = tmp_path / "results.sqlite"
    con = sqlite3.connect(db)
    first_two = SCHEMA.split(");")[:2]
    con.executescript(");".join(first_two) + ");")
    con.close()
    with ResultStore(db) as store:
        assert store.count() == 0
