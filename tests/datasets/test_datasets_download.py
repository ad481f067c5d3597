"""Downloads (pooch) from a local HTTP server, checksums, and the default cache folder (platformdirs)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import sys
import threading

import pytest

from clad.datasets import default_cache_dir, download, files, sha256_of
from clad.errors import DataError


@pytest.fixture()
def server(tmp_path):
    """A local HTTP server giving the files of ``tmp_path / "site"``; yields its base address."""
    site = tmp_path / "site"
    site.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield site, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _card(monkeypatch, sha, url):
    monkeypatch.setattr(files, "_card_entry", lambda relpath: (sha, url, None))


def test_download_checks_the_sha256_and_puts_the_file_in_place(server, tmp_path, monkeypatch):
    site, base = server
    data = b"clad test file\n" * 100
    (site / "a.bin").write_bytes(data)
    sha = hashlib.sha256(data).hexdigest()
    _card(monkeypatch, sha, f"{base}/a.bin")
    path = download("cards/a.bin", tmp_path / "data")
    assert path == tmp_path / "data" / "cards" / "a.bin" and path.read_bytes() == data
    assert sha256_of(path) == sha


def test_a_corrupted_download_is_refused_and_not_kept(server, tmp_path, monkeypatch):
    site, base = server
    (site / "b.bin").write_bytes(b"not the published file")
    _card(monkeypatch, "0" * 64, f"{base}/b.bin")
    with pytest.raises(DataError, match="checksum mismatch") as info:
        download("cards/b.bin", tmp_path / "data")
    assert "0" * 64 in str(info.value) and f"{base}/b.bin" in str(info.value)
    assert not (tmp_path / "data" / "cards" / "b.bin").exists()


def test_an_unreachable_address_is_a_data_error(server, tmp_path, monkeypatch):
    _, base = server
    _card(monkeypatch, None, f"{base}/missing.bin")
    with pytest.raises(DataError, match="could not download .*missing.bin"):
        download("cards/missing.bin", tmp_path / "data")


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="XDG_CACHE_HOME is the Linux convention"
)
def test_default_cache_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "clad"
