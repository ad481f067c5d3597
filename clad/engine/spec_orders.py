"""Concept orders of a spec: the ``orders`` key (and ``order_seed``), one dataset component per
order.

A list names orders (``orders = ["given", "random"]``; ``"random"`` is then drawn from each run's
seed); a table maps ``random`` to a count of permutations fixed by ``order_seed`` (``orders = {
random = 3 }``), so that every seed runs every order (docs/guides/orders.md).

>>> problems = []
>>> order_values({"orders": {"random": 2}}, problems)[0][1], problems
('random#1', [])
"""

from __future__ import annotations

import inspect

import numpy as np

from ..errors import CladError
from ..registry import did_you_mean
from ..validation import constraints_of
from ..validation import problems as validation_problems
from .config import Component
from .sections import MAX_RUNS

__all__ = ["apply_orders", "order_values"]


def order_values(
    raw: dict, problems: list[str], max_runs: int = MAX_RUNS
) -> list[tuple[str, str]] | None:
    """``(order value, label)`` per concept order of ``raw["orders"]``, or None after a problem.

    A list names orders (``"random"`` is then drawn from each run's seed). A table maps an order
    name to a count: ``{ random = 3 }`` gives three permutations fixed by ``order_seed``
    (``"random:<seed>"``, labelled ``random#1`` ...), independent of the run seed, so that every
    seed runs every order; any other name takes the count 1.
    """
    orders = raw["orders"]
    if isinstance(orders, str):
        orders = [orders]
    if isinstance(orders, dict):
        order_seed = raw.get("order_seed", 0)
        if isinstance(order_seed, bool) or not isinstance(order_seed, int) or order_seed < 0:
            problems.append(f"order_seed: {order_seed!r}; expected an integer >= 0")
            return None
        out = []
        for name, count in orders.items():
            if (
                isinstance(count, bool)
                or not isinstance(count, int)
                or count < 1
                or (name != "random" and count != 1)
            ):
                problems.append(
                    f'orders.{name}: {count!r}; expected a count >= 1 (more than 1 only for "random")'
                )
                return None
            if name != "random":
                out.append((name, name))
                continue
            if count > max_runs:  # refused before any of them is drawn: each is at least one run
                problems.append(
                    f"orders.random: {count:,} orders, each at least one run: more than max_runs = "
                    f"{max_runs:,}; to run them, set max_runs = {count} at the top of the spec"
                )
                return None
            seeds = [
                int(c.generate_state(1)[0]) for c in np.random.SeedSequence(order_seed).spawn(count)
            ]
            out += [(f"random:{sd}", f"random#{i + 1}") for i, sd in enumerate(seeds)]
        if not out:
            problems.append("orders: an empty table; expected e.g. { random = 3 }")
            return None
        return out
    if "order_seed" in raw:
        problems.append(
            "order_seed: only used with a table of orders, e.g. orders = { random = 3 }"
        )
    if (
        not isinstance(orders, list)
        or not orders
        or not all(isinstance(o, str) and o for o in orders)
        or len(set(orders)) != len(orders)
    ):
        problems.append(
            f'orders: {raw["orders"]!r}; expected a list of distinct names, e.g. ["given", "random"], '
            "or a table of counts, e.g. { random = 3 }"
        )
        return None
    return [(o, o) for o in orders]


def apply_orders(
    raw: dict, datasets: list[Component], problems: list[str], max_runs: int = MAX_RUNS
) -> list[Component]:
    """One dataset component per concept order (``order=<value>`` for loaders that take it).

    The label of a dataset names the order only when the spec has several order *names*: the fixed
    permutations of ``{ random = 3 }`` share the label ``<dataset>[order=random]`` (they are one
    configuration, run over orders and seeds; each run records its order)."""
    if "orders" not in raw:
        return datasets
    values = order_values(raw, problems, max_runs)
    if values is None:
        return datasets
    names = list(dict.fromkeys(v.split(":")[0] for v, _ in values))

    from ..datasets import DATASETS

    from ..datasets.build import ORDERS, fixed_order_seed

    out: list[Component] = []
    reported: set[str] = set()
    for c in datasets:
        try:
            loader = DATASETS.resolve(c.name)
            sig = inspect.signature(loader).parameters
            takes_order = "order" in sig or any(p.kind is p.VAR_KEYWORD for p in sig.values())
        except (CladError, TypeError, ValueError):
            loader, takes_order = None, False
        if takes_order and (getattr(loader, "__module__", "") or "").split(".")[0] == "clad":
            # clad's loaders know the orders of clad.datasets.build; a plug-in loader may know others
            unknown = [o for o, _ in values if o not in ORDERS and fixed_order_seed(o) is None]
            for o in unknown:
                if (c.name, o) not in reported:
                    reported.add((c.name, o))
                    problems.append(
                        f"orders: {o!r} is not a concept order of dataset {c.display!r}"
                        f"{did_you_mean(o, ORDERS)}; allowed: {', '.join(map(repr, ORDERS))} or "
                        "'random:<seed>'"
                    )
            if unknown:
                continue
        if "order" in c.params:
            if c.name not in reported:
                reported.add(c.name)
                problems.append(
                    f"datasets ({c.display}).order: set the concept order either here or in the "
                    "top-level 'orders' list, not both"
                )
            continue
        for o, _ in values:
            # the loader's own declaration of `order`, at spec time
            if takes_order and loader is not None:
                found = validation_problems(
                    f"datasets ({c.display})", {"order": o}, constraints_of(loader)
                )
                if found:
                    if (c.name, o) not in reported:
                        reported.add((c.name, o))
                        problems.extend(found)
                    continue
            if not takes_order:
                if o != "given":
                    if c.name not in reported:
                        reported.add(c.name)
                        problems.append(
                            f"orders: dataset {c.display!r} cannot be given order {o!r}: its loader "
                            f"{c.name!r} has no 'order' parameter (only \"given\" is possible)"
                        )
                    continue
                out.append(c)
                continue
            label = c.display if names == ["given"] else f"{c.display}[order={o.split(':')[0]}]"
            out.append(Component(c.name, {**c.params, "order": o}, label))
    return out
