"""A training step of clad's PyTorch detectors captured once as a CUDA graph and replayed.

A step of a small network (a few thousand parameters) on a GPU costs the launch of its kernels,
not their arithmetic: about 1.7 ms per step for the dense autoencoder at batch 64, whatever the
batch size. A CUDA graph launches the whole step — the gather of the mini-batch from the rows on
the device, forward, loss, backward, the Adam update and the running loss sum — as one unit.

The step sequence is the one of the eager loop, step for step: the first :data:`WARMUP_STEPS`
full mini-batches of a training call run eagerly on a side stream (as CUDA graph capture
requires), the next one is captured and replayed, and every later full mini-batch is a replay
after copying its row indices into the graph's index tensor. A last, shorter mini-batch runs
eagerly. Nothing reads the device: the loss sum stays on it.

Which training calls are graphed (:func:`use_graph`: a ``graph_safe`` network whose loss draws no
random numbers, rows on the device, no extra loss or gradient hook, at least
:data:`MIN_GRAPH_STEPS` full mini-batches) is told in ``docs/guides/strategies.md`` ("On a GPU");
every other training runs the eager loop. The optimiser is then Adam with ``capturable=True`` (its
step count on the device), which rounds like the eager one to float32 precision. CPU training
never comes here.
"""

from __future__ import annotations

import torch

__all__ = ["GraphedStep", "MIN_GRAPH_STEPS", "WARMUP_STEPS", "use_graph"]

#: Eager steps on a side stream before the capture (CUDA graphs need the allocator warmed up).
WARMUP_STEPS = 3
#: Fewest full mini-batches in one training call for the step to be graphed: below it, capturing
#: costs more than the replays save. Set to a very large number to switch graphs off.
MIN_GRAPH_STEPS = 100


def use_graph(module, device, where: str, extra_loss, grad_hook, full_steps: int) -> bool:
    """Whether a training call is graphed (see the module docstring)."""
    return (
        device.type == "cuda"
        and where == "device"
        and extra_loss is None
        and grad_hook is None
        and bool(getattr(module, "graph_safe", False))
        and full_steps >= MIN_GRAPH_STEPS
    )


class GraphedStep:
    """The training step of ``module`` on mini-batches of ``batch_size`` rows of ``rows`` (a
    tensor on a CUDA device), with optimiser ``opt`` (Adam, ``capturable=True``). Call
    :meth:`step` with each mini-batch's row indices (a device tensor); the running loss sum
    (weighted by rows, float64, on the device) is read and reset by :meth:`take_total`."""

    def __init__(self, module, opt, rows, batch_size: int):
        self.module, self.opt, self.rows = module, opt, rows
        self.batch_size = int(batch_size)
        self.index = torch.zeros(self.batch_size, dtype=torch.long, device=rows.device)
        self.total = torch.zeros((), dtype=torch.float64, device=rows.device)
        self.graph = None
        self.warm = 0
        self.replays = 0
        self.side = torch.cuda.Stream(device=rows.device)

    def _body(self) -> None:
        xb = self.rows.index_select(0, self.index)
        loss = self.module.loss(xb)
        loss.backward()
        self.opt.step()
        self.total.add_(loss.detach(), alpha=self.batch_size)

    def step(self, index) -> None:
        self.index.copy_(index)
        if self.graph is not None:
            self.graph.replay()
            self.replays += 1
            return
        current = torch.cuda.current_stream(self.rows.device)
        if self.warm < WARMUP_STEPS:
            self.side.wait_stream(current)
            with torch.cuda.stream(self.side):
                self.opt.zero_grad(set_to_none=True)
                self._body()
            current.wait_stream(self.side)
            self.warm += 1
            return
        self.opt.zero_grad(set_to_none=True)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):  # recorded, not run: the replay below is this step
            self._body()
        self.graph = graph
        graph.replay()
        self.replays += 1

    def take_total(self):
        """The loss sum of the steps taken since the last call (a device tensor), then zero."""
        total = self.total.clone()
        self.total.zero_()
        return total
