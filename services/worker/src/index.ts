/** The lifecycle worker (Temporal): being built; see issue 3. */
export {};
