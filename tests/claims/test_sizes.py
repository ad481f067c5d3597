"""Rooms stay small: no module of ``clad/`` over 600 lines and no function over 80 lines of code.

A module's size is its number of lines as ``ruff format`` leaves it (``tests/claims/test_style.py``
checks the formatting). A function's (or method's) lines of code are the lines from its ``def``
to its last line, less its docstring, blank lines and lines holding only a comment; a nested
function counts inside the function around it and on its own too. Each test fails listing
every offender with its size.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clad"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _docstring_lines(node: ast.AST) -> set[int]:
    body = getattr(node, "body", [])
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return set(range(first.lineno, first.end_lineno + 1))
    return set()


def lines_of_code(node: ast.AST, lines: list[str]) -> int:
    """The lines of code of a function: ``def`` to end, less docstring, blank and comment lines."""
    numbers = set(range(node.lineno, node.end_lineno + 1)) - _docstring_lines(node)
    return sum(
        1 for i in numbers if lines[i - 1].strip() and not lines[i - 1].strip().startswith("#")
    )


def long_functions() -> list[str]:
    """Every function or method of ``clad/`` over the limit, as ``path:line name (n lines)``."""
    found = []
    for path in _modules():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = lines_of_code(node, lines)
                if n > MAX_FUNCTION_LINES:
                    where = path.relative_to(ROOT).as_posix()
                    found.append(f"{where}:{node.lineno} {node.name} ({n} lines of code)")
    return sorted(found)


def large_modules() -> list[str]:
    """Every module of ``clad/`` over the limit, as ``path (n lines)``."""
    found = []
    for path in _modules():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE_LINES:
            found.append(f"{path.relative_to(ROOT).as_posix()} ({n} lines)")
    return found


def test_no_module_over_600_lines():
    offenders = large_modules()
    assert not offenders, f"{len(offenders)} modules over {MAX_MODULE_LINES} lines:\n" + "\n".join(
        offenders
    )


def test_no_function_over_80_lines_of_code():
    offenders = long_functions()
    assert not offenders, (
        f"{len(offenders)} functions over {MAX_FUNCTION_LINES} lines of code:\n"
        + "\n".join(offenders)
    )


def test_lines_of_code_leave_out_docstring_blank_and_comment_lines():
    source = (
        'def f(x):\n    """Doc\n    more."""\n\n    # a comment\n    y = x  # kept\n    return y\n'
    )
    assert lines_of_code(ast.parse(source).body[0], source.splitlines()) == 3
