"""Placement: which subsets of nodes a pod can run on, owned by neither product.

`inventory` (compact node facts: labels, taints, cordoning, free resources after the
bound pods), `classes` (an inventory reduced to what the subset policy can tell apart),
`eligibility` (the subset policy `policies/subset/eligibility.rego`, its input, its
decision cache) and `fit` (the query over "a pod template and subsets of nodes": which
subsets have a node the pod fits). WorkloadSpread admission
(`py_engine.workloadspread.admission`) and the UnitedDeployment controller
(`py_engine.uniteddeployment.controller.runtime.nodefit`) use it; it imports neither, and
no API client (`.importlinter`, contracts runtime-is-neutral and placement-is-pure).
"""
