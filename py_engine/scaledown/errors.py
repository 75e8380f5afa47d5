"""Errors raised for input the scale-down model cannot interpret.

Every exception the package raises for bad input derives from `ScaledownInputError`
(itself a `ValueError`), so a caller such as `spreadgate rank` can turn all of them
into one clear message and exit status without knowing which module complained.
"""

from __future__ import annotations


class ScaledownInputError(ValueError):
    """Base class: an object, option or number the model cannot use."""


class PodFormatError(ScaledownInputError):
    """A pod (or pod list) that is not shaped like Kubernetes pod JSON."""


class NodeFormatError(ScaledownInputError):
    """A node (or node list) that is not shaped like Kubernetes node JSON."""


class FeatureGateError(ScaledownInputError):
    """An unknown feature gate name or a value that is not a boolean."""
