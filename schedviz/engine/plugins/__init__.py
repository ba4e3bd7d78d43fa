"""In-tree plugins, one module per upstream plugin (pkg/scheduler/framework/plugins/)."""
