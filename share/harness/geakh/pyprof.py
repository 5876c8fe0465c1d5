"""The harness's own cost, profiled where GEAK_PYPROFILE is set (see
geak-eval(1)): a diagnostic, off by default, that slows everything it
watches."""
import os

from . import proto

ACTIVE = {"profiler": None}


def start():
    if not os.environ.get(proto.ENV_PYPROFILE):
        return
    import cProfile
    ACTIVE["profiler"] = cProfile.Profile()
    ACTIVE["profiler"].enable()


def dump(d, title, stem="pyprofile"):
    """The profile so far into d/STEM.prof, its costliest calls into
    d/STEM.txt.  A forked child's profile holds its parent's calls
    before the fork too."""
    profiler = ACTIVE["profiler"]
    if profiler is None:
        return
    import io
    import pstats
    profiler.disable()
    profiler.dump_stats(os.path.join(d, stem + ".prof"))
    text = io.StringIO()
    text.write(f"{title}\n")
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(25)
    with open(os.path.join(d, stem + ".txt"), "w") as fp:
        fp.write(text.getvalue())
