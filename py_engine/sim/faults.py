"""Fault injection for the API server: latency, 409, 429, 500 and 504 timeouts.

Tests and benchmarks use it to stress callers (the webhook, controllers, the
CLI) the way a loaded real API server does. A `FaultInjector` is built from a
spec string, can be replaced at run time (`set_spec`, `clear`), and is
consulted by the HTTP front end for every external request and, when
`in_process=True`, by in-process `ClusterAPI` calls too.

Spec grammar (whitespace ignored)::

    spec     := rule (";" rule)*
    rule     := RESOURCE ":" VERBS ":" effect ("," effect)*
    RESOURCE := "*" | plural | plural.group | plural "/" sub | plural "/*" | "*/" sub
    VERBS    := "*" | verb ("|" verb)*      verb: create get list watch update patch
                                             delete deletecollection
    effect   := latency=DUR | latency=DUR-DUR     (fixed or uniform range)
              | conflict=P | error409=P            (409 Conflict)
              | throttle=P | error429=P            (429 TooManyRequests, Retry-After: 1)
              | error500=P                         (500 InternalError)
              | timeout=P  | error504=P            (504 Timeout after `timeoutdelay`)
              | timeoutdelay=DUR                   (default 1s)
    DUR      := number ("us" | "ms" | "s")       e.g. 10ms, 0.5s, 0-5ms
    P        := probability in [0, 1]

Example:

    pods:create:latency=10ms;workloadspreads/status:update:conflict=0.1,error500=0.02;*:*:latency=0-5ms

Matching: `*` matches every resource *including subresources*; `pods` matches
only the main resource; `pods/*` pods and all of its subresources; `*/status`
any status subresource. Rules are tried in order and, **for each effect key,
the first matching rule that sets it wins** (write specific rules first and
a catch-all last). Latency is served first, then at most one error is chosen
with one random draw (the error probabilities of the chosen rules must sum to
at most 1). Injected errors are raised *before* the request executes, so a
409/429/500/504 never half-applies a write. Latency uses wall-clock sleeps
(it models network/server time, not cluster time). `seed` makes the draws
reproducible for a given request order.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from py_engine.sim import errors
from py_engine.sim.interface import ApiError

VERBS = frozenset({"create", "get", "list", "watch", "update", "patch", "delete", "deletecollection"})
_ERROR_KEYS = {
    "conflict": 409,
    "error409": 409,
    "throttle": 429,
    "error429": 429,
    "error500": 500,
    "timeout": 504,
    "error504": 504,
}
_DUR_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(us|ms|s)?\s*$")
_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


class FaultSpecError(ValueError):
    """The fault spec string is malformed; the message says where and why."""


def parse_duration(text: str, where: str = "") -> float:
    m = _DUR_RE.match(text)
    if not m or m.group(2) is None:
        raise FaultSpecError(
            f"{where}invalid duration {text!r}: expected a number with a unit us, ms or s (e.g. 10ms, 0.5s)"
        )
    return float(m.group(1)) * _UNITS[m.group(2)]


def _parse_latency(text: str, where: str) -> tuple[float, float]:
    if "-" in text:
        lo_s, hi_s = text.split("-", 1)
        unit_m = re.search(r"(us|ms|s)\s*$", hi_s)
        if unit_m and not re.search(r"(us|ms|s)\s*$", lo_s):
            lo_s = lo_s + unit_m.group(1)
        lo, hi = parse_duration(lo_s, where), parse_duration(hi_s, where)
        if hi < lo:
            raise FaultSpecError(f"{where}latency range {text!r} has its upper bound below its lower bound")
        return lo, hi
    d = parse_duration(text, where)
    return d, d


@dataclass(frozen=True)
class FaultRule:
    resource: str
    verbs: frozenset[str]
    latency: tuple[float, float] | None = None
    errors: tuple[tuple[int, float], ...] = ()
    timeout_delay: float | None = None
    text: str = ""

    def matches(self, resource: str, subresource: str | None, verb: str) -> bool:
        if "*" not in self.verbs and verb not in self.verbs:
            return False
        pat = self.resource
        if pat == "*":
            return True
        base, _, sub = pat.partition("/")
        names = {resource, resource.split(".", 1)[0]}
        if base != "*" and base not in names and base.split(".", 1)[0] not in names:
            return False
        if not sub:
            return subresource is None
        return sub == "*" or sub == subresource


def parse_spec(spec: str) -> list[FaultRule]:
    """Parse a spec string into rules; raises `FaultSpecError` with the rule index and text."""
    rules: list[FaultRule] = []
    for idx, raw in enumerate(spec.split(";")):
        text = raw.strip()
        if not text:
            continue
        where = f"fault rule {idx + 1} ({text!r}): "
        parts = text.split(":")
        if len(parts) != 3:
            raise FaultSpecError(f"{where}expected RESOURCE:VERBS:EFFECTS, got {len(parts)} field(s)")
        res, verbs_s, effects_s = (p.strip() for p in parts)
        if not res:
            raise FaultSpecError(f"{where}empty resource (use * for all)")
        verbs = frozenset(v.strip().lower() for v in verbs_s.split("|"))
        bad = verbs - VERBS - {"*"}
        if bad:
            raise FaultSpecError(f"{where}unknown verb(s) {sorted(bad)}; expected * or {sorted(VERBS)}")
        latency: tuple[float, float] | None = None
        errs: list[tuple[int, float]] = []
        delay: float | None = None
        for eff in effects_s.split(","):
            eff = eff.strip()
            if not eff:
                raise FaultSpecError(f"{where}empty effect")
            if "=" not in eff:
                raise FaultSpecError(f"{where}effect {eff!r} must be KEY=VALUE")
            key, val = (s.strip() for s in eff.split("=", 1))
            key = key.lower()
            if key == "latency":
                latency = _parse_latency(val, where)
            elif key == "timeoutdelay":
                delay = parse_duration(val, where)
            elif key in _ERROR_KEYS:
                try:
                    p = float(val)
                except ValueError:
                    raise FaultSpecError(f"{where}{key} needs a probability, got {val!r}") from None
                if not 0.0 <= p <= 1.0:
                    raise FaultSpecError(f"{where}{key}={val}: probability must be within [0, 1]")
                errs.append((_ERROR_KEYS[key], p))
            else:
                raise FaultSpecError(
                    f"{where}unknown effect {key!r}; expected latency, conflict, throttle, "
                    "error409, error429, error500, timeout, error504 or timeoutdelay"
                )
        if sum(p for _, p in errs) > 1.0 + 1e-9:
            raise FaultSpecError(f"{where}error probabilities sum to more than 1")
        rules.append(FaultRule(res, verbs, latency, tuple(errs), delay, text))
    return rules


@dataclass
class FaultDecision:
    latency: float = 0.0
    error_code: int | None = None
    timeout_delay: float = 1.0


@dataclass
class FaultInjector:
    """Thread-safe, replaceable fault rules with a (optionally seeded) RNG."""

    spec: str = ""
    seed: int | None = None
    in_process: bool = False
    sleep: Callable[[float], None] = time.sleep
    counts: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._rng = random.Random(self.seed)
        self._rules = parse_spec(self.spec)
        self._forced: list[int] = []

    def set_spec(self, spec: str, *, seed: int | None = None) -> None:
        """Replace the rules (validated first: a bad spec leaves the old rules active)."""
        rules = parse_spec(spec)
        with self._lock:
            self._rules = rules
            self.spec = spec
            if seed is not None:
                self.seed = seed
                self._rng = random.Random(seed)
            self._forced = []

    def force_errors(self, *codes: int) -> None:
        """The next requests that a rule gives error probabilities get these errors, in
        order, before random draws resume: a test that must see each kind of fault at least
        once does not depend on how many requests its timing happens to make."""
        unknown = [c for c in codes if c not in _ERROR_KEYS.values()]
        if unknown:
            raise FaultSpecError(
                f"cannot force errors {unknown}; expected one of {sorted(set(_ERROR_KEYS.values()))}"
            )
        with self._lock:
            self._forced.extend(codes)

    def clear(self) -> None:
        self.set_spec("")

    @property
    def active(self) -> bool:
        return bool(self._rules)

    def decide(self, resource: str, subresource: str | None, verb: str) -> FaultDecision:
        rules = self._rules
        if not rules:
            return FaultDecision()
        latency: tuple[float, float] | None = None
        errs: tuple[tuple[int, float], ...] | None = None
        delay: float | None = None
        for r in rules:
            if not r.matches(resource, subresource, verb):
                continue
            if latency is None and r.latency is not None:
                latency = r.latency
            if errs is None and r.errors:
                errs = r.errors
            if delay is None and r.timeout_delay is not None:
                delay = r.timeout_delay
        out = FaultDecision(timeout_delay=1.0 if delay is None else delay)
        with self._lock:
            if latency is not None:
                out.latency = latency[0] if latency[0] == latency[1] else self._rng.uniform(*latency)
            if errs and self._forced:
                out.error_code = self._forced.pop(0)
            elif errs:
                u = self._rng.random()
                acc = 0.0
                for code, p in errs:
                    acc += p
                    if u < acc:
                        out.error_code = code
                        break
        return out

    def apply(self, resource: str, subresource: str | None, verb: str, name: str = "") -> None:
        """Sleep the injected latency and raise the injected error, if any."""
        d = self.decide(resource, subresource, verb)
        if d.latency > 0:
            self.counts["latency"] += 1
            self.sleep(d.latency)
        if d.error_code is None:
            return
        self.counts[str(d.error_code)] += 1
        label = f"{resource}/{subresource}" if subresource else resource
        if d.error_code == 409:
            raise errors.conflict("", label, name or "<unknown>", "injected conflict (fault injection)")
        if d.error_code == 429:
            raise errors.too_many_requests("injected: too many requests, please try again later")
        if d.error_code == 500:
            raise errors.internal(f"injected server error for {verb} {label}")
        if d.error_code == 504:
            self.sleep(d.timeout_delay)
            raise errors.timeout(
                f"injected timeout: the server was unable to return a response in the time "
                f"allotted for {verb} {label}"
            )
        raise ApiError(errors.status(d.error_code, "InternalError", "injected fault"))  # pragma: no cover
