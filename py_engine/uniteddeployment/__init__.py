"""UnitedDeployment: one object, one template, a workload per subset.

`controller` plans the subsets' workloads from a snapshot (pure, `plan(state, now)`); its I/O
edge is `controller.runtime`. Sibling of `py_engine.workloadspread`; neither imports the other
(`.importlinter`).
"""
