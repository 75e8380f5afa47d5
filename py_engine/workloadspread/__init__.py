"""WorkloadSpread: ordered subsets beside a user's own workload.

`admission` decides where each new pod goes (pure; its I/O edge is `admission.runtime`);
`controller` keeps status and deletion costs right (pure; its I/O edge is `controller.runtime`).
Sibling of `py_engine.uniteddeployment`; neither imports the other (`.importlinter`).
"""
