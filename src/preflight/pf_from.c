/*
 * pf_from.c - judge an existing report: the same model, filled from text.
 *
 * Why: most environment problems arrive as a pasted report (a bug report's
 * collect_env, sglang check_env, nvidia-smi -q, an mthreads-gmi table or
 * its -q --json). Reading them into the preflight model lets the same rules
 * fire on them, with the report's line as evidence. Formats (real samples
 * in ../shared/data/telemetry, layouts in reference/musa.md 1.6 and
 * capabilities-anchors.md 3a): "Key: value" lines for collect_env and
 * check_env, "Key : value" with indented sections for nvidia-smi -q,
 * "<idx> <name> |<bus id> |<util>% <used>MiB(<total>MiB)" blocks for gmi.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pf_int.h"
#include "trainscope/input.h"
#include "trainscope/json.h"

struct line {
	const char *s;
	size_t n;
	int64_t no;
};

/* strtoll over a view that need not be NUL-terminated (input buffers are
 * not): at most the bytes before end are read. */
static long long view_ll(const char *p, const char *end, int base)
{
	char buf[32];
	size_t n = end > p ? (size_t)(end - p) : 0;

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, p, n);
	buf[n] = 0;
	return strtoll(buf, NULL, base);
}

static int next_line(const char *d, size_t n, size_t *pos, struct line *l)
{
	const char *eol;

	if (*pos >= n)
		return 0;
	l->s = d + *pos;
	eol = memchr(l->s, '\n', n - *pos);
	l->n = eol ? (size_t)(eol - l->s) : n - *pos;
	*pos += l->n + (eol ? 1 : 0);
	l->no++;
	if (l->n && l->s[l->n - 1] == '\r')
		l->n--;
	return 1;
}

static int starts(const struct line *l, const char *p)
{
	size_t k = strlen(p);
	return l->n >= k && memcmp(l->s, p, k) == 0;
}

/* Split "key<sep>value" at the first sep; both trimmed. */
static int split(const struct line *l, const char *sep, const char **k, size_t *kn,
		 const char **v, size_t *vn)
{
	const char *m = memmem(l->s, l->n, sep, strlen(sep));

	if (!m)
		return 0;
	*k = l->s;
	*kn = (size_t)(m - l->s);
	*v = m + strlen(sep);
	*vn = l->n - (size_t)(*v - l->s);
	pf_trim(k, kn);
	pf_trim(v, vn);
	return 1;
}

static int keyis(const char *k, size_t kn, const char *lit)
{
	return kn == strlen(lit) && memcmp(k, lit, kn) == 0;
}

static const char *first_tok(struct ts_preflight *pf, const char *v, size_t vn)
{
	size_t i = 0;
	while (i < vn && v[i] != ' ' && v[i] != '\t')
		i++;
	return pf_dupn(pf, v, i);
}

/* Version-looking token after marker in v ("mcc version 4.3.4" -> 4.3.4). */
static const char *ver_after(struct ts_preflight *pf, const char *v, size_t vn, const char *marker)
{
	const char *m = memmem(v, vn, marker, strlen(marker));
	const char *e = v + vn;

	if (!m)
		return NULL;
	m += strlen(marker);
	while (m < e && !isdigit((unsigned char)*m))
		m++;
	const char *q = m;
	while (q < e && (isalnum((unsigned char)*q) || *q == '.' || *q == '-' || *q == '+'))
		q++;
	return q > m ? pf_dupn(pf, m, (size_t)(q - m)) : NULL;
}

static double gen_gts(int gen)
{
	static const double t[] = { 0, 2.5, 5, 8, 16, 32, 64 };
	return gen >= 1 && gen <= 6 ? t[gen] : 0;
}

/* Signatures any report may carry. */
static int signatures(struct ts_preflight *pf, const struct line *l, const char *src)
{
	int r = 0;

	if (memmem(l->s, l->n, "Driver/library version mismatch", 31))
		r |= pf_kv(pf, PF_FACT, "signature.nvml_mismatch", pf_dupn(pf, l->s, l->n), src, l->no);
	if (starts(l, "NVML library version:"))
		r |= pf_kv(pf, PF_FACT, "nvml.library_version", pf_dupn(pf, l->s + 21, l->n - 21), src, l->no);
	if (memmem(l->s, l->n, "libsrv_um_MUSA.so", 17))
		r |= pf_kv(pf, PF_FACT, "signature.libsrv_um_missing", pf_dupn(pf, l->s, l->n), src, l->no);
	return r;
}

/* ------------------------------------------------------------ gmi table */

static int from_gmi_table(struct ts_preflight *pf, const char *d, size_t n, const char *src)
{
	struct line l = { 0 };
	size_t pos = 0;
	struct ts_pf_device *last = NULL;
	int r = 0;

	while (next_line(d, n, &pos, &l)) {
		const char *dv = memmem(l.s, l.n, "Driver Version:", 15);
		r |= signatures(pf, &l, src);
		if (dv) {
			const char *v = dv + 15;
			size_t vn = l.n - (size_t)(v - l.s);
			pf_trim(&v, &vn);
			r |= pf_driver_add(pf, "mtgpu", first_tok(pf, v, vn), src, l.no);
			const char *g = memmem(l.s, l.n, "mthreads-gmi:", 13);
			if (g)
				r |= pf_kv(pf, PF_FACT, "gmi.version", first_tok(pf, g + 13, (size_t)(dv - g - 13)), src, l.no);
			continue;
		}
		const char *bar = memchr(l.s, '|', l.n);
		if (l.n && isdigit((unsigned char)l.s[0]) && bar) {
			struct ts_pf_device *dev = pf_device_add(pf);
			const char *s = l.s;
			size_t k;
			if (!dev)
				return TS_ENOMEM;
			while (s < bar && isdigit((unsigned char)*s))
				s++;
			k = (size_t)(bar - s);
			pf_trim(&s, &k);
			dev->vendor = "mthreads";
			dev->vendor_id = 0x1ed5;
			dev->name = pf_dupn(pf, s, k);
			dev->source = pf_dup(pf, src);
			dev->line = l.no;
			const char *bus = bar + 1, *bar2 = memchr(bus, '|', l.n - (size_t)(bus - l.s));
			if (bar2) {
				size_t bn = (size_t)(bar2 - bus);
				pf_trim(&bus, &bn);
				dev->bdf = pf_dupn(pf, bus, bn);
				const char *mem = memmem(bar2, l.n - (size_t)(bar2 - l.s), "MiB(", 4);
				if (mem) {
					const char *u = mem;
					while (u > bar2 && isdigit((unsigned char)u[-1]))
						u--;
					dev->mem_used_mib = view_ll(u, l.s + l.n, 10);
					dev->mem_total_mib = view_ll(mem + 4, l.s + l.n, 10);
				}
			}
			last = dev;
			continue;
		}
		const char *x = memmem(l.s, l.n, "x(", 2);
		if (last && x && bar) {
			const char *w = x;
			while (w > l.s && isdigit((unsigned char)w[-1]))
				w--;
			last->width_cur = (int)view_ll(w, l.s + l.n, 10);
			last->width_max = (int)view_ll(x + 2, l.s + l.n, 10);
			last = NULL;
		}
	}
	return r;
}

/* ------------------------------------------------------------ gmi JSON */

static const char *jstr(struct ts_preflight *pf, const struct ts_json *j)
{
	return pf_dupn(pf, j->s, j->n);
}

static int from_gmi_json(struct ts_preflight *pf, const char *d, size_t n, const char *src,
			 struct ts_err *err)
{
	struct ts_json j;
	int tok, depth = 0, rc = 0, in_gpu = 0;
	const char *keys[8] = { 0 };
	struct ts_pf_device *dev = NULL;

	ts_json_init_mem(&j, d, n, TS_JSON_LENIENT, src);
	while ((tok = ts_json_next(&j, err)) > 0) {
		if (tok == TS_JSON_OBJ || tok == TS_JSON_ARR) {
			if (depth == 2 && in_gpu && tok == TS_JSON_OBJ) {
				if (!(dev = pf_device_add(pf))) {
					rc = TS_ENOMEM;
					break;
				}
				dev->vendor = "mthreads";
				dev->source = pf_dup(pf, src);
				dev->line = ts_json_line_of(&j, j.tok_offset);
			}
			if (depth == 1 && keys[1] && !strcmp(keys[1], "GPU"))
				in_gpu = 1;
			depth++;
			if (depth < 8)
				keys[depth] = NULL;
			continue;
		}
		if (tok == TS_JSON_OBJ_END || tok == TS_JSON_ARR_END) {
			depth--;
			if (depth == 1)
				in_gpu = 0;
			continue;
		}
		if (tok == TS_JSON_KEY) {
			if (depth < 8)
				keys[depth] = jstr(pf, &j);
			continue;
		}
		if (tok != TS_JSON_STR || depth >= 8 || !keys[depth])
			continue;
		const char *k = keys[depth];
		if (depth == 1 && !strcmp(k, "Driver Version"))
			rc |= pf_driver_add(pf, "mtgpu", jstr(pf, &j), src, ts_json_line_of(&j, j.tok_offset));
		else if (dev && depth == 3 && !strcmp(k, "Product Name"))
			dev->name = jstr(pf, &j);
		else if (dev && depth == 4 && keys[3] && !strcmp(keys[3], "PCI")) {
			if (!strcmp(k, "Bus ID"))
				dev->bdf = jstr(pf, &j);
			else if (!strcmp(k, "Vendor ID"))
				dev->vendor_id = (unsigned)strtoul(jstr(pf, &j), NULL, 16);
			else if (!strcmp(k, "Device ID"))
				dev->device_id = (unsigned)strtoul(jstr(pf, &j), NULL, 16);
		} else if (dev && depth == 4 && keys[3] && !strcmp(keys[3], "FB Memory Usage")) {
			if (!strcmp(k, "Total"))
				dev->mem_total_mib = strtoll(jstr(pf, &j), NULL, 10);
			else if (!strcmp(k, "Used"))
				dev->mem_used_mib = strtoll(jstr(pf, &j), NULL, 10);
		}
	}
	if (tok < 0 && !rc)
		rc = tok;
	ts_json_release(&j);
	return rc;
}

/* ------------------------------------------------------------ nvidia-smi -q */

static int from_smi_q(struct ts_preflight *pf, const char *d, size_t n, const char *src)
{
	struct line l = { 0 };
	size_t pos = 0;
	struct ts_pf_device *dev = NULL;
	char section[64] = "";
	int r = 0;

	while (next_line(d, n, &pos, &l)) {
		const char *k, *v;
		size_t kn, vn;
		r |= signatures(pf, &l, src);
		if (!split(&l, " : ", &k, &kn, &v, &vn)) {
			const char *s = l.s;
			size_t sn = l.n;
			pf_trim(&s, &sn);
			if (sn > 4 && memcmp(s, "GPU ", 4) == 0 && l.s[0] == 'G') {
				if (!(dev = pf_device_add(pf)))
					return TS_ENOMEM;
				dev->vendor = "nvidia";
				dev->vendor_id = 0x10de;
				dev->bdf = pf_dupn(pf, s + 4, sn - 4);
				dev->source = pf_dup(pf, src);
				dev->line = l.no;
			} else if (sn) {
				snprintf(section, sizeof(section), "%.*s", (int)sn, s);
			}
			continue;
		}
		if (keyis(k, kn, "Driver Version"))
			r |= pf_driver_add(pf, "nvidia", pf_dupn(pf, v, vn), src, l.no);
		else if (keyis(k, kn, "CUDA Version"))
			r |= pf_kv(pf, PF_FACT, "cuda.driver_api", pf_dupn(pf, v, vn), src, l.no);
		else if (dev && keyis(k, kn, "Product Name"))
			dev->name = pf_dupn(pf, v, vn);
		else if (dev && !strcmp(section, "FB Memory Usage") && keyis(k, kn, "Total"))
			dev->mem_total_mib = view_ll(v, v + vn, 10);
		else if (dev && !strcmp(section, "FB Memory Usage") && keyis(k, kn, "Used"))
			dev->mem_used_mib = view_ll(v, v + vn, 10);
		else if (dev && !strcmp(section, "PCIe Generation") && keyis(k, kn, "Max"))
			dev->speed_max_gts = gen_gts((int)view_ll(v, v + vn, 10));
		else if (dev && !strcmp(section, "PCIe Generation") && keyis(k, kn, "Current"))
			dev->speed_cur_gts = gen_gts((int)view_ll(v, v + vn, 10));
		else if (dev && !strcmp(section, "Link Width") && keyis(k, kn, "Max"))
			dev->width_max = (int)view_ll(v, v + vn, 10);
		else if (dev && !strcmp(section, "Link Width") && keyis(k, kn, "Current"))
			dev->width_cur = (int)view_ll(v, v + vn, 10);
	}
	return r;
}

/* ------------------------------------------------------------ key: value reports */

/* "GPU 0,1,2: NAME" or "GPU 0,1 Compute Capability: X" (check_env), or
 * "GPU 0: NAME" (collect_env). */
static int gpu_line(struct ts_preflight *pf, const char *k, size_t kn, const char *v, size_t vn,
		    const char *src, int64_t line)
{
	const char *cc = memmem(k, kn, "Compute Capability", 18);
	const char *p = k + 4, *e = cc ? cc : k + kn;
	int r = 0;

	while (p < e) {
		while (p < e && (*p == ',' || *p == ' '))
			p++;
		if (p >= e || !isdigit((unsigned char)*p))
			break;
		long idx = 0;
		while (p < e && isdigit((unsigned char)*p) && idx <= 4096)
			idx = idx * 10 + (*p++ - '0');
		if (idx > 4096)
			break;
		if (cc) {
			for (size_t i = 0; i < pf->devices.n; i++)
				if (pf->devices.v[i].line >= 0 && (long)i == idx)
					pf->devices.v[i].cc = pf_dupn(pf, v, vn);
		} else {
			struct ts_pf_device *dev = pf_device_add(pf);
			if (!dev)
				return TS_ENOMEM;
			dev->name = pf_dupn(pf, v, vn);
			dev->vendor = vn >= 3 && memcmp(v, "MTT", 3) == 0 ? "mthreads" :
				      memmem(v, vn, "NVIDIA", 6) || memmem(v, vn, "GeForce", 7) ? "nvidia" :
				      memmem(v, vn, "AMD", 3) || memmem(v, vn, "Instinct", 8) ? "amd" : NULL;
			dev->source = pf_dup(pf, src);
			dev->line = line;
		}
	}
	if (cc)
		r |= pf_kv(pf, PF_FACT, "device.cc", pf_dupn(pf, v, vn), src, line);
	return r;
}

static int none_value(const char *v, size_t vn)
{
	return !vn || keyis(v, vn, "None") || keyis(v, vn, "N/A") || keyis(v, vn, "Could not collect");
}

static int from_keyvalue(struct ts_preflight *pf, const char *d, size_t n, const char *src)
{
	struct line l = { 0 };
	size_t pos = 0;
	int r = 0, in_gpus = 0, in_cudnn = 0;

	while (next_line(d, n, &pos, &l)) {
		const char *k, *v;
		size_t kn, vn;
		r |= signatures(pf, &l, src);
		if (in_cudnn && l.n && l.s[0] == '/') {
			struct ts_pf_lib *lib = pf_lib(pf, "cudnn", "cuda", "libcudnn.so");
			struct ts_pf_copy cp;
			const char *slash = memrchr(l.s, '/', l.n);
			cp.path = pf_dupn(pf, l.s, l.n);
			cp.version = cp.path ? pf_so_version(cp.path + (slash - l.s) + 1) : NULL;
			cp.via = "collect_env";
			if (!lib || !cp.path || TS_VEC_PUSH(lib->copies, cp))
				return TS_ENOMEM;
			continue;
		}
		in_cudnn = 0;
		if (starts(&l, "[pip3] ") || starts(&l, "[conda] ")) {
			const char *s = memchr(l.s, ' ', l.n) + 1;
			size_t sn = l.n - (size_t)(s - l.s);
			const char *eq = memmem(s, sn, "==", 2);
			const char *sp = memchr(s, ' ', sn);
			const char *cut = eq ? eq : sp;
			if (cut) {
				const char *ver = cut + (eq ? 2 : 0);
				size_t verlen = sn - (size_t)(ver - s);
				pf_trim(&ver, &verlen);
				r |= pf_kv(pf, PF_FACT, pf_fmt(pf, "pkg.%.*s.version", (int)(cut - s), s),
					   first_tok(pf, ver, verlen), src, l.no);
			}
			continue;
		}
		if (in_gpus && starts(&l, "GPU ") && split(&l, ":", &k, &kn, &v, &vn)) {
			r |= gpu_line(pf, k, kn, v, vn, src, l.no);
			continue;
		}
		in_gpus = 0;
		if (!split(&l, ":", &k, &kn, &v, &vn) || kn > 64)
			continue;
		if (kn > 4 && memcmp(k, "GPU ", 4) == 0 && isdigit((unsigned char)k[4])) {
			r |= gpu_line(pf, k, kn, v, vn, src, l.no);
		} else if (keyis(k, kn, "GPU models and configuration")) {
			in_gpus = 1;
			if (vn > 4 && memcmp(v, "GPU ", 4) == 0) {
				struct line sub = { v, vn, l.no };
				const char *k2, *v2;
				size_t kn2, vn2;
				if (split(&sub, ":", &k2, &kn2, &v2, &vn2))
					r |= gpu_line(pf, k2, kn2, v2, vn2, src, l.no);
			}
		} else if (keyis(k, kn, "Python") || keyis(k, kn, "Python version")) {
			r |= pf_kv(pf, PF_FACT, "python.version", first_tok(pf, v, vn), src, l.no);
		} else if (keyis(k, kn, "PyTorch") || keyis(k, kn, "PyTorch version")) {
			r |= pf_kv(pf, PF_FACT, "torch.version", first_tok(pf, v, vn), src, l.no);
		} else if (keyis(k, kn, "CUDA used to build PyTorch")) {
			if (!none_value(v, vn))
				r |= pf_kv(pf, PF_FACT, "torch.cuda", first_tok(pf, v, vn), src, l.no);
		} else if (keyis(k, kn, "MUSA available") || keyis(k, kn, "CUDA available") ||
			   keyis(k, kn, "Is CUDA available")) {
			int yes = vn >= 4 && (memcmp(v, "True", 4) == 0 || memcmp(v, "true", 4) == 0);
			r |= pf_kv(pf, PF_FACT, k[0] == 'M' ? "musa.available" : "cuda.available",
				   yes ? "true" : "false", src, l.no);
		} else if (keyis(k, kn, "MUSA_HOME") || keyis(k, kn, "CUDA_HOME")) {
			r |= pf_kv(pf, PF_FACT, k[0] == 'M' ? "toolkit.musa_home" : "toolkit.cuda_home",
				   pf_dupn(pf, v, vn), src, l.no);
		} else if (keyis(k, kn, "MCC")) {
			r |= pf_kv(pf, PF_FACT, "toolkit.mcc", ver_after(pf, v, vn, "version"), src, l.no);
		} else if (keyis(k, kn, "NVCC") || keyis(k, kn, "CUDA runtime version")) {
			const char *nv = memmem(v, vn, ", V", 3) ? ver_after(pf, v, vn, ", V")
								  : none_value(v, vn) ? NULL : first_tok(pf, v, vn);
			if (nv)
				r |= pf_kv(pf, PF_FACT, "toolkit.nvcc", nv, src, l.no);
		} else if (keyis(k, kn, "MUSA Driver Version")) {
			r |= pf_driver_add(pf, "mtgpu", first_tok(pf, v, vn), src, l.no);
		} else if (keyis(k, kn, "CUDA Driver Version") || keyis(k, kn, "Nvidia driver version")) {
			if (!none_value(v, vn))
				r |= pf_driver_add(pf, "nvidia", first_tok(pf, v, vn), src, l.no);
		} else if (keyis(k, kn, "cuDNN version")) {
			in_cudnn = memmem(v, vn, "Probably one of the following", 29) != NULL;
			if (!in_cudnn && vn && v[0] == '/') {
				struct ts_pf_lib *lib = pf_lib(pf, "cudnn", "cuda", "libcudnn.so");
				struct ts_pf_copy cp = { pf_dupn(pf, v, vn), NULL, "collect_env" };
				const char *slash = memrchr(v, '/', vn);
				cp.version = cp.path ? pf_so_version(cp.path + (slash - v) + 1) : NULL;
				if (!lib || !cp.path || TS_VEC_PUSH(lib->copies, cp))
					return TS_ENOMEM;
			}
		} else if (keyis(k, kn, "CUDA_MODULE_LOADING set to")) {
			r |= pf_kv(pf, PF_ENV, "CUDA_MODULE_LOADING", pf_dupn(pf, v, vn), src, l.no);
		} else if (keyis(k, kn, "OS")) {
			r |= pf_kv(pf, PF_HOST, "os", pf_dupn(pf, v, vn), src, l.no);
		} else if (keyis(k, kn, "ulimit soft")) {
			r |= pf_kv(pf, PF_HOST, "ulimit.nofile", pf_dupn(pf, v, vn), src, l.no);
		} else if (vn && isdigit((unsigned char)v[0]) && kn < 40 && !memchr(k, ' ', kn)) {
			/* check_env package lines: "triton: 3.1.0" */
			r |= pf_kv(pf, PF_FACT, pf_fmt(pf, "pkg.%.*s.version", (int)kn, k),
				   first_tok(pf, v, vn), src, l.no);
		}
	}
	return r;
}

/* ------------------------------------------------------------ dispatch */

static int has(const char *d, size_t n, const char *s)
{
	return memmem(d, n, s, strlen(s)) != NULL;
}

/* A line that starts (after blanks) with the gmi banner "mthreads-gmi:<digit>". */
static int gmi_banner(const char *d, size_t n)
{
	struct line l = { 0 };
	size_t pos = 0;

	while (next_line(d, n, &pos, &l)) {
		const char *s = l.s;
		size_t k = l.n;
		pf_trim(&s, &k);
		if (k > 14 && memcmp(s, "mthreads-gmi:", 13) == 0 && isdigit((unsigned char)s[13]))
			return 1;
	}
	return 0;
}

int ts_preflight_from_mem(struct ts_preflight *pf, const char *d, size_t n, const char *name,
			  struct ts_err *err)
{
	size_t i = 0;
	int rc;
	const char *kind;

	pf->source = pf_dup(pf, name);
	while (i < n && isspace((unsigned char)d[i]))
		i++;
	if (i < n && d[i] == '{' && has(d, n, "\"Driver Version\"") && has(d, n, "\"GPU\"")) {
		kind = "mthreads-gmi -q --json";
		rc = from_gmi_json(pf, d + i, n - i, name, err);
		if (rc < 0 && rc != TS_ENOMEM)
			return rc; /* err says where */
	} else if (has(d, n, "NVSMI LOG") || (has(d, n, "Attached GPUs") && has(d, n, " : "))) {
		kind = "nvidia-smi -q";
		rc = from_smi_q(pf, d, n, name);
	} else if (gmi_banner(d, n)) {
		kind = "mthreads-gmi table";
		rc = from_gmi_table(pf, d, n, name);
	} else if (has(d, n, "PyTorch version:") || has(d, n, "Is CUDA available:")) {
		kind = "collect_env";
		rc = from_keyvalue(pf, d, n, name);
	} else if (has(d, n, "Python:") && (has(d, n, "MUSA available:") || has(d, n, "CUDA available:") ||
					    has(d, n, "PyTorch:"))) {
		kind = "check_env";
		rc = from_keyvalue(pf, d, n, name);
	} else if (has(d, n, "Driver/library version mismatch") || has(d, n, "libsrv_um_MUSA.so")) {
		kind = "error text";
		rc = from_keyvalue(pf, d, n, name);
	} else {
		return ts_err_at(err, TS_EPARSE, name, 0, 1,
				 "not a report preflight reads (collect_env, check_env, nvidia-smi -q, mthreads-gmi table or -q --json)");
	}
	if (rc || pf->arena.failed)
		return ts_err_set(err, TS_ENOMEM, "out of memory reading %s", name);
	if (pf_kv(pf, PF_PROBE, "report", pf_fmt(pf, "%s (%s)", name, kind), NULL, -1))
		return ts_err_set(err, TS_ENOMEM, "out of memory");
	return 0;
}

int ts_preflight_from_file(struct ts_preflight *pf, const char *path, struct ts_err *err)
{
	struct ts_input in;
	int rc;

	if ((rc = ts_input_read_all(&in, path, TS_PREFLIGHT_MAX_BYTES, err)))
		return rc;
	rc = ts_preflight_from_mem(pf, (const char *)in.data, in.len, path, err);
	ts_input_release(&in);
	return rc;
}
