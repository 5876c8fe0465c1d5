# Appended to ROCm test_add_kernel's code by tests/0360-eval-timing.t: the
# kernel launches only from within its own file's test_performance, as an
# op that uses a buffer a later case replaces fails when called later.
import sys as _sys

_own_kernel = add_kernel


class _OnlyInOwnTest:
    def __getitem__(self, grid):
        f = _sys._getframe(1)
        while f is not None and not (f.f_code.co_name == "test_performance" and f.f_globals is globals()):
            f = f.f_back
        if f is None:
            raise RuntimeError("called outside its own test")
        return _own_kernel[grid]


add_kernel = _OnlyInOwnTest()
