/*
 * test_annotate.c - the annotated trace: original bytes kept, findings
 * appended inside the event array, truncated input closed, result readable
 * again by the trace reader.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "trainscope/annotate.h"
#include "trainscope/trace.h"

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)len + 1);
	if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[len] = 0;
	*n = (size_t)len;
	fclose(f);
	return buf;
}

/* must_end: the output's last bytes, or NULL */
static void run_case(const char *input, const char *must_start, const char *must_end, int want_events)
{
	char in[] = "/tmp/ts-annot-in-XXXXXX", out[64];
	struct ts_rank_prof p;
	struct ts_prof_tracks k;
	struct ts_annotate_info ai;
	struct ts_trace t;
	struct ts_err err;
	char *got;
	size_t n;
	int fd = mkstemp(in);

	REQUIRE(fd >= 0);
	REQUIRE(write(fd, input, strlen(input)) == (ssize_t)strlen(input));
	close(fd);
	snprintf(out, sizeof(out), "%s.out", in);
	/* a profile with one outlier step and one idle gap */
	ts_rank_prof_init(&p);
	ts_prof_tracks_init(&k);
	p.window_ns = 50000;
	{
		struct ts_step_prof st;
		memset(&st, 0, sizeof(st));
		st.step = 3, st.start_ns = 0, st.dur_ns = 50000, st.outlier = 1;
		snprintf(st.reason, sizeof(st.reason), "data loader 1.0 ms (median 0.1 ms)");
		REQUIRE(TS_VEC_PUSH(p.steps, st) == 0);
	}
	REQUIRE(ts_ivset_add(&k.idle, 1000, 41000) == 0);
	memset(&ai, 0, sizeof(ai));
	ai.prof = &p;
	ai.tracks = &k;
	REQUIRE(ts_annotate_write(out, in, &ai, &err) == 0);
	got = slurp(out, &n);
	REQUIRE(got);
	CHECK(strncmp(got, must_start, strlen(must_start)) == 0);
	if (must_end)
		CHECK(n >= strlen(must_end) && strcmp(got + n - strlen(must_end), must_end) == 0);
	CHECK(strstr(got, "\"name\":\"outlier step 3\",\"ts\":0.000,\"dur\":50.000,"
			  "\"args\":{\"finding\":\"data loader 1.0 ms (median 0.1 ms)\"}") != NULL);
	CHECK(strstr(got, "\"name\":\"host gap\",\"ts\":1.000,\"dur\":40.000}") != NULL);
	ts_trace_init(&t);
	REQUIRE(ts_trace_read(&t, out, NULL, &err) == 0);
	CHECK(!t.meta.truncated);
	/* original X events + 7 metadata + host gap + outlier + rank wall */
	CHECK_I64(t.ev.n, want_events);
	ts_trace_release(&t);
	free(got);
	unlink(in);
	unlink(out);
	ts_prof_tracks_release(&k);
	ts_rank_prof_release(&p);
}

TEST(annotate_complete_object)
{
	run_case("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}],"
		 "\"displayTimeUnit\":\"ms\"}\n",
		 "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1},\n",
		 "],\"displayTimeUnit\":\"ms\"}\n", 1 + 7 + 3);
}

TEST(annotate_truncated_object)
{
	/* cut inside the second event: keep the first, close the array */
	run_case("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1},"
		 "{\"ph\":\"X\",\"na",
		 "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1},\n",
		 "}]}\n", 1 + 7 + 3);
}

TEST(annotate_cut_after_the_array)
{
	/* cut after the event array: its complete members are kept, one whose
	 * number ends at the last byte may be cut and goes (a string or a number
	 * followed by a blank is whole), the object closes */
	static const char *cuts[][2] = {
		{ ",\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":17277", "],\"displayTimeUnit\":\"ms\"\n}\n" },
		{ ",\"displayTimeUnit\":\"ms\", ", "],\"displayTimeUnit\":\"ms\"\n}\n" },
		{ ",\"displayTimeUnit\":\"ms\",\"traceN", "],\"displayTimeUnit\":\"ms\"\n}\n" },
		{ "", "]\n}\n" },
		{ ",\"displayTimeUnit\":\"ms\"", "],\"displayTimeUnit\":\"ms\"\n}\n" },
		{ ",\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":17 ", "],\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":17\n}\n" },
	};
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		char input[256];
		snprintf(input, sizeof(input), "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,"
			 "\"dur\":2,\"pid\":1,\"tid\":1}]%s", cuts[i][0]);
		run_case(input, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1},\n",
			 cuts[i][1], 1 + 7 + 3);
	}
}

TEST(annotate_legacy_array)
{
	run_case("[{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,\"dur\":2,\"tid\":1,\"pid\":\"CPU functions\",\"args\":{}}]",
		 "[{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,\"dur\":2,\"tid\":1,\"pid\":\"CPU functions\",\"args\":{}},\n",
		 "}\n]", 1 + 7 + 3);
}

TEST(annotate_refuses_non_trace)
{
	char in[] = "/tmp/ts-annot-bad-XXXXXX";
	struct ts_rank_prof p;
	struct ts_prof_tracks k;
	struct ts_annotate_info ai = { &p, &k, NULL, NULL, 0 };
	struct ts_err err;
	int fd = mkstemp(in);

	REQUIRE(fd >= 0);
	REQUIRE(write(fd, "{\"a\":1}", 7) == 7);
	close(fd);
	ts_rank_prof_init(&p);
	ts_prof_tracks_init(&k);
	ts_err_init(&err);
	CHECK(ts_annotate_write("/tmp/ts-annot-never", in, &ai, &err) == TS_EPARSE);
	CHECK(access("/tmp/ts-annot-never", F_OK) != 0);
	/* a syntax error after the event array (in a second traceEvents the
	 * reader reads with recovery) cannot be copied verbatim either: it
	 * was written out as it stood, an invalid JSON file (a fuzz find) */
	static const char tail[] = "{\"traceEvents\":[],\"traceEvents\":[{\"a\" , 1}]}";
	REQUIRE((fd = open(in, O_WRONLY | O_TRUNC)) >= 0);
	REQUIRE(write(fd, tail, sizeof(tail) - 1) == (ssize_t)(sizeof(tail) - 1));
	close(fd);
	CHECK_I64(ts_annotate_write("/tmp/ts-annot-never", in, &ai, &err), TS_EPARSE);
	CHECK_I64(err.offset, 38);   /* the "," after "a" */
	CHECK(access("/tmp/ts-annot-never", F_OK) != 0);
	unlink(in);
	ts_rank_prof_release(&p);
}
