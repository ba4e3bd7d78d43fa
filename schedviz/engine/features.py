"""Feature gates that change the scheduler's configuration defaults or validation, or a plugin's
behaviour, at their v1.35 defaults (pkg/features/kube_features.go)."""

from __future__ import annotations

from collections.abc import Mapping

DEFAULT_FEATURES: Mapping[str, bool] = {
    "DynamicResourceAllocation": True,
    "NodeDeclaredFeatures": False,
    "GangScheduling": False,
    "StorageCapacityScoring": False,
    "DRASchedulerFilterTimeout": True,
    "DRADeviceBindingConditions": False,
    "DRAResourceClaimDeviceStatus": True,
}
