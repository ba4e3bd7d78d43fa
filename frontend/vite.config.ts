/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

declare const process: { env: Record<string, string | undefined> };

// The build goes into the Python package (schedviz/explorer/), so that the wheel carries it: Django
// serves its index.html at / and the SPA routes; WhiteNoise serves the assets from STATIC_URL.
const backend = process.env.SCHEDVIZ_BACKEND ?? "http://127.0.0.1:8010";

export default defineConfig({
  base: "/static/",
  plugins: [react()],
  build: {
    outDir: "../schedviz/explorer",
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 800,
  },
  server: {
    // `npm run dev`: the API, the websocket and the sign-in pages come from a running `schedviz serve`.
    proxy: {
      "/api": backend,
      "/accounts": backend,
      "/ws": { target: backend, ws: true },
    },
  },
  test: {
    environment: "jsdom",
    globals: true,
    setupFiles: ["./src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    css: false,
  },
});
