"""What a fitted state holds: its learned state, for verification, and its size, for a cache's limit.

:func:`learned_state` describes an object attribute by attribute (arrays by their bytes, torch
tensors and modules by their values, RNG states), so that two fitted states can be compared where
they can be read; :func:`state_bytes` estimates the bytes an object holds (its arrays and tensors).

>>> import numpy as np
>>> class Fitted:
...     def __init__(self, w):
...         self.w_ = np.asarray(w, dtype=float)
>>> learned_state(Fitted([1, 2])) == learned_state(Fitted([1, 2])), learned_state(Fitted([1, 2])) == learned_state(Fitted([1, 3]))
(True, False)
>>> state_bytes(np.zeros(10))
80
"""

from __future__ import annotations

import hashlib
import types
from typing import Any

import numpy as np

__all__ = ["learned_state", "state_bytes", "first_difference", "KEY_ATTR"]

#: the attribute a fitted detector carries its step key in (left out of its learned state)
KEY_ATTR = "_clad_step_key"


def learned_state(obj: Any) -> dict[str, str]:
    """``{attribute path: digest}`` of what ``obj`` holds: arrays by bytes, torch tensors and
    modules by their values, RNG states, plain values by ``repr``; nested objects' attributes
    (``a.b.c``), at most 6 levels down. The step key attribute is left out."""
    out: dict[str, str] = {}
    _walk(obj, "", out, 0, set())
    return out


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _walk(v: Any, path: str, out: dict, depth: int, seen: set) -> None:
    if v is None or isinstance(v, (bool, int, float, str, bytes, np.generic)):
        out[path] = repr(v)
        return
    if isinstance(v, np.ndarray):
        data = repr(v.tolist()) if v.dtype.hasobject else _digest(np.ascontiguousarray(v).tobytes())
        out[path] = f"{v.dtype.str}{v.shape}:{data}"
        return
    if isinstance(v, np.random.Generator):
        out[path] = repr(v.bit_generator.state)
        return
    if isinstance(v, np.random.RandomState):
        state = v.get_state()
        out[path] = _digest(state[1].tobytes()) + repr(state[2:])
        return
    mod = type(v).__module__ or ""
    if mod.startswith("torch"):
        _walk_torch(v, path, out, depth, seen)
        return
    if depth >= 6 or id(v) in seen:
        out[path] = type(v).__name__
        return
    seen.add(id(v))
    if isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            _walk(x, f"{path}[{i}]", out, depth + 1, seen)
        out.setdefault(path, f"{type(v).__name__}({len(v)})")
        return
    if isinstance(v, dict):
        for k in sorted(v, key=repr):
            _walk(v[k], f"{path}[{k!r}]", out, depth + 1, seen)
        out.setdefault(path, f"dict({len(v)})")
        return
    if isinstance(v, (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        out[path] = getattr(v, "__qualname__", type(v).__name__)
        return
    attrs = getattr(v, "__dict__", None)
    if attrs is None:
        out[path] = type(v).__name__
        return
    out[path] = type(v).__qualname__
    for k in sorted(attrs):
        if k == KEY_ATTR:
            continue
        _walk(attrs[k], f"{path}.{k}" if path else k, out, depth + 1, seen)


def _walk_torch(v: Any, path: str, out: dict, depth: int, seen: set) -> None:
    import torch

    if isinstance(v, torch.Tensor):
        t = v.detach().cpu()
        out[path] = f"{t.dtype}{tuple(t.shape)}:" + _digest(
            t.contiguous().view(torch.uint8).numpy().tobytes() if t.numel() else b""
        )
    elif isinstance(v, torch.nn.Module):
        for k, t in v.state_dict().items():
            _walk_torch(t, f"{path}.{k}", out, depth + 1, seen)
        out.setdefault(path, type(v).__qualname__)
    elif isinstance(v, torch.Generator):
        out[path] = _digest(v.get_state().numpy().tobytes())
    elif isinstance(v, torch.optim.Optimizer):
        _walk(v.state_dict(), path, out, depth + 1, seen)
    else:
        out[path] = type(v).__qualname__


def first_difference(a: dict[str, str], b: dict[str, str]) -> str | None:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            return k or "(the object itself)"
    return None


def state_bytes(obj: Any, depth: int = 0, seen: set | None = None) -> int:
    """An estimate of the bytes ``obj`` holds: its arrays and tensors, plus a little per object."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 6:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    mod = type(obj).__module__ or ""
    if mod.startswith("torch"):
        try:
            import torch

            if isinstance(obj, torch.Tensor):
                return int(obj.element_size() * obj.numel())
            if isinstance(obj, torch.nn.Module):
                return sum(int(t.element_size() * t.numel()) for t in obj.state_dict().values())
        except Exception:  # noqa: BLE001 - only an estimate
            return 64
        return 64
    if isinstance(obj, (list, tuple)):
        return 64 + sum(state_bytes(v, depth + 1, seen) for v in obj)
    attrs = obj if isinstance(obj, dict) else getattr(obj, "__dict__", None)
    if isinstance(attrs, dict):
        return 64 + sum(state_bytes(v, depth + 1, seen) for v in attrs.values())
    return 32
