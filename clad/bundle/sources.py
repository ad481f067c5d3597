"""Where a bundle comes from: ``clad pull SOURCE`` and ``clad run --from SOURCE``.

A path to a bundle folder or tar; a ``file://`` or ``https://`` (``http://``) URL to a tar, pinned
by the tar's sha256 (``URL#sha256=HEX`` or ``--sha256 HEX``; downloaded by pooch); or
``git+URL@COMMIT[#path=SUBFOLDER]`` (docs/guides/bundles.md). :func:`opened` gives a local path for
the time of a ``with`` block (downloads and clones go to a temporary folder removed afterwards).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator
from urllib.parse import unquote, urlparse

from ..datasets.files import sha256_of
from .format import BundleError

__all__ = ["opened", "parse_pin"]

_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_HEX40 = re.compile(r"^[0-9a-fA-F]{40}$")


def parse_pin(source: str, sha256: str | None = None) -> tuple[str, str | None]:
    """``(source without its #sha256= fragment, the pinned sha256 or None)``.

    >>> parse_pin("https://example.org/b.tar#sha256=" + "a" * 64)[1] == "a" * 64
    True
    """
    base, _, fragment = source.partition("#sha256=")
    pin = fragment or sha256
    if fragment and sha256 and fragment.lower() != sha256.lower():
        raise BundleError(
            f"{source!r} is pinned to sha256 {fragment} and --sha256 says {sha256}; give one"
        )
    if pin is not None and not _HEX64.match(pin):
        raise BundleError(f"sha256 {pin!r}; expected 64 hexadecimal digits")
    return (base if fragment else source), (pin.lower() if pin else None)


def _pinned_file(path: Path, pin: str, source: str) -> Path:
    if not path.is_file():
        raise BundleError(f"{source!r}: no file at {str(path)!r}")
    got = sha256_of(path)
    if got != pin:
        raise BundleError(f"{source!r} has sha256 {got}; expected {pin} (pinned)")
    return path


def _download(url: str, pin: str, where: Path) -> Path:
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel("WARNING")  # not its "Downloading data from ..." line on every pull
    try:
        return Path(
            pooch.retrieve(
                url, known_hash=f"sha256:{pin}", fname="bundle.tar", path=where, progressbar=False
            )
        )
    except ValueError as exc:  # pooch: the hash does not match
        raise BundleError(f"{url!r}: {exc}".replace("\n", " ") + " (pinned)") from None
    except Exception as exc:  # noqa: BLE001 - requests' and pooch's errors: unreachable, 404...
        raise BundleError(
            f"{url!r} could not be downloaded ({type(exc).__name__}: {exc})"
        ) from None
    finally:
        logger.setLevel(level)


def _git(source: str, where: Path) -> Path:
    spec, _, sub = source[len("git+") :].partition("#path=")
    url, sep, commit = spec.rpartition("@")
    if not sep or not _HEX40.match(commit):
        raise BundleError(
            f"git source {source!r}; expected git+URL@COMMIT with COMMIT a full 40-digit commit id "
            "(optionally #path=FOLDER)"
        )
    repo = where / "repo"
    for args in (
        ["clone", "--quiet", "--no-checkout", url, str(repo)],
        ["-C", str(repo), "-c", "advice.detachedHead=false", "checkout", "--quiet", commit],
    ):
        proc = subprocess.run(["git", *args], capture_output=True, text=True)
        if proc.returncode:
            raise BundleError(
                f"git source {source!r}: git {args[0] if args[0] != '-C' else args[4]} failed: "
                f"{proc.stderr.strip() or proc.stdout.strip()}"
            )
    inside = (repo / sub).resolve() if sub else repo
    if repo.resolve() not in (inside, *inside.parents):
        raise BundleError(f"git source {source!r}: path {sub!r} leads out of the repository")
    return inside


@contextlib.contextmanager
def opened(source: str, sha256: str | None = None) -> Iterator[tuple[Path, str | None]]:
    """``(a local path to the bundle, the sha256 pinning its bundle)`` for ``source``: a URL's pin
    is checked here (it pins the file downloaded) and ``None`` is returned for it; a path keeps its
    pin, which :func:`clad.bundle.format.read_bundle` checks against the bundle's sha256."""
    source, pin = parse_pin(str(source), sha256)
    with tempfile.TemporaryDirectory(prefix="clad-bundle-") as tmp:
        where = Path(tmp)
        if source.startswith("git+"):
            yield _git(source, where), pin
            return
        scheme = urlparse(source).scheme
        if scheme in ("http", "https", "file"):
            if pin is None:
                raise BundleError(
                    f"{source!r}: a URL must be pinned by sha256 (URL#sha256=HEX or --sha256 HEX)"
                )
            if scheme == "file":
                yield _pinned_file(Path(unquote(urlparse(source).path)), pin, source), None
            else:
                yield _download(source, pin, where), None
            return
        if scheme and len(scheme) > 1:
            raise BundleError(
                f"bundle source {source!r}: scheme {scheme!r}; expected a path, file://, https://, "
                "http:// or git+URL@COMMIT"
            )
        path = Path(source)
        if pin and path.is_file() and sha256_of(path) == pin:  # a tar pinned by its own sha256
            pin = None
        yield path, pin
