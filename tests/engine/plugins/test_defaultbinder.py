"""DefaultBinder (framework/plugins/defaultbinder/default_binder.go)."""

from __future__ import annotations

from schedviz.engine.framework import CycleState, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.defaultbinder import Binding, DefaultBinder
from tests.engine.builders import cluster, node, pod


def test_bind_records_the_binding() -> None:
    c = cluster([node("n1")])
    pl = DefaultBinder({}, Handle(c))
    st = CycleState(c)
    p = Pod(pod("web", namespace="shop"))
    s = pl.bind(st, p, "n1")
    assert s.is_success()
    want = Binding("shop", "web", "uid-shop-web", "n1")
    assert pl.bindings == [want]
    assert st.read("DefaultBinder") == want
    assert want.as_object()["target"] == {"kind": "Node", "name": "n1"}
    # binding does not place the pod: that is the runtime's job
    assert c.node_of(p) is None
