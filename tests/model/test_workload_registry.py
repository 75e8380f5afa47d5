"""The workload registry (py_engine/model/workloads.py): its kinds agree with the validation policy
and the REST constants, its one whitelist parser accepts and refuses what it should, and its
replica readers follow docs/design-workloadspread.md §1.4 (webhook and controller columns)."""

from __future__ import annotations

from typing import Any

import pytest

from py_engine.apiclient import resources as rest
from py_engine.model import WorkloadSpread
from py_engine.model import workloads as registry
from py_engine.model.workloads import (
    EMPTY_WHITELIST,
    UNKNOWN_REPLICAS,
    CustomWorkload,
    PathError,
    Whitelist,
    WhitelistError,
    controller_replicas,
    parse_custom_workload_flag,
    parse_whitelist,
    webhook_replicas,
    whitelist_from_entries,
    whitelist_from_flags,
    whitelist_in_objects,
)
from py_engine.policy import create_engine, load_policy_sources


def test_the_validation_policy_lists_the_registry_s_built_in_kinds() -> None:
    engine = create_engine(sources=load_policy_sources())
    rego = engine.evaluate("data.spreadgate.validation.builtin_kind_groups", {})
    assert isinstance(rego, dict) and rego
    assert {kind: frozenset(groups) for kind, groups in rego.items()} == registry.builtin_kind_groups()


def test_the_rest_constants_name_the_registry_s_kinds() -> None:
    served = {**rest.BUILTIN_WORKLOADS, **rest.OPTIONAL_WORKLOADS}
    assert set(served) == registry.BUILTIN_KEYS
    assert {k for k, _ in rest.OPTIONAL_WORKLOADS.items()} == {k.key for k in registry.BUILTIN if k.optional}
    for kind in registry.BUILTIN:
        resource = served[kind.key]
        assert (resource.group, resource.version, resource.plural, resource.kind, resource.namespaced) == (
            kind.group,
            kind.version,
            kind.plural,
            kind.kind,
            True,
        ), kind
    assert rest.KRUISE_STATEFULSETS is served[registry.KRUISE_STATEFULSET.key]


def test_kind_facts() -> None:
    assert {k.kind for k in registry.BUILTIN if k.ordinal_placement} == {"StatefulSet"}
    assert {k.key for k in registry.BUILTIN if k.deletion_cost} == {
        ("apps", "Deployment"),
        ("apps", "ReplicaSet"),
        ("apps.kruise.io", "CloneSet"),
    }
    assert registry.JOB.replicas_field == "parallelism"
    assert registry.DEPLOYMENT.owner_chain == (("apps", "ReplicaSet"),)
    assert set(registry.OWNER_CHAIN_KINDS) == {("apps", "ReplicaSet")}  # what the controller's triggers walk
    assert registry.builtin("apps", "StatefulSet") is registry.STATEFULSET
    assert registry.builtin("apps.kruise.io", "Deployment") is None


KRUISE_ENTRY = {
    "Group": "mock.kruise.io",
    "Version": "v1",
    "Kind": "GameServerSet",
    "replicasPath": "spec.replicas",
    "subResources": [{"Group": "mock.kruise.io", "Version": "v1", "Kind": "GameServer"}],
}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, ()),
        ("", ()),
        ("{}", ()),  # Kruise's decoder reads an object without workloads as an empty list
        ({"workloads": None}, ()),
        (
            {"workloads": [KRUISE_ENTRY]},
            (
                CustomWorkload(
                    "mock.kruise.io", "GameServerSet", "spec.replicas", (("mock.kruise.io", "GameServer"),)
                ),
            ),
        ),
        ('{"workloads":[{"group":"g","kind":"K"}]}', (CustomWorkload("g", "K"),)),  # keys in any case, as Go
        ({"workloads": [{"Kind": "K", "replicasPath": ""}]}, (CustomWorkload("", "K", ""),)),
        ({"workloads": [{"Kind": "K", "subResources": [{"Group": "g"}, "x"]}]}, (CustomWorkload("", "K"),)),
    ],
)
def test_whitelists_accepted(raw: Any, expected: tuple[CustomWorkload, ...]) -> None:
    assert parse_whitelist(raw).workloads == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("{oops", "not JSON"),
        ("[]", "expected an object with a 'workloads' list"),
        ({"workloads": {"Kind": "K"}}, "expected an object with a 'workloads' list"),
        ({"workloads": ["K"]}, "workloads[0] must be an object"),
        ({"workloads": [{"Group": "g"}]}, "workloads[0] needs a string Kind"),
        # An empty Kind names no workload; accepted, it made "" an owner kind of the admission's
        # owner walk (the open mutation survivor `tracing._owner_object` 15, docs/testing.md).
        ({"workloads": [{"Kind": "K"}, {"Group": "g", "Kind": ""}]}, "workloads[1] needs a non-empty Kind"),
        (
            {"workloads": [{"Kind": "K"}, {"Kind": "L", "replicasPath": 3}]},
            "workloads[1].replicasPath must be a string",
        ),
        (
            {"workloads": [{"Kind": "K", "subResources": "GameServer"}]},
            "workloads[0].subResources must be a list",
        ),
    ],
)
def test_whitelists_refused_with_one_line(raw: Any, message: str) -> None:
    with pytest.raises(WhitelistError) as excinfo:
        parse_whitelist(raw)
    text = str(excinfo.value)
    assert text.startswith(registry.WHITELIST_KEY) and message in text and "\n" not in text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("game.kruise.io/GameServerSet", CustomWorkload("game.kruise.io", "GameServerSet", None)),
        (
            "kubeflow.org/TFJob=spec.tfReplicaSpecs.Worker.replicas",
            CustomWorkload("kubeflow.org", "TFJob", "spec.tfReplicaSpecs.Worker.replicas"),
        ),
        ("g/K=", CustomWorkload("g", "K", "")),
        ("/K", CustomWorkload("", "K", None)),
        ("a/b/K", CustomWorkload("a/b", "K", None)),
    ],
)
def test_flags_accepted(value: str, expected: CustomWorkload) -> None:
    assert parse_custom_workload_flag(value) == expected


@pytest.mark.parametrize("value", ["nonsense", "g/", "K=spec.replicas", ""])
def test_flags_refused(value: str) -> None:
    with pytest.raises(WhitelistError, match=r"must look like GROUP/KIND\[=REPLICAS_PATH\]"):
        whitelist_from_flags(["g/K", value])


def test_entries_round_trip_and_owner_kinds() -> None:
    listed = parse_whitelist({"workloads": [KRUISE_ENTRY]})
    assert whitelist_from_entries(listed.entries()) == listed
    assert listed.entries()[0]["group"] == "mock.kruise.io" and listed.entries()[0]["kind"] == "GameServerSet"
    assert {
        ("mock.kruise.io", "GameServerSet"),
        ("mock.kruise.io", "GameServer"),
        ("apps", "ReplicaSet"),
    } <= listed.owner_kinds
    assert ("mock.kruise.io", "GameServer") not in EMPTY_WHITELIST.owner_kinds
    assert listed.allows("mock.kruise.io", "GameServerSet") and not listed.allows(
        "mock.kruise.io", "GameServer"
    )
    assert EMPTY_WHITELIST.allows("batch", "Job")
    assert listed.targets() == [
        {"group": "mock.kruise.io", "kind": "GameServerSet"}
    ]  # the policy's customWorkloads
    flags = whitelist_from_flags(["mock.kruise.io/GameServerSet=spec.size"])
    assert (flags + listed).find("mock.kruise.io", "GameServerSet") == CustomWorkload(
        "mock.kruise.io", "GameServerSet", "spec.size"
    )


def test_configmaps_in_a_snapshot() -> None:
    def configmap(name: str, value: Any) -> dict[str, Any]:
        return {"kind": "ConfigMap", "metadata": {"name": name}, "data": {registry.WHITELIST_KEY: value}}

    found = whitelist_in_objects(
        [configmap("other", "{oops"), configmap("kruise-configuration", '{"workloads":[{"Kind":"K"}]}')]
    )
    assert found == Whitelist((CustomWorkload("", "K"),))
    with pytest.raises(WhitelistError, match=r"^ConfigMap kruise-configuration: .*not JSON"):
        whitelist_in_objects([configmap("kruise-configuration", "{oops")])


def spread(kind: str, api_version: str, **target_filter: Any) -> WorkloadSpread:
    spec: dict[str, Any] = {
        "targetRef": {"apiVersion": api_version, "kind": kind, "name": "w"},
        "subsets": [{"name": "a", "maxReplicas": "50%"}],
    }
    if target_filter:
        spec["targetFilter"] = target_filter
    return WorkloadSpread.from_object(
        {
            "apiVersion": "spreadgate.dev/v1alpha1",
            "kind": "WorkloadSpread",
            "metadata": {"name": "ws", "namespace": "default"},
            "spec": spec,
        }
    )


def test_replicas_of_built_in_kinds() -> None:
    deployment = spread("Deployment", "apps/v1")
    assert controller_replicas(deployment, {"spec": {"replicas": 4}}, EMPTY_WHITELIST) == 4
    assert controller_replicas(deployment, {"spec": {}}, EMPTY_WHITELIST) == 1  # the API server's default
    assert controller_replicas(deployment, None, EMPTY_WHITELIST) == 0
    assert (
        controller_replicas(
            spread("Job", "batch/v1"), {"spec": {"parallelism": 3, "replicas": 9}}, EMPTY_WHITELIST
        )
        == 3
    )
    with pytest.raises(PathError, match="not an integer"):
        controller_replicas(deployment, {"spec": {"replicas": "4"}}, EMPTY_WHITELIST)
    assert webhook_replicas(deployment, {"spec": {"replicas": "4"}}, EMPTY_WHITELIST) == 1


def test_replicas_of_custom_kinds_differ_between_webhook_and_controller() -> None:
    game = spread("Game", "mock.io/v1")
    workload = {"spec": {"size": 6, "replicas": 2}}
    sized = whitelist_from_flags(["mock.io/Game=spec.size"])
    bare = whitelist_from_flags(["mock.io/Game"])
    assert controller_replicas(game, workload, sized) == webhook_replicas(game, workload, sized) == 6
    assert controller_replicas(game, workload, bare) == UNKNOWN_REPLICAS  # no path, no /scale answer
    assert controller_replicas(game, workload, bare, scale_replicas=5) == 5
    assert webhook_replicas(game, workload, bare) == 0
    assert controller_replicas(game, workload, EMPTY_WHITELIST) == UNKNOWN_REPLICAS
    assert webhook_replicas(game, workload, EMPTY_WHITELIST) == 0
    broken = whitelist_from_flags(["mock.io/Game=spec.size.x"])
    assert controller_replicas(game, workload, broken) == 0 and webhook_replicas(game, workload, broken) == 0
    assert webhook_replicas(game, {"spec": {"size": "six"}}, sized) == 0
    with pytest.raises(PathError):
        controller_replicas(game, {"spec": {"size": "six"}}, sized)


def test_replicas_path_list_overrides_every_kind_and_refuses_missing_paths() -> None:
    paths = spread("Deployment", "apps/v1", replicasPathList=["spec.extra.0.n", "spec.extra.1.n"])
    workload = {"spec": {"replicas": 1, "extra": [{"n": 4}, {"n": 6}]}}
    assert (
        controller_replicas(paths, workload, EMPTY_WHITELIST)
        == webhook_replicas(paths, workload, EMPTY_WHITELIST)
        == 10
    )
    missing = spread("Deployment", "apps/v1", replicasPathList=["spec.extra.2.n"])
    with pytest.raises(PathError, match=r"spec\.extra\.2\.n"):
        controller_replicas(missing, workload, EMPTY_WHITELIST)
    with pytest.raises(PathError, match=r"spec\.extra\.2\.n"):
        webhook_replicas(missing, workload, EMPTY_WHITELIST)


def test_group_and_kind_of_objects_references_and_odd_values() -> None:
    assert registry.group_kind_of({"apiVersion": "apps/v1", "kind": "Deployment"}) == ("apps", "Deployment")
    assert registry.group_kind_of({"apiVersion": "v1", "kind": "Pod"}) == ("", "Pod")
    assert registry.group_kind_of({"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet"}) == (
        "apps.kruise.io",
        "CloneSet",
    )
    assert registry.group_kind_of({}) == ("", "")
    assert registry.group_kind_of({"apiVersion": None, "kind": None}) == ("", "")


def test_listing_replicas_reads_the_workload_itself() -> None:
    """Built-in kinds: their replicas field (or its default), never a path or a scale answer;
    custom kinds: the scale answer, else `spec.replicas`, else unknown."""
    deployment = spread("Deployment", "apps/v1", replicasPathList=["spec.other"])
    assert registry.listing_replicas(deployment, {"spec": {"replicas": 0, "other": 5}}, scale_replicas=7) == 0
    assert registry.listing_replicas(deployment, {"spec": {}}) == 1
    assert (
        registry.listing_replicas(spread("Job", "batch/v1"), {"spec": {"parallelism": 2, "replicas": 9}}) == 2
    )
    game = spread("Game", "mock.io/v1")
    assert registry.listing_replicas(game, {"spec": {"replicas": 3}}, scale_replicas=0) == 0
    assert registry.listing_replicas(game, {"spec": {"replicas": 3}}) == 3
    assert registry.listing_replicas(game, {"spec": {"replicas": True}}) == UNKNOWN_REPLICAS
    assert registry.listing_replicas(game, {"spec": {"replicas": "3"}}) == UNKNOWN_REPLICAS
    assert registry.listing_replicas(game, {"spec": {}}) == UNKNOWN_REPLICAS


def test_the_entry_of_a_custom_kind_names_every_field() -> None:
    full = CustomWorkload("mock.io", "Game", "spec.size", (("mock.io", "Server"),))
    assert full.entry() == {
        "group": "mock.io",
        "kind": "Game",
        "replicasPath": "spec.size",
        "subResources": [{"group": "mock.io", "kind": "Server"}],
    }
    assert CustomWorkload("", "K").entry() == {"group": "", "kind": "K", "subResources": []}


def test_only_configmaps_named_kruise_configuration_with_data_count() -> None:
    value = '{"workloads":[{"Kind":"K"}]}'
    secret = {
        "kind": "Secret",
        "metadata": {"name": "kruise-configuration"},
        "data": {registry.WHITELIST_KEY: value},
    }
    odd = [
        {"kind": "ConfigMap", "metadata": "x"},
        {"kind": "ConfigMap", "metadata": {"name": "kruise-configuration"}, "data": "x"},
    ]
    assert whitelist_in_objects([secret, *odd]) == EMPTY_WHITELIST


def test_the_webhook_reads_a_built_in_kind_s_replica_field() -> None:
    assert webhook_replicas(spread("Deployment", "apps/v1"), {"spec": {"replicas": 4}}, EMPTY_WHITELIST) == 4
    assert webhook_replicas(spread("Deployment", "apps/v1"), {"spec": {}}, EMPTY_WHITELIST) == 1


def test_an_empty_replicas_path_counts_zero_for_the_controller() -> None:
    game = spread("Game", "mock.io/v1")
    empty_path = Whitelist((CustomWorkload("mock.io", "Game", ""),))
    assert controller_replicas(game, {"spec": {"replicas": 3}}, empty_path, scale_replicas=5) == 0


def test_a_path_error_names_the_path_and_the_value() -> None:
    with pytest.raises(PathError, match=r"^path 'spec\.replicas' holds '4', not an integer$"):
        controller_replicas(spread("Deployment", "apps/v1"), {"spec": {"replicas": "4"}}, EMPTY_WHITELIST)


def test_non_object_whitelist_entries_name_their_type_and_sub_resources_default_to_the_core_group() -> None:
    with pytest.raises(WhitelistError, match=r"^workloads\[0\] must be an object, not list$"):
        whitelist_from_entries([["x"]])
    found = whitelist_from_entries([{"Kind": "Game", "subResources": [{"Kind": "Pod"}]}])
    assert found.workloads[0].sub_resources == (("", "Pod"),)
