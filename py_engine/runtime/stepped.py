"""The stepped Manager: the same controllers as the `Manager`, run in steps on listed sources.

The virtual-time stack (`py_engine.assembled_stack`, `Stack(virtual=True)`: `spreadgate
simulate`, the demo, the deterministic tests) must decide when each controller runs, so
that a run is reproducible: no worker threads, no watch lag, time moved only by the
caller. It builds a `SteppedManager` and adds the controllers through the same entry
points as a `Manager` (`add_spread_controller`, `add_united_controller`), which then
build a listed source (`listing.ListedLists`: every read of a sync comes from lists taken
at its last `refresh()`) instead of watch caches, and no triggers.

* `step()` runs one pass of every controller (`step_controller()` one, returning its
  reports: `spreadgate controller --once`), in the order they were added: the
  controller's source is refreshed, then every key is enqueued and every ready key synced
  (`Reconciler.step`); the next controller's refresh sees what the previous one wrote.
  It returns the API writes of the pass (what `Stack.settle` runs passes until it is 0);
* `next_deadline()` is the earliest requeue (clock `monotonic`) over every controller,
  None when nothing is pending: where a virtual clock moves next;
* there is no leader election: a stepped Manager runs its controllers unelected, so
  `is_leading()` (and each controller's leader gauge) is True from `start()` to `stop()`;
* `stop()` stops every controller (no threads to join: it releases what a loop holds,
  such as the UnitedDeployment node-fit engine) and closes the client when the Manager
  owns it; it is idempotent, and a step after it is an error.
"""

from __future__ import annotations

from typing import Any, Protocol, Self, Unpack

from py_engine.apiclient import KubeClient
from py_engine.runtime.listing import ListedLists
from py_engine.runtime.manager import BaseManager, Managed, ManagerOptions


class WriteCount(Protocol):
    """The writes one sync made, as far as the stepped Manager counts them."""

    @property
    def total(self) -> int: ...


class WritingReport(Protocol):
    """A sync report that says how many API writes the sync made (both controllers' do)."""

    @property
    def writes(self) -> WriteCount: ...


def writes_of(report: WritingReport) -> int:
    return report.writes.total


class SteppedManager(BaseManager):
    """See the module docstring."""

    source_type = ListedLists

    def __init__(self, client: KubeClient, **options: Unpack[ManagerOptions]) -> None:
        super().__init__(client, **options)
        self._running = False
        self._stopped = False

    def is_leading(self) -> bool:
        """True from `start()` to `stop()`: a stepped Manager runs unelected."""
        return self._running

    def start(self) -> Self:
        """Allow steps (nothing runs until the caller steps)."""
        with self._lock:
            if self._stopped:
                raise RuntimeError("a stopped SteppedManager cannot start again")
            self._running = True
        return self

    def step(self) -> int:
        """One pass of every controller, each on freshly listed objects; the API writes made.
        Raises `KubeError` when a list fails, RuntimeError outside `start()`..`stop()`."""
        return sum(writes_of(report) for c in self.controllers for report in self.step_controller(c))

    def step_controller(self, controller: Managed) -> list[Any]:
        """One pass of `controller` (one this Manager runs) on freshly listed objects: its sync
        reports (`spreadgate controller --once` prints them). Raises as `step()`."""
        if not self._running:
            raise RuntimeError("SteppedManager.step() needs start() and no stop()")
        source = controller.source
        assert isinstance(source, ListedLists)  # add() admits nothing else
        source.refresh()
        return list(controller.loop.step())

    def next_deadline(self) -> float | None:
        """The earliest requeue over every controller (clock `monotonic`), None when none is pending."""
        deadlines = [due for c in self.controllers if (due := c.loop.next_deadline()) is not None]
        return min(deadlines) if deadlines else None

    def stop(self) -> None:
        """Stop every controller and close the client when owned. Idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self._running = False
        for controller in self.controllers:
            controller.loop.stop()
        self._close_client()
