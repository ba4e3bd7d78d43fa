"""The machinery: the plugin registry, profiles built from a configuration, and the replay loop."""
