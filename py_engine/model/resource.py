"""The WorkloadSpread resource as the API client addresses it."""

from __future__ import annotations

from py_engine.apiclient.resources import Resource
from py_engine.model.constants import GROUP, KIND, PLURAL, VERSION

SPREADS = Resource.custom(GROUP, VERSION, PLURAL, kind=KIND)
