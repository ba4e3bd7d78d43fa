"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): decoding, defaulting, validation and the
final plugin lists of each profile.

The pipeline follows kube-scheduler v1.35, one module per stage:

- ``decode``: strict decoding (unknown fields and wrong types are errors), top level and typed plugin
  args (kube-scheduler/config/v1 types.go, apimachinery's strict JSON decoder);
- ``defaults``: defaulting (pkg/scheduler/apis/config/v1/defaults.go, default_plugins.go mergePlugins);
- ``validation``: validation (pkg/scheduler/apis/config/validation/validation.go; the plugins' args
  through their own ``validate_args``, validation_pluginargs.go's rules living in each plugin module);
- ``profiles``: per profile, what the framework builds (framework/runtime/framework.go NewFramework,
  updatePluginList, expandMultiPointPlugins, getScoreWeights) and pkg/scheduler/profile/profile.go;
- ``plugins``: what a plugin class declares about its args, looked up through the registry;
- ``load``: ``load_config``, the whole pipeline; ``types``: the names and the result types.

Every problem is collected and raised together as a ``ConfigError``, each naming its field path in
upstream's wording (``field.Error`` rendering: ``<path>: Invalid value: <value>: <detail>``). Field
errors, durations and name formats are apimachinery's (``schedviz.engine.apimachinery``), re-exported
here.
"""

from ..apimachinery import (
    format_duration,
    is_dns1123_subdomain,
    is_label_key,
    is_label_value,
    parse_duration,
    parse_duration_ns,
)
from .decode import parse_config_text
from .defaults import default_plugins, merge_plugin_set
from .load import load_config
from .types import (
    API_VERSION,
    DEFAULT_FEATURES,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    KIND,
    PluginRef,
    ProfileConfig,
    SchedulerConfig,
)
from .validation import join_field

__all__ = [
    "API_VERSION",
    "DEFAULT_FEATURES",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "KIND",
    "PluginRef",
    "ProfileConfig",
    "SchedulerConfig",
    "default_plugins",
    "format_duration",
    "is_dns1123_subdomain",
    "is_label_key",
    "is_label_value",
    "join_field",
    "load_config",
    "merge_plugin_set",
    "parse_config_text",
    "parse_duration",
    "parse_duration_ns",
]
