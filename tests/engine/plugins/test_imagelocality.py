"""ImageLocality (framework/plugins/imagelocality/image_locality.go).

Expected scores are worked out by hand from the v1.35 rules: each container whose image a node
holds adds int(size * nodesHolding / allNodes); the sum is clamped to [23 MiB, 1000 MiB x
containers] and scaled: 100 * (sum - 23 MiB) / (1000 MiB x containers - 23 MiB), truncated.
"""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.engine.framework import CycleState, Handle
from schedviz.engine.objects import Pod
from schedviz.engine.plugins.imagelocality import ImageLocality, normalized_image_name
from tests.engine.builders import all_nodes, cluster, container, node, pod

MB = 1024 * 1024

NODE_40_300_2000 = [
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
    (["gcr.io/2000:latest"], 2000 * MB),
]
NODE_250_10 = [
    (["gcr.io/250:latest"], 250 * MB),
    (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB),
]


def images_pod(*images: str, init: tuple[str, ...] = ()) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if init:
        extra["initContainers"] = [container(f"i{k}", image=im) for k, im in enumerate(init)]
    return pod("p", containers=[container(f"c{k}", image=im) for k, im in enumerate(images)], **extra)


def run(p: dict[str, Any], node_images: list[list[tuple[list[str], int]]]) -> list[int]:
    c = cluster([node(f"m{i}", images=imgs) for i, imgs in enumerate(node_images)])
    return [int(x) for x in ImageLocality({}, Handle(c)).score(CycleState(c), Pod(p), all_nodes(c))]


CASES: list[tuple[str, dict[str, Any], list[list[tuple[list[str], int]]], list[int]]] = [
    (
        # m0: 40M * 1/2 = 20M < 23M -> 0.  m1: 250M/2 = 125M -> 100*(125-23)/(2000-23) = 5.16 -> 5
        "two images spread on two nodes",
        images_pod("gcr.io/40", "gcr.io/250"),
        [NODE_40_300_2000, NODE_250_10],
        [0, 5],
    ),
    (
        # m0: (40M + 300M)/2 = 170M -> 100*147/1977 = 7.4 -> 7
        "two images on one node",
        images_pod("gcr.io/40", "gcr.io/300"),
        [NODE_40_300_2000, NODE_250_10],
        [7, 0],
    ),
    (
        # m0: 2000M/2 = 1000M -> 100*977/1977 = 49.4 -> 49; m1: 10M/2 < min -> 0
        "big and small image",
        images_pod("gcr.io/10", "gcr.io/2000"),
        [NODE_40_300_2000, NODE_250_10],
        [49, 0],
    ),
    (
        # 3 nodes: int(2000M * (1/3)) = 699050666 bytes; (699050666 - 24117248) * 100 // 2073034752 = 32
        "image on one node of three",
        images_pod("gcr.io/10", "gcr.io/2000"),
        [NODE_40_300_2000, NODE_250_10, []],
        [32, 0, 0],
    ),
    (
        # one container: max threshold 1000M; 2000M/2 = 1000M -> clamps to 100
        "clamped at the max threshold",
        images_pod("gcr.io/2000"),
        [NODE_40_300_2000, NODE_250_10],
        [100, 0],
    ),
    (
        # tag given explicitly matches the node's second name
        "explicit tag",
        images_pod("gcr.io/300:v1"),
        [NODE_40_300_2000, NODE_250_10],
        # 300M/2 = 150M -> 100*(150-23)/(1000-23) = 12.99 -> 12
        [12, 0],
    ),
    (
        # no docker.io/library normalisation: "nginx" becomes "nginx:latest", which m0 lists
        "short name with implied latest",
        images_pod("nginx"),
        [[(["nginx:latest"], 500 * MB)], [(["docker.io/library/nginx:latest"], 500 * MB)]],
        # m0: 500M/2 = 250M -> 100*227/977 = 23.2 -> 23; m1 holds a different name
        [23, 0],
    ),
    (
        # each container counts, even with the same image: 2 x 250M/2 = 250M, max 2000M -> 100*227/1977 = 11
        "same image in two containers",
        images_pod("gcr.io/250", "gcr.io/250"),
        [NODE_40_300_2000, NODE_250_10],
        [0, 11],
    ),
    (
        # init containers count (all of them) in the sum and in the number of containers:
        # m0: 300M/2 = 150M (init) + 2000M/2 = 1000M = 1150M, max 2000M -> 100*1127/1977 = 57
        "init containers count",
        images_pod("gcr.io/2000", init=("gcr.io/300",)),
        [NODE_40_300_2000, NODE_250_10],
        [57, 0],
    ),
    (
        # image on every node: full size. 300M with 1 container: 100*277/977 = 28.35 -> 28
        "image everywhere",
        images_pod("gcr.io/300"),
        [[(["gcr.io/300:latest"], 300 * MB)], [(["gcr.io/300:latest"], 300 * MB)]],
        [28, 28],
    ),
    (
        # the size is the one of the first node listing the name (scheduler cache), here 300M on both
        "size from the first node listing the name",
        images_pod("gcr.io/300"),
        [[(["gcr.io/300:latest"], 300 * MB)], [(["gcr.io/300:latest"], 900 * MB)]],
        [28, 28],
    ),
    ("no images anywhere", images_pod("gcr.io/300"), [[], []], [0, 0]),
]


@pytest.mark.parametrize(("case", "p", "images", "want"), CASES, ids=[c[0] for c in CASES])
def test_score(
    case: str, p: dict[str, Any], images: list[list[tuple[list[str], int]]], want: list[int]
) -> None:
    assert run(p, images) == want


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        ("root@sha256:" + "a" * 64, "root@sha256:" + "a" * 64),
        ("docker.io/library/nginx", "docker.io/library/nginx:latest"),
        ("", ":latest"),
    ],
)
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want
