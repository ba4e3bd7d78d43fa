import type { ReactNode } from "react";
import { ApiError, signInUrl } from "../api/client";

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function ErrorView({ error, title, onRetry }: { error: Error; title?: string; onRetry?: () => void }) {
  const api = error instanceof ApiError ? error : null;
  return (
    <div className="error-box" role="alert">
      <strong>{title ?? "Something went wrong"}:</strong> {error.message}
      {api?.needsSignIn ? (
        <>
          {" "}
          <a href={signInUrl()}>Sign in</a>
        </>
      ) : null}
      {onRetry ? (
        <>
          {" "}
          <button type="button" className="small" onClick={onRetry}>
            Try again
          </button>
        </>
      ) : null}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

/** Loading / error / content for one loaded value. */
export function Async<T>({
  state,
  label,
  children,
}: {
  state: { data: T | undefined; error: Error | undefined; loading: boolean; reload: () => void };
  label?: string;
  children: (data: T) => ReactNode;
}) {
  if (state.error && state.data === undefined) return <ErrorView error={state.error} onRetry={state.reload} />;
  if (state.data === undefined) return <Loading label={label} />;
  return <>{children(state.data)}</>;
}
