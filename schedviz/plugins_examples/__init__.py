"""Example custom plugins (docs/plugins.md, "Custom plugins").

Load them with ``--plugin-module schedviz.plugins_examples.gpu_binpack`` (or ``.label_permit``) on the
command line, or ``SCHEDVIZ_PLUGIN_MODULES`` for the web application, then enable ``GpuBinpack`` or
``LabelPermit`` in a KubeSchedulerConfiguration like any in-tree plugin.
"""
