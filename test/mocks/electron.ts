// Stand-in for the `electron` module in unit tests (filled in with the shell's tests).
export {};
