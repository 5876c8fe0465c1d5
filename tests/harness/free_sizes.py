"""The free blocks guard.fill_free takes, for tests/0350-eval-plain.t,
from a memory snapshot made up in the shape torch.cuda.memory_snapshot
gives: the requests that take them, largest first.  A small segment's
free block over 1 MiB comes in pieces of 1 MiB; a large segment's of at
most 1 MiB, which no request reaches, is left; blocks in use, on another
stream or device, or in a private pool (CUDA graphs) are left.  Prints
the sizes in KiB, then whether FILL_BLOCKS caps them (expected:
"2048 1024 1024 512 300 1.5 True").

    free_sizes.py"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get("GEAK_SHAREDIR", os.path.join(here, "..", "..", "share")),
                                "harness"))

from geakh import guard  # noqa: E402

KiB, MiB = 1 << 10, 1 << 20


def seg(kind, blocks, stream=0, device=0, pool=(0, 0)):
    return {"segment_type": kind, "stream": stream, "device": device, "segment_pool_id": pool,
            "blocks": [{"size": n, "state": st} for n, st in blocks]}


segments = [
    seg("small", [(1536, "inactive"), (300 * KiB, "inactive"), (512 * KiB, "active_allocated")]),
    seg("small", [(2 * MiB, "inactive")]),
    seg("large", [(2 * MiB, "inactive"), (512 * KiB, "inactive"), (512 * KiB, "active_allocated")]),
    seg("large", [(20 * MiB, "inactive")], stream=12345),
    seg("large", [(20 * MiB, "inactive")], device=1),
    seg("large", [(20 * MiB, "inactive")], pool=(1, 0)),
    seg("small", [(512 * KiB, "inactive")]),
]
got = guard.free_sizes(segments, 0, 0)
many = guard.free_sizes([seg("small", [(512, "inactive")] * (guard.FILL_BLOCKS + 10))], 0, 0)
print(" ".join(f"{n / KiB:g}" for n in got), len(many) == guard.FILL_BLOCKS)
