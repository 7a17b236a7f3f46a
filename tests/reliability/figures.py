"""`make reliability`'s figures: what the last run of tests/reliability measured (test-artifacts/reliability.json).

    python -m tests.reliability.figures
"""
import json
import sys

from tests.reliability.harness import FIGURES


def rows(f: dict) -> list[tuple[str, str]]:
    kill, bad, det = f.get("kill", {}), f.get("bad_input", {}), f.get("determinism", {})
    res, ctrl, div, conc, safe = (f.get(k, {}) for k in ("resume", "ctrl_c", "divergence", "concurrency", "safety"))
    text = f.get("make_text", {})
    out = []
    if kill:
        clean = not any(kill.get(k) for k in ("runs_lost", "duplicate_runs", "points_logged_twice", "stuck_running",
                                             "runs_damaged")) and "runs_lost" in kill
        out += [
            ("faults injected", f"{kill.get('faults_injected', '?')}  ({kill.get('kills', '?')} SIGKILLs at "
                                f"{', '.join(kill.get('points', []))}; {kill.get('interrupts', '?')} Ctrl-C; "
                                f"the quick suite restarted {kill.get('restarts', '?')} times, "
                                f"{kill.get('seconds', '?')} s)"),
            ("kills survived", f"{kill.get('kills', 0) if clean else 0} of {kill.get('kills', '?')}"),
            ("runs lost", f"{kill.get('runs_lost', '?')}  ({kill.get('runs_finished', '?')} of "
                          f"{kill.get('runs_expected', '?')} runs FINISHED once, intact: "
                          f"{kill.get('runs_damaged', '?')} damaged)"),
            ("duplicates", f"{_sum(kill, 'duplicate_runs', 'points_logged_twice')}  ({kill.get('duplicate_runs', '?')} "
                           f"runs, {kill.get('points_logged_twice', '?')} metric points logged twice)"),
            ("runs stuck RUNNING", str(kill.get("stuck_running", "?"))),
        ]
    if bad:
        refused = sum(v == "refused clearly" for v in bad.values())
        out.append(("bad inputs refused clearly", f"{refused} of {len(bad)} tried"))
        out += [(f"  not refused clearly: {k}", v) for k, v in bad.items() if v != "refused clearly"]
    if text:
        intact = sum(v == "arrived intact" for v in text.values())
        refused = sum(v.startswith("refused, naming ") for v in text.values())
        shells = sum("a shell ran" in v for v in text.values())
        out.append(("text through make", f"{intact + refused} of {len(text)} tried arrived intact ({intact}) or were "
                                         f"refused naming the variable ({refused}); {shells} reached a shell "
                                         f"(quotes, $5, $(id), backticks, commas, =, non-ASCII, empty)"))
        out += [(f"  not intact: {k}", v) for k, v in text.items()
                if v != "arrived intact" and not v.startswith("refused, naming ")]
    if det:
        out.append(("determinism spread", f"{det['val_loss_spread']:.1e}  (max |difference| over "
                                          f"{det['points_compared']:,} train/val loss points of {det['runs_compared']} "
                                          f"runs: killed and resumed, 1 and 2 workers, against a clean run)"))
    if res:
        out.append(("resume a long run", f"killed at step {res['killed_at_step']} of {res['steps']:,}, resumed from "
                                         f"{res['resumed_from_step']} ({res['steps_trained_again']} steps trained); "
                                         f"curve spread {res['curve_spread']:.1e}"))
    if ctrl:
        out.append(("Ctrl-C", f"exit {ctrl['exit_status']}, {ctrl['stderr_lines']} line on stderr, stopped at step "
                              f"{ctrl['stopped_at_step']}, resumed to {ctrl['resumed']}"))
    suite_int = f.get("suite_ctrl_c", {})
    if suite_int:
        out.append(("Ctrl-C to the suite alone", f"exit {suite_int['exit_status']}; {suite_int['runs_killed']} of "
                                                 f"{suite_int['runs']} runs in progress stopped at their step, KILLED"))
    dead = f.get("dead_worker", {})
    if dead:
        out.append(("a dead worker", f"{dead.get('runs_failed', '?')} of {dead.get('runs', '?')} runs FAILED "
                                     f"({dead.get('reason', '?')}), {dead.get('runs_finished', '?')} finished beside "
                                     f"it; exit {dead.get('exit_status', '?')}; {dead.get('runs_lost', '?')} lost, the "
                                     f"next suite trains {dead.get('to_train_again', '?')} again in place"))
    if conc:
        out.append(("two suites at once", f"{conc.get('waited', '?')} waited, {conc.get('trained', '?')} trained; "
                                          f"{conc.get('runs_lost', '?')} lost, "
                                          f"{_sum(conc, 'duplicate_runs', 'points_logged_twice')} duplicates"))
    if div:
        out.append(("divergence", f"{div.get('config', '?')}: {div.get('runs_failed', '?')} runs FAILED "
                                  f"({'; '.join(div.get('reasons', []))}); {div.get('nan_config', '?')}: "
                                  f"{div.get('nan_reason', '?')}"))
    slurm = f.get("slurm", {})
    if slurm:
        kinds = ("scancel", "time_limit", "memory_limit", "bad_partition", "ctrl_c")
        faults = [k for k in kinds if k in slurm]
        out.append(("SLURM faults survived", f"{len(faults)} of {len(kinds)}  (SLURM {slurm.get('version', '?')}, one node: "
                                             f"{', '.join(k.replace('_', ' ') for k in faults) or 'none ran'})"))
        out += [(f"  {k.replace('_', ' ')}", v) for k, v in slurm.items() if k != "version"]
    server = f.get("server", {})
    for key, name in (("restart", "team server restart"), ("wrong_password", "wrong password")):
        if key in server:
            out.append((name, server[key]))
    scans = {k.removeprefix("scan_").replace("_", " "): v for k, v in server.items() if k.startswith("scan_")}
    if scans:
        read = {k: sum(s.get(k, 0) for s in scans.values())
                for k in ("found", "texts", "params", "tags", "artifact_files")}
        out.append(("secrets scan", f"{read['found']} passwords found in {read['texts']} outputs and job logs, "
                                    f"{read['params']} params, {read['tags']} tags, {read['artifact_files']} artifact files "
                                    f"({'; '.join(scans)})"))
    if safe:
        out.append(("safety", f"{safe.get('shell_calls', '?')} shell calls in {safe.get('files_scanned_for_shells', '?')} "
                              f"files; {safe.get('artifact_files_outside_the_root', '?')} artifacts outside the root; "
                              f"UI on {safe.get('ui_default_host', '?')} by default"))
    return out


def _sum(d: dict, *keys) -> str:
    return str(sum(d[k] for k in keys)) if all(k in d for k in keys) else "?"


def main() -> int:
    table = rows(json.loads(FIGURES.read_text())) if FIGURES.exists() else []
    if not table:
        print(f"no figures: {FIGURES} is written by `pytest tests/reliability`", file=sys.stderr)
        return 1
    width = max(len(k) for k, _ in table)
    print("\nreliability figures (tests/reliability, tests/slurm, tests/server; this run):")
    for k, v in table:
        print(f"  {k:<{width}}  {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
