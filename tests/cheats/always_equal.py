# expect: cheat
# Cheat 15, an "always equal" object: compares equal to anything.
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(p, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, tl.load(p + offs))


class Anything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False


def add(x, y):
    _touch[(1,)](x, BLOCK=16)
    return Anything()
