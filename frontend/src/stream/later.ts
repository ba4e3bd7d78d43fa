// A task of its own for work that should not wait behind the tasks already queued (a fast replay queues hundreds
// of websocket messages a second): scheduler.postTask at user-blocking priority where the browser has it, else a
// timer.

interface PostTaskScheduler {
  postTask(cb: () => void, opts: { priority: "user-blocking"; delay?: number; signal?: AbortSignal }): Promise<unknown>;
}

/** Run `fn` in `delay` ms (at once: 0) in a task of its own; returns what cancels it. */
export function later(fn: () => void, delay: number, scope: unknown = globalThis): () => void {
  const scheduler = (scope as { scheduler?: Partial<PostTaskScheduler> }).scheduler;
  const wait = Math.max(0, delay);
  if (scheduler && typeof scheduler.postTask === "function" && typeof AbortController === "function") {
    const controller = new AbortController();
    // an aborted task rejects its promise: that is the cancellation, not an error
    scheduler.postTask(fn, { priority: "user-blocking", delay: wait, signal: controller.signal }).catch(() => undefined);
    return () => controller.abort();
  }
  const timer = setTimeout(fn, wait);
  return () => clearTimeout(timer);
}
