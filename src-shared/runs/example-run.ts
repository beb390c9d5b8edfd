/**
 * The bundled example run as the app's form and `gpu-share runs start --example` fill it in, in one place. Its
 * `--step-sleep` slows every step so the run can be watched (about 25 s for 300 steps on a CPU) and a worker can
 * be killed mid-run, as docs/guide.md ("Train") shows; remove it to train at the script's full speed.
 */

export const EXAMPLE_RUN_NAME = 'DDP example (synthetic regression)';

/** Seconds each step of the example sleeps (ddp_example.py --step-sleep; the script's own default is 0). */
export const EXAMPLE_STEP_SLEEP_S = 0.07;

/** The example trainer's arguments after its path (ddp_example.py, under the assets' trainers/). */
export const EXAMPLE_TRAINER_ARGS: readonly string[] = ['--steps', '300', '--batch', '32', '--checkpoint-every', '20', '--step-sleep', String(EXAMPLE_STEP_SLEEP_S)];
