import { useCallback, useEffect, useRef, useState } from "react";
import { api } from "./client";

export interface ApiState<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
  setData: (update: T | ((prev: T | undefined) => T)) => void;
}

/**
 * Load something whenever `key` changes (null: nothing to load). `load` receives an AbortSignal; a newer
 * key aborts the older request, so a slow answer never overwrites a newer one. `reload` keeps the data
 * on screen while it refreshes.
 */
export function useLoader<T>(key: string | null, load: (signal: AbortSignal) => Promise<T>): ApiState<T> {
  const [data, setDataState] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState<boolean>(key !== null);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const lastKey = useRef<string | null>(null);

  useEffect(() => {
    if (key === null) {
      setLoading(false);
      return;
    }
    const ctrl = new AbortController();
    if (lastKey.current !== key) {
      setDataState(undefined);
      lastKey.current = key;
    }
    setLoading(true);
    setError(undefined);
    loadRef
      .current(ctrl.signal)
      .then((value) => {
        if (!ctrl.signal.aborted) {
          setDataState(value);
          setLoading(false);
        }
      })
      .catch((e: unknown) => {
        if (ctrl.signal.aborted || (e as Error)?.name === "AbortError") return;
        setError(e instanceof Error ? e : new Error(String(e)));
        setLoading(false);
      });
    return () => ctrl.abort();
  }, [key, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  const setData = useCallback((update: T | ((prev: T | undefined) => T)) => {
    setDataState((prev) => (typeof update === "function" ? (update as (p: T | undefined) => T)(prev) : update));
  }, []);
  return { data, error, loading, reload, setData };
}

/** GET a URL as JSON (null: nothing to load). */
export function useApi<T>(url: string | null): ApiState<T> {
  return useLoader<T>(url, (signal) => api.get<T>(url as string, { signal }));
}
