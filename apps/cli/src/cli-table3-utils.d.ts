/** cli-table3's width measure (its src/utils.js): the widest line's terminal width, colour codes ignored. */
declare module "cli-table3/src/utils.js" {
  export function strlen(text: string): number;
}
