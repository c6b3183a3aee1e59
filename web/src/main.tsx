/** Entry point: takes a `#token=` hand-over from the URL before the router reads the fragment. */
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { HashRouter } from "react-router-dom";
import { App } from "./App.tsx";
import { takeTokenFromFragment } from "./auth.ts";
import "./styles.css";

takeTokenFromFragment();

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");
createRoot(root).render(
  <StrictMode>
    <HashRouter>
      <App />
    </HashRouter>
  </StrictMode>,
);
