/*
 * strbuf.c - growable byte buffers and array growth.
 *
 * Output (JSON, tables, reports) is built in memory and written once, so a
 * command either writes its whole result or nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/core.h"

static char sb_empty[1];

int ts_grow(void **ptr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap + *cap / 2;
	if (ncap < need)
		ncap = need;
	if (ncap < 8)
		ncap = 8;
	if (elem && ncap > SIZE_MAX / elem)
		return TS_ENOMEM;
	p = realloc(*ptr, ncap * elem);
	if (!p)
		return TS_ENOMEM;
	*ptr = p;
	*cap = ncap;
	return 0;
}

void ts_sb_init(struct ts_sb *sb)
{
	sb->buf = sb_empty;
	sb->len = 0;
	sb->cap = 0;
	sb->failed = 0;
}

void ts_sb_release(struct ts_sb *sb)
{
	if (sb->cap)
		free(sb->buf);
	ts_sb_init(sb);
}

void ts_sb_reset(struct ts_sb *sb)
{
	sb->len = 0;
	if (sb->cap)
		sb->buf[0] = '\0';
}

static int sb_reserve(struct ts_sb *sb, size_t extra)
{
	size_t need;
	char *p;

	if (sb->failed)
		return -1;
	need = sb->len + extra + 1;
	if (need < sb->len) {
		sb->failed = 1;
		return -1;
	}
	if (need <= sb->cap)
		return 0;
	size_t ncap = sb->cap ? sb->cap * 2 : 256;
	while (ncap < need)
		ncap *= 2;
	p = realloc(sb->cap ? sb->buf : NULL, ncap);
	if (!p) {
		sb->failed = 1;
		return -1;
	}
	sb->buf = p;
	sb->cap = ncap;
	return 0;
}

void ts_sb_add(struct ts_sb *sb, const void *data, size_t n)
{
	if (sb_reserve(sb, n))
		return;
	memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void ts_sb_addc(struct ts_sb *sb, char c)
{
	if (sb_reserve(sb, 1))
		return;
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void ts_sb_adds(struct ts_sb *sb, const char *s)
{
	ts_sb_add(sb, s, strlen(s));
}

void ts_sb_pad(struct ts_sb *sb, char c, size_t n)
{
	if (sb_reserve(sb, n))
		return;
	memset(sb->buf + sb->len, c, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void ts_sb_vaddf(struct ts_sb *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || sb_reserve(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void ts_sb_addf(struct ts_sb *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ts_sb_vaddf(sb, fmt, ap);
	va_end(ap);
}
