/** Explains the restricted-data latch of a workspace: what it blocks, and that it is for good. */
export function LatchBanner({ workspaceName }: { workspaceName: string }) {
  return (
    <div className="banner latch" data-testid="latch-banner" role="status">
      <strong>Restricted data: {workspaceName} is latched for good.</strong> An agent in this workspace read
      restricted data, so auto-approval is off (every action needs a person), writes that send data out of the
      company (git push, outbound writes to other bindings) are refused at submission, and sharing is
      restricted.
    </div>
  );
}
