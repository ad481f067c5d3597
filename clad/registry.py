"""Name registries for the things a spec file can name.

Detectors, strategies, scenarios and datasets are registered under short names. A spec entry is
either such a name or an import path ``package.module:Class``. Lookups of unknown names raise a
:class:`~clad.errors.CladValueError` with a did-you-mean; unknown keyword parameters likewise.

Entries are stored as import paths (strings) so that registering a name never imports a heavy
library: ``torch`` or ``pyod`` are imported only when a run uses them.

>>> r = Registry("colour")
>>> r.add("red", "builtins:str")
>>> r.resolve("red")
<class 'str'>
>>> r.resolve("rde")
Traceback (most recent call last):
...
clad.errors.CladValueError: unknown colour 'rde' (did you mean 'red'?); known: red, or an import path 'package.module:Class'
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import sys
from typing import Any, Callable, Iterable

from .errors import CladTypeError, CladValueError

__all__ = ["Registry", "import_object", "did_you_mean", "check_params", "kind_problem"]


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest choice, or an empty string."""
    close = difflib.get_close_matches(str(name), list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def import_object(path: str, what: str = "object") -> Any:
    """Import ``package.module:Name`` (or ``package.module.Name``) and return the object."""
    if not isinstance(path, str) or not path:
        raise CladTypeError(f"{what} import path must be a non-empty string, got {path!r}")
    if ":" in path:
        module_name, _, attr = path.partition(":")
    else:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise CladValueError(
            f"{what} {path!r} is not an import path; expected 'package.module:Name'"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CladValueError(
            f"{what} {path!r}: module {module_name!r} could not be imported ({exc})"
        ) from None
    except SyntaxError as exc:
        raise CladValueError(
            f"{what} {path!r}: module {module_name!r} has a syntax error ({exc.filename}, line "
            f"{exc.lineno}: {exc.msg})"
        ) from None
    # a module ending the process as it is imported: clad says so and goes on
    except SystemExit as exc:
        raise CladValueError(
            f"{what} {path!r}: importing module {module_name!r} called sys.exit({exc.code!r}); "
            "a plug-in module must not end the process when it is imported"
        ) from None
    except Exception as exc:  # noqa: BLE001 - any error the module raises as it is imported
        raise CladValueError(
            f"{what} {path!r}: importing module {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            names = [n for n in dir(module) if not n.startswith("_")]
            raise CladValueError(
                f"{what} {path!r}: module {module_name!r} has no attribute {attr!r}{did_you_mean(attr, names)}"
            ) from None
    return obj


def check_params(factory: Callable, params: dict, what: str) -> None:
    """Raise if ``params`` has keywords that ``factory`` does not accept (with a did-you-mean)."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return
    accepted = []
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            return
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            accepted.append(p.name)
    for key in params:
        if key not in accepted:
            allowed = ", ".join(accepted) if accepted else "none"
            raise CladValueError(
                f"{what}: unknown parameter {key!r}{did_you_mean(key, accepted)}; allowed: {allowed}"
            )


def _describe(obj: Any) -> str:
    what = (
        "class"
        if inspect.isclass(obj)
        else ("built-in function" if inspect.isbuiltin(obj) else type(obj).__name__)
    )
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)[:60]
    return f"the {what} {getattr(obj, '__module__', None) or '?'}.{name}"


def kind_problem(
    obj: Any,
    kind: str,
    methods: tuple = (),
    any_of: tuple = (),
    functions: bool = False,
    or_methods: tuple = (),
    not_bases: tuple = (),
) -> str | None:
    """Why ``obj`` is not a ``kind`` (None when it is one): a class with ``methods`` (and one of
    ``any_of``) or with all of ``or_methods``; with ``functions`` also a Python function, and
    clad's own factory functions always; never an object of the standard library (``os:system``,
    ``threading:Thread``) or a built-in, nor a class with a base named in ``not_bases`` (a
    scikit-learn classifier is no detector, though it has ``fit`` and ``score``). Nothing is called
    to decide it."""
    wanted = (
        "a class"
        + (" or a Python function" if functions else "")
        + (f" with {', '.join(m + '()' for m in methods)}" if methods else "")
        + (f" and one of {', '.join(m + '()' for m in any_of)}" if any_of else "")
    )
    module = (getattr(obj, "__module__", None) or "").split(".")[0]
    if module == "builtins" or module in sys.stdlib_module_names or inspect.isbuiltin(obj):
        return f"expected {wanted}; got {_describe(obj)} from the standard library"
    if inspect.isclass(obj):
        wrong = [b.__name__ for b in obj.__mro__[1:] if b.__name__ in not_bases]
        if wrong:
            return (
                f"expected {wanted}; got {_describe(obj)}, a {wrong[0].removesuffix('Mixin').lower()} "
                f"({wrong[0]}), which predicts a target it is given instead of scoring how anomalous a row is"
            )
        if or_methods and all(callable(getattr(obj, m, None)) for m in or_methods):
            return None
        missing = [m for m in methods if not callable(getattr(obj, m, None))]
        if any_of and not any(callable(getattr(obj, m, None)) for m in any_of):
            missing.append(" or ".join(any_of))
        if missing:
            return f"expected {wanted}; got {_describe(obj)}, which has no {', '.join(m + '()' for m in missing)}"
        return None
    # clad's own module-level factories (e.g. clad.detectors.incremental:half_space_trees), never a method
    if inspect.isfunction(obj) and (
        functions or (module == "clad" and "." not in obj.__qualname__)
    ):
        return None
    return f"expected {wanted}; got {_describe(obj)}"


class Registry:
    """Short name -> import path of a class or factory, for one kind of thing.

    ``rule`` (the keywords of :func:`kind_problem`: ``methods``, ``any_of``, ``functions``,
    ``or_methods``, ``not_bases``) says what an object of this kind is; an import path naming
    anything else is refused before it is called.
    """

    def __init__(self, kind: str, **rule):
        self.kind = kind
        inspect.signature(kind_problem).bind(None, kind, **rule)  # a misspelt keyword fails here
        wanted = rule.get("methods") or rule.get("any_of") or rule.get("functions")
        self._kind_rule = rule if wanted else None
        self._entries: dict[str, str] = {}
        self._docs: dict[str, str] = {}
        self._defaults: dict[str, dict] = {}

    def add(
        self, name: str, target: str | Callable, doc: str = "", defaults: dict | None = None
    ) -> None:
        """Register ``name`` for ``target`` (an import path, or the object itself).

        ``defaults`` are keyword parameters used when the name is built without them
        (e.g. ``novelty=True`` for scikit-learn's LocalOutlierFactor).
        """
        path = target if isinstance(target, str) else f"{target.__module__}:{target.__qualname__}"
        if name in self._entries and self._entries[name] != path:
            raise CladValueError(
                f"{self.kind} {name!r} is already registered (as {self._entries[name]!r}); "
                f"registering {path!r} under the same name would silently replace it: choose "
                f"another name (or call remove({name!r}) first)"
            )
        self._entries[name] = path
        self._docs[name] = doc
        self._defaults[name] = dict(defaults or {})

    def register(self, name: str, doc: str = "") -> Callable:
        """Class decorator form of :meth:`add`."""

        def deco(obj):
            self.add(name, obj, doc or (inspect.getdoc(obj) or "").split("\n")[0])
            return obj

        return deco

    def remove(self, name: str) -> None:
        """Forget ``name`` (e.g. a plug-in's registration that a test added); an unknown name is ignored."""
        for table in (self._entries, self._docs, self._defaults):
            table.pop(name, None)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def path(self, name: str) -> str:
        return self._entries[name]

    def doc(self, name: str) -> str:
        return self._docs.get(name, "")

    def defaults(self, name: str) -> dict:
        return dict(self._defaults.get(name, {}))

    def build(self, name: str, params: dict | None = None) -> Any:
        """Resolve ``name`` and call it with the registered defaults updated by ``params``.

        Unknown parameters are refused with a did-you-mean before anything is called.
        """
        factory = self.resolve(name)
        params = {**self.defaults(name), **(params or {})}
        check_params(factory, params, f"{self.kind} {name!r}")
        try:
            return factory(**params)
        except (TypeError, ValueError) as exc:
            raise CladValueError(f"{self.kind} {name!r} with parameters {params!r}: {exc}") from exc

    def resolve(self, name: str) -> Any:
        """The object registered as ``name``, or imported from ``name`` if it is an import path."""
        if not isinstance(name, str):
            raise CladTypeError(
                f"{self.kind} name must be a string, got {type(name).__name__} {name!r}"
            )
        registered = name in self._entries
        if registered:
            obj = import_object(self._entries[name], f"{self.kind} {name!r}")
        elif ":" in name:
            obj = import_object(name, self.kind)
        else:
            obj = None
        if obj is not None:
            # clad's own registered names may be factories; an import path from a spec must name an
            # object of this kind before anything is called
            if self._kind_rule is not None and not registered:
                problem = kind_problem(obj, self.kind, **self._kind_rule)
                if problem:
                    raise CladTypeError(
                        f"{self.kind} {name!r} is not a {self.kind}: {problem}; nothing was called"
                    )
            return obj
        known = ", ".join(self.names())
        raise CladValueError(
            f"unknown {self.kind} {name!r}{did_you_mean(name, self._entries)}; "
            f"known: {known}, or an import path 'package.module:Class'"
        )
