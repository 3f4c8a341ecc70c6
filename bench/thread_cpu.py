#!/usr/bin/env python3
"""Where a multi-process run's CPU goes: each thread name's user and system time, summed over the
ranks, over a 10 s window of a long `run --distributed` (after 8 s of warm-up), as a share of one
core. Gloo's I/O threads are `gloo_tcp_loop`; the workers and the main thread `pipeworks-torch`.

Usage: python3 bench/thread_cpu.py PIPEWORKS_BINARY N LAYOUT...   (e.g. ... 4 --pp 4)
"""
import collections
import os
import subprocess
import sys
import time

RANKS = '^[^ ]*pipeworks run --distributed'  # the ranks' command lines, not the launcher's
TICK = os.sysconf('SC_CLK_TCK')


def ranks():
    out = subprocess.run(['pgrep', '-f', RANKS], capture_output=True, text=True).stdout
    return [int(pid) for pid in out.split()]


def cpu_by_thread_name(pids):
    """(thread name, 'user' or 'sys') -> clock ticks, over every thread of `pids`."""
    ticks = collections.Counter()
    for pid in pids:
        for tid in os.listdir(f'/proc/{pid}/task'):
            try:
                name = open(f'/proc/{pid}/task/{tid}/comm').read().strip()
                fields = open(f'/proc/{pid}/task/{tid}/stat').read().rsplit(')', 1)[1].split()
            except FileNotFoundError:  # a thread that ended meanwhile
                continue
            ticks[(name, 'user')] += int(fields[11])
            ticks[(name, 'sys')] += int(fields[12])
    return ticks


def main():
    exe, n, layout = sys.argv[1], sys.argv[2], sys.argv[3:]
    run = subprocess.Popen([exe, 'launch', '-n', n, '--', exe, 'run', '--distributed', *layout, '-M', '8',
                            '--steps', '100000', '--timeout', '120'],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(8)
        pids = ranks()
        before, start = cpu_by_thread_name(pids), time.time()
        time.sleep(10)
        after, wall = cpu_by_thread_name(pids), time.time() - start
    finally:
        run.kill()
        subprocess.run(['pkill', '-f', RANKS])
    print(f"{len(pids)} ranks, window {wall:.1f} s")
    for name in sorted({name for name, _ in after}):
        user = (after[(name, 'user')] - before[(name, 'user')]) / TICK
        system = (after[(name, 'sys')] - before[(name, 'sys')]) / TICK
        print(f"  {name:20s} user {user:6.2f} s  sys {system:6.2f} s  = {100 * (user + system) / wall:5.1f}% of one core")


if __name__ == '__main__':
    main()
