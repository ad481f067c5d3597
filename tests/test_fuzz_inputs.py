"""Bad input, fuzzed: every malformed input ends in a clean clad error (never a deep IndexError,
KeyError or bare ValueError), and no half-written file is left behind."""

import collections
import warnings

import pytest

from clad.errors import CladError

from fuzzing import MAY_BE_VALID, cases


@pytest.mark.slow
def test_every_bad_input_ends_in_a_clean_clad_error(capsys):
    tally = collections.Counter()
    clean = collections.Counter()
    bad = []
    for kind, desc, thunk in cases(seed=0, per_kind=50):
        tally[kind] += 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                thunk()
        except CladError as exc:
            if not str(exc).strip():
                bad.append((kind, desc, "empty message"))
                continue
            clean[kind] += 1
            continue
        except Exception as exc:  # noqa: BLE001 - anything else is what this test hunts for
            bad.append((kind, desc, f"{type(exc).__name__}: {exc}"))
            continue
        if kind in MAY_BE_VALID:
            clean[kind] += 1  # still a valid input: accepted
        else:
            bad.append((kind, desc, "accepted without error"))
    total = sum(tally.values())
    with capsys.disabled():
        print(f"\nfuzz: {total} bad inputs over {len(tally)} kinds; {sum(clean.values())} ended cleanly")
    assert len(tally) >= 20
    assert total >= 1000
    assert not bad, "\n".join(f"{k} [{d}]: {m}" for k, d, m in bad[:30])
