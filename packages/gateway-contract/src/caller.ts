/** Who ran the code that read or wrote: `agent` (id = chat id), `gadget`, `user`, `hook`. */
export interface Caller {
  kind: string;
  id: string;
}
