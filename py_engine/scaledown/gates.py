"""The two kube-controller-manager feature gates that change ReplicaSet scale-down.

* `PodDeletionCost` (beta and on by default since Kubernetes 1.22): when off, the
  deletion-cost rule is skipped entirely.
* `LogarithmicScaleDown` (beta and on since 1.22, GA and locked on in 1.31):
  when off, ready and creation times are compared exactly instead of by
  log2-age bucket with a UID tie-break.

Both default to on, as in every supported Kubernetes. The CloneSet controller has
no such gates (deletion cost always on, never bucketed), so they apply to the
ReplicaSet model only.
"""

from __future__ import annotations

from dataclasses import dataclass

from py_engine.scaledown.errors import FeatureGateError

POD_DELETION_COST = "PodDeletionCost"
LOGARITHMIC_SCALE_DOWN = "LogarithmicScaleDown"
KNOWN_GATES: tuple[str, ...] = (LOGARITHMIC_SCALE_DOWN, POD_DELETION_COST)

# strconv.ParseBool, which component-base uses for --feature-gates values.
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """Effective gate values for one ReplicaSet ranking."""

    pod_deletion_cost: bool = True
    logarithmic_scale_down: bool = True

    def as_dict(self) -> dict[str, bool]:
        """Gate name -> value, in the spelling kube-controller-manager uses."""
        return {
            LOGARITHMIC_SCALE_DOWN: self.logarithmic_scale_down,
            POD_DELETION_COST: self.pod_deletion_cost,
        }


DEFAULT_GATES = FeatureGates()


def parse_bool(text: str) -> bool:
    """Go's `strconv.ParseBool`: the spellings `--feature-gates` accepts."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise FeatureGateError(f"invalid value {text!r}: want true or false")


def gates_from_mapping(values: dict[str, bool], base: FeatureGates = DEFAULT_GATES) -> FeatureGates:
    """Apply name -> bool overrides (e.g. a test vector's `feature_gates`) to `base`."""
    merged = base.as_dict()
    for name, value in values.items():
        if name not in merged:
            raise FeatureGateError(f"unrecognized feature gate: {name!r} (known: {', '.join(KNOWN_GATES)})")
        if not isinstance(value, bool):
            raise FeatureGateError(f"feature gate {name} must be true or false, got {value!r}")
        merged[name] = value
    return FeatureGates(
        pod_deletion_cost=merged[POD_DELETION_COST],
        logarithmic_scale_down=merged[LOGARITHMIC_SCALE_DOWN],
    )


def parse_feature_gates(text: str, base: FeatureGates = DEFAULT_GATES) -> FeatureGates:
    """Parse `Name=bool,Name=bool` the way kube-controller-manager's `--feature-gates` does.

    Whitespace around names and values is ignored and an empty string changes
    nothing; an unknown name, a missing `=` or a non-boolean value is an error
    (never silently ignored: a misspelt gate would otherwise produce a ranking
    for a configuration the user did not ask for).
    """
    overrides: dict[str, bool] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if name not in KNOWN_GATES:
            raise FeatureGateError(f"unrecognized feature gate: {name!r} (known: {', '.join(KNOWN_GATES)})")
        if not sep:
            raise FeatureGateError(f"missing bool value for {name!r} (use {name}=true or {name}=false)")
        try:
            overrides[name] = parse_bool(value.strip())
        except FeatureGateError as exc:
            raise FeatureGateError(f"feature gate {name}: {exc}") from None
    return gates_from_mapping(overrides, base)
