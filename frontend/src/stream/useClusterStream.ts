import { useEffect, useRef, useState } from "react";
import { ReplayStream, type ConnectionState, type StreamOptions } from "./client";
import { INITIAL_CLUSTER_STREAM, reduceCluster, type ClusterMsg, type ClusterStreamState } from "./clusterState";

/** At most this many renders a second: a burst of stored cycles arrives as one batch. */
const FLUSH_MS = 150;

export interface UseClusterStream {
  state: ClusterStreamState;
  connection: ConnectionState;
  detail: string | undefined;
}

export function clusterSocketUrl(clusterId: string, query: string): string {
  const proto = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${proto}//${window.location.host}/ws/clusters/${clusterId}/?${query}`;
}

/**
 * Follow a cluster's live timeline (`/ws/clusters/<id>/`, mode live) after `after` (the last seq the page already
 * has over REST) while `enabled`. The client of the replay stream does the ordering, de-duplication, resuming and
 * keep-alive; messages are reduced in batches.
 */
export function useClusterStream(
  enabled: boolean,
  clusterId: string,
  after: number | null,
  socketFactory?: StreamOptions["socketFactory"],
): UseClusterStream {
  const [state, setState] = useState<ClusterStreamState>(INITIAL_CLUSTER_STREAM);
  const [connection, setConnection] = useState<ConnectionState>("idle");
  const [detail, setDetail] = useState<string | undefined>(undefined);
  const stateRef = useRef<ClusterStreamState>(INITIAL_CLUSTER_STREAM);

  useEffect(() => {
    if (!enabled) {
      setConnection("idle");
      return;
    }
    stateRef.current = INITIAL_CLUSTER_STREAM;
    setState(INITIAL_CLUSTER_STREAM);
    let buffer: ClusterMsg[] = [];
    let timer: ReturnType<typeof setTimeout> | null = null;
    const flush = () => {
      timer = null;
      if (!buffer.length) return;
      const batch = buffer;
      buffer = [];
      stateRef.current = reduceCluster(stateRef.current, batch);
      setState(stateRef.current);
    };
    const stream = new ReplayStream(
      {
        replayId: clusterId,
        mode: "live",
        after: after ? String(after) : undefined,
        topk: 20,
        url: (query) => clusterSocketUrl(clusterId, query),
        notFoundMessage: "This cluster does not exist any more, or is not yours.",
        socketFactory,
      },
      {
        onMessage: (m) => {
          buffer.push(m as unknown as ClusterMsg);
          if (timer === null) timer = setTimeout(flush, FLUSH_MS);
        },
        onState: (s, d) => {
          setConnection(s);
          setDetail(d);
        },
      },
    );
    stream.start();
    return () => {
      stream.stop();
      if (timer !== null) clearTimeout(timer);
    };
  }, [enabled, clusterId, after, socketFactory]);

  return { state, connection, detail };
}
