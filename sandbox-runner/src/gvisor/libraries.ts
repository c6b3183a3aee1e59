import { execFileSync } from "node:child_process";

/**
 * Shared libraries (absolute paths, including the dynamic loader) that the given ELF files link,
 * as printed by `ldd`. Used to bind-mount exactly those files into the container.
 * @throws Error when ldd is missing or fails on a file.
 */
export function linkedLibraries(files: string[]): string[] {
  const found = new Set<string>();
  for (const file of files) {
    const out = execFileSync("ldd", [file], { encoding: "utf8" });
    for (const line of out.split("\n")) {
      // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
      const match = /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
      if (match?.[1]) found.add(match[1]);
    }
  }
  return [...found].sort();
}
