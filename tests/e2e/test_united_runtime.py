"""End to end in real time: the watch-driven UnitedDeployment controller (caches, triggers,
workers) on the embedded cluster. The resync is an hour, so every reaction below comes from a
watch event: the UnitedDeployment's, its workloads', its pods' and the nodes'."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubectl_kit import KUBECTL
from polling import wait_until
from united_kit import UDS, pending_per_subset, pods_per_subset, pools, scale, term, ud, united

from py_engine.assembled_stack import Stack
from py_engine.uniteddeployment.controller.runtime.loop import UnitedOptions
from py_engine.uniteddeployment.controller.runtime.nodefit import NODE_FIT_ANNOTATION
from py_engine.workloadspread.controller.runtime.loop import LoopOptions

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]
ADAPTIVE = {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 600, "unschedulableDuration": 600}}
SUBSETS: list[dict[str, Any]] = [
    {"name": "on-prem", "maxReplicas": 3, "nodeSelectorTerm": term("on-prem")},
    {"name": "elastic", "nodeSelectorTerm": term("elastic")},
]


def until_pods(stack: Stack, want: dict[str, int], what: str, *, placed_only: bool = False) -> None:
    """Poll until the pods per subset are `want`; a timeout says what the cluster held instead
    (subsets, pending pods, the UnitedDeployment's status), so a failure can be read from CI."""
    try:
        wait_until(lambda: pods_per_subset(stack, "web", placed_only=placed_only) == want, 60, what)
    except AssertionError as exc:  # what `wait_until` raises on timeout
        status = stack.api.get(UDS, "default", "web").get("status")
        raise AssertionError(
            f"{exc}: pods per subset {pods_per_subset(stack, 'web')}, pending "
            f"{pending_per_subset(stack, 'web')}, status {status}"
        ) from None


def real_time_stack(tmp_path: Path, nodes: list[dict[str, Any]], **options: Any) -> Stack:
    """Both controllers on real time, resyncing hourly (the watches drive them)."""
    return Stack(
        nodes,
        virtual=False,
        workdir=tmp_path,
        options=LoopOptions(resync_seconds=3600),
        united_options=UnitedOptions(resync_seconds=3600),
        **options,
    )


def test_watch_driven_provision_scale_and_node_fit(tmp_path: Path) -> None:
    with real_time_stack(tmp_path, pools("on-prem", "elastic", taint="on-prem")) as stack:
        stack.create(UDS, united("web", 4, SUBSETS, schedule=ADAPTIVE))
        until_pods(
            stack, {"elastic": 4}, "4 pods on the elastic pool (no on-prem node fits)", placed_only=True
        )
        scale(stack, "web", 6)  # what `kubectl scale sgud/web --replicas 6` does
        until_pods(stack, {"elastic": 6}, "6 elastic pods", placed_only=True)
        for node in stack.api.list("v1/nodes", None)["items"]:
            if node["metadata"]["labels"]["node.spreadgate.dev/pool"] == "on-prem":
                stack.api.patch("v1/nodes", None, node["metadata"]["name"], {"spec": {"taints": []}}, "merge")
        scale(stack, "web", 9)  # capacity goes to the first subset now that a node fits
        until_pods(
            stack, {"on-prem": 3, "elastic": 6}, "3 on-prem pods once the pool accepts pods", placed_only=True
        )
        # Adaptive keeps a subset's ready pods (docs/uniteddeployment.md): scaled down while the third
        # on-prem pod is placed but not Ready yet, 2 on-prem + 5 elastic is as stable an answer as 3 + 4.
        wait_until(
            lambda: (s := stack.api.get(UDS, "default", "web").get("status")) and s.get("readyReplicas") == 9,
            60,
            "the controller to see all 9 pods Ready",
        )
        scale(stack, "web", 7)  # the last subset empties first
        until_pods(stack, {"on-prem": 3, "elastic": 4}, "scale-down from elastic")
        status = wait_until(
            lambda: (
                (s := stack.api.get(UDS, "default", "web").get("status"))
                and s.get("readyReplicas") == 7
                and s
            ),
            60,
            "status readyReplicas 7",
        )
        assert status["labelSelector"] == "app=web"
        assert stack.manager is not None and stack.united_controller is not None
        assert stack.united_controller.metrics.syncs.value(result="success") > 0
        assert "spreadgate_united_writes_total" in stack.manager.render_metrics()


class ScaledWhileTheStatusResponseIsInFlight:
    """The controller's client, except that the status write that reports every replica Ready
    (nothing left to change) is followed by a scale that the watch delivers before the write's
    response returns: the interleaving a loaded machine produces when `kubectl scale` lands
    just after the controller wrote a settled status."""

    def __init__(self, client: Any, stack: Stack, replicas: int) -> None:
        self.client, self.stack, self.replicas, self.done = client, stack, replicas, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def replace_status(self, resource: Any, namespace: str, name: str, obj: Any, **kwargs: Any) -> Any:
        written = self.client.replace_status(resource, namespace, name, obj, **kwargs)
        settled = obj["status"].get("readyReplicas") == obj["spec"]["replicas"]
        if settled and not self.done:
            self.done = True
            scale(self.stack, "web", self.replicas)
            generation = ud(self.stack, "web")["metadata"]["generation"]
            controller = self.stack.united_controller
            assert controller is not None
            wait_until(
                lambda: (
                    (controller.source.united_deployment("default", "web") or {})["metadata"]["generation"]
                    == generation
                ),
                30,
                "the scale in the controller's cache",
            )
        return written


def test_a_scale_seen_before_the_controllers_own_status_response_is_not_lost(tmp_path: Path) -> None:
    """The response of a status write reaches the cache after the watch delivered a later scale:
    the cache keeps the scale, so the controller acts on it (it used to go back to the written
    object and wait for the hourly resync)."""
    with real_time_stack(tmp_path, pools("elastic")) as stack:
        controller = stack.united_controller
        assert controller is not None
        controller.writer.client = ScaledWhileTheStatusResponseIsInFlight(controller.writer.client, stack, 3)  # type: ignore[assignment]
        stack.create(UDS, united("web", 1, [{"name": "elastic", "nodeSelectorTerm": term("elastic")}]))
        until_pods(stack, {"elastic": 3}, "3 pods after the scale")
        wait_until(
            lambda: (
                (s := ud(stack, "web"))["status"].get("observedGeneration") == s["metadata"]["generation"]
            ),
            30,
            "the controller to observe the scaled generation",
        )


@pytest.mark.kubectl
def test_kubectl_scale_sgud(tmp_path: Path) -> None:
    """`kubectl apply` a UnitedDeployment, `kubectl scale sgud/web --replicas N` (the /scale path an
    HPA takes), and `kubectl get sgud` reading the status the controller wrote."""
    kubeconfig = tmp_path / "kubeconfig"
    fixed = [
        {"name": "on-prem", "maxReplicas": 2, "nodeSelectorTerm": term("on-prem")},
        {"name": "elastic", "nodeSelectorTerm": term("elastic")},
    ]
    manifest = tmp_path / "ud.yaml"
    manifest.write_text(yaml.safe_dump(united("web", 1, fixed)), encoding="utf-8")
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(tmp_path)}

    def kubectl(*args: str) -> str:
        assert KUBECTL is not None
        done = subprocess.run(
            [KUBECTL, *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    with real_time_stack(tmp_path, pools("on-prem", "elastic"), kubeconfig_out=kubeconfig) as stack:
        kubectl("apply", "-f", str(manifest))
        wait_until(
            lambda: pods_per_subset(stack, "web", placed_only=True) == {"on-prem": 1}, 60, "1 on-prem pod"
        )
        kubectl("scale", "sgud/web", "--replicas", "5")
        wait_until(
            lambda: pods_per_subset(stack, "web", placed_only=True) == {"on-prem": 2, "elastic": 3},
            60,
            "2 on-prem and 3 elastic pods",
        )
        scale_obj = wait_until(
            lambda: (
                (
                    s := json.loads(
                        kubectl(
                            "get",
                            "--raw",
                            "/apis/spreadgate.dev/v1beta1/namespaces/default/uniteddeployments/web/scale",
                        )
                    )
                )
                and s.get("status", {}).get("replicas") == 5
                and s
            ),
            60,
            "the scale subresource to read 5",
        )
        assert scale_obj["status"]["selector"] == "app=web"
        table = wait_until(
            lambda: (
                (t := kubectl("get", "sgud", "web").split("\n"))
                and t[1].split()[:5] == ["web", "5", "5", "5", "5"]
                and t
            ),
            60,
            "kubectl get sgud to print 5 ready",
        )
        assert table[0].split()[:5] == ["NAME", "DESIRED", "CURRENT", "UPDATED", "READY"]


def test_kruise_timing_in_real_time_moves_the_share_after_the_critical_time(tmp_path: Path) -> None:
    quick = {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 2, "unschedulableDuration": 600}}
    with real_time_stack(tmp_path, pools("on-prem", "elastic", taint="on-prem")) as stack:
        stack.create(
            UDS, united("web", 4, SUBSETS, schedule=quick, annotations={NODE_FIT_ANNOTATION: "false"})
        )
        wait_until(
            lambda: pods_per_subset(stack, "web") == {"on-prem": 3, "elastic": 1},
            30,
            "on-prem's share created, Pending",
        )
        wait_until(lambda: pods_per_subset(stack, "web") == {"elastic": 4}, 30, "the share moved after 2 s")
        entry = stack.api.get(UDS, "default", "web")["status"]["subsetStatuses"][0]
        assert entry["name"] == "on-prem" and entry["conditions"][0]["status"] == "False"
