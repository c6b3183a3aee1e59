import { Visible } from "./Visible.tsx";

/** The built-in agent is off in this deployment: why, and what to configure (AgentInfo.reason). */
export function AgentOffBanner({ reason }: { reason: string }) {
  return (
    <p className="banner warn" data-testid="agent-off" role="status">
      The built-in agent is off: <Visible text={reason || "no model is configured"} />
    </p>
  );
}
