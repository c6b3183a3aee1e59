/**
 * Vite configuration of the approver web app. `base: "./"` keeps asset URLs relative so the built
 * `dist/` works wherever it is served; `npm run dev` proxies `/api` to the gateway on
 * GATEHOUSE_GATEWAY_PORT (default 8780).
 */
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const gatewayPort = process.env.GATEHOUSE_GATEWAY_PORT ?? "8780";

export default defineConfig({
  base: "./",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true },
  server: {
    proxy: {
      "/api": { target: `http://127.0.0.1:${gatewayPort}`, changeOrigin: false },
    },
  },
});
