/**
 * When two node names are the same name (issue 26, item 9): `WK1` and `wk1.` look like `wk1` to a person reading
 * the Workers view, so identity (approvals, pre-approvals, the awaiting list, a name bound to its machine) compares
 * names case-folded and without trailing dots. What is shown keeps the spelling the machine sent.
 */

/** The identity key of a node name: lower case, trailing dots dropped. */
export function nodeNameKey(node: string): string {
  return node.toLowerCase().replace(/\.+$/, '');
}

/** True when `a` and `b` name the same node, however spelled. */
export function sameNodeName(a: string, b: string): boolean {
  return nodeNameKey(a) === nodeNameKey(b);
}

/** "…: node names are compared without case and trailing dots" sentence for refusals of a lookalike. */
export function lookalikeNote(sent: string, existing: string): string {
  return `"${sent}" is the same name as "${existing}" (node names are compared without case and trailing dots)`;
}
