"""Write tests/cheats/add_reference.py autotuned over two configurations
whose outputs differ (configuration SHIFT adds 1 at element SHIFT, as
sums that cancel differ with the tile size), for the tests of
tuning-dependent references:

    tuned_add.py normal|reversed right|wrong [three|faulty] > FILE.py

reversed lists the configurations the other way round, so a search whose
timings tie picks the other one; wrong also adds 0.5 at element 5, where
the tuning does not matter; three adds a third configuration, so that
the reversed search's choice is neither the normal one's nor its
runner-up; faulty makes every configuration but SHIFT 0 fail when it
runs (a static assertion), as one that overruns a buffer does.
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "cheats", "add_reference.py")) as fp:
    src = fp.read()
order, wrong = sys.argv[1], sys.argv[2] == "wrong"
configs = ['triton.Config({"SHIFT": 0})', 'triton.Config({"SHIFT": 1})']
if sys.argv[3:] == ["three"]:
    configs.append('triton.Config({"SHIFT": 2})')
if order == "reversed":
    configs.reverse()
src = src.replace("@triton.jit", "@triton.autotune(configs=[%s], key=[])\n@triton.jit" % ", ".join(configs))
src = src.replace("BLOCK: tl.constexpr)", "BLOCK: tl.constexpr, SHIFT: tl.constexpr)")
value = "tl.where(offs == SHIFT, x + y + 1, x + y)"
if sys.argv[3:] == ["faulty"]:
    src = src.replace("    offs = tl.program_id(0)", "    tl.static_assert(SHIFT == 0)\n    offs = tl.program_id(0)")
if wrong:
    value = "tl.where(offs == 5, x + y + 0.5, %s)" % value
src = src.replace("tl.store(out_ptr + offs, x + y, mask=mask)",
                  "tl.store(out_ptr + offs, %s, mask=mask)" % value)
sys.stdout.write(src)
