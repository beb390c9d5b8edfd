/** What an address naming a run, job or node that is not there shows: which one, why it may be gone, a way back. */
import { missingText, isThingView, formatRoute } from './route';
import { useRoute } from './route-sync';

export function MissingRouteNotice() {
  const missing = useRoute((s) => s.missing);
  if (!missing || missing.id === undefined || !isThingView(missing.view)) return null;
  const back = { view: missing.view };
  return (
    <div className="banner banner-warn" role="alert" data-testid="route-missing">
      <p>
        {missingText({ view: missing.view, id: missing.id })} <a href={formatRoute(back)}>Back to all {missing.view}</a>
      </p>
    </div>
  );
}
