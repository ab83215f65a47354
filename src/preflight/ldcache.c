/*
 * ldcache.c - read /etc/ld.so.cache directly.
 *
 * Why: "which copy does the loader pick" must not depend on running
 * ldconfig -p (absent in slim containers, and it describes the running
 * system, not a mounted root). The layout is glibc's (elf/dl-cache.h):
 *
 *   old  "ld.so-1.7.0" (11 bytes, padded to 12) | u32 nlibs |
 *        nlibs x {i32 flags, u32 key, u32 value}  (12 bytes) | strings
 *        offsets relative to the string table after the entries;
 *   new  "glibc-ld.so.cache" "1.1" (20) | u32 nlibs | u32 len_strings |
 *        u8 flags (endianness in bits 0-1: 2 little, 3 big) | 3 pad |
 *        u32 extension_offset | 3 x u32 | nlibs x {i32 flags, u32 key,
 *        u32 value, u32 osversion, u64 hwcap} (24 bytes) | strings
 *        offsets relative to the start of the new header.
 * Since glibc 2.32 ldconfig writes the new format only; older ones write
 * the old table followed by the new one (8-byte aligned), which wins.
 */
#include <stdlib.h>
#include <string.h>
#include "trainscope/preflight.h"

#define OLD_MAGIC "ld.so-1.7.0"
#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define OLD_HDR 16u
#define OLD_ENTRY 12u
#define NEW_HDR 48u
#define NEW_ENTRY 24u

static uint32_t rd32(const unsigned char *p, int big)
{
	if (big)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* The NUL-terminated string at base + off inside data[0..n), or NULL. */
static const char *str_at(const unsigned char *data, size_t n, size_t base, uint32_t off)
{
	size_t at = base + off;

	if (at < base || at >= n || !memchr(data + at, '\0', n - at))
		return NULL;
	return (const char *)data + at;
}

static int parse_new(struct ts_ldcache *c, const unsigned char *d, size_t n, size_t base,
		     const char *name, struct ts_err *err)
{
	const unsigned char *h = d + base;
	int big = (h[28] & 3) == 3;
	uint32_t nlibs = rd32(h + 20, big);

	if ((h[28] & 3) == 1)
		return ts_err_at(err, TS_EPARSE, name, (int64_t)base + 28, -1,
				 "ld.so cache: invalid endianness flag");
	if ((uint64_t)nlibs * NEW_ENTRY > n - base - NEW_HDR)
		return ts_err_at(err, TS_EPARSE, name, (int64_t)base + 20, -1,
				 "ld.so cache: %u entries do not fit in %zu bytes", nlibs, n);
	for (uint32_t i = 0; i < nlibs; i++) {
		const unsigned char *e = h + NEW_HDR + (size_t)i * NEW_ENTRY;
		struct ts_ldcache_entry en;
		en.flags = (int32_t)rd32(e, big);
		en.key = str_at(d, n, base, rd32(e + 4, big));
		en.value = str_at(d, n, base, rd32(e + 8, big));
		if (!en.key || !en.value)
			return ts_err_at(err, TS_EPARSE, name, (int64_t)(e - d), -1,
					 "ld.so cache: entry %u points outside the file", i);
		if (TS_VEC_PUSH(c->entries, en))
			return ts_err_set(err, TS_ENOMEM, "out of memory");
	}
	c->format = 2;
	return 0;
}

int ts_ldcache_parse(struct ts_ldcache *c, const void *data, size_t n, const char *name,
		     struct ts_err *err)
{
	const unsigned char *d = data;

	memset(c, 0, sizeof(*c));
	if (n >= NEW_HDR && memcmp(d, NEW_MAGIC, 20) == 0)
		return parse_new(c, d, n, 0, name, err);
	if (n < OLD_HDR || memcmp(d, OLD_MAGIC, 11) != 0)
		return ts_err_at(err, TS_EPARSE, name, 0, -1,
				 "not an ld.so cache (no ld.so-1.7.0 or glibc-ld.so.cache1.1 magic)");
	uint32_t nlibs = rd32(d + 12, 0);
	if ((uint64_t)nlibs * OLD_ENTRY > n - OLD_HDR)
		return ts_err_at(err, TS_EPARSE, name, 12, -1,
				 "ld.so cache: %u entries do not fit in %zu bytes", nlibs, n);
	size_t end = OLD_HDR + (size_t)nlibs * OLD_ENTRY;
	size_t next = (end + 7) & ~(size_t)7;
	if (next + NEW_HDR <= n && memcmp(d + next, NEW_MAGIC, 20) == 0)
		return parse_new(c, d, n, next, name, err);
	for (uint32_t i = 0; i < nlibs; i++) {
		const unsigned char *e = d + OLD_HDR + (size_t)i * OLD_ENTRY;
		struct ts_ldcache_entry en;
		en.flags = (int32_t)rd32(e, 0);
		en.key = str_at(d, n, end, rd32(e + 4, 0));
		en.value = str_at(d, n, end, rd32(e + 8, 0));
		if (!en.key || !en.value)
			return ts_err_at(err, TS_EPARSE, name, (int64_t)(e - d), -1,
					 "ld.so cache: entry %u points outside the file", i);
		if (TS_VEC_PUSH(c->entries, en))
			return ts_err_set(err, TS_ENOMEM, "out of memory");
	}
	c->format = 1;
	return 0;
}

void ts_ldcache_release(struct ts_ldcache *c)
{
	TS_VEC_RELEASE(c->entries);
	memset(c, 0, sizeof(*c));
}

/* The arch bits (FLAG_REQUIRED_MASK 0xff00) this machine's loader accepts
 * with FLAG_ELF_LIBC6 (3): x86-64 0x0300, AArch64 0x0a00. */
static int abi_ok(int32_t flags)
{
	if ((flags & 0xff) != 3)
		return 0;
#if defined(__x86_64__)
	return (flags & 0xff00) == 0x0300;
#elif defined(__aarch64__)
	return (flags & 0xff00) == 0x0a00;
#else
	return 1;
#endif
}

const struct ts_ldcache_entry *ts_ldcache_find(const struct ts_ldcache *c, const char *soname)
{
	for (size_t i = 0; i < c->entries.n; i++)
		if (abi_ok(c->entries.v[i].flags) && strcmp(c->entries.v[i].key, soname) == 0)
			return &c->entries.v[i];
	return NULL;
}
