import { afterEach, describe, expect, it, vi } from "vitest";
import { later } from "./later";

afterEach(() => vi.useRealTimers());

describe("later", () => {
  it("posts a user-blocking task where the browser has scheduler.postTask, and aborts it on cancel", async () => {
    const calls: { priority: string; delay?: number; signal?: AbortSignal }[] = [];
    const scheduler = {
      postTask: (cb: () => void, opts: { priority: "user-blocking"; delay?: number; signal?: AbortSignal }) => {
        calls.push(opts);
        return opts.signal?.aborted ? Promise.reject(new Error("aborted")) : Promise.resolve(cb());
      },
    };
    const fn = vi.fn();
    later(fn, 12, { scheduler });
    expect(fn).toHaveBeenCalledTimes(1);
    expect(calls[0]).toMatchObject({ priority: "user-blocking", delay: 12 });
    const cancel = later(fn, -5, { scheduler });
    expect(calls[1].delay).toBe(0);
    cancel();
    expect(calls[1].signal?.aborted).toBe(true);
    // a rejected (aborted) task is not an unhandled error
    later(fn, 0, { scheduler: { postTask: () => Promise.reject(new Error("aborted")) } });
    await Promise.resolve();
  });

  it("falls back to a timer, which cancel clears", () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    later(fn, 30, {});
    vi.advanceTimersByTime(29);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    const cancel = later(fn, 10, { scheduler: {} });
    cancel();
    vi.advanceTimersByTime(20);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});
