import type { Me } from "@gatehouse/gateway-contract";
import { NavLink } from "react-router-dom";

/** The top bar: the app name, the person and roles, the live state, and sign-out. */
export function Header({ me, liveUp, onSignOut }: { me: Me; liveUp: boolean; onSignOut: () => void }) {
  return (
    <header className="app-header">
      <NavLink to="/" className="brand">
        Gatehouse
      </NavLink>
      <span className={`live ${liveUp ? "up" : "down"}`} title="Live updates from the gateway">
        {liveUp ? "● live" : "○ reconnecting…"}
      </span>
      <span className="spacer" />
      <span className="who">
        <strong data-testid="me-name">{me.name}</strong>{" "}
        <span className="roles" data-testid="me-roles">
          {me.roles.join(", ") || "no roles"}
        </span>
      </span>
      {!me.canDecide && (
        <span className="badge read-only" data-testid="read-only">
          read-only (auditor)
        </span>
      )}
      <NavLink to="/settings/notifications" data-testid="notifications-link">
        Notifications
      </NavLink>
      <button type="button" onClick={onSignOut} data-testid="sign-out">
        Sign out
      </button>
    </header>
  );
}
