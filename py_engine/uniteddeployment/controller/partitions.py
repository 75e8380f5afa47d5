"""Manual update partitions: pods of a subset kept on the old revision.

`manualUpdate.partitions[name]`, 0 when absent, clamped to [0, next replicas]
(Kruise caps at the replicas but passes negative values through; and it ignores
partitions when the type is "" without its defaulting webhook; "" reads as Manual
here). docs/uniteddeployment.md, "Partitions".
"""

from __future__ import annotations

from collections.abc import Mapping

from py_engine.model.uniteddeployment import UnitedDeployment


def next_partitions(ud: UnitedDeployment, next_replicas: Mapping[str, int]) -> dict[str, int]:
    wanted = ud.update_strategy.partitions if ud.update_strategy.type == "Manual" else {}
    return {
        subset.name: max(0, min(wanted.get(subset.name, 0), next_replicas.get(subset.name, 0)))
        for subset in ud.subsets
    }
