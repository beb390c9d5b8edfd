/**
 * Links' public face: what the coordinator knows of the links between machines (the link book, the survey that
 * measures them, the rendezvous address a generation uses) and which peers a snapshot is fetched from.
 */
export { chooseRendezvous } from './rendezvous-address';
export { linkSurveyFor, type LinkSurvey } from './link-survey';
export { peerPlan, snapshotPeers } from './snapshot-peers';
