#!/usr/bin/env python3
"""One Gloo hand-off between two processes timed while BUSY other processes compute without
pause, after the receiver has waited GAP microseconds (as a pipeline stage waits for its
neighbour's activation): the wake-up cost that `run --distributed --predict` does not model yet
(bench/README.md, "a woken process waits for a core"). A peer measurement with torch.distributed,
not pipeworks code.

Usage: .venv/bin/python bench/oversubscribed_handoff.py [BUSY] [GAPS_US ...]
  prints one line per gap: the one-way time's median and quartiles over 60 round trips.
"""
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ROUND_TRIPS = 60


def spin(microseconds):
    end = time.perf_counter_ns() + microseconds * 1000
    while time.perf_counter_ns() < end:
        pass


def compute_until_stopped():
    """A busy rank: 256 x 256 products until rank 0 says stop."""
    stop = torch.zeros(1)
    work = dist.irecv(stop, 0)
    a = torch.randn(256, 256)
    while not work.is_completed():
        a = (a @ a).clamp_(-1, 1)


def bounce(rank, gap_us):
    """Rank 0 waits gap_us, sends, and waits for the answer; rank 1 answers at once."""
    message = torch.zeros(1024)
    trips = []
    for _ in range(ROUND_TRIPS):
        if rank == 0:
            spin(gap_us)
            start = time.perf_counter_ns()
            dist.send(message, 1)
            dist.recv(message, 1)
            trips.append(time.perf_counter_ns() - start)
        else:
            dist.recv(message, 0)
            dist.send(message, 0)
    return sorted(t / 2e3 for t in trips)


def rank_main(rank, world, port, gaps):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    if rank >= 2:
        compute_until_stopped()
    else:
        for gap in gaps:
            one_way = bounce(rank, gap)
            if rank == 0:
                q = len(one_way) // 4
                print(f"busy {world - 2}  gap {gap:5d} us  one way: median {one_way[2 * q]:8.1f} us, "
                      f"quartiles {one_way[q]:8.1f} .. {one_way[3 * q]:8.1f} us", flush=True)
        if rank == 0:
            for busy in range(2, world):
                dist.send(torch.ones(1), busy)
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    busy = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    gaps = [int(g) for g in sys.argv[2:]] or [0, 100, 300, 1000, 3000]
    print(f"{os.cpu_count()} cores, {2 + busy} processes")
    mp.spawn(rank_main, args=(2 + busy, free_port(), gaps), nprocs=2 + busy)
