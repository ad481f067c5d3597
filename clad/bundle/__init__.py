"""Results that travel: bundles of finished runs (:mod:`clad.bundle.format`), where a bundle comes
from (:mod:`clad.bundle.sources`), importing its runs after recomputing each one's result key here
(:mod:`clad.bundle.pull`) and checking it by recomputing a sample (:mod:`clad.bundle.verify`).
The contract is docs/guides/bundles.md."""
