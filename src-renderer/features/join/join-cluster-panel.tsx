/**
 * "Join another cluster": makes this machine a worker of another machine's coordinator, the app's side of
 * `gpu-share worker --join URL --token T`. It shows where this machine trains now (badge + one sentence that
 * the core keeps current: joining, joined, lost and retrying, or why a join failed) and offers Join or Leave.
 */
import { LAN_FLAG } from '../../../src-shared/nodes/join-hint';
import { useEffect, useRef, useState, type FormEvent, type Ref, type RefObject } from 'react';
import { useCommands, useServices } from '../../app-context';
import { Badge } from '../../ui/badge';
import { FormField } from '../../ui/form-field';
import { appStore, useApp } from '../../store/app-store';
import { fillFromDiscovered, shortFingerprint, type DiscoverySlice } from './discovery';
import { loadDiscovered } from './discovery-commands';
import type { DiscoveredCoordinator } from '../../../src-shared/nodes/ipc-discovery';
import type { MembershipState } from '../../../src-shared/ipc';
import { canJoin, checkJoinForm, membershipBadge, type JoinFormErrors, type JoinFormFields } from './join-form';

/** Input ids, so the first field with an error can take the focus. */
const FIELD_IDS: Record<keyof JoinFormFields, string> = { url: 'join-url', token: 'join-token', certSha256: 'join-cert', name: 'join-name' };

const EMPTY: JoinFormFields = { url: '', token: '', name: '', certSha256: '' };

function TextField({
  id,
  name,
  label,
  value,
  error,
  hint,
  type = 'text',
  mono = type !== 'text',
  placeholder,
  inputRef,
  onChange,
}: {
  id: string;
  name: keyof JoinFormFields;
  label: string;
  value: string;
  error: string | undefined;
  hint?: string;
  type?: 'text' | 'password' | 'url';
  /** Monospace, for machine text people compare by eye (URLs, tokens, fingerprints). */
  mono?: boolean;
  placeholder?: string;
  inputRef?: Ref<HTMLInputElement>;
  onChange: (value: string) => void;
}) {
  return (
    <FormField id={id} label={label} error={error} hint={hint}>
      {(p) => (
        <input
          {...p}
          ref={inputRef}
          name={name}
          type={type}
          value={value}
          placeholder={placeholder}
          onChange={(e) => onChange(e.target.value)}
          autoComplete="off"
          autoCapitalize="off"
          spellCheck={false}
          className={mono ? 'mono' : undefined}
        />
      )}
    </FormField>
  );
}

/**
 * Coordinators heard on the LAN that prove they hold the typed join token; picking one fills the URL and
 * fingerprint. Without a token nothing can be proven, so nothing is listed (anyone can advertise anything).
 */
export function FoundOnNetwork({ coordinators, error, onPick, hasToken }: DiscoverySlice & { onPick: (found: DiscoveredCoordinator) => void; hasToken: boolean }) {
  return (
    <section className="discovered" aria-labelledby="discovered-title" data-testid="discovered">
      <h3 id="discovered-title" className="discovered-title">
        Found on your network
      </h3>
      {error ? (
        <p className="hint" role="status">
          {error}
        </p>
      ) : !hasToken ? (
        <p className="hint" data-testid="discovered-needs-token">
          Paste the join token below first: a coordinator on your network is listed here once it proves it holds that token (it is never sent).
        </p>
      ) : coordinators === null ? (
        <p className="hint">Looking…</p>
      ) : coordinators.length === 0 ? (
        <p className="hint" data-testid="discovered-none">
          None that holds this token heard yet. A coordinator is found here when it listens beyond this machine (serve {LAN_FLAG}) on the same network; otherwise paste its URL below.
        </p>
      ) : (
        <ul className="discovered-list">
          {coordinators.map((found) => (
            <li key={found.url} data-testid="discovered-item">
              <button type="button" className="link-button" onClick={() => onPick(found)} aria-label={`Use ${found.name} at ${found.url}`}>
                {found.name}
              </button>{' '}
              <span className="mono">{found.url}</span> <span className="mono muted" title={found.certSha256}>{shortFingerprint(found.certSha256)}</span>{' '}
              <Badge badge={found.clusterName ? { tone: 'ok', text: `Cluster ${found.clusterName}` } : { tone: 'neutral', text: 'No cluster tag' }} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Keeps keyboard focus in the panel when the form gives way to Leave and back. */
function useFocusOnModeChange(mode: string, leaveRef: RefObject<HTMLButtonElement | null>, urlRef: RefObject<HTMLInputElement | null>): void {
  const previousMode = useRef(mode);
  useEffect(() => {
    const before = previousMode.current;
    previousMode.current = mode;
    if (before === mode) return;
    const active = document.activeElement;
    const inPanel = active === document.body || !!active?.closest('[data-testid="join-cluster"]');
    if (!inPanel) return;
    if (mode === 'joined' || mode === 'lost') leaveRef.current?.focus();
    else if (mode === 'own-coordinator' || mode === 'error') urlRef.current?.focus();
  }, [mode]);
}

/** Which coordinator this machine trains for, as which worker and node. */
function MembershipFacts({ membership }: { membership: MembershipState }) {
  return (
    <dl className="membership-facts">
      <div>
        <dt>Coordinator</dt>
        <dd className="mono">{membership.url}</dd>
      </div>
      <div>
        <dt>Worker</dt>
        <dd data-testid="membership-worker">{membership.workerId ?? '—'}</dd>
      </div>
      <div>
        <dt>As node</dt>
        <dd>{membership.node}</dd>
      </div>
    </dl>
  );
}

interface JoinFieldsProps {
  fields: JoinFormFields;
  errors: JoinFormErrors;
  set: (key: keyof JoinFormFields) => (value: string) => void;
  urlRef: Ref<HTMLInputElement>;
  ownName: string;
}

/** The four fields: where the coordinator is, its token and fingerprint, and the name to join as. */
function JoinFields({ fields, errors, set, urlRef, ownName }: JoinFieldsProps) {
  return (
    <>
      <TextField
        id={FIELD_IDS.url}
        name="url"
        label="Coordinator URL"
        type="url"
        value={fields.url}
        error={errors.url}
        placeholder="https://192.168.1.20:7421"
        inputRef={urlRef}
        onChange={set('url')}
      />
      <TextField
        id={FIELD_IDS.token}
        name="token"
        label="Join token"
        type="password"
        value={fields.token}
        error={errors.token}
        hint="From the other machine's Workers view: the GPU_SHARE_JOIN_TOKEN=… part of its “Add a worker” command."
        onChange={set('token')}
      />
      <TextField
        id={FIELD_IDS.certSha256}
        name="certSha256"
        label="Certificate fingerprint (SHA-256)"
        mono
        value={fields.certSha256}
        error={errors.certSha256}
        placeholder="3f:a9:… (64 hex digits)"
        hint="Needed when the URL starts with https://: the --cert-sha256 value of the other machine's join command. It proves this machine talks to that coordinator and no other."
        onChange={set('certSha256')}
      />
      <TextField
        id={FIELD_IDS.name}
        name="name"
        label="Name there (optional)"
        value={fields.name}
        error={errors.name}
        placeholder={ownName || 'this machine'}
        onChange={set('name')}
      />
    </>
  );
}

export function JoinClusterPanel() {
  const membership = useApp((s) => s.membership);
  const refused = useApp((s) => s.membershipError);
  const joining = useApp((s) => s.busy.includes('join'));
  const leaving = useApp((s) => s.busy.includes('leave'));
  const ownName = useApp((s) => s.workers.find((w) => w.local)?.node ?? s.hardware?.hostname ?? '');
  const commands = useCommands();
  const { api } = useServices();
  const discovery = useApp((s) => s.discovery);
  const [fields, setFields] = useState<JoinFormFields>(EMPTY);
  const [errors, setErrors] = useState<JoinFormErrors>({});
  const urlRef = useRef<HTMLInputElement>(null);
  const leaveRef = useRef<HTMLButtonElement>(null);

  const mode = membership?.mode ?? 'own-coordinator';
  const formShown = canJoin(membership);
  useFocusOnModeChange(mode, leaveRef, urlRef);

  // Listening for coordinators starts when the panel first shows the form, not when the app starts; the list is
  // asked for again (after a pause in typing) whenever the token changes, since only the token's holders are shown.
  const token = fields.token;
  useEffect(() => {
    if (!formShown) return undefined;
    const timer = setTimeout(() => void loadDiscovered(api, appStore, token), token ? 400 : 0);
    return () => clearTimeout(timer);
  }, [api, formShown, token]);

  const pick = (found: DiscoveredCoordinator) => {
    setFields((f) => fillFromDiscovered(f, found));
    setErrors((e) => ({ ...e, url: undefined, certSha256: undefined }));
    document.getElementById(FIELD_IDS.token)?.focus();
  };

  const set = (key: keyof JoinFormFields) => (value: string) => {
    setFields((f) => ({ ...f, [key]: value }));
    if (errors[key]) setErrors((e) => ({ ...e, [key]: undefined }));
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const checked = checkJoinForm(fields);
    if (!checked.ok) {
      setErrors(checked.errors);
      const first = (['url', 'token', 'certSha256', 'name'] as const).find((k) => checked.errors[k]);
      if (first) document.getElementById(FIELD_IDS[first])?.focus();
      return;
    }
    setErrors({});
    const state = await commands.joinCluster(checked.request);
    // The token is needed for one join only; do not keep it in the page once this machine is in.
    if (state?.mode === 'joined' || state?.mode === 'lost') setFields((f) => ({ ...f, token: '' }));
  };

  const badge = membershipBadge(mode);
  // Only the buttons wait: a disabled input could not take the focus back when the form returns.
  const busy = joining || leaving || mode === 'joining';
  return (
    <section className="card join-cluster" aria-labelledby="join-cluster-title" data-testid="join-cluster" data-mode={mode}>
      <div className="card-title-row">
        <h2 id="join-cluster-title" className="card-title">
          Join another cluster
        </h2>
        <Badge badge={badge} className="membership-badge" />
      </div>
      <p className="membership-message" role="status" aria-live="polite" data-testid="membership-message">
        {membership?.message ?? 'Make this machine a worker of a coordinator running on another machine.'}
      </p>
      {(mode === 'joined' || mode === 'lost') && membership && <MembershipFacts membership={membership} />}
      {formShown ? (
        <form onSubmit={(e) => void submit(e)} noValidate data-testid="join-cluster-form" className="join-form">
          <FoundOnNetwork {...discovery} onPick={pick} hasToken={fields.token.trim() !== ''} />
          <JoinFields fields={fields} errors={errors} set={set} urlRef={urlRef} ownName={ownName} />
          <div className="form-actions">
            <button type="submit" className="button primary" disabled={busy}>
              {joining ? 'Joining…' : 'Join'}
            </button>
          </div>
          <p className="hint">While it is a worker there, this machine stops training for this app's own cluster.</p>
        </form>
      ) : (
        <div className="form-actions">
          <button ref={leaveRef} type="button" className="button" disabled={leaving} onClick={() => void commands.leaveCluster()}>
            {leaving ? 'Leaving…' : mode === 'joining' ? 'Cancel' : 'Leave'}
          </button>
        </div>
      )}
      {refused && (
        <p className="field-error" role="alert" data-testid="join-refused">
          {refused}
        </p>
      )}
    </section>
  );
}
