"""The whole product on the embedded cluster in one process: cluster, webhook, controller.

`Stack` starts the embedded API server over HTTPS (with a kubeconfig), installs
the WorkloadSpread CRD from `manifests/base/crd.yaml` (and, unless `united=False`,
the UnitedDeployment CRD, minimal Kruise CloneSet/StatefulSet CRDs and the
UnitedDeployment controller beside the WorkloadSpread one), starts the real webhook
on 127.0.0.1 with a certificate from a throwaway CA and registers it, and runs
the real controllers. The webhook and the controller authenticate as their
ServiceAccounts (`spreadgate-system/spreadgate-webhook`, `.../spreadgate-controller`)
under the shipped RBAC (`manifests/base/rbac-*.yaml`, applied at start), which the
embedded cluster enforces, so a grant the code needs and the manifests lack fails here
as it would in a real cluster (`component_identities=False`: both run as the
administrator). The kubeconfig written for people is the administrator's.

The controllers are composed in one place, `start_controller`: it builds the mode's
Manager and adds the WorkloadSpread controller and (unless `united=False`) the
UnitedDeployment one through their products' entry points (`add_spread_controller`,
`add_united_controller`), as `spreadgate controller` does; the stack builds no
controller or source itself. Two modes:

* **virtual** (`spreadgate simulate`, the demo, deterministic tests): the cluster is
  stepped on a `VirtualClock`, and so are the controllers, by a `SteppedManager`
  (`py_engine.runtime.stepped`): each pass refreshes a controller's listed source and
  runs it, right after the cluster's loops, with no threads and no leader election;
  `settle()` runs passes until nothing writes, moving virtual time to the next pending
  deadline (kubelet delays, controller requeues) up to a bound. The webhook
  stamps its records with virtual time but waits in real time (`HybridClock`):
  its commit deadlines and back-offs are about the HTTP round trips it makes.
* **real** (`spreadgate cluster`, watch-driven tests): the cluster runs its
  threads and the controllers run as in production: one `Manager`
  (`py_engine.runtime.manager`) with both controllers over shared watch caches,
  triggers and workers, all in real time (no election: a single replica).
"""

from __future__ import annotations

import base64
import contextlib
import logging
import shutil
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from py_engine.apiclient import KubeClient
from py_engine.resources import (
    RBAC_MANIFESTS,
    UNITEDDEPLOYMENT_CRD,
    WEBHOOK_CONFIGURATIONS,
    WORKLOADSPREAD_CRD,
    read_text,
    read_yaml,
    read_yaml_documents,
)
from py_engine.runtime.listing import ListedLists
from py_engine.runtime.manager import Manager
from py_engine.runtime.stepped import SteppedManager
from py_engine.semantics.clock import Clock, RealClock, VirtualClock
from py_engine.sim.cluster import Cluster
from py_engine.sim.kubelet import KubeletConfig
from py_engine.sim.tls import CertificateAuthority
from py_engine.uniteddeployment.controller.runtime.loop import UnitedController, UnitedOptions
from py_engine.uniteddeployment.controller.runtime.resources import kruise_workload_crds
from py_engine.uniteddeployment.controller.runtime.runtime import add_united_controller
from py_engine.workloadspread.controller.runtime.daemon import add_spread_controller
from py_engine.workloadspread.controller.runtime.loop import LoopOptions, SpreadController
from webhook.runtime import Webhook, WebhookOptions

log = logging.getLogger(__name__)

START = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
CRDS = "apiextensions.k8s.io/v1/customresourcedefinitions"
MUTATING = "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
SPREADS = "spreadgate.dev/v1alpha1/workloadspreads"
DEPLOYMENTS = "apps/v1/deployments"
PRODUCT_NAMESPACE = "spreadgate-system"
WEBHOOK_ACCOUNT = "spreadgate-webhook"
CONTROLLER_ACCOUNT = "spreadgate-controller"
_RBAC_RESOURCES = {
    "ServiceAccount": ("v1/serviceaccounts", True),
    "Role": ("rbac.authorization.k8s.io/v1/roles", True),
    "RoleBinding": ("rbac.authorization.k8s.io/v1/rolebindings", True),
    "ClusterRole": ("rbac.authorization.k8s.io/v1/clusterroles", False),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io/v1/clusterrolebindings", False),
}


class HybridClock:
    """Virtual `now()` (what records are stamped with), real `monotonic()`/`sleep()` (how long to wait)."""

    def __init__(self, virtual: Clock) -> None:
        self.virtual = virtual

    def now(self) -> datetime:
        return self.virtual.now()

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


def load_crd() -> dict[str, Any]:
    """The product's WorkloadSpread CRD, as shipped in the package (`manifests/base/crd.yaml`)."""
    return read_yaml(WORKLOADSPREAD_CRD)


def load_united_crd() -> dict[str, Any]:
    """The UnitedDeployment CRD, as shipped in the package (`manifests/base/uniteddeployment-crd.yaml`)."""
    return read_yaml(UNITEDDEPLOYMENT_CRD)


def webhook_configurations(url: str, ca_pem: str) -> list[tuple[str, dict[str, Any]]]:
    """(resource, object) of the shipped webhook configurations, pointed at the webhook at `url`.

    The objects are `manifests/base/webhook-configurations.yaml` as a real install applies them
    (rules, failure policies, side effects, timeouts, namespace selectors); only each hook's
    `clientConfig` changes: the Service reference becomes `url` + the Service's path, and the
    `caBundle` that cert-manager or the webhook itself fills in on a cluster is `ca_pem`.
    tests/e2e/test_stack_installs_the_manifests.py fails when the two differ in anything else.
    """
    bundle = base64.b64encode(ca_pem.encode()).decode()
    resources = {"MutatingWebhookConfiguration": MUTATING, "ValidatingWebhookConfiguration": VALIDATING}
    installed = []
    for config in yaml.safe_load_all(read_text(WEBHOOK_CONFIGURATIONS)):
        for hook in config["webhooks"]:
            path = hook["clientConfig"]["service"].get("path", "")
            hook["clientConfig"] = {"url": url + path, "caBundle": bundle}
        installed.append((resources[config["kind"]], config))
    return installed


def install_product_rbac(api: Any, namespace: str = PRODUCT_NAMESPACE) -> None:
    """Apply the shipped ServiceAccounts, (Cluster)Roles and bindings (`manifests/base/`) as
    `kubectl apply -k` would: namespaced objects and ServiceAccount subjects into `namespace`
    (created when missing)."""
    with contextlib.suppress(Exception):
        api.create(
            "v1/namespaces", None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        )
    for relative in RBAC_MANIFESTS:
        for doc in read_yaml_documents(relative):
            resource, namespaced = _RBAC_RESOURCES[doc["kind"]]
            for subject in doc.get("subjects") or []:  # kustomize's namespace transformer does the same
                if subject.get("kind") == "ServiceAccount":
                    subject["namespace"] = namespace
            api.create(resource, namespace if namespaced else None, doc)


def poll(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll (real time) until `condition()` is truthy; TimeoutError at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.01)


def _listed(controller: SpreadController | UnitedController | None) -> ListedLists | None:
    source = controller.source if controller is not None else None
    return source if isinstance(source, ListedLists) else None


class StackNotStable(RuntimeError):
    """`settle()` ran out of passes or real time with work still pending."""


class Stack:
    """See the module docstring. A context manager: leaving it stops everything it started."""

    def __init__(
        self,
        nodes: list[dict[str, Any]],
        *,
        virtual: bool = True,
        options: LoopOptions | None = None,
        with_controller: bool = True,
        kubelet: KubeletConfig | None = None,
        workdir: str | Path | None = None,
        port: int = 0,
        host: str = "127.0.0.1",
        kubeconfig_out: str | Path | None = None,
        faults: str | None = None,
        united: bool = True,
        united_options: UnitedOptions | None = None,
        webhook_port: int = 0,
        seed: int | None = None,
        component_identities: bool = True,
    ) -> None:
        self.virtual = virtual
        self.clock: Clock = VirtualClock(START) if virtual else RealClock()
        self.options = options or LoopOptions()
        self.with_controller = with_controller
        self._tmp = None if workdir is not None else tempfile.mkdtemp(prefix="spreadgate-stack-")
        self.workdir = Path(workdir) if workdir is not None else Path(str(self._tmp))
        self.port, self.host, self.kubeconfig_out = port, host, kubeconfig_out
        self.webhook_port = webhook_port  # 0: a free port
        # The webhook and the controller authenticate as their ServiceAccounts under the shipped
        # RBAC (a missing grant is a 403, as on a real cluster); False: both as the administrator.
        self.component_identities = component_identities
        self.webhook_kubeconfig: str | None = None
        self.controller_kubeconfig: str | None = None
        self.cluster = Cluster(clock=self.clock, nodes=nodes, kubelet=kubelet, faults=faults, seed=seed)
        self.api = self.cluster.api
        self.hook: Webhook | None = None
        self.client: KubeClient | None = None
        # What `start_controller` composed: the mode's Manager and the controllers it runs
        # (kept for tests and tools that inspect a controller's reports or metrics).
        self.manager: Manager | SteppedManager | None = None
        self.controller: SpreadController | None = None
        # UnitedDeployments (on by default): the CRD, Kruise's workload CRDs when absent, the controller.
        self.united = united
        self.united_options = united_options or UnitedOptions()
        self.united_controller: UnitedController | None = None

    # ------------------------------------------------------------ lifecycle

    def start(self) -> Stack:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self) -> None:
        self.cluster.serve_https(self.port, self.host, self.kubeconfig_out or self.workdir / "kubeconfig")
        kubeconfig = str(self.cluster.kubeconfig_path)
        self.api.create(CRDS, None, load_crd())
        if self.united:
            self._install_united()
        self.webhook_kubeconfig = self.controller_kubeconfig = kubeconfig
        if self.component_identities:
            install_product_rbac(self.api)
            self.webhook_kubeconfig = str(
                self.cluster.service_account_kubeconfig(
                    self.workdir / "webhook.kubeconfig", PRODUCT_NAMESPACE, WEBHOOK_ACCOUNT
                )
            )
            self.controller_kubeconfig = str(
                self.cluster.service_account_kubeconfig(
                    self.workdir / "controller.kubeconfig", PRODUCT_NAMESPACE, CONTROLLER_ACCOUNT
                )
            )
        ca = CertificateAuthority("spreadgate-stack-ca")
        pair = ca.issue(dns_names=["localhost"], ip_addresses=["127.0.0.1"])
        cert, key = self.workdir / "tls.crt", self.workdir / "tls.key"
        cert.write_text(pair.cert_pem, encoding="ascii")
        key.write_text(pair.key_pem, encoding="ascii")
        key.chmod(0o600)
        self.hook = Webhook(
            WebhookOptions(
                cert_file=str(cert),
                key_file=str(key),
                kubeconfig=self.webhook_kubeconfig,
                host="127.0.0.1",
                port=self.webhook_port,
                threads=16,
                watch_timeout_seconds=60,
            ),
            clock=HybridClock(self.clock) if self.virtual else self.clock,
        )
        self.hook.start()
        if not self.hook.view.wait_ready(20):
            raise RuntimeError("the webhook's caches did not sync")
        for resource, config in webhook_configurations(self.hook.url, ca.cert_pem):
            self.api.create(resource, None, config)
        if self.with_controller:
            self.start_controller()
        if not self.virtual:
            self.cluster.start()

    def _install_united(self) -> None:
        """The UnitedDeployment CRD, minimal Kruise CloneSet/StatefulSet CRDs (unless the cluster
        has them) so those subset workloads can be stored, and garbage collection of UD-owned objects."""
        crd = load_united_crd()
        self.api.create(CRDS, None, crd)
        for kruise in kruise_workload_crds():
            with contextlib.suppress(Exception):
                self.api.create(CRDS, None, kruise)
        group, version = crd["spec"]["group"], crd["spec"]["versions"][0]["name"]
        self.cluster.garbage_collector.add_resource(
            f"{group}/{version}/{crd['spec']['names']['plural']}", crd["spec"]["names"]["kind"]
        )

    def start_controller(self) -> None:
        """Start (or restart, after `stop_controller`) the controllers: the one place they are
        composed, the same way in both modes (see the module docstring)."""
        kubeconfig = self.controller_kubeconfig or str(self.cluster.kubeconfig_path)
        self.client = KubeClient.load(kubeconfig, timeout=10)
        manager: Manager | SteppedManager
        if self.virtual:
            manager = SteppedManager(self.client, clock=self.clock, owns_client=True)
        else:
            manager = Manager(self.client, clock=self.clock, watch_timeout_seconds=60, owns_client=True)
        self.manager = manager
        self.controller = add_spread_controller(manager, options=self.options)
        if self.united:
            self.united_controller = add_united_controller(manager, options=self.united_options)
        manager.start()

    def stop_controller(self) -> None:
        """Stop the controllers as a crash would leave things: no cleanup writes."""
        if self.manager is not None:
            self.manager.stop()  # closes the client too
            self.manager = None
        self.client = None
        self.controller = None
        self.united_controller = None

    @property
    def source(self) -> ListedLists | None:
        """The WorkloadSpread controller's listed source (virtual mode; None otherwise)."""
        return _listed(self.controller)

    @property
    def united_source(self) -> ListedLists | None:
        """The UnitedDeployment controller's listed source (virtual mode; None otherwise), for
        tests that refresh and step that controller alone."""
        return _listed(self.united_controller)

    def close(self) -> None:
        self.stop_controller()
        if self.hook is not None:
            with contextlib.suppress(Exception):
                self.hook.stop()
            self.hook = None
        self.cluster.close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> Stack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------- objects

    def create(self, resource: str, obj: dict[str, Any], namespace: str | None = "default") -> dict[str, Any]:
        created = self.api.create(resource, namespace, obj)
        if resource == SPREADS and self.hook is not None:
            name = str(obj["metadata"]["name"])
            hook = self.hook
            poll(
                lambda: hook.view.spreads.get(namespace or "default", name) is not None,
                10,
                f"the webhook to see WorkloadSpread {name}",
            )
        return created

    def wait_webhook_generation(self, namespace: str, name: str) -> None:
        """Block until the webhook's cache holds the spread's current generation (after a spec edit)."""
        want = self.api.get(SPREADS, namespace, name)["metadata"].get("generation")
        hook = self.hook
        if hook is None:
            return
        poll(
            lambda: (
                (hook.view.spreads.get(namespace, name) or {}).get("metadata", {}).get("generation") == want
            ),
            10,
            f"the webhook to see generation {want} of {name}",
        )

    # ------------------------------------------------------------ stepping

    def controller_step(self) -> int:
        """One pass of every controller on fresh lists (virtual mode); returns their API writes."""
        if not isinstance(self.manager, SteppedManager):
            return 0
        return self.manager.step()

    def next_deadline(self) -> float | None:
        """The earliest pending deadline: the cluster's loops' or a controller's requeue."""
        deadlines = [self.cluster.next_deadline()]
        if isinstance(self.manager, SteppedManager):
            deadlines.append(self.manager.next_deadline())
        present = [d for d in deadlines if d is not None]
        return min(present) if present else None

    def settle(self, max_advance: float = 60.0, max_passes: int = 2000, timeout: float = 120.0) -> float:
        """Virtual mode: run passes until quiet, moving time to pending deadlines up to
        `max_advance` virtual seconds; returns the virtual seconds advanced."""
        if not isinstance(self.clock, VirtualClock):
            raise RuntimeError("settle() needs the virtual mode")
        deadline = time.monotonic() + timeout
        advanced = 0.0
        for _ in range(max_passes):
            if time.monotonic() > deadline:
                raise StackNotStable(f"still busy after {timeout:g}s of real time")
            writes = self.cluster.sync_once()
            writes += self.controller_step()
            if writes:
                continue
            due = self.next_deadline()
            now = self.clock.monotonic()
            if due is None or advanced + max(due - now, 0.0) > max_advance:
                return advanced
            step = max(due - now, 0.0)
            self.clock.advance(step)
            advanced += step
        raise StackNotStable(f"no quiet state within {max_passes} passes")

    def advance(self, seconds: float) -> None:
        """Virtual mode: move time forward by exactly `seconds`, running everything due on the way."""
        if not isinstance(self.clock, VirtualClock):
            raise RuntimeError("advance() needs the virtual mode")
        target = self.clock.monotonic() + seconds
        for _ in range(10_000):
            remaining = target - self.clock.monotonic()
            if remaining <= 0:
                break
            moved = self.settle(max_advance=remaining)
            if moved == 0.0 or self.clock.monotonic() >= target:
                rest = target - self.clock.monotonic()
                if rest > 0:
                    self.clock.advance(rest)
                break
        self.settle(max_advance=0.0)
