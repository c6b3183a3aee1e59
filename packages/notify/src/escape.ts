/** Slack mrkdwn escaping: `&`, `<` and `>` become entities so untrusted text cannot form links or mentions. */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** HTML escaping for text and attribute values: `& < > " '`. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/**
 * Escaping for Teams Adaptive Card TextBlocks, whose markdown subset knows bold, italic, lists and links:
 * the characters that start those (`\\ * _ [ ]`) are backslash-escaped and `<`/`>` become entities,
 * so untrusted text cannot form a link or change emphasis. Other punctuation is left alone.
 */
export function escapeTeams(text: string): string {
  return text
    .replace(/[\\*_[\]]/g, "\\$&")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;");
}
