/* libFuzzer target for the record reader, the record check every tool
 * applies (types, ranges, names) and the writer: any bytes in, and every
 * line must come out as a record or an error record, without a crash,
 * leak or undefined behaviour.  `make fuzz` runs it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "record.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", 0);
	char path[64];
	char *paths[1] = { path };
	struct geak_input *in;
	struct geak_output out;
	FILE *sink = fopen("/dev/null", "w");
	json_t *rec;
	int r;
	size_t nl = 0, recs = 0;

	if (fd < 0 || !sink)
		abort();
	if (geak_write_all(fd, data, size) < 0)
		abort();
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	in = geak_input_open(paths, 1);
	/* A small limit, so that the over-long path is reached too. */
	geak_input_set_max(in, 1024);
	geak_output_init(&out, sink, "/dev/null");
	while ((r = geak_input_next(in, &rec)) != GEAK_READ_EOF) {
		if (r == GEAK_READ_FAIL)
			abort();
		if (r == GEAK_READ_OK) {
			char msg[512];
			if (geak_check_record(rec, msg, sizeof msg) < 0 && !memchr(msg, '\0', sizeof msg))
				abort(); /* the message must end inside its buffer */
		}
		if (geak_output_write(&out, rec) < 0)
			abort();
		json_decref(rec);
		recs++;
	}
	geak_input_close(in);
	geak_output_close(&out);
	fclose(sink);
	close(fd);
	/* Never more records than lines. */
	for (size_t i = 0; i < size; i++)
		nl += data[i] == '\n';
	if (recs > nl + 1)
		abort();
	return 0;
}
