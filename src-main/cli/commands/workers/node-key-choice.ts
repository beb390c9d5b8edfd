/**
 * NAME and --key SHA256:… of `workers approve` and `workers accept-key`: the person names exactly the key they
 * compared with the one the machine's agent prints, so a key swapped in meanwhile is refused, not approved.
 */
import { noMorePositionals, parseCommandLine, UsageError } from '../../command';
import { operatorOptions } from '../../operator/operator-command';

export const FINGERPRINT_PATTERN = /^SHA256:[A-Za-z0-9+/]{43}$/;

export const nodeKeyOptions = { ...operatorOptions, key: { type: 'string' } } as const;

/** The node and the fingerprint a command was given; usage errors say what is missing and where to find it. */
export function parseNodeKeyChoice(args: string[], command: string) {
  const { values, positionals } = parseCommandLine(args, nodeKeyOptions);
  if (positionals.length === 0) throw new UsageError(`give the node's name (see \`gpu-share workers list\`): gpu-share workers ${command} NAME --key SHA256:…`);
  noMorePositionals(positionals, 1);
  const node = positionals[0]!;
  const key = values.key;
  if (key === undefined) {
    throw new UsageError(
      `--key SHA256:… is required: the fingerprint of exactly the key to trust (\`gpu-share workers list\` shows it; compare it with the one the machine's agent prints)`,
    );
  }
  if (!FINGERPRINT_PATTERN.test(key)) throw new UsageError(`--key ${key.slice(0, 80)} is not a key fingerprint: it looks like SHA256: and 43 base64 characters, as \`gpu-share workers list\` shows it`);
  return { values, node, fingerprint: key };
}
