/*
 * pf_probe.c - fill the preflight model from a machine or a mounted root.
 *
 * Why: the versions that matter are those of what is loaded, and the
 * loader's choice depends on files (sysfs, the ld.so cache, symlinks with
 * versioned names) that can be read without creating a GPU context. Every
 * path is read below probe->root, so a test builds a fake machine as a
 * directory tree, and `--root` inspects a container image.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pf_int.h"
#include "trainscope/input.h"

#if defined(__aarch64__)
#define TRIPLET "aarch64-linux-gnu"
#else
#define TRIPLET "x86_64-linux-gnu"
#endif

struct dirent_via { const char *dir, *via; };
struct dirvec { struct dirent_via *v; size_t n, cap; };
struct strvec { const char **v; size_t n, cap; };

struct ctx {
	struct ts_preflight *pf;
	const struct ts_probe *probe;
	const char *root;
	struct ts_sb sb;
	struct ts_ldcache cache;
	struct ts_sb cache_data;
	struct { const char **v; size_t n, cap; } sites; /* site-packages dirs (inside the root) */
	int r;                      /* sticky TS_ENOMEM */
};

/* snprintf for paths: truncation of an absurdly long path only makes the
 * probe miss that file. */
static void pathf(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void pathf(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, size, fmt, ap);
	va_end(ap);
}

static int atoi_safe(const char *s)
{
	long v = strtol(s, NULL, 10);
	return v < -1 ? -1 : v > 1 << 20 ? 1 << 20 : (int)v;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int resolve(const struct ctx *c, const char *path, char *out, size_t size);

/* The host path of `path` inside the root. Below a root every symlink on
 * the way is resolved inside it (an image's /usr/local/cuda ->
 * /usr/local/cuda-12.4 must not lead into the host's tree); a path that
 * does not resolve is passed through so that opening it just fails. */
static void full(const struct ctx *c, const char *path, char *out, size_t size)
{
	char real[PATH_MAX];

	if (c->root[0] && resolve(c, path, real, sizeof(real)) == 0)
		path = real;
	pathf(out, size, "%s%s", c->root, path);
}

/* root/path into c->sb (replaced); 0 or -1. */
static int slurp(struct ctx *c, const char *path, size_t max)
{
	char f[PATH_MAX];
	char buf[4096];
	FILE *fp;
	size_t n;

	ts_sb_reset(&c->sb);
	full(c, path, f, sizeof(f));
	fp = fopen(f, "rb");
	if (!fp)
		return -1;
	while (c->sb.len < max && (n = fread(buf, 1, sizeof(buf), fp)) > 0)
		ts_sb_add(&c->sb, buf, n);
	fclose(fp);
	return c->sb.failed ? -1 : 0;
}

static int exists(const struct ctx *c, const char *path)
{
	char real[PATH_MAX];

	return resolve(c, path, real, sizeof(real)) == 0;
}

static const char *env_get(const struct ctx *c, const char *name)
{
	size_t n = strlen(name);

	for (char *const *e = c->probe->envp; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* First line of c->sb, trimmed, copied. */
static const char *first_line(struct ctx *c)
{
	const char *s = c->sb.buf;
	const char *eol = memchr(s, '\n', c->sb.len);
	size_t n = eol ? (size_t)(eol - s) : c->sb.len;

	pf_trim(&s, &n);
	return pf_dupn(c->pf, s, n);
}

/*
 * realpath(3) inside the root: each component is looked up with lstat
 * below the root, a symlink's target is spliced in (an absolute target
 * restarts at the root), "." and ".." are handled, at most 32 links. out
 * receives the real path as seen inside the root. 0, or -1 when a
 * component is missing (a dangling link) or there are too many links.
 */
static int resolve(const struct ctx *c, const char *path, char *out, size_t size)
{
	char rest[2 * PATH_MAX], done[PATH_MAX] = "", f[PATH_MAX], tgt[PATH_MAX];
	int links = 0;
	size_t pos = 0;

	pathf(rest, sizeof(rest), "%s", path);
	while (rest[pos]) {
		struct stat st;
		size_t n;
		while (rest[pos] == '/')
			pos++;
		if (!rest[pos])
			break;
		n = strcspn(rest + pos, "/");
		if (n == 1 && rest[pos] == '.') {
			pos += n;
			continue;
		}
		if (n == 2 && rest[pos] == '.' && rest[pos + 1] == '.') {
			char *slash = strrchr(done, '/');
			if (slash)
				*slash = 0;
			pos += n;
			continue;
		}
		size_t dl = strlen(done);
		if (dl + 1 + n >= sizeof(done))
			return -1;
		done[dl] = '/';
		memcpy(done + dl + 1, rest + pos, n);
		done[dl + 1 + n] = 0;
		pos += n;
		pathf(f, sizeof(f), "%s%s", c->root, done);
		if (lstat(f, &st) != 0)
			return -1;
		if (!S_ISLNK(st.st_mode))
			continue;
		ssize_t tn = readlink(f, tgt, sizeof(tgt) - 1);
		if (tn < 0 || ++links > 32)
			return -1;
		tgt[tn] = 0;
		done[dl] = 0; /* the link's directory */
		if (tgt[0] == '/')
			done[0] = 0;
		char next[2 * PATH_MAX];
		pathf(next, sizeof(next), "%s/%s", tgt, rest + pos);
		pathf(rest, sizeof(rest), "%s", next);
		pos = 0;
	}
	pathf(out, size, "%s", done[0] ? done : "/");
	return 0;
}

/* ------------------------------------------------------------ devices */

static const struct { unsigned id; const char *vendor; } pci_vendors[] = {
	{ 0x10de, "nvidia" }, { 0x1ed5, "mthreads" }, { 0x1002, "amd" }, { 0x9999, "metax" },
};

static unsigned hexval(struct ctx *c, const char *dir, const char *file, int *ok)
{
	char p[PATH_MAX];

	pathf(p, sizeof(p), "%s/%s", dir, file);
	*ok = slurp(c, p, 64) == 0;
	return *ok ? (unsigned)strtoul(c->sb.buf, NULL, 16) : 0;
}

static double gts(const char *s)
{
	return strtod(s, NULL); /* "16.0 GT/s PCIe", "8 GT/s", "Unknown" -> 0 */
}

static int cmp_dev(const void *a, const void *b)
{
	const struct ts_pf_device *x = a, *y = b;
	return strcmp(x->bdf ? x->bdf : "", y->bdf ? y->bdf : "");
}

static void probe_pci(struct ctx *c)
{
	char d[PATH_MAX];
	DIR *dir;
	struct dirent *de;
	size_t funcs = 0, found = 0;

	full(c, "/sys/bus/pci/devices", d, sizeof(d));
	dir = opendir(d);
	if (!dir) {
		c->r |= pf_kv(c->pf, PF_PROBE, "pci", "/sys/bus/pci/devices absent", NULL, -1);
		return;
	}
	while ((de = readdir(dir))) {
		char base[PATH_MAX], p[PATH_MAX + 32], link[PATH_MAX];
		const char *vendor = NULL;
		unsigned vid, cls;
		int ok;
		if (de->d_name[0] == '.')
			continue;
		funcs++;
		pathf(base, sizeof(base), "/sys/bus/pci/devices/%s", de->d_name);
		vid = hexval(c, base, "vendor", &ok);
		for (size_t i = 0; ok && i < sizeof(pci_vendors) / sizeof(pci_vendors[0]); i++)
			if (pci_vendors[i].id == vid)
				vendor = pci_vendors[i].vendor;
		cls = hexval(c, base, "class", &ok) >> 16;
		if (!vendor || !ok || (cls != 0x03 && cls != 0x12))
			continue;
		struct ts_pf_device *dev = pf_device_add(c->pf);
		if (!dev) {
			c->r = TS_ENOMEM;
			break;
		}
		found++;
		dev->vendor = vendor;
		dev->vendor_id = vid;
		dev->device_id = hexval(c, base, "device", &ok);
		dev->bdf = pf_dup(c->pf, de->d_name);
		dev->source = pf_dup(c->pf, base);
		pathf(p, sizeof(p), "%s/current_link_width", base);
		if (slurp(c, p, 64) == 0)
			dev->width_cur = atoi_safe(c->sb.buf);
		pathf(p, sizeof(p), "%s/max_link_width", base);
		if (slurp(c, p, 64) == 0)
			dev->width_max = atoi_safe(c->sb.buf);
		pathf(p, sizeof(p), "%s/current_link_speed", base);
		if (slurp(c, p, 64) == 0)
			dev->speed_cur_gts = gts(c->sb.buf);
		pathf(p, sizeof(p), "%s/max_link_speed", base);
		if (slurp(c, p, 64) == 0)
			dev->speed_max_gts = gts(c->sb.buf);
		pathf(p, sizeof(p), "%s/numa_node", base);
		if (slurp(c, p, 64) == 0)
			dev->numa_node = atoi_safe(c->sb.buf);
		full(c, base, link, sizeof(link));
		pathf(p, sizeof(p), "%s/driver", link);
		ssize_t n = readlink(p, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = 0;
			const char *slash = strrchr(link, '/');
			dev->kdriver = pf_dup(c->pf, slash ? slash + 1 : link);
		}
	}
	closedir(dir);
	ts_sort(c->pf->devices.v, c->pf->devices.n, sizeof(*c->pf->devices.v), cmp_dev);
	c->r |= pf_kv(c->pf, PF_PROBE, "pci",
		      pf_fmt(c->pf, "/sys/bus/pci/devices: %zu accelerator(s) of %zu functions",
			     found, funcs), NULL, -1);
}

/* Device nodes per family, as one "a b c" list each. */
static void probe_devnodes(struct ctx *c)
{
	static const struct { const char *dir, *prefix, *key; } fam[] = {
		{ "/dev", "nvidia", "devnodes.nvidia" },
		{ "/dev", "mtgpu", "devnodes.mthreads" },
		{ "/dev/dri", "renderD", "devnodes.dri" },
		{ "/dev", "kfd", "devnodes.amd" },
	};
	size_t total = 0;

	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		char d[PATH_MAX];
		struct ts_sb list;
		struct strvec names = { 0 };
		DIR *dir;
		struct dirent *de;
		full(c, fam[i].dir, d, sizeof(d));
		if (!(dir = opendir(d)))
			continue;
		while ((de = readdir(dir)))
			if (strncmp(de->d_name, fam[i].prefix, strlen(fam[i].prefix)) == 0)
				c->r |= TS_VEC_PUSH(names, pf_fmt(c->pf, "%s/%s", fam[i].dir, de->d_name));
		closedir(dir);
		ts_sort(names.v, names.n, sizeof(*names.v), cmp_str);
		ts_sb_init(&list);
		for (size_t k = 0; k < names.n; k++)
			ts_sb_addf(&list, "%s%s", k ? " " : "", names.v[k] ? names.v[k] : "");
		if (names.n)
			c->r |= pf_kv(c->pf, PF_HOST, fam[i].key, list.buf, fam[i].dir, -1);
		total += names.n;
		ts_sb_release(&list);
		TS_VEC_RELEASE(names);
	}
	c->r |= pf_kv(c->pf, PF_PROBE, "device nodes",
		      pf_fmt(c->pf, "/dev/nvidia*, /dev/mtgpu*, /dev/dri/renderD*, /dev/kfd: %zu", total),
		      NULL, -1);
}

/* ------------------------------------------------------------ drivers */

static void probe_drivers(struct ctx *c)
{
	static const char *const mods[] = { "nvidia", "mtgpu", "amdgpu", "metax" };
	size_t found = 0;

	if (slurp(c, "/proc/driver/nvidia/version", 65536) == 0) {
		/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  <date>" or
		 * "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  ..." */
		const char *m = strstr(c->sb.buf, "Kernel Module");
		const char *eol = m ? strchr(m, '\n') : NULL;
		const char *end = eol ? eol : m ? m + strlen(m) : NULL;
		for (const char *p = m ? m + 13 : NULL; p && p < end; p++) {
			if (isdigit((unsigned char)*p) && p[-1] == ' ') {
				const char *q = p;
				while (q < end && (isdigit((unsigned char)*q) || *q == '.'))
					q++;
				if (memchr(p, '.', (size_t)(q - p))) {
					c->r |= pf_driver_add(c->pf, "nvidia", pf_dupn(c->pf, p, (size_t)(q - p)),
							      "/proc/driver/nvidia/version", 1);
					found++;
					break;
				}
			}
		}
	}
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		char p[128];
		pathf(p, sizeof(p), "/sys/module/%s/version", mods[i]);
		if (slurp(c, p, 256) == 0 && c->sb.len) {
			c->r |= pf_driver_add(c->pf, mods[i], first_line(c), p, 1);
			found++;
		}
	}
	c->r |= pf_kv(c->pf, PF_PROBE, "kernel drivers",
		      pf_fmt(c->pf, "/proc/driver/nvidia/version, /sys/module/{nvidia,mtgpu,amdgpu,metax}/version: %zu", found),
		      NULL, -1);
}

/* ------------------------------------------------------------ libraries */

struct libspec {
	const char *name, *stack, *prefix;
	const char *sonames[5];
};

static const struct libspec libspecs[] = {
	{ "cuda", "cuda", "libcuda.so", { "libcuda.so.1", NULL } },
	{ "cudart", "cuda", "libcudart.so", { "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so", NULL } },
	{ "nvml", "cuda", "libnvidia-ml.so", { "libnvidia-ml.so.1", NULL } },
	{ "nccl", "cuda", "libnccl.so", { "libnccl.so.2", "libnccl.so", NULL } },
	{ "cudnn", "cuda", "libcudnn.so", { "libcudnn.so.9", "libcudnn.so.8", "libcudnn.so", NULL } },
	{ "cupti", "cuda", "libcupti.so", { "libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8", "libcupti.so", NULL } },
	{ "musa", "musa", "libmusa.so", { "libmusa.so", NULL } },
	{ "musart", "musa", "libmusart.so", { "libmusart.so", NULL } },
	{ "mtml", "musa", "libmtml.so", { "libmtml.so", NULL } },
	{ "mccl", "musa", "libmccl.so", { "libmccl.so", NULL } },
	{ "mudnn", "musa", "libmudnn.so", { "libmudnn.so", NULL } },
	{ "mupti", "musa", "libmupti.so", { "libmupti.so.1", "libmupti.so", NULL } },
	{ "srv_um_musa", "musa", "libsrv_um_MUSA.so", { "libsrv_um_MUSA.so", NULL } },
};



static void add_dir(struct ctx *c, struct dirvec *dirs, const char *dir, const char *via)
{
	struct dirent_via d = { pf_dup(c->pf, dir), via };

	for (size_t i = 0; i < dirs->n; i++)
		if (strcmp(dirs->v[i].dir, dir) == 0)
			return;
	if (!d.dir || TS_VEC_PUSH(*dirs, d))
		c->r = TS_ENOMEM;
}

/* Each NAME in DIR that starts with prefix (a literal, no pattern) as
 * DIR/NAME[/suffix], in sorted order. */
static void expand(struct ctx *c, const char *dir, const char *prefix, const char *suffix,
		   struct strvec *out)
{
	char d[PATH_MAX];
	DIR *dp;
	struct dirent *de;
	size_t start = out->n;

	full(c, dir, d, sizeof(d));
	if (!(dp = opendir(d)))
		return;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.' || strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		const char *p = pf_fmt(c->pf, "%s/%s%s", dir, de->d_name, suffix);
		if (!p || TS_VEC_PUSH(*out, p))
			c->r = TS_ENOMEM;
	}
	closedir(dp);
	if (out->n > start)
		ts_sort(out->v + start, out->n - start, sizeof(*out->v), cmp_str);
}

/* Directories of /etc/ld.so.conf and its `include` globs (one level of
 * "dir/prefix*.conf" patterns, as Debian and RHEL write them). */
static void ldconf(struct ctx *c, const char *path, struct dirvec *dirs, int depth)
{
	struct ts_sb text;

	if (depth > 4 || slurp(c, path, 1 << 20) != 0)
		return;
	ts_sb_init(&text);
	ts_sb_add(&text, c->sb.buf, c->sb.len);
	for (const char *p = text.buf; p && *p;) {
		const char *eol = strchr(p, '\n');
		const char *s = p;
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		const char *hash = memchr(s, '#', n);
		if (hash)
			n = (size_t)(hash - s);
		pf_trim(&s, &n);
		if (n > 8 && strncmp(s, "include", 7) == 0 && (s[7] == ' ' || s[7] == '\t')) {
			const char *g = s + 8;
			size_t gn = n - 8;
			pf_trim(&g, &gn);
			const char *pat = pf_dupn(c->pf, g, gn);
			const char *slash = pat ? strrchr(pat, '/') : NULL;
			const char *star = slash ? strchr(slash, '*') : NULL;
			if (slash && star) {
				struct strvec files = { 0 };
				char *dir = (char *)pf_dupn(c->pf, pat, (size_t)(slash - pat));
				char *pre = (char *)pf_dupn(c->pf, slash + 1, (size_t)(star - slash - 1));
				const char *suf = star + 1;
				if (dir && pre) {
					expand(c, dir, pre, "", &files);
					for (size_t i = 0; i < files.n; i++) {
						size_t fl = strlen(files.v[i]), sl = strlen(suf);
						if (fl >= sl && strcmp(files.v[i] + fl - sl, suf) == 0)
							ldconf(c, files.v[i], dirs, depth + 1);
					}
				}
				TS_VEC_RELEASE(files);
			} else if (pat) {
				ldconf(c, pat, dirs, depth + 1);
			}
		} else if (n && s[0] == '/') {
			add_dir(c, dirs, pf_dupn(c->pf, s, n), "ld.so.conf");
		}
		p = eol ? eol + 1 : NULL;
	}
	ts_sb_release(&text);
}

static void read_cache(struct ctx *c)
{
	struct ts_input in;
	struct ts_err err;
	char f[PATH_MAX];

	ts_err_init(&err);
	full(c, "/etc/ld.so.cache", f, sizeof(f));
	if (ts_input_read_all(&in, f, 64 << 20, &err) != 0) {
		c->r |= pf_kv(c->pf, PF_HOST, "ld.so.cache", "absent", "/etc/ld.so.cache", -1);
		return;
	}
	ts_sb_add(&c->cache_data, in.data, in.len);
	ts_input_release(&in);
	if (c->cache_data.failed) {
		c->r = TS_ENOMEM;
		return;
	}
	if (ts_ldcache_parse(&c->cache, c->cache_data.buf, c->cache_data.len, "/etc/ld.so.cache",
			     &err) != 0) {
		char msg[700];
		ts_err_format(&err, msg, sizeof(msg));
		c->r |= pf_kv(c->pf, PF_HOST, "ld.so.cache", pf_fmt(c->pf, "unreadable: %s", msg),
			      "/etc/ld.so.cache", -1);
		ts_ldcache_release(&c->cache);
		return;
	}
	c->r |= pf_kv(c->pf, PF_HOST, "ld.so.cache",
		      pf_fmt(c->pf, "%zu entries (%s format)", c->cache.entries.n,
			     c->cache.format == 2 ? "new" : "old"),
		      "/etc/ld.so.cache", -1);
}

/* The copy the loader gives a plain dlopen(soname): LD_LIBRARY_PATH, then
 * the cache, then the default directories (ld.so(8)). */
static const char *loader_pick(struct ctx *c, const char *soname,
			       const struct dirvec *dirs, const char **via)
{
	const struct ts_ldcache_entry *e;
	char p[PATH_MAX];

	for (size_t i = 0; i < dirs->n; i++) {
		if (strcmp(dirs->v[i].via, "LD_LIBRARY_PATH") != 0)
			continue;
		pathf(p, sizeof(p), "%s/%s", dirs->v[i].dir, soname);
		if (exists(c, p)) {
			*via = "LD_LIBRARY_PATH";
			return pf_dup(c->pf, p);
		}
	}
	if ((e = ts_ldcache_find(&c->cache, soname)) && exists(c, e->value)) {
		*via = "ld.so.cache";
		return pf_dup(c->pf, e->value);
	}
	for (size_t i = 0; i < dirs->n; i++) {
		if (strcmp(dirs->v[i].via, "default") != 0)
			continue;
		pathf(p, sizeof(p), "%s/%s", dirs->v[i].dir, soname);
		if (exists(c, p)) {
			*via = "default";
			return pf_dup(c->pf, p);
		}
	}
	return NULL;
}

static void add_copy(struct ctx *c, struct ts_pf_lib *l, const char *path, const char *via)
{
	char real[PATH_MAX];
	struct ts_pf_copy cp;
	const char *slash;

	if (resolve(c, path, real, sizeof(real)) != 0)
		return;
	for (size_t i = 0; i < l->copies.n; i++)
		if (strcmp(l->copies.v[i].path, real) == 0)
			return;
	slash = strrchr(real, '/');
	cp.path = pf_dup(c->pf, real);
	cp.version = pf_dup(c->pf, pf_so_version(slash ? slash + 1 : real));
	cp.via = via;
	if (!cp.path || TS_VEC_PUSH(l->copies, cp))
		c->r = TS_ENOMEM;
}

static void search_dirs(struct ctx *c, struct dirvec *dirs)
{
	const char *llp = env_get(c, "LD_LIBRARY_PATH");
	const char *ch = env_get(c, "CUDA_HOME");
	const char *mh = env_get(c, "MUSA_HOME");
	static const char *const defaults[] = { "/lib/" TRIPLET, "/usr/lib/" TRIPLET, "/lib64",
						"/usr/lib64", "/lib", "/usr/lib" };
	char p[PATH_MAX];

	for (const char *s = llp; s && *s;) {
		const char *colon = strchr(s, ':');
		size_t n = colon ? (size_t)(colon - s) : strlen(s);
		if (n && s[0] == '/')
			add_dir(c, dirs, pf_dupn(c->pf, s, n), "LD_LIBRARY_PATH");
		s = colon ? colon + 1 : NULL;
	}
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		add_dir(c, dirs, defaults[i], "default");
	ldconf(c, "/etc/ld.so.conf", dirs, 0);
	if (!ch)
		ch = "/usr/local/cuda";
	pathf(p, sizeof(p), "%s/lib64", ch);
	add_dir(c, dirs, p, "CUDA_HOME");
	pathf(p, sizeof(p), "%s/lib", ch);
	add_dir(c, dirs, p, "CUDA_HOME");
	pathf(p, sizeof(p), "%s/extras/CUPTI/lib64", ch);
	add_dir(c, dirs, p, "CUDA_HOME");
	pathf(p, sizeof(p), "%s/lib", mh ? mh : "/usr/local/musa");
	add_dir(c, dirs, p, "MUSA_HOME");
	add_dir(c, dirs, "/opt/maca/lib", "/opt/maca");
	add_dir(c, dirs, "/opt/maca/lib64", "/opt/maca");
	for (size_t i = 0; i < c->sites.n; i++) {
		struct strvec pk = { 0 };
		pathf(p, sizeof(p), "%s/nvidia", c->sites.v[i]);
		expand(c, p, "", "/lib", &pk);
		for (size_t k = 0; k < pk.n; k++)
			add_dir(c, dirs, pk.v[k], "site-packages");
		pathf(p, sizeof(p), "%s/torch/lib", c->sites.v[i]);
		add_dir(c, dirs, p, "site-packages");
		TS_VEC_RELEASE(pk);
	}
}

/* site-packages / dist-packages folders of the usual pythons. */
static void find_sites(struct ctx *c)
{
	const char *venv = env_get(c, "VIRTUAL_ENV"), *conda = env_get(c, "CONDA_PREFIX");
	const char *bases[] = { "/usr/lib", "/usr/local/lib", "/opt/conda/lib", venv, conda };
	char p[PATH_MAX];

	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		struct strvec py = { 0 };
		if (!bases[i])
			continue;
		pathf(p, sizeof(p), "%s%s", bases[i], i >= 3 ? "/lib" : "");
		expand(c, p, "python3", "", &py);
		for (size_t k = 0; k < py.n; k++) {
			static const char *const leaf[] = { "/site-packages", "/dist-packages" };
			for (size_t l = 0; l < 2; l++) {
				pathf(p, sizeof(p), "%s%s", py.v[k], leaf[l]);
				if (exists(c, p)) {
					const char *s = pf_dup(c->pf, p);
					if (!s || TS_VEC_PUSH(c->sites, s))
						c->r = TS_ENOMEM;
				}
			}
		}
		TS_VEC_RELEASE(py);
	}
	for (size_t i = 0; i < c->pf->facts.n; i++)
		if (strcmp(c->pf->facts.v[i].key, "python.sitedir") == 0 &&
		    exists(c, c->pf->facts.v[i].value)) {
			int dup = 0;
			for (size_t k = 0; k < c->sites.n; k++)
				dup |= strcmp(c->sites.v[k], c->pf->facts.v[i].value) == 0;
			if (!dup && TS_VEC_PUSH(c->sites, c->pf->facts.v[i].value))
				c->r = TS_ENOMEM;
		}
	for (size_t i = 0; i < c->sites.n; i++) {
		pathf(p, sizeof(p), "%s/torch/__init__.py", c->sites.v[i]);
		if (exists(c, p))
			c->r |= pf_kv(c->pf, PF_HOST, "torch.site", c->sites.v[i], p, -1);
	}
}

static void probe_libs(struct ctx *c)
{
	struct dirvec dirs = { 0 };
	size_t copies = 0, picked = 0;

	read_cache(c);
	find_sites(c);
	search_dirs(c, &dirs);
	for (size_t s = 0; s < sizeof(libspecs) / sizeof(libspecs[0]); s++) {
		const struct libspec *ls = &libspecs[s];
		struct ts_pf_lib *l = pf_lib(c->pf, ls->name, ls->stack, ls->sonames[0]);
		if (!l) {
			c->r = TS_ENOMEM;
			break;
		}
		for (size_t i = 0; ls->sonames[i] && !l->path; i++) {
			const char *via = NULL;
			const char *p = loader_pick(c, ls->sonames[i], &dirs, &via);
			if (p) {
				char real[PATH_MAX];
				l->soname = ls->sonames[i];
				l->pick_via = via;
				l->path = resolve(c, p, real, sizeof(real)) == 0 ? pf_dup(c->pf, real) : p;
			}
		}
		/* copies: every directory in order, then the cache's own entries */
		for (size_t d = 0; d < dirs.n; d++) {
			struct strvec names = { 0 };
			expand(c, dirs.v[d].dir, ls->prefix, "", &names);
			for (size_t k = 0; k < names.n; k++)
				add_copy(c, l, names.v[k], dirs.v[d].via);
			TS_VEC_RELEASE(names);
		}
		for (size_t e = 0; e < c->cache.entries.n; e++)
			if (strncmp(c->cache.entries.v[e].key, ls->prefix, strlen(ls->prefix)) == 0)
				add_copy(c, l, c->cache.entries.v[e].value, "ld.so.cache");
		for (size_t f = 0; f < c->pf->facts.n; f++) {
			const char *v = c->pf->facts.v[f].value, *b = strrchr(v, '/');
			if (strcmp(c->pf->facts.v[f].key, "python.maps") == 0 &&
			    strncmp(b ? b + 1 : v, ls->prefix, strlen(ls->prefix)) == 0)
				l->torch_path = v;
		}
		if (l->path) {
			const char *slash = strrchr(l->path, '/');
			l->version = pf_so_version(slash ? slash + 1 : l->path);
			l->version_src = l->version ? "file name" : NULL;
			picked++;
		}
		copies += l->copies.n;
	}
	c->r |= pf_kv(c->pf, PF_PROBE, "library search",
		      pf_fmt(c->pf, "%zu directories (LD_LIBRARY_PATH, ld.so.cache, default, ld.so.conf, CUDA_HOME, MUSA_HOME, site-packages, /opt/maca): %zu of %zu libraries found, %zu copies",
			     dirs.n, picked, sizeof(libspecs) / sizeof(libspecs[0]), copies),
		      NULL, -1);
	TS_VEC_RELEASE(dirs);
}

/* dlopen each library the search found (or, on this machine, by soname)
 * in its own child. */
static void probe_load(struct ctx *c, const struct ts_pf_opts *o)
{
	size_t tried = 0, loaded = 0, hung = 0;
	int tmo = o->load_timeout_ms > 0 ? o->load_timeout_ms : 5000;

	for (size_t i = 0; i < c->pf->libs.n; i++) {
		struct ts_pf_lib *l = &c->pf->libs.v[i];
		struct ts_pf_load r;
		if (!l->path)
			continue; /* nothing the loader could find */
		tried++;
		if (ts_preflight_load(l->name, l->soname, tmo, &r) != 0) {
			l->loaded = 0;
			l->load_error = "fork failed";
			continue;
		}
		l->loaded = r.status == 1;
		if (r.status == -1)
			hung++;
		if (r.error[0])
			l->load_error = pf_dup(c->pf, r.error);
		if (r.path[0]) {
			char real[PATH_MAX];
			l->path = pf_dup(c->pf, realpath(r.path, real) ? real : r.path);
			l->pick_via = "dlopen";
		}
		if (r.version[0]) {
			l->version = pf_dup(c->pf, r.version);
			l->version_src = pf_dup(c->pf, r.version_src);
		}
		loaded += r.status == 1;
	}
	c->r |= pf_kv(c->pf, PF_PROBE, "dlopen in a child",
		      pf_fmt(c->pf, "%zu tried, %zu loaded, %zu timed out (limit %d ms each)",
			     tried, loaded, hung, tmo), NULL, -1);
}

/* ------------------------------------------------------------ environment */

static int knob(const char *name, size_t n)
{
	static const char *const prefixes[] = { "NCCL_", "MCCL_", "TORCH_NCCL_", "TORCH_MCCL_",
						"TORCH_FR_", "NVTE_", "CUDA_", "MUSA_", "MUDNN_",
						"PYTORCH_" };
	static const char *const named[] = { "LD_LIBRARY_PATH", "OMP_NUM_THREADS",
					     "TORCH_DISTRIBUTED_DEBUG", "TORCH_DEVICE_BACKEND_AUTOLOAD",
					     "TORCH_SHOW_CPP_STACKTRACES", "CUBLAS_WORKSPACE_CONFIG",
					     "VIRTUAL_ENV", "CONDA_PREFIX" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (n > strlen(prefixes[i]) && strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (strlen(named[i]) == n && memcmp(name, named[i], n) == 0)
			return 1;
	return n > 16 && memcmp(name + n - 16, "_VISIBLE_DEVICES", 16) == 0;
}

static int cmp_kv(const void *a, const void *b)
{
	return strcmp(((const struct ts_pf_kv *)a)->key, ((const struct ts_pf_kv *)b)->key);
}

static void probe_env(struct ctx *c)
{
	for (char *const *e = c->probe->envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t n = eq ? (size_t)(eq - *e) : 0;
		if (n && n < 200 && knob(*e, n))
			c->r |= pf_kv(c->pf, PF_ENV, pf_dupn(c->pf, *e, n), eq + 1, "environment", -1);
	}
	ts_sort(c->pf->env.v, c->pf->env.n, sizeof(*c->pf->env.v), cmp_kv);
	c->r |= pf_kv(c->pf, PF_HOST, "env.known", "yes", "environment", -1);
	c->r |= pf_kv(c->pf, PF_PROBE, "environment",
		      pf_fmt(c->pf, "%zu knobs set (NCCL_*, MCCL_*, TORCH_NCCL_*, TORCH_MCCL_*, TORCH_FR_*, CUDA_*, MUSA_*, PYTORCH_*, *_VISIBLE_DEVICES, ...)",
			     c->pf->env.n), NULL, -1);
}

static void limit_line(struct ctx *c, const char *text, const char *label, const char *key)
{
	const char *p = strstr(text, label);
	char soft[32] = "", hard[32] = "";

	if (!p)
		return;
	p += strlen(label);
	if (sscanf(p, " %31s %31s", soft, hard) == 2)
		c->r |= pf_kv(c->pf, PF_HOST, key, pf_fmt(c->pf, "%s (hard %s)", soft, hard),
			      "/proc/self/limits", -1);
}

static void probe_host(struct ctx *c)
{
	const char *marker = NULL;
	char d[PATH_MAX];
	DIR *dir;

	if (exists(c, "/.dockerenv"))
		marker = "/.dockerenv";
	else if (exists(c, "/run/.containerenv"))
		marker = "/run/.containerenv";
	else if (slurp(c, "/proc/1/cgroup", 65536) == 0 &&
		 (strstr(c->sb.buf, "docker") || strstr(c->sb.buf, "kubepods") ||
		  strstr(c->sb.buf, "containerd") || strstr(c->sb.buf, "lxc")))
		marker = "/proc/1/cgroup";
	else if (env_get(c, "KUBERNETES_SERVICE_HOST"))
		marker = "KUBERNETES_SERVICE_HOST";
	c->r |= pf_kv(c->pf, PF_HOST, "container", marker ? "yes" : "no", marker, -1);
	if (slurp(c, "/proc/self/limits", 65536) == 0) {
		limit_line(c, c->sb.buf, "Max open files", "ulimit.nofile");
		limit_line(c, c->sb.buf, "Max locked memory", "ulimit.memlock_bytes");
	}
	full(c, "/sys/class/iommu", d, sizeof(d));
	if ((dir = opendir(d))) {
		struct dirent *de;
		size_t units = 0;
		while ((de = readdir(dir)))
			units += de->d_name[0] != '.';
		closedir(dir);
		c->r |= pf_kv(c->pf, PF_HOST, "iommu.units", pf_fmt(c->pf, "%zu", units),
			      "/sys/class/iommu", -1);
	}
	if (slurp(c, "/proc/cmdline", 65536) == 0) {
		struct ts_sb opts;
		ts_sb_init(&opts);
		for (const char *p = c->sb.buf; *p;) {
			while (*p == ' ' || *p == '\n')
				p++;
			const char *q = p;
			while (*q && *q != ' ' && *q != '\n')
				q++;
			if (q > p && memmem(p, (size_t)(q - p), "iommu", 5))
				ts_sb_addf(&opts, "%s%.*s", opts.len ? " " : "", (int)(q - p), p);
			p = q;
		}
		c->r |= pf_kv(c->pf, PF_HOST, "iommu.cmdline", opts.len ? opts.buf : "(none)",
			      "/proc/cmdline", 1);
		ts_sb_release(&opts);
	}
	c->r |= pf_kv(c->pf, PF_PROBE, "host",
		      "container markers (/.dockerenv, /run/.containerenv, /proc/1/cgroup), /proc/self/limits, /sys/class/iommu, /proc/cmdline",
		      NULL, -1);
}

/* ------------------------------------------------------------ python */

static void probe_python(struct ctx *c)
{
	const char *const argv[] = { "python3", "-c", pf_python_script, NULL };
	int rc;

	ts_sb_reset(&c->sb);
	rc = c->probe->run(c->probe->run_ctx, argv, &c->sb);
	if (rc == -1) {
		c->r |= pf_kv(c->pf, PF_PROBE, "python3", "not installed", NULL, -1);
		return;
	}
	if (rc != 0) {
		c->r |= pf_kv(c->pf, PF_PROBE, "python3",
			      rc == -2 ? "failed or timed out; killed" : pf_fmt(c->pf, "exit %d", rc),
			      NULL, -1);
		return;
	}
	if (pf_python_parse(c->pf, c->sb.buf, c->sb.len) != 0) {
		c->r |= pf_kv(c->pf, PF_PROBE, "python3", "answer was not the expected JSON", NULL, -1);
		return;
	}
	const char *tv = ts_preflight_fact(c->pf, "torch.version");
	c->r |= pf_kv(c->pf, PF_PROBE, "python3",
		      pf_fmt(c->pf, "python %s, torch %s",
			     ts_preflight_fact(c->pf, "python.version") ? ts_preflight_fact(c->pf, "python.version") : "?",
			     tv ? tv : "absent"), NULL, -1);
}

int ts_preflight_probe(struct ts_preflight *pf, const struct ts_probe *probe,
		       const struct ts_pf_opts *opts, struct ts_err *err)
{
	struct ctx c;
	static const struct ts_pf_opts none = { 0, 0, 0 };

	memset(&c, 0, sizeof(c));
	c.pf = pf;
	c.probe = probe;
	c.root = probe->root ? probe->root : "";
	if (!opts)
		opts = &none;
	ts_sb_init(&c.sb);
	ts_sb_init(&c.cache_data);
	pf->source = pf_dup(pf, c.root[0] ? c.root : "/");
	probe_pci(&c);
	probe_devnodes(&c);
	probe_drivers(&c);
	if (opts->python && probe->run)
		probe_python(&c);
	probe_libs(&c);
	if (opts->load)
		probe_load(&c, opts);
	else
		c.r |= pf_kv(pf, PF_PROBE, "dlopen in a child", "not run (file names only)", NULL, -1);
	probe_env(&c);
	probe_host(&c);
	if (c.sb.failed || pf->arena.failed)
		c.r = TS_ENOMEM;
	ts_sb_release(&c.sb);
	ts_sb_release(&c.cache_data);
	ts_ldcache_release(&c.cache);
	TS_VEC_RELEASE(c.sites);
	if (c.r)
		return ts_err_set(err, TS_ENOMEM, "out of memory probing the machine");
	return 0;
}
