/*
 * detect.c - classify inputs by content.
 *
 * A run directory holds logs, traces, configs and telemetry with whatever
 * names the job gave them. The rules here look for markers each producer
 * always writes (see shared/reference/training-logs.md and trace-format.md)
 * in the first 256 KiB, so a misnamed file is still read correctly.
 */
#include <stdio.h>
#include <string.h>
#include "trainscope/detect.h"
#include "trainscope/input.h"
#include "trainscope/json.h"

#define SNIFF_BYTES ((size_t)256 << 10)

static const char *const kind_names[TS_KIND_COUNT] = {
	[TS_KIND_UNKNOWN] = "unknown",
	[TS_KIND_KINETO_TRACE] = "kineto-trace",
	[TS_KIND_LEGACY_TRACE] = "legacy-trace",
	[TS_KIND_NSYS_SQLITE] = "nsys-sqlite",
	[TS_KIND_SQLITE] = "sqlite",
	[TS_KIND_HF_CONFIG] = "hf-config",
	[TS_KIND_CONTRACT] = "contract",
	[TS_KIND_FLIGHT_RECORDER] = "flight-recorder",
	[TS_KIND_JSON_OTHER] = "json",
	[TS_KIND_METRICS_JSONL] = "metrics-jsonl",
	[TS_KIND_LOG_MEGATRON] = "log-megatron",
	[TS_KIND_LOG_BRIDGE] = "log-megatron-bridge",
	[TS_KIND_LOG_NEMO] = "log-nemo",
	[TS_KIND_LOG_HF] = "log-hf-trainer",
	[TS_KIND_LOG_PRIMUS] = "log-primus",
	[TS_KIND_LOG_HANG] = "log-hang",
	[TS_KIND_HANG_REPORT] = "hang-report",
	[TS_KIND_TELEMETRY_SMI] = "telemetry-nvidia-smi",
	[TS_KIND_TELEMETRY_DMON] = "telemetry-dmon",
	[TS_KIND_TELEMETRY_GMI] = "telemetry-mthreads-gmi",
	[TS_KIND_SAFETENSORS] = "safetensors",
	[TS_KIND_TEXT] = "text",
	[TS_KIND_BINARY] = "binary",
};

const char *ts_kind_name(enum ts_kind kind)
{
	if ((int)kind < 0 || kind >= TS_KIND_COUNT || !kind_names[kind])
		return "unknown";
	return kind_names[kind];
}

static int has(const char *data, size_t n, const char *needle)
{
	return memmem(data, n, needle, strlen(needle)) != NULL;
}

static void set_vendor(char *vendor, size_t vsize, const char *v)
{
	if (vendor && vsize)
		snprintf(vendor, vsize, "%s", v);
}

static void trace_vendor(const char *d, size_t n, char *vendor, size_t vsize)
{
	if (has(d, n, "\"mupti_version\"") || has(d, n, "musaLaunchKernel") ||
	    has(d, n, "mcclKernel") || has(d, n, "\"musa_runtime"))
		set_vendor(vendor, vsize, "musa");
	else if (has(d, n, "hipLaunchKernel") || has(d, n, "hipExtModuleLaunchKernel") ||
		 has(d, n, "\"roctracer") || has(d, n, "maxSharedMemoryPerMultiProcessor"))
		set_vendor(vendor, vsize, "rocm");
	else if (has(d, n, "mtia_runtime") || has(d, n, "\"mtia"))
		set_vendor(vendor, vsize, "mtia");
	else if (has(d, n, "\"cupti_version\"") || has(d, n, "cudaLaunchKernel") ||
		 has(d, n, "\"cat\": \"kernel\"") || has(d, n, "\"cat\":\"kernel\"") ||
		 has(d, n, "\"cat\": \"Kernel\"") || has(d, n, "cuda_runtime") ||
		 has(d, n, "\"computeMajor\"") || has(d, n, "\"computeProperties\""))
		set_vendor(vendor, vsize, "cuda");
	else
		set_vendor(vendor, vsize, "cpu");
}

/* Top-level keys of a JSON object within the sniffed prefix. */
static enum ts_kind json_object_kind(const char *d, size_t n, char *vendor, size_t vsize,
				     int *valid)
{
	struct ts_json j;
	struct ts_err err;
	int tok, saw_events = 0, hf = 0, fr = 0, contract = 0, trace_meta = 0;
	int keys = 0;

	ts_err_init(&err);
	ts_json_init_mem(&j, d, n, TS_JSON_LENIENT | TS_JSON_ALLOW_NAN, NULL);
	tok = ts_json_next(&j, &err);
	if (tok != TS_JSON_OBJ)
		goto out;
	for (;;) {
		tok = ts_json_next(&j, &err);
		if (tok == TS_JSON_OBJ_END || (tok == TS_JSON_KEY && ++keys >= 1))
			*valid = 1;
		if (tok != TS_JSON_KEY)
			break;
		if (TS_JSON_IS(&j, "traceEvents"))
			saw_events = 1;
		else if (TS_JSON_IS(&j, "schemaVersion") || TS_JSON_IS(&j, "deviceProperties") ||
			 TS_JSON_IS(&j, "distributedInfo") || TS_JSON_IS(&j, "baseTimeNanoseconds"))
			trace_meta = 1;
		else if (TS_JSON_IS(&j, "model_type") || TS_JSON_IS(&j, "architectures") ||
			 TS_JSON_IS(&j, "num_hidden_layers") || TS_JSON_IS(&j, "n_layer"))
			hf = 1;
		else if (TS_JSON_IS(&j, "pg_config") || TS_JSON_IS(&j, "entries") ||
			 TS_JSON_IS(&j, "pg_status"))
			fr++;
		else if (TS_JSON_IS(&j, "schema")) {
			tok = ts_json_next(&j, &err);
			if (tok == TS_JSON_STR && j.n > 20 &&
			    memcmp(j.s, "trainscope.contract/", 20) == 0)
				contract = 1;
			if (tok < 0)
				break;
			continue;
		}
		if (saw_events)
			break; /* the events array is not needed to decide */
		tok = ts_json_next(&j, &err);
		if (tok < 0 || ts_json_skip(&j, tok, &err))
			break;
	}
out:
	ts_json_release(&j);
	if (saw_events || (trace_meta && has(d, n, "\"traceEvents\""))) {
		trace_vendor(d, n, vendor, vsize);
		return TS_KIND_KINETO_TRACE;
	}
	if (contract)
		return TS_KIND_CONTRACT;
	if (hf)
		return TS_KIND_HF_CONFIG;
	if (fr >= 2)
		return TS_KIND_FLIGHT_RECORDER;
	return TS_KIND_UNKNOWN;
}

static int count_lines_with(const char *d, size_t n, const char *needle)
{
	int c = 0;
	const char *p = d, *end = d + n;
	size_t nl = strlen(needle);

	while (p < end) {
		const char *hit = memmem(p, (size_t)(end - p), needle, nl);
		if (!hit)
			break;
		c++;
		const char *eol = memchr(hit, '\n', (size_t)(end - hit));
		p = eol ? eol + 1 : end;
	}
	return c;
}

/* Some line starts with needle (after blanks). */
static int lines_starting(const char *d, size_t n, const char *needle)
{
	size_t nl = strlen(needle);
	for (size_t i = 0; i < n;) {
		while (i < n && (d[i] == ' ' || d[i] == '\t'))
			i++;
		if (n - i >= nl && memcmp(d + i, needle, nl) == 0)
			return 1;
		const char *eol = memchr(d + i, '\n', n - i);
		if (!eol)
			break;
		i = (size_t)(eol - d) + 1;
	}
	return 0;
}

/* First non-blank line looks like a JSON object that has a step key. */
static int looks_jsonl(const char *d, size_t n)
{
	size_t i = 0;

	while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t'))
		i++;
	if (i >= n || d[i] != '{')
		return 0;
	const char *eol = memchr(d + i, '\n', n - i);
	size_t len = eol ? (size_t)(eol - (d + i)) : n - i;
	const char *line = d + i;
	return (has(line, len, "\"iteration\"") || has(line, len, "\"step\"") ||
		has(line, len, "\"iter\"")) && memchr(line, '}', len) != NULL;
}

enum ts_kind ts_detect_buffer(const char *d, size_t n, char *vendor, size_t vsize)
{
	size_t i = 0;

	set_vendor(vendor, vsize, "");
	if (n >= 16 && memcmp(d, "SQLite format 3", 16) == 0) {
		/* nsys exports carry these tables in the schema page */
		if (has(d, n, "TARGET_INFO_SESSION_START_TIME") || has(d, n, "CUPTI_ACTIVITY_KIND") ||
		    has(d, n, "StringIds"))
			return TS_KIND_NSYS_SQLITE;
		return TS_KIND_SQLITE;
	}
	if (n >= 9) {
		/* safetensors: u64 little-endian header length, then '{' */
		uint64_t hl = 0;
		for (int k = 7; k >= 0; k--)
			hl = hl << 8 | (unsigned char)d[k];
		if (hl > 1 && hl < ((uint64_t)100 << 20) && d[8] == '{' && has(d, n < 4096 ? n : 4096, "\"dtype\""))
			return TS_KIND_SAFETENSORS;
	}
	while (i < n && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t'))
		i++;
	if (i < n && d[i] == '[') {
		/* legacy export: an array of {"name":..., "ph":...} events */
		size_t k = i + 1;
		while (k < n && (d[k] == ' ' || d[k] == '\n' || d[k] == '\r' || d[k] == '\t'))
			k++;
		if (k < n && d[k] == '{' && has(d, n, "\"ph\"") && has(d, n, "\"name\"") &&
		    has(d, n, "\"ts\"")) {
			trace_vendor(d, n, vendor, vsize);
			return TS_KIND_LEGACY_TRACE;
		}
		if (k < n && (d[k] == '{' || d[k] == '[' || d[k] == '"' || d[k] == ']'))
			return TS_KIND_JSON_OTHER;
	}
	if (looks_jsonl(d, n)) {
		const char *eol = memchr(d, '\n', n);
		/* a single pretty-printed object is not JSONL */
		if (eol && (size_t)(eol - d) + 1 < n) {
			const char *next = eol + 1;
			while (next < d + n && (*next == ' ' || *next == '\n'))
				next++;
			if (next < d + n && *next == '{')
				return TS_KIND_METRICS_JSONL;
		}
	}
	if (i < n && d[i] == '{') {
		int valid = 0;
		enum ts_kind k = json_object_kind(d + i, n - i, vendor, vsize, &valid);
		if (k != TS_KIND_UNKNOWN)
			return k;
		if (valid)
			return TS_KIND_JSON_OTHER;
	}
	/* Flight Recorder pickle (protocol 2+): PROTO then the dump's keys */
	if (n > 2 && (unsigned char)d[0] == 0x80 && d[1] >= 2 && d[1] <= 5 &&
	    (has(d, n, "pg_config") || has(d, n, "entries")))
		return TS_KIND_FLIGHT_RECORDER;
	/* text formats: count marker lines */
	size_t nul = 0;
	for (size_t k = 0; k < n && k < 4096; k++)
		if (d[k] == '\0')
			nul++;
	if (nul)
		return TS_KIND_BINARY;
	if (count_lines_with(d, n, "elapsed time per iteration") ||
	    (count_lines_with(d, n, " iteration ") && count_lines_with(d, n, "consumed samples")))
		return TS_KIND_LOG_MEGATRON;
	if (count_lines_with(d, n, "Step Time :") || count_lines_with(d, n, "Step Time:"))
		return TS_KIND_LOG_BRIDGE;
	if (count_lines_with(d, n, "reduced_train_loss") || count_lines_with(d, n, "train_step_timing"))
		return TS_KIND_LOG_NEMO;
	if (count_lines_with(d, n, "{'loss':") || count_lines_with(d, n, "{'train_runtime':"))
		return TS_KIND_LOG_HF;
	if (count_lines_with(d, n, "elapsed_time_per_iter") || count_lines_with(d, n, "[Primus"))
		return TS_KIND_LOG_PRIMUS;
	if (lines_starting(d, n, "Not all ranks joining collective") ||
	    (lines_starting(d, n, "Collective sequence number:") && lines_starting(d, n, "Culprit rank ")) ||
	    lines_starting(d, n, "Communicator ranks have different") ||
	    (lines_starting(d, n, "Job summary") && lines_starting(d, n, "NCCL version")))
		return TS_KIND_HANG_REPORT;
	if (count_lines_with(d, n, "Watchdog caught collective operation timeout") ||
	    count_lines_with(d, n, "ProcessGroupNCCL") || count_lines_with(d, n, "ProcessGroupMCCL") ||
	    (count_lines_with(d, n, " NCCL INFO ") && count_lines_with(d, n, ": opCount ")) ||
	    (count_lines_with(d, n, " MCCL INFO ") && count_lines_with(d, n, ": opCount ")) ||
	    count_lines_with(d, n, "NCCL WARN NET/IB : collective mismatch error"))
		return TS_KIND_LOG_HANG;
	if (count_lines_with(d, n, "# gpu") && count_lines_with(d, n, "# Idx"))
		return TS_KIND_TELEMETRY_DMON;
	if (count_lines_with(d, n, "mthreads-gmi") || count_lines_with(d, n, "MTT S"))
		return TS_KIND_TELEMETRY_GMI;
	if (count_lines_with(d, n, "NVIDIA") && count_lines_with(d, n, ", ") >= 1 &&
	    !count_lines_with(d, n, "|"))
		return TS_KIND_TELEMETRY_SMI;
	return TS_KIND_TEXT;
}

int ts_detect_file(const char *path, struct ts_detect *out, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = ts_input_open(&in, path, err);
	if (rc)
		return rc;
	out->bytes = in.file_bytes;
	while (in.len < SNIFF_BYTES && !in.eof) {
		int64_t r = ts_input_more(&in, 0, err);
		if (r < 0 && r != TS_ETRUNC) {
			ts_input_release(&in);
			return (int)r;
		}
		if (r == TS_ETRUNC)
			rc = TS_ETRUNC;
		if (r <= 0)
			break;
	}
	out->gzip = in.gzip;
	size_t n = in.len < SNIFF_BYTES ? in.len : SNIFF_BYTES;
	out->kind = ts_detect_buffer((const char *)in.data, n, out->vendor, sizeof(out->vendor));
	ts_input_release(&in);
	/* a cut gzip stream is only worth reading on when what it holds is
	 * recognisable (readers keep the complete part of a trace or log) */
	if (rc == TS_ETRUNC && (out->kind == TS_KIND_UNKNOWN || out->kind == TS_KIND_TEXT))
		return rc;
	return 0;
}
