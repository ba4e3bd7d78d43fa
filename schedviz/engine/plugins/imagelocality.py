"""ImageLocality: favours nodes that already hold the pod's container images.

Mirrors framework/plugins/imagelocality/image_locality.go (v1.35). Image states follow the
scheduler cache (backend/cache/cache.go addNodeImageStates): an image name's size is the
sizeBytes recorded by the first node (in node order) that lists it, and its spread is the number
of distinct nodes listing that name over the number of nodes in the snapshot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from ..framework import MAX_NODE_SCORE, CycleState, Handle
from ..framework.cycle_state import BARE_NODE_INFOS
from ..objects import Pod
from .helper import go_div

if TYPE_CHECKING:
    from ..cluster import ClusterState

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

NAME = "ImageLocality"

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB

_CACHE_KEY = "ImageLocality.images"


def normalized_image_name(name: str) -> str:
    """normalizedImageName: add the ":latest" tag when the name has no tag after its last "/".
    (v1.35 does nothing else: no docker.io/library prefix is added or removed.)"""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


class ImageStates:
    """Every image name listed by some node: its size, and which nodes list it."""

    def __init__(self, cluster: ClusterState) -> None:
        self.nodes_list: object = cluster.nodes
        self.total_nodes = cluster.n
        holders: dict[str, list[int]] = {}
        self.size: dict[str, int] = {}
        for i, node in enumerate(cluster.nodes):
            for names, size in node.images:
                for name in names:
                    if name not in self.size:
                        self.size[name] = size
                    lst = holders.setdefault(name, [])
                    if not lst or lst[-1] != i:
                        lst.append(i)
        self.holders: dict[str, IntArray] = {k: np.asarray(v, dtype=np.int64) for k, v in holders.items()}
        self._masks: dict[str, BoolArray] = {}

    def scaled_score(self, name: str) -> int:
        """scaledImageScore: the size scaled by the fraction of nodes holding the image (float64)."""
        spread = float(len(self.holders[name])) / float(self.total_nodes)
        return int(float(self.size[name]) * spread)

    def mask(self, name: str) -> BoolArray:
        m = self._masks.get(name)
        if m is None:
            m = np.zeros(self.total_nodes, dtype=bool)
            m[self.holders[name]] = True
            self._masks[name] = m
        return m


def image_states(cluster: ClusterState) -> ImageStates:
    """Node images never change within a ClusterState: cached until the node list changes."""
    st: ImageStates | None = cluster.caches.get(_CACHE_KEY)
    if st is None or st.nodes_list is not cluster.nodes or st.total_nodes != cluster.n:
        st = ImageStates(cluster)
        cluster.caches[_CACHE_KEY] = st
    return st


def pod_images(pod: Pod) -> tuple[dict[str, int], int]:
    """The pod's normalized image names with how many containers use each (init containers
    included), and the number of containers; kept in ``pod.cache``."""
    cached: tuple[dict[str, int], int] | None = pod.cache.get(NAME)
    if cached is not None:
        return cached
    counts: dict[str, int] = {}
    total = 0
    for key in ("initContainers", "containers"):
        cs = pod.spec.get(key) or []
        if not isinstance(cs, list):
            raise InputError("expected a list", obj=pod.ident, field=f"spec.{key}")
        for i, c in enumerate(cs):
            if not isinstance(c, dict):
                raise InputError("expected an object", obj=pod.ident, field=f"spec.{key}[{i}]")
            image = c.get("image") or ""
            if not isinstance(image, str):
                raise InputError("must be a string", obj=pod.ident, field=f"spec.{key}[{i}].image")
            name = normalized_image_name(image)
            counts[name] = counts.get(name, 0) + 1
            total += 1
    pod.cache[NAME] = (counts, total)
    return counts, total


def calculate_priority(sum_scores: IntArray, num_containers: int) -> IntArray:
    """calculatePriority: clamp to [minThreshold, maxThreshold] and scale to [0, MaxNodeScore]."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    s = np.where(
        sum_scores < MIN_THRESHOLD,
        MIN_THRESHOLD,
        np.where(sum_scores > max_threshold, max_threshold, sum_scores),
    )
    den = max_threshold - MIN_THRESHOLD
    num = MAX_NODE_SCORE * (s - MIN_THRESHOLD)
    if den <= 0:
        # no containers: the sum clamps to minThreshold, so the numerator is 0
        return np.zeros(len(sum_scores), dtype=np.int64)
    return go_div(num.astype(np.int64), den)


def _sums(images: ImageStates, counts: dict[str, int], nodes: IntArray) -> IntArray:
    """sumImageScores: each container whose image the node holds adds the image's scaled size."""
    sums = np.zeros(len(nodes), dtype=np.int64)
    for name, k in counts.items():
        if name in images.holders:
            sums += np.where(images.mask(name)[nodes], k * images.scaled_score(name), 0)
    return sums


class ImageLocality:
    name = NAME

    def __init__(self, args: dict[str, Any], handle: Handle) -> None:
        self.handle = handle

    def score(self, state: CycleState, pod: Pod, nodes: IntArray) -> IntArray:
        counts, num_containers = pod_images(pod)
        images = image_states(state.cluster)
        bare = state.get(BARE_NODE_INFOS)
        if bare is None:
            # a node's score depends on its images alone: the pods of one template are scored on
            # every node once (ClusterState.memo_per_node)
            return state.cluster.memo_per_node(
                (NAME, tuple(counts.items()), num_containers),
                nodes,
                lambda at: calculate_priority(_sums(images, counts, at), num_containers),
            )
        sums = _sums(images, counts, nodes)
        # a NodeInfo a filter extender rebuilt has no image states
        sums[bare[nodes]] = 0
        return calculate_priority(sums, num_containers)
