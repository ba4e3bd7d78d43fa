import { useEffect } from "react";
import { Link, Navigate, NavLink, Route, Routes, useLocation } from "react-router-dom";
import { readCookie } from "./api/client";
import { ComparePage } from "./pages/ComparePage";
import { ConfigPage } from "./pages/ConfigPage";
import { ExplainPage } from "./pages/ExplainPage";
import { LiveClusterPage } from "./pages/LiveClusterPage";
import { LiveClustersPage } from "./pages/LiveClustersPage";
import { LiveCyclePage } from "./pages/LiveCyclePage";
import { LiveExplainPage } from "./pages/LiveExplainPage";
import { PlanPage, PlansPage } from "./pages/PlanPage";
import { ReplayPage } from "./pages/ReplayPage";
import { ReplaysPage } from "./pages/ReplaysPage";
import { SnapshotPage } from "./pages/SnapshotPage";
import { SnapshotsPage } from "./pages/SnapshotsPage";
import { TimelinePage } from "./pages/TimelinePage";

function NotFound() {
  return (
    <div className="panel">
      <h1>Page not found</h1>
      <p>
        There is nothing at this address. Go to the <Link to="/snapshots">snapshots</Link>.
      </p>
    </div>
  );
}

function SignOut() {
  return (
    <form method="post" action="/accounts/logout/" style={{ margin: 0 }}>
      <input type="hidden" name="csrfmiddlewaretoken" value={readCookie("csrftoken")} />
      <button type="submit" className="linklike" style={{ color: "#d6deea" }}>
        Sign out
      </button>
    </form>
  );
}

export function App() {
  const location = useLocation();
  useEffect(() => {
    // move focus to the page's content on navigation, for keyboard and screen reader users
    const main = document.getElementById("main");
    if (main && document.activeElement === document.body) main.focus({ preventScroll: true });
  }, [location.pathname]);
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link className="brand" to="/snapshots">
          <svg width="20" height="20" viewBox="0 0 16 16" aria-hidden="true">
            <rect width="16" height="16" rx="3" fill="#0b5394" />
            <path d="M3 11h3V5H3zm4 0h3V3H7zm4 0h2V7h-2z" fill="white" />
          </svg>
          SchedViz
        </Link>
        <nav aria-label="Main">
          <NavLink to="/snapshots">Snapshots</NavLink>
          <NavLink to="/replays" end>
            Replays
          </NavLink>
          <NavLink to="/live">Live</NavLink>
          <NavLink to="/configurations">Configurations</NavLink>
          <NavLink to="/compare">Compare</NavLink>
          <NavLink to="/plans">Plan</NavLink>
        </nav>
        <div className="right">
          <span>kube-scheduler v1.35.4</span>
          <a href="/api/docs/">API</a>
          <SignOut />
        </div>
      </header>
      <main id="main" tabIndex={-1} style={{ outline: "none" }}>
        <Routes>
          <Route path="/" element={<Navigate to="/snapshots" replace />} />
          <Route path="/snapshots" element={<SnapshotsPage />} />
          <Route path="/snapshots/:id" element={<SnapshotPage />} />
          <Route path="/replays" element={<ReplaysPage />} />
          <Route path="/live" element={<LiveClustersPage />} />
          <Route path="/live/:id" element={<LiveClusterPage />} />
          <Route path="/live/:id/cycles/:seq" element={<LiveCyclePage />} />
          <Route path="/live/:id/cycles/:seq/why" element={<LiveExplainPage />} />
          <Route path="/replays/:id" element={<ReplayPage />} />
          <Route path="/replays/:id/cycles/:seq" element={<ReplayPage />} />
          <Route path="/replays/:id/pods/:ns/:name" element={<ExplainPage />} />
          <Route path="/replays/:id/timeline" element={<TimelinePage />} />
          <Route path="/configurations" element={<ConfigPage />} />
          <Route path="/configurations/:id" element={<ConfigPage />} />
          <Route path="/compare" element={<ComparePage />} />
          <Route path="/compare/:a/:b" element={<ComparePage />} />
          <Route path="/plans" element={<PlansPage />} />
          <Route path="/plans/:id" element={<PlanPage />} />
          <Route path="*" element={<NotFound />} />
        </Routes>
      </main>
    </>
  );
}
