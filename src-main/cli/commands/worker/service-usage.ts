/** The help text of `gpu-share worker install | uninstall | status`, added to `gpu-share worker --help`. */

export const SERVICE_SYNOPSIS = `       GPU_SHARE_JOIN_TOKEN=TOKEN gpu-share worker install --join URL [--cert-sha256 HEX] [--name NAME] [--user|--system] [--json]
       gpu-share worker uninstall [--user|--system] [--json]
       gpu-share worker status [--user|--system] [--json]`;

export const SERVICE_USAGE = `Keeping this machine a worker (a service that starts at boot or login and comes back after a crash):
  install     checks this machine (Node.js, Python with PyTorch, free disk, the coordinator and its proof of
              the join token), then writes and starts a service that runs \`gpu-share worker\` with a fixed
              name and data folder, so a restart re-joins as the same node without a new approval.
              Linux: a systemd unit (user: ~/.config/systemd/user/gpu-share-worker.service; --system:
              /etc/systemd/system/), Restart=on-failure, logs in the journal.
              macOS: a launchd agent (~/Library/LaunchAgents/com.gpushare.worker.plist; --system: a daemon in
              /Library/LaunchDaemons), KeepAlive, log in ~/Library/Logs/GPU Share/worker.log.
              Windows: a scheduled task "GPU Share worker" at logon (--system: at boot, as SYSTEM) that runs the
              worker again 10 s after a failed exit, log in <app data>\\service\\worker.log.
              The token is read from GPU_SHARE_JOIN_TOKEN and kept in an owner-only file the service reads, never
              in the service definition nor on a command line. Installing again replaces the earlier install.
  uninstall   stops the worker and removes every file install wrote (the data folder with the node key stays).
  status      installed? running? joined? and where the files and the log are.

Service options:
  --join URL, --cert-sha256 HEX, --name NAME   as above (--name defaults to this machine's hostname)
  --user        (default) a service of this account: needs no administrator rights; on Linux it starts at boot
                when the account lingers (install turns lingering on when loginctl lets it)
  --system      a system-wide service (sudo / administrator): starts at boot without anyone logged in
  --json        one JSON object on stdout instead of sentences
  --skip-checks install without checking the machine and the coordinator first

Exit codes of install: 0 installed and started; 3 installed but not started (no service manager running, or it
refused: the message says how to start it); 1 a check failed or a file could not be written; 2 a bad command line.
uninstall and status exit 0 when they could do their work, 1 otherwise.
`;
