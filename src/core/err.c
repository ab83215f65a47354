/*
 * err.c - the error record shared by every library call.
 *
 * The library never prints: it describes what went wrong (file, byte offset,
 * line, message) and the CLI decides how to show it and which exit code to use.
 */
#include <stdio.h>
#include <string.h>
#include "trainscope/core.h"

void ts_err_init(struct ts_err *err)
{
	err->code = TS_OK;
	err->offset = -1;
	err->line = -1;
	err->path[0] = '\0';
	err->msg[0] = '\0';
}

static void copy_trunc(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int ts_err_set(struct ts_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

int ts_err_at(struct ts_err *err, int code, const char *path, int64_t offset,
	      int64_t line, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	err->offset = offset;
	err->line = line;
	copy_trunc(err->path, sizeof(err->path), path ? path : "");
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

const char *ts_code_name(int code)
{
	switch (code) {
	case TS_OK: return "ok";
	case TS_EUSAGE: return "usage error";
	case TS_EIO: return "I/O error";
	case TS_EPARSE: return "parse error";
	case TS_ETRUNC: return "truncated input";
	case TS_ENOMEM: return "out of memory";
	case TS_EINTERNAL: return "internal error";
	case TS_EUNSUPPORTED: return "unsupported input";
	case TS_ELIMIT: return "input exceeds a limit";
	default: return "error";
	}
}

void ts_err_format(const struct ts_err *err, char *buf, size_t size)
{
	int n = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	if (err->path[0])
		n = snprintf(buf, size, "%s: ", err->path);
	if (n >= 0 && (size_t)n < size && err->offset >= 0) {
		if (err->line > 0)
			n += snprintf(buf + n, size - (size_t)n, "byte %lld (line %lld): ",
				      (long long)err->offset, (long long)err->line);
		else
			n += snprintf(buf + n, size - (size_t)n, "byte %lld: ",
				      (long long)err->offset);
	}
	if (n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "%s",
			 err->msg[0] ? err->msg : ts_code_name(err->code));
}
