"""The node resources plugins, grouped as upstream groups them (pkg/scheduler/framework/plugins/noderesources/):
``fit`` (NodeResourcesFit, fit.go), ``balanced_allocation`` (NodeResourcesBalancedAllocation,
balanced_allocation.go) and ``resource_allocation`` (the scorers they share: resource_allocation.go,
least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go)."""
