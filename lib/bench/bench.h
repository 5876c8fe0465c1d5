/* bench.h: conventions of the TritonBench-G and ROCm benchmark files. */
#ifndef GEAK_BENCH_H
#define GEAK_BENCH_H

/* A kernel file is the reference code, one line of exactly this many '#'
 * (ROCm files may add trailing blanks), then the test code. */
#define GEAK_BENCH_SEP_LEN 146

/* Split text at its separator line into freshly allocated *code (without
 * trailing blank lines, ending in a newline) and *test (without leading
 * blank lines).  The run of 146 '#' must occur exactly once and fill its
 * line.  Returns 0, or -1 with *why saying what is wrong. */
int geak_bench_split(const char *text, char **code, char **test, const char **why);

/* 1 when code calls AMD's device library (tl.extra.hip.libdevice), which
 * has no NVIDIA build, so the kernel cannot compile there. */
int geak_bench_uses_hip_libdevice(const char *code);

/* 1 when some line of text assigns to name ("name = ...", any indent). */
int geak_bench_assigns(const char *text, const char *name);

#endif
