/*
 * contract.c - build, read, write, label and compare measurement contracts.
 *
 * Why: an A/B comparison is only evidence when the two runs differ in the
 * one thing under test. The contract freezes everything else (machine,
 * software stack, environment variables, workload shape and layout) into a
 * flat key/value record that two runs can be diffed on, and labels runs
 * whose settings make them benchmark-only so their numbers are never sold as
 * training throughput.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trainscope/contract.h"
#include "trainscope/input.h"
#include "trainscope/json.h"
#include "trainscope/jsonw.h"
#include "trainscope/preflight.h"

void ts_contract_init(struct ts_contract *c)
{
	memset(c, 0, sizeof(*c));
	ts_arena_init(&c->arena);
}

void ts_contract_release(struct ts_contract *c)
{
	TS_VEC_RELEASE(c->fields);
	TS_VEC_RELEASE(c->reasons);
	ts_arena_release(&c->arena);
	memset(c, 0, sizeof(*c));
}

static const char *dup(struct ts_contract *c, const char *s, size_t n)
{
	return ts_arena_strndup(&c->arena, s, n);
}

/* Append key = value; a later value of the same key wins (ts_contract_get
 * searches from the end, ts_contract_finish keeps the last). Appending
 * keeps a hostile contract with many keys linear to read. */
static int set_n(struct ts_contract *c, const char *key, size_t keylen, const char *value,
		 size_t vlen)
{
	struct ts_contract_field f;

	f.value = NULL;
	if (value && !(f.value = dup(c, value, vlen)))
		return TS_ENOMEM;
	f.key = dup(c, key, keylen);
	f.seq = c->fields.n;
	if (!f.key)
		return TS_ENOMEM;
	return TS_VEC_PUSH(c->fields, f);
}

/* set_n for a literal key and a (value, length) view. */
static int set_v(struct ts_contract *c, const char *key, const char *value, size_t vlen)
{
	return set_n(c, key, strlen(key), value, vlen);
}

int ts_contract_set(struct ts_contract *c, const char *key, const char *value)
{
	return set_n(c, key, strlen(key), value, value ? strlen(value) : 0);
}

const char *ts_contract_get(const struct ts_contract *c, const char *key, int *found)
{
	for (size_t i = c->fields.n; i-- > 0;)
		if (strcmp(c->fields.v[i].key, key) == 0) {
			if (found)
				*found = 1;
			return c->fields.v[i].value;
		}
	if (found)
		*found = 0;
	return NULL;
}

int ts_contract_apply_set(struct ts_contract *c, const char *as, struct ts_err *err)
{
	const char *eq = strchr(as, '=');
	char key[256];
	int n;

	if (!eq || eq == as)
		return ts_err_set(err, TS_EUSAGE, "--set wants KEY=VALUE, got '%s'", as);
	if ((size_t)(eq - as) > 200)
		return ts_err_set(err, TS_EUSAGE, "--set key too long");
	if (strncmp(as, "workload.", 9) == 0 || strncmp(as, "environment.", 12) == 0)
		n = snprintf(key, sizeof(key), "%.*s", (int)(eq - as), as);
	else
		n = snprintf(key, sizeof(key), "workload.%.*s", (int)(eq - as), as);
	if (n <= 0 || ts_contract_set(c, key, eq + 1))
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	return 0;
}

/* ------------------------------------------------------------ capture */

/* Read up to max bytes of root/path into out (replacing it); 0 or -1. */
static int read_small(const struct ts_probe *p, const char *path, struct ts_sb *out,
		      size_t max)
{
	char full[1024];
	char buf[4096];
	FILE *f;
	size_t n;

	ts_sb_reset(out);
	snprintf(full, sizeof(full), "%s%s", p->root ? p->root : "", path);
	f = fopen(full, "rb");
	if (!f)
		return -1;
	while (out->len < max && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		ts_sb_add(out, buf, n);
	fclose(f);
	return 0;
}

static const char *env_get(const struct ts_probe *p, const char *name)
{
	size_t n = strlen(name);

	for (char *const *e = p->envp; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static void trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)**s))
		(*s)++, (*n)--;
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

/* Value after "key" and a separator (':' or '=') on the first line that
 * starts with key; quotes are stripped. */
static int line_value(const char *text, const char *key, const char **v, size_t *vn)
{
	size_t kn = strlen(key);
	const char *p = text;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (len > kn && strncmp(p, key, kn) == 0) {
			const char *s = p + kn;
			size_t n = len - kn;
			while (n && (*s == ' ' || *s == '\t'))
				s++, n--;
			if (n && (*s == ':' || *s == '=')) {
				s++, n--;
				trim(&s, &n);
				if (n >= 2 && s[0] == '"' && s[n - 1] == '"')
					s++, n -= 2;
				*v = s;
				*vn = n;
				return 1;
			}
		}
		p = eol ? eol + 1 : NULL;
	}
	return 0;
}

static int set_line(struct ts_contract *c, const char *key, const char *text,
		    const char *field)
{
	const char *v;
	size_t n;

	if (line_value(text, field, &v, &n))
		return set_n(c, key, strlen(key), v, n);
	return ts_contract_set(c, key, NULL);
}

/* run_tool's answer when the caller gave no runner: the value is unknown,
 * not "absent". */
#define NOT_PROBED (-3)

/* "absent" for a tool that is not installed, NULL (unknown) when not probed. */
static const char *tool_missing(int rc)
{
	return rc == -1 ? "absent" : NULL;
}

static int run_tool(const struct ts_probe *p, const char *const argv[], struct ts_sb *out)
{
	ts_sb_reset(out);
	if (!p->run)
		return NOT_PROBED;
	return p->run(p->run_ctx, argv, out);
}

static int capture_host(struct ts_contract *c, const struct ts_probe *p, struct ts_sb *sb)
{
	int rc = 0;
	size_t ncpu = 0;

	rc |= read_small(p, "/etc/os-release", sb, 65536) == 0
		? set_line(c, "environment.os", sb->buf, "PRETTY_NAME")
		: ts_contract_set(c, "environment.os", NULL);
	if (read_small(p, "/proc/sys/kernel/osrelease", sb, 256) == 0) {
		const char *s = sb->buf;
		size_t n = sb->len;
		trim(&s, &n);
		rc |= set_v(c, "environment.kernel", s, n);
	}
	if (read_small(p, "/proc/sys/kernel/arch", sb, 256) == 0) {
		const char *s = sb->buf;
		size_t n = sb->len;
		trim(&s, &n);
		rc |= set_v(c, "environment.arch", s, n);
	}
	if (read_small(p, "/proc/cpuinfo", sb, (size_t)4 << 20) == 0) {
		const char *v;
		size_t n;
		char num[32];
		if (line_value(sb->buf, "model name", &v, &n) || line_value(sb->buf, "Model", &v, &n))
			rc |= set_v(c, "environment.cpu.model", v, n);
		for (const char *q = sb->buf; (q = strstr(q, "processor")); q++)
			if (q == sb->buf || q[-1] == '\n')
				ncpu++;
		snprintf(num, sizeof(num), "%zu", ncpu);
		rc |= ts_contract_set(c, "environment.cpu.count", ncpu ? num : NULL);
	}
	if (read_small(p, "/proc/meminfo", sb, 65536) == 0) {
		const char *v;
		size_t n;
		long long kib;
		if (line_value(sb->buf, "MemTotal", &v, &n) &&
		    (kib = strtoll(v, NULL, 10)) >= 0 && kib <= LLONG_MAX / 1024) {
			char num[32];
			snprintf(num, sizeof(num), "%lld", kib * 1024);
			rc |= ts_contract_set(c, "environment.memory_bytes", num);
		}
	}
	return rc;
}

/* "a, b, c" fields of one CSV line (no quoting in nvidia-smi output). */
static int csv_field(const char *line, size_t len, int idx, const char **v, size_t *vn)
{
	const char *s = line, *end = line + len;

	for (int i = 0; i < idx; i++) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		if (!comma)
			return 0;
		s = comma + 1;
	}
	const char *comma = memchr(s, ',', (size_t)(end - s));
	*v = s;
	*vn = (size_t)((comma ? comma : end) - s);
	trim(v, vn);
	return 1;
}

/* Append a GPU name to a "name, name" list once. The list is capped at
 * 4 KiB so hostile tool output cannot make the duplicate search quadratic. */
static void add_name(struct ts_sb *names, const char *v, size_t n)
{
	const char *p = names->buf;

	if (names->len > 4096)
		return;

	while ((p = memmem(p, names->len - (size_t)(p - names->buf), v, n))) {
		int start = p == names->buf || p[-1] == ' ';
		int stop = (size_t)(p - names->buf) + n == names->len || p[n] == ',';
		if (start && stop)
			return;
		p++;
	}
	if (names->len)
		ts_sb_adds(names, ", ");
	ts_sb_add(names, v, n);
}

static int capture_nvidia(struct ts_contract *c, const struct ts_probe *p, struct ts_sb *sb)
{
	static const char *const argv[] = { "nvidia-smi",
		"--query-gpu=name,driver_version,memory.total",
		"--format=csv,noheader,nounits", NULL };
	struct ts_sb names;
	const char *v;
	size_t vn, count = 0;
	char num[32];
	int rc = run_tool(p, argv, sb), r = 0;

	if (rc == -1 || rc == NOT_PROBED)
		return ts_contract_set(c, "environment.nvidia_smi", tool_missing(rc));
	if (rc != 0) {
		snprintf(num, sizeof(num), "failed (exit %d)", rc);
		return ts_contract_set(c, "environment.nvidia_smi", num);
	}
	ts_sb_init(&names);
	r |= ts_contract_set(c, "environment.nvidia_smi", "present");
	r |= ts_contract_set(c, "environment.gpu.vendor", "nvidia");
	for (const char *q = sb->buf; q && *q;) {
		const char *eol = strchr(q, '\n');
		size_t len = eol ? (size_t)(eol - q) : strlen(q);
		if (len && csv_field(q, len, 0, &v, &vn) && vn) {
			count++;
			add_name(&names, v, vn);
			if (count == 1 && csv_field(q, len, 1, &v, &vn))
				r |= set_v(c, "environment.gpu.driver", v, vn);
			if (count == 1 && csv_field(q, len, 2, &v, &vn))
				r |= set_v(c, "environment.gpu.memory_mib", v, vn);
		}
		q = eol ? eol + 1 : NULL;
	}
	snprintf(num, sizeof(num), "%zu", count);
	r |= ts_contract_set(c, "environment.gpu.count", num);
	r |= ts_contract_set(c, "environment.gpu.name", names.len ? names.buf : NULL);
	r |= names.failed;
	ts_sb_release(&names);
	return r;
}

/*
 * mthreads-gmi default table (musa.md 1.6): a banner
 * "mthreads-gmi:<ver>   Driver Version:<ver>", then per GPU a line
 * "<idx>    <name>   |<PCI bus id> |..." followed by two continuation lines.
 */
static int capture_mthreads(struct ts_contract *c, const struct ts_probe *p, struct ts_sb *sb)
{
	static const char *const argv[] = { "mthreads-gmi", NULL };
	struct ts_sb names;
	size_t count = 0;
	char num[32];
	int rc = run_tool(p, argv, sb), r = 0;

	if (rc == -1 || rc == NOT_PROBED)
		return ts_contract_set(c, "environment.mthreads_gmi", tool_missing(rc));
	if (rc != 0) {
		snprintf(num, sizeof(num), "failed (exit %d)", rc);
		return ts_contract_set(c, "environment.mthreads_gmi", num);
	}
	ts_sb_init(&names);
	r |= ts_contract_set(c, "environment.mthreads_gmi", "present");
	r |= ts_contract_set(c, "environment.gpu.vendor", "mthreads");
	for (const char *q = sb->buf; q && *q;) {
		const char *eol = strchr(q, '\n');
		size_t len = eol ? (size_t)(eol - q) : strlen(q);
		const char *dv = memmem(q, len, "Driver Version:", 15);
		if (dv) {
			const char *s = dv + 15;
			size_t n = len - (size_t)(s - q);
			trim(&s, &n);
			r |= set_v(c, "environment.gpu.driver", s, n);
		} else if (len && isdigit((unsigned char)q[0])) {
			const char *bar = memchr(q, '|', len);
			const char *s = q;
			size_t n;
			while (s < q + len && isdigit((unsigned char)*s))
				s++;
			n = (size_t)((bar ? bar : q + len) - s);
			trim(&s, &n);
			if (bar && n) {
				count++;
				add_name(&names, s, n);
			}
		}
		q = eol ? eol + 1 : NULL;
	}
	snprintf(num, sizeof(num), "%zu", count);
	r |= ts_contract_set(c, "environment.gpu.count", num);
	r |= ts_contract_set(c, "environment.gpu.name", names.len ? names.buf : NULL);
	r |= names.failed;
	ts_sb_release(&names);
	return r;
}

/* Text after `marker` up to the next quote, comma or space. */
static int token_after(const char *text, const char *marker, const char **v, size_t *n)
{
	const char *s = strstr(text, marker);

	if (!s)
		return 0;
	s += strlen(marker);
	while (*s == ' ' || *s == ':' || *s == '"')
		s++;
	*v = s;
	while (*s && *s != '"' && *s != ',' && *s != ' ' && *s != '\n' && *s != '}')
		s++;
	*n = (size_t)(s - *v);
	return *n > 0;
}

static int capture_sdks(struct ts_contract *c, const struct ts_probe *p, struct ts_sb *sb)
{
	const char *home = env_get(p, "CUDA_HOME");
	const char *v;
	size_t n;
	char path[600];
	int r = 0;

	if (!home)
		home = "/usr/local/cuda";
	snprintf(path, sizeof(path), "%s/version.json", home);
	if (read_small(p, path, sb, 1 << 20) == 0 && strstr(sb->buf, "\"cuda\"") &&
	    token_after(strstr(sb->buf, "\"cuda\""), "\"version\"", &v, &n)) {
		r |= set_v(c, "environment.cuda.sdk", v, n);
	} else if (snprintf(path, sizeof(path), "%s/version.txt", home) > 0 &&
		   read_small(p, path, sb, 4096) == 0 &&
		   token_after(sb->buf, "CUDA Version", &v, &n)) {
		r |= set_v(c, "environment.cuda.sdk", v, n);
	} else {
		static const char *const nvcc[] = { "nvcc", "--version", NULL };
		int rc = run_tool(p, nvcc, sb);
		if (rc == 0 && token_after(sb->buf, ", V", &v, &n))
			r |= set_v(c, "environment.cuda.sdk", v, n);
		else
			r |= ts_contract_set(c, "environment.cuda.sdk", tool_missing(rc));
	}

	static const char *const mrt[] = { "musa_runtime_version", NULL };
	static const char *const mcc[] = { "mcc", "--version", NULL };
	int rc = run_tool(p, mrt, sb);
	if (rc == 0 && token_after(sb->buf, "\"version\"", &v, &n)) {
		r |= set_v(c, "environment.musa.sdk", v, n);
	} else if ((rc = run_tool(p, mcc, sb)) == 0 && token_after(sb->buf, "mcc version", &v, &n)) {
		r |= set_v(c, "environment.musa.sdk", v, n);
	} else {
		r |= ts_contract_set(c, "environment.musa.sdk", tool_missing(rc));
	}
	return r;
}

/*
 * The library versions come from preflight's probe (one implementation of
 * the search path, the ld.so cache and symlink resolution): the copy the
 * loader picks when its file name carries a full version, else the highest
 * versioned copy. MetaX also ships a libmccl (under /opt/maca, musa.md
 * 1.2): for mccl those copies do not count.
 */
static int lib_value(struct ts_contract *c, const struct ts_preflight *pf, const char *name,
		     const char *key, int skip_maca)
{
	const struct ts_pf_copy *best = NULL;
	char val[640];

	for (size_t i = 0; i < pf->libs.n; i++) {
		const struct ts_pf_lib *l = &pf->libs.v[i];
		if (strcmp(l->name, name) != 0)
			continue;
		for (size_t k = 0; k < l->copies.n; k++) {
			const struct ts_pf_copy *cp = &l->copies.v[k];
			if (!cp->version || !strchr(cp->version, '.') ||
			    (skip_maca && strncmp(cp->path, "/opt/maca/", 10) == 0))
				continue;
			if (l->path && strcmp(cp->path, l->path) == 0) {
				best = cp;
				break;
			}
			if (!best || ts_version_cmp(cp->version, best->version) > 0)
				best = cp;
		}
	}
	if (!best)
		return ts_contract_set(c, key, "absent");
	const char *slash = strrchr(best->path, '/');
	snprintf(val, sizeof(val), "%s (%.*s)", best->version,
		 slash ? (int)(slash - best->path) : 0, best->path);
	return ts_contract_set(c, key, val);
}

static int capture_libs(struct ts_contract *c, const struct ts_probe *p)
{
	struct ts_preflight pf;
	struct ts_pf_opts o = { 0, 0, 0 };
	int r;

	ts_preflight_init(&pf);
	r = ts_preflight_probe(&pf, p, &o, NULL);
	if (!r)
		r = lib_value(c, &pf, "nccl", "environment.nccl.lib", 0) |
		    lib_value(c, &pf, "mccl", "environment.mccl.lib", 1);
	ts_preflight_release(&pf);
	return r;
}

static const char python_probe[] =
	"import sys\n"
	"print('python=' + sys.version.split()[0])\n"
	"try:\n"
	"    import torch\n"
	"    print('torch=' + torch.__version__)\n"
	"    print('torch.cuda=' + str(torch.version.cuda))\n"
	"    print('torch.hip=' + str(getattr(torch.version, 'hip', None)))\n"
	"    try:\n"
	"        v = torch.cuda.nccl.version()\n"
	"        print('torch.nccl=' + ('.'.join(map(str, v)) if isinstance(v, tuple) else str(v)))\n"
	"    except Exception:\n"
	"        pass\n"
	"except Exception:\n"
	"    print('torch=absent')\n"
	"try:\n"
	"    import torch_musa\n"
	"    print('torch_musa=' + str(getattr(torch_musa, '__version__', None)))\n"
	"    print('torch.musa=' + str(getattr(torch.version, 'musa', None)))\n"
	"    try:\n"
	"        print('torch.mccl=' + '.'.join(map(str, torch.musa.mccl.version())))\n"
	"    except Exception:\n"
	"        pass\n"
	"except Exception:\n"
	"    print('torch_musa=absent')\n";

static int capture_python(struct ts_contract *c, const struct ts_probe *p, struct ts_sb *sb)
{
	static const char *const argv[] = { "python3", "-c", python_probe, NULL };
	static const char *const keys[] = { "python", "torch", "torch.cuda", "torch.hip",
					    "torch.nccl", "torch_musa", "torch.musa", "torch.mccl" };
	int rc = run_tool(p, argv, sb), r = 0;

	if (rc == -1 || rc == NOT_PROBED)
		return ts_contract_set(c, "environment.python", tool_missing(rc));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char key[64];
		const char *v;
		size_t n;
		snprintf(key, sizeof(key), "environment.%s", keys[i]);
		if (line_value(sb->buf, keys[i], &v, &n) && !(n == 4 && memcmp(v, "None", 4) == 0))
			r |= set_n(c, key, strlen(key), v, n);
		else if (i < 2 || strcmp(keys[i], "torch_musa") == 0)
			r |= ts_contract_set(c, key, NULL);
	}
	return r;
}

/* Environment variables that change performance (flops-memory-workflow
 * 5.2, musa.md 1.2). The named ones are recorded even when unset. */
static const char *const env_named[] = {
	"CUDA_DEVICE_MAX_CONNECTIONS", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_MUSA_ALLOC_CONF",
	"MUSA_DEVICE_MAX_CONNECTIONS",
};
static const char *const env_also[] = {
	"CUDA_VISIBLE_DEVICES", "MUSA_VISIBLE_DEVICES", "MTHREADS_VISIBLE_DEVICES",
	"CUDA_LAUNCH_BLOCKING", "MUSA_LAUNCH_BLOCKING", "CUBLAS_WORKSPACE_CONFIG",
	"OMP_NUM_THREADS", "PYTORCH_HIP_ALLOC_CONF", "NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN",
	"MUSA_KERNEL_TIMEOUT", "MUSA_BLOCK_SCHEDULE_MODE", "MUSA_EXECUTION_TIMEOUT",
	"ACCELERATOR_BACKEND", "MUDNN_LOG_LEVEL", "CUDA_MODULE_LOADING",
};
static const char *const env_prefixes[] = {
	"NCCL_", "MCCL_", "TORCH_NCCL_", "TORCH_MCCL_", "NVTE_",
};

static int capture_envvars(struct ts_contract *c, const struct ts_probe *p)
{
	char key[300];
	int r = 0;

	for (size_t i = 0; i < sizeof(env_named) / sizeof(env_named[0]); i++) {
		const char *v = env_get(p, env_named[i]);
		snprintf(key, sizeof(key), "environment.env.%s", env_named[i]);
		r |= ts_contract_set(c, key, v ? v : "unset");
	}
	for (char *const *e = p->envp; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t n = eq ? (size_t)(eq - *e) : 0;
		int want = 0;
		if (!eq || n > 200)
			continue;
		for (size_t i = 0; i < sizeof(env_also) / sizeof(env_also[0]); i++)
			if (strlen(env_also[i]) == n && memcmp(*e, env_also[i], n) == 0)
				want = 1;
		for (size_t i = 0; i < sizeof(env_prefixes) / sizeof(env_prefixes[0]); i++)
			if (strncmp(*e, env_prefixes[i], strlen(env_prefixes[i])) == 0)
				want = 1;
		if (want) {
			snprintf(key, sizeof(key), "environment.env.%.*s", (int)n, *e);
			r |= ts_contract_set(c, key, eq + 1);
		}
	}
	return r;
}

int ts_contract_capture_env(struct ts_contract *c, const struct ts_probe *p, struct ts_err *err)
{
	struct ts_sb sb;
	int r = 0;

	ts_sb_init(&sb);
	r |= capture_host(c, p, &sb);
	r |= capture_nvidia(c, p, &sb);
	r |= capture_mthreads(c, p, &sb);
	r |= capture_sdks(c, p, &sb);
	r |= capture_libs(c, p);
	r |= capture_python(c, p, &sb);
	r |= capture_envvars(c, p);
	r |= sb.failed;
	ts_sb_release(&sb);
	if (read_small(p, "/proc/sys/kernel/hostname", &sb, 256) == 0) {
		const char *s = sb.buf;
		size_t n = sb.len;
		trim(&s, &n);
		c->captured_host = dup(c, s, n);
		ts_sb_release(&sb);
	}
	if (r || c->arena.failed)
		return ts_err_set(err, TS_ENOMEM, "out of memory capturing the contract");
	return 0;
}

/* ------------------------------------------------------------ Megatron args */

struct arg_map {
	const char *arg;   /* Megatron argument name */
	const char *key;   /* workload key */
};

static const struct arg_map arg_map[] = {
	{ "tensor_model_parallel_size", "workload.tp" },
	{ "pipeline_model_parallel_size", "workload.pp" },
	{ "virtual_pipeline_model_parallel_size", "workload.vpp" },
	{ "context_parallel_size", "workload.cp" },
	{ "expert_model_parallel_size", "workload.ep" },
	{ "expert_tensor_parallel_size", "workload.etp" },
	{ "data_parallel_size", "workload.dp" },
	{ "world_size", "workload.device_count" },
	{ "seq_length", "workload.seq_length" },
	{ "micro_batch_size", "workload.micro_batch_size" },
	{ "global_batch_size", "workload.global_batch_size" },
	{ "num_layers", "workload.arch.num_layers" },
	{ "hidden_size", "workload.arch.hidden_size" },
	{ "ffn_hidden_size", "workload.arch.ffn_hidden_size" },
	{ "num_attention_heads", "workload.arch.num_attention_heads" },
	{ "num_query_groups", "workload.arch.num_query_groups" },
	{ "num_experts", "workload.arch.num_experts" },
	{ "moe_router_topk", "workload.arch.moe_router_topk" },
	{ "padded_vocab_size", "workload.arch.padded_vocab_size" },
	{ "recompute_granularity", "workload.recompute" },
	{ "recompute_method", "workload.recompute_method" },
	{ "recompute_num_layers", "workload.recompute_num_layers" },
	{ "recompute_modules", "workload.recompute_modules" },
	{ "attention_backend", "workload.attention_backend" },
	{ "use_flash_attn", "workload.use_flash_attn" },
	{ "enable_cuda_graph", "workload.enable_cuda_graph" },
	{ "external_cuda_graph", "workload.external_cuda_graph" },
	{ "moe_enable_deepep", "workload.moe_enable_deepep" },
	{ "moe_token_dispatcher_type", "workload.dispatcher" },
	{ "moe_flex_dispatcher_backend", "workload.dispatcher_backend" },
	{ "cuda_graph_impl", "workload.graph_impl" },
	{ "cuda_graph_scope", "workload.graph_scopes" },
	{ "cuda_graph_modules", "workload.graph_scopes" },
	{ "fp8", "workload.fp8" },
	{ "fp8_recipe", "workload.fp8_recipe" },
	{ "data_path", "workload.data" },
	{ "mock_data", "workload.mock_data" },
	{ "moe_router_force_load_balancing", "workload.force_load_balancing" },
	{ "check_for_nan_in_loss_and_grad", "workload.nan_check" },
	{ "optimizer", "workload.optimizer" },
	{ "seed", "workload.seed" },
	{ "deterministic_mode", "workload.deterministic" },
	{ "overlap_grad_reduce", "workload.overlap_grad_reduce" },
	{ "overlap_param_gather", "workload.overlap_param_gather" },
	{ "tp_comm_overlap", "workload.tp_comm_overlap" },
	{ "use_distributed_optimizer", "workload.distributed_optimizer" },
	{ "tokenizer_model", "workload.tokenizer" },
	{ "load", "workload.load" },
	{ "save", "workload.save" },
	{ "train_iters", "workload.train_iters" },
};

/* "  name ............ value" -> name, value. */
static int arg_line(const char *line, size_t len, const char **name, size_t *nn,
		    const char **val, size_t *vn)
{
	const char *s = line, *end = line + len;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	*name = s;
	while (s < end && (isalnum((unsigned char)*s) || *s == '_'))
		s++;
	*nn = (size_t)(s - *name);
	if (!*nn || s >= end || *s != ' ')
		return 0;
	while (s < end && (*s == ' ' || *s == '.'))
		s++;
	*val = s;
	*vn = (size_t)(end - s);
	trim(val, vn);
	return *vn > 0;
}

static int is_true(const char *v)
{
	return v && (!strcmp(v, "True") || !strcmp(v, "true") || !strcmp(v, "1") ||
		     !strcmp(v, "yes"));
}

static int is_false(const char *v)
{
	return v && (!strcmp(v, "False") || !strcmp(v, "false") || !strcmp(v, "0") ||
		     !strcmp(v, "no") || !strcmp(v, "None") || !strcmp(v, "none"));
}

/* The arguments block of an opened log; path names it in messages. */
static int from_log_input(struct ts_contract *c, struct ts_input *in, const char *path,
			  struct ts_err *err)
{
	const char *line;
	size_t len;
	uint64_t off;
	int rc, inside = 0, seen = 0, r = 0;
	int bf16 = 0, fp16 = 0;

	while ((rc = ts_input_getline(in, &line, &len, &off, err)) == 1) {
		const char *name, *val;
		size_t nn, vn;
		if (!inside) {
			if (memmem(line, len, "arguments ---", 13) && !memmem(line, len, "end of", 6))
				inside = 1, seen = 1;
			continue;
		}
		if (memmem(line, len, "end of arguments", 16)) {
			rc = 0;
			break;
		}
		if (!arg_line(line, len, &name, &nn, &val, &vn))
			continue;
		if (nn == 4 && !memcmp(name, "bf16", 4))
			bf16 = vn == 4 && !memcmp(val, "True", 4);
		else if (nn == 4 && !memcmp(name, "fp16", 4))
			fp16 = vn == 4 && !memcmp(val, "True", 4);
		for (size_t i = 0; i < sizeof(arg_map) / sizeof(arg_map[0]); i++)
			if (strlen(arg_map[i].arg) == nn && !memcmp(arg_map[i].arg, name, nn))
				r |= set_n(c, arg_map[i].key, strlen(arg_map[i].key), val, vn);
	}
	if (rc < 0)
		return rc;
	if (!seen)
		return ts_err_at(err, TS_EPARSE, path, -1, -1,
				 "no Megatron arguments block ('---- arguments ----' ... "
				 "'---- end of arguments ----') in this log");
	{
		const char *fp8 = ts_contract_get(c, "workload.fp8", NULL);
		const char *prec = fp8 && !is_false(fp8) ? "fp8" : bf16 ? "bf16" : fp16 ? "fp16" : "fp32";
		r |= ts_contract_set(c, "workload.precision", prec);
	}
	{
		/* accumulation = global / (micro x data-parallel) */
		const char *g = ts_contract_get(c, "workload.global_batch_size", NULL);
		const char *m = ts_contract_get(c, "workload.micro_batch_size", NULL);
		const char *d = ts_contract_get(c, "workload.dp", NULL);
		if (g && m && d) {
			long long gv = strtoll(g, NULL, 10), mv = strtoll(m, NULL, 10),
				  dv = strtoll(d, NULL, 10);
			/* mv * dv <= gv first: 2^32 x 2^32 wrapped to 0 */
			if (gv > 0 && mv > 0 && dv > 0 && mv <= gv / dv && gv % (mv * dv) == 0) {
				char num[32];
				snprintf(num, sizeof(num), "%lld", gv / (mv * dv));
				r |= ts_contract_set(c, "workload.grad_accumulation", num);
			}
		}
	}
	{
		const char *save = ts_contract_get(c, "workload.save", NULL);
		if (save)
			r |= ts_contract_set(c, "workload.checkpointing", is_false(save) ? "false" : "true");
	}
	if (r || c->arena.failed)
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	return 0;
}

int ts_contract_from_log(struct ts_contract *c, const char *path, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_open(&in, path, err)))
		return rc;
	rc = from_log_input(c, &in, path, err);
	ts_input_release(&in);
	return rc;
}

int ts_contract_from_log_mem(struct ts_contract *c, const char *data, size_t n,
			     const char *name, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_open_mem(&in, data, n, name, err)))
		return rc;
	rc = from_log_input(c, &in, name, err);
	ts_input_release(&in);
	return rc;
}

/* ------------------------------------------------------------ label */

static int field_cmp(const void *pa, const void *pb)
{
	const struct ts_contract_field *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);

	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int ts_contract_finish(struct ts_contract *c)
{
	static const struct {
		const char *key;
		int bad_when_true; /* 1: true is benchmark-only; 0: false is */
		const char *reason;
	} rules[] = {
		{ "workload.force_load_balancing", 1, "forced MoE load balancing changes routing semantics" },
		{ "workload.mock_data", 1, "mock / synthetic data instead of the real dataset" },
		{ "workload.nan_check", 0, "NaN/Inf checks on loss and gradients disabled" },
		{ "workload.optimizer_step", 0, "optimizer step disabled" },
		{ "workload.checkpointing", 0, "checkpoint save/resume disabled" },
	};

	if (c->fields.n) {
		size_t k = 0;
		ts_sort(c->fields.v, c->fields.n, sizeof(*c->fields.v), field_cmp);
		/* one entry per key: the last value set */
		for (size_t i = 0; i < c->fields.n; i++) {
			if (i + 1 < c->fields.n && !strcmp(c->fields.v[i].key, c->fields.v[i + 1].key))
				continue;
			c->fields.v[k] = c->fields.v[i];
			c->fields.v[k].seq = k;
			k++;
		}
		c->fields.n = k;
	}
	c->reasons.n = 0;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const char *v = ts_contract_get(c, rules[i].key, NULL);
		if (rules[i].bad_when_true ? is_true(v) : is_false(v)) {
			const char *why = rules[i].reason;
			if (TS_VEC_PUSH(c->reasons, why))
				return TS_ENOMEM;
		}
	}
	c->benchmark_only = c->reasons.n > 0;
	return 0;
}

/* ------------------------------------------------------------ write */

void ts_contract_write(const struct ts_contract *c, struct ts_sb *out)
{
	struct ts_jw w;
	size_t i = 0;

	ts_jw_init(&w, out, 1);
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "schema", TS_CONTRACT_SCHEMA);
	ts_jw_kstr(&w, "label", c->benchmark_only ? "benchmark-only" : "training-equivalent");
	ts_jw_key(&w, "label_reasons");
	ts_jw_arr(&w);
	for (size_t k = 0; k < c->reasons.n; k++)
		ts_jw_str(&w, c->reasons.v[k]);
	ts_jw_arr_end(&w);
	ts_jw_key(&w, "captured");
	ts_jw_obj(&w);
	ts_jw_kstr(&w, "time", c->captured_time);
	ts_jw_kstr(&w, "host", c->captured_host);
	ts_jw_obj_end(&w);
	while (i < c->fields.n) {
		const char *key = c->fields.v[i].key;
		const char *dot = strchr(key, '.');
		size_t sn = dot ? (size_t)(dot - key) : strlen(key);
		char section[64];

		snprintf(section, sizeof(section), "%.*s", (int)sn, key);
		ts_jw_key(&w, section);
		ts_jw_obj(&w);
		for (; i < c->fields.n; i++) {
			const char *k = c->fields.v[i].key;
			if (strncmp(k, key, sn) != 0 || (k[sn] != '.' && k[sn] != '\0'))
				break;
			ts_jw_kstr(&w, k[sn] ? k + sn + 1 : k, c->fields.v[i].value);
		}
		ts_jw_obj_end(&w);
	}
	ts_jw_obj_end(&w);
}

/* ------------------------------------------------------------ read */

static int read_err(struct ts_json *j, struct ts_err *err, const char *name, const char *what)
{
	return ts_err_at(err, TS_EPARSE, name, (int64_t)j->tok_offset,
			 ts_json_line_of(j, j->tok_offset), "%s", what);
}

/* Text of a scalar token into sb ("true", "12", decoded string); NULL -> 0. */
static int scalar_text(struct ts_json *j, int tok, struct ts_sb *sb, struct ts_err *err)
{
	ts_sb_reset(sb);
	switch (tok) {
	case TS_JSON_STR:
		return ts_json_unescape(j->s, j->n, 1, sb) ? TS_EPARSE : 1;
	case TS_JSON_NUM:
		ts_sb_add(sb, j->s, j->n);
		return 1;
	case TS_JSON_TRUE:
		ts_sb_adds(sb, "true");
		return 1;
	case TS_JSON_FALSE:
		ts_sb_adds(sb, "false");
		return 1;
	default:
		return 0;
	}
}

/* Flatten the object whose '{' was just read into fields "prefix.key". */
static int read_section(struct ts_contract *c, struct ts_json *j, struct ts_sb *prefix,
			const char *name, struct ts_err *err)
{
	struct ts_sb val;
	int rc = 0;
	size_t base = prefix->len;

	ts_sb_init(&val);
	for (;;) {
		int tok = ts_json_next(j, err);
		if (tok < 0) {
			rc = tok;
			break;
		}
		if (tok == TS_JSON_OBJ_END)
			break;
		if (tok != TS_JSON_KEY) {
			rc = read_err(j, err, name, "expected a key");
			break;
		}
		prefix->len = base;
		ts_sb_addc(prefix, '.');
		if (ts_json_unescape(j->s, j->n, 1, prefix)) {
			rc = read_err(j, err, name, "bad key");
			break;
		}
		tok = ts_json_next(j, err);
		if (tok < 0) {
			rc = tok;
			break;
		}
		if (tok == TS_JSON_OBJ) {
			size_t keep = prefix->len;
			if ((rc = read_section(c, j, prefix, name, err)))
				break;
			prefix->len = keep;
			continue;
		}
		if (tok == TS_JSON_ARR) {
			/* an array of scalars becomes "a,b,c" */
			struct ts_sb item;
			ts_sb_init(&item);
			ts_sb_reset(&val);
			while ((tok = ts_json_next(j, err)) > 0 && tok != TS_JSON_ARR_END) {
				int s = scalar_text(j, tok, &item, err);
				if (s < 0) {
					tok = read_err(j, err, name, "bad string");
					break;
				}
				if (s == 0 && (tok == TS_JSON_OBJ || tok == TS_JSON_ARR)) {
					int e2 = ts_json_skip(j, tok, err);
					if (e2) {
						tok = e2;
						break;
					}
					continue;
				}
				if (s > 0) {
					if (val.len)
						ts_sb_addc(&val, ',');
					ts_sb_add(&val, item.buf, item.len);
				}
			}
			ts_sb_release(&item);
			if (tok < 0) {
				rc = tok;
				break;
			}
			rc = set_n(c, prefix->buf, prefix->len, val.buf, val.len);
		} else {
			int s = scalar_text(j, tok, &val, err);
			if (s < 0) {
				rc = read_err(j, err, name, "bad string");
				break;
			}
			rc = set_n(c, prefix->buf, prefix->len, s ? val.buf : NULL, val.len);
		}
		if (rc) {
			rc = ts_err_set(err, TS_ENOMEM, "out of memory");
			break;
		}
	}
	ts_sb_release(&val);
	prefix->len = base;
	if (prefix->cap)
		prefix->buf[base] = '\0';
	return rc;
}

int ts_contract_read_mem(struct ts_contract *c, const char *data, size_t n, const char *name,
			 struct ts_err *err)
{
	struct ts_json j;
	struct ts_sb prefix, val;
	int tok, rc = 0, schema_ok = 0;

	if (n > TS_CONTRACT_MAX_BYTES)
		return ts_err_at(err, TS_ELIMIT, name, -1, -1, "contract larger than %zu bytes",
				 TS_CONTRACT_MAX_BYTES);
	ts_json_init_mem(&j, data, n, 0, name);
	ts_sb_init(&prefix);
	ts_sb_init(&val);
	tok = ts_json_next(&j, err);
	if (tok != TS_JSON_OBJ) {
		rc = tok < 0 ? tok : read_err(&j, err, name, "expected a JSON object (a contract)");
		goto out;
	}
	for (;;) {
		if ((tok = ts_json_next(&j, err)) < 0) {
			rc = tok;
			goto out;
		}
		if (tok == TS_JSON_OBJ_END)
			break;
		ts_sb_reset(&prefix);
		if (ts_json_unescape(j.s, j.n, 1, &prefix)) {
			rc = read_err(&j, err, name, "bad key");
			goto out;
		}
		if ((tok = ts_json_next(&j, err)) < 0) {
			rc = tok;
			goto out;
		}
		if (!strcmp(prefix.buf, "schema")) {
			if (tok != TS_JSON_STR || !TS_JSON_IS(&j, TS_CONTRACT_SCHEMA)) {
				rc = read_err(&j, err, name, "\"schema\" must be \"" TS_CONTRACT_SCHEMA "\"");
				goto out;
			}
			schema_ok = 1;
		} else if (!strcmp(prefix.buf, "captured") && tok == TS_JSON_OBJ) {
			while ((tok = ts_json_next(&j, err)) == TS_JSON_KEY) {
				int is_time = TS_JSON_IS(&j, "time"), is_host = TS_JSON_IS(&j, "host");
				if ((tok = ts_json_next(&j, err)) < 0)
					break;
				if (scalar_text(&j, tok, &val, err) > 0 && (is_time || is_host)) {
					const char *s = dup(c, val.buf, val.len);
					if (is_time)
						c->captured_time = s;
					else
						c->captured_host = s;
				} else if ((rc = ts_json_skip(&j, tok, err))) {
					goto out;
				}
			}
			if (tok != TS_JSON_OBJ_END) {
				rc = tok < 0 ? tok : read_err(&j, err, name, "bad \"captured\" object");
				goto out;
			}
		} else if (tok == TS_JSON_OBJ && strcmp(prefix.buf, "label_reasons") != 0) {
			if ((rc = read_section(c, &j, &prefix, name, err)))
				goto out;
		} else if ((rc = ts_json_skip(&j, tok, err))) {
			goto out;
		}
	}
	if ((tok = ts_json_next(&j, err)) != TS_JSON_EOF) {
		rc = tok < 0 ? tok : read_err(&j, err, name, "trailing data after the contract");
		goto out;
	}
	if (!schema_ok) {
		rc = ts_err_at(err, TS_EPARSE, name, 0, 1,
			       "not a contract: no \"schema\": \"" TS_CONTRACT_SCHEMA "\"");
		goto out;
	}
	if (ts_contract_finish(c) || c->arena.failed || prefix.failed)
		rc = ts_err_set(err, TS_ENOMEM, "out of memory");
out:
	ts_sb_release(&prefix);
	ts_sb_release(&val);
	ts_json_release(&j);
	return rc;
}

int ts_contract_read(struct ts_contract *c, const char *path, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_read_all(&in, path, TS_CONTRACT_MAX_BYTES, err)))
		return rc;
	rc = ts_contract_read_mem(c, (const char *)in.data, in.len, in.path, err);
	ts_input_release(&in);
	return rc;
}

/* ------------------------------------------------------------ diff */

static int same(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

int ts_contract_key_is_version(const char *key)
{
	static const char *const keys[] = {
		"environment.cuda.sdk", "environment.gpu.driver", "environment.mccl.lib",
		"environment.musa.sdk", "environment.nccl.lib", "environment.python",
		"environment.torch", "environment.torch.cuda", "environment.torch.hip",
		"environment.torch.mccl", "environment.torch.musa", "environment.torch.nccl",
		"environment.torch_musa",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i]))
			return 1;
	return 0;
}

int ts_contract_diff(const struct ts_contract *a, const struct ts_contract *b,
		     struct ts_contract_diff **diffs, size_t *n)
{
	TS_VEC(struct ts_contract_diff) out = { 0 };
	size_t i = 0, k = 0;

	while (i < a->fields.n || k < b->fields.n) {
		int cmp;
		struct ts_contract_diff d;
		if (i >= a->fields.n)
			cmp = 1;
		else if (k >= b->fields.n)
			cmp = -1;
		else
			cmp = strcmp(a->fields.v[i].key, b->fields.v[k].key);
		if (cmp < 0) {
			d = (struct ts_contract_diff){ a->fields.v[i].key, a->fields.v[i].value, NULL };
			i++;
		} else if (cmp > 0) {
			d = (struct ts_contract_diff){ b->fields.v[k].key, NULL, b->fields.v[k].value };
			k++;
		} else {
			d = (struct ts_contract_diff){ a->fields.v[i].key, a->fields.v[i].value,
						       b->fields.v[k].value };
			i++, k++;
		}
		if (same(d.a, d.b) ||
		    (d.a && d.b && ts_contract_key_is_version(d.key) && ts_version_same(d.a, d.b)))
			continue;
		if (TS_VEC_PUSH(out, d)) {
			TS_VEC_RELEASE(out);
			return TS_ENOMEM;
		}
	}
	*diffs = out.v;
	*n = out.n;
	return 0;
}
